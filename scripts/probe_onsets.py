"""Where the onset rule puts a shout's start against the truth, phrase by phrase, without Vosk.

    python scripts/probe_onsets.py --set tune --draws 30

Each of the set's two-word shouts (scripts/bench_web.py's clips, cut at their known onset) is
mixed `--draws` times as the web bench mixes a phone's own shout (pink room noise, a room's echo,
15-30 dB SNR), and the onset is read from a start Vosk would give (30-70 ms early): the rise
(`voice.audio.speech_onset`, 4 dB over the floor) and the onset (`voice.audio.soft_start` from
it). Prints each phrase's error in ms (median, 5th and 95th percentile, the latest), and how many
are more than 15 ms off. Seconds, not the bench's minutes: for tuning the soft start
(`--excess-db`, `--back-s`) on the tuning set (docs/web.md, "A soft start under the floor").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table
from scipy.signal import fftconvolve

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

import bench_web  # noqa: E402  (the web bench's shouts, room and levels)

from cdc_env.cli import count_at_most, non_negative_int, number_between, run_command  # noqa: E402
from voice.audio import (  # noqa: E402
    RATE,
    SOFT_EXCESS_DB,
    SOFT_START_S,
    pink_noise,
    rms,
    soft_start,
    sound_span,
    speech_onset,
    synthesise,
)


def mixed(speech: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """A phone's recording of its own player's shout (bench_web's room), and the shout's start."""
    noise_rms = rng.uniform(60, 300)
    lead = int(rng.uniform(1.5, 2.5) * RATE)
    audio = pink_noise(lead + len(speech) + 2 * RATE, rng) * noise_rms
    heard = fftconvolve(speech, bench_web.room_response(rng, rng.uniform(8, 20)))
    level = noise_rms * 10 ** (rng.uniform(*bench_web.SHOUT_SNR_DB) / 20) / rms(speech)
    level = min(level, 0.9 * 32768 / np.abs(speech).max())
    audio[lead:lead + len(heard)] += heard * level
    return np.clip(np.rint(audio), -32768, 32767), lead


# French, with no French recogniser here: the game's own words, said by espeak-ng's French
# voices, cut at their first sound. Never tuned on (the soft start's numbers were set on `tune`).
FRENCH = ("pas mou le caillou", "grelotte ça picote", "linotte", "alouette", "fauvette", "mouette",
          "bergeronnette", "chouette", "sans fin", "civet", "je lance", "oui", "non", "velute")
FRENCH_VOICES = (("fr", 160, 50), ("fr+f3", 185, 65), ("fr+m3", 150, 40), ("fr+f4", 205, 70), ("fr+m6", 170, 30))


def french_shouts() -> list[tuple[str, np.ndarray]]:
    out = []
    for text in FRENCH:
        for voice, speed, pitch in FRENCH_VOICES:
            said = synthesise(text, voice=voice, speed=speed, pitch=pitch)
            span = sound_span(said)
            if span is not None:
                out.append((text, said[span[0]:span[1]]))
    return out


def probe(args: argparse.Namespace) -> int:
    rng = np.random.default_rng(args.seed)
    errors: dict[str, dict[str, list[float]]] = {}
    shouts = french_shouts() if args.set == "french" else bench_web.load_clips(args.set)[0]
    for intent, speech in shouts:
        for _ in range(args.draws):
            audio, truth = mixed(speech, rng)
            vosk_start = truth - int(rng.uniform(0.03, 0.07) * RATE)
            found = speech_onset(audio, vosk_start, truth + int(0.3 * RATE))
            if found is None:
                continue
            onset = soft_start(audio, *found, back_s=args.back_s, excess_db=args.excess_db)
            each = errors.setdefault(intent, {"rise": [], "onset": []})
            each["rise"].append((found[0] - truth) / RATE * 1000)
            each["onset"].append((onset - truth) / RATE * 1000)
    table = Table(title=f"onset error (ms), {args.set} set, {args.draws} draws per shout, "
                        f"soft start {args.excess_db:g} dB, {args.back_s:g} s back")
    for column in ("phrase", "rise: median / p5 / p95 / latest", "onset: median / p5 / p95 / latest"):
        table.add_column(column)
    every: dict[str, list[float]] = {"rise": [], "onset": []}

    def cell(values: list[float]) -> str:
        v = np.array(values)
        return " / ".join(f"{x:.1f}" for x in (np.median(v), np.percentile(v, 5), np.percentile(v, 95), v.max()))

    for intent, each in sorted(errors.items()):
        table.add_row(intent, cell(each["rise"]), cell(each["onset"]))
        for kind in every:
            every[kind] += each[kind]
    table.add_row("all", cell(every["rise"]), cell(every["onset"]))
    Console().print(table)
    for kind, values in every.items():
        off = int(np.sum(np.abs(values) > 15))
        print(f"{kind}: {off} of {len(values)} more than 15 ms off")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=[*sorted(bench_web.SEEDS), "french"], default="tune",
                        help="the clips: tune (default), report, or french (espeak-ng's French voices "
                             "saying the game's words)")
    parser.add_argument("--draws", type=count_at_most(1000, "mixes per shout"), default=30,
                        help="mixes per shout (1-1000)")
    # NumPy's generator takes no negative seed (-1 was its ValueError traceback after the clips were made).
    parser.add_argument("--seed", type=non_negative_int, default=7, help="the mixes' seed (0 or more)")
    parser.add_argument("--excess-db", type=number_between(0.1, 10.0), default=SOFT_EXCESS_DB,
                        help=f"soft start: dB over the noise, in sum (default {SOFT_EXCESS_DB:g})")
    parser.add_argument("--back-s", type=number_between(0.0, 0.5), default=SOFT_START_S,
                        help=f"soft start: how far back from the rise, seconds (default {SOFT_START_S:g})")
    args = parser.parse_args(argv)
    return run_command(lambda: probe(args), ())


if __name__ == "__main__":
    sys.exit(main())
