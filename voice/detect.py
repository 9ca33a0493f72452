"""Detect lexicon phrases in a WAV file: one JSON line per utterance decided.

    python -m voice.detect --model PATH --lexicon configs/voice/fr.yaml --moment race CLIP.wav
    {"intent": "pas_mou_le_caillou", "phrase": "pas mou le caillou", "onset_s": 1.212, ...}

The recogniser listens, as a game does, for the intents active at one moment (`--moment`), or
for the intents given (`--intents`); by default for every intent of the lexicon that can be
active with the others (an intent whose phrase an earlier one already has is left out, and
named). An utterance no phrase clearly won gives `{"intent": null, "not_understood": ...}`:
the game asks the player to say it again.

Any sample rate and channel count: the clip is mixed to mono and resampled to the model's rate.
The audio goes through the same streaming recogniser as a microphone, in 50 ms chunks; times
are seconds from the start of the clip.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys

from cdc_env.cli import run_command
from cdc_env.rules import shipped_configs
from voice.audio import RATE, AudioError, load_clip, to_pcm16
from voice.grammar import GrammarError
from voice.intents import MOMENT_INTENTS, check_game_lexicon
from voice.lexicon import Lexicon, LexiconError, load_lexicon
from voice.model import ModelNotFoundError, find_model, load_model

DEFAULT_LEXICON = shipped_configs("voice") / "fr.yaml"  # (the source tree's, or an installed package's)
CHUNK = RATE // 20


def listened_intents(lexicon: Lexicon, moment: str | None, intents: str | None) -> list[str]:
    """The active set: --intents, else the moment's intents this lexicon has, else every
    intent that can be active with the others (a note names those left out)."""
    if intents is not None:  # (`--intents ' , '` listened for nothing, and said nothing)
        named = [i.strip() for i in intents.split(",") if i.strip()]
        if not named:
            raise LexiconError(f"--intents {intents!r}: no intent named; give intents separated by commas, among "
                               f"{', '.join(sorted(lexicon.intents))}")
        return lexicon.check_intents(named)
    if moment:
        chosen = [i for i in lexicon.intents if i in MOMENT_INTENTS[moment]]
        if not chosen:
            raise LexiconError(f"{lexicon.path}: no intent of the moment '{moment}' is in this "
                               "lexicon; pick another --moment or give --intents")
        return chosen
    kept, left_out = lexicon.without_shared()
    if left_out:
        print(f"note: not listening for {', '.join(left_out)} (a phrase of an intent before "
              "them); use --moment or --intents to choose", file=sys.stderr)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m voice.detect", description=__doc__.split("\n\n")[0])
    parser.add_argument("clip", help="a WAV file")
    parser.add_argument("--model", help="Vosk model folder (default: $CDC_VOSK_MODEL, then "
                                        "Vosk's model folders)")
    parser.add_argument("--lexicon", default=str(DEFAULT_LEXICON), help="lexicon YAML file")
    parser.add_argument("--moment", choices=sorted(MOMENT_INTENTS),
                        help="listen for the intents of this moment of the game")
    parser.add_argument("--intents", help="comma-separated intents to listen for")
    parser.add_argument("--free-intents", action="store_true",
                        help="a lexicon of any intents (not the game's): its keys are not checked")
    parser.add_argument("--denoise", action="store_true", help="spectral gating before Vosk")
    parser.add_argument("--verbose", action="store_true", help="log what the recogniser does")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    return run_command(lambda: detect(args), (AudioError, LexiconError, GrammarError, ModelNotFoundError))


def detect(args: argparse.Namespace) -> int:
    from voice.recogniser import Recogniser

    samples = load_clip(args.clip)
    if len(samples) == 0:
        raise AudioError(f"{args.clip}: the WAV file holds no audio (0 samples); give a recorded clip")
    lexicon = load_lexicon(args.lexicon)
    if not args.free_intents:
        lexicon = check_game_lexicon(lexicon)
    intents = listened_intents(lexicon, args.moment, args.intents)
    lexicon.check_shared_phrases(intents)
    model = load_model(find_model(args.model))
    recogniser = Recogniser(model, lexicon, intents, denoise=args.denoise)
    pcm = to_pcm16(samples)
    outcomes = []
    for i in range(0, len(pcm), CHUNK):
        outcomes += recogniser.accept(pcm[i:i + CHUNK], i)
    outcomes += recogniser.flush()
    for outcome in outcomes:
        print(json.dumps(outcome.as_json(), ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
