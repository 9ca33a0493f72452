"""Streaming phrase detection for one player's microphone.

Audio goes in chunk by chunk with the absolute index of its first sample. Vosk's partial
results only say when an utterance is over; its one decision (a `Detection` or `NotUnderstood`)
comes from the utterance's final n-best list. Each detection's onset is the start of the speech
under the first word, found in the audio, and turned into the game's clock by sample counting
(never by reading a wall clock when the result arrives).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.signal import resample_poly

from voice.audio import (
    QUIET_DB,
    RATE,
    LevelTracker,
    SpectralGate,
    loudness,
    peak_db,
    quiet_before,
    rms,
    soft_start,
    speech_band,
    speech_onset,
    to_pcm16,
)
from voice.grammar import build_grammar, garbage_word, validate_grammar
from voice.lexicon import Lexicon, Phrase, spell_all, usable_phrases
from voice.model import VoskModel

log = logging.getLogger(__name__)

SampleClock = Callable[[int], float]
"""Maps an absolute sample index of the input stream to seconds on the game's clock."""

# A detection of an intent just decided, this much louder (dB, RMS under its words) than the
# earlier one, is another voice, not that utterance's tail: another player heard faintly on a
# phone (14 dB under its own at the web bench) must not hide the phone's own player's shout.
TAIL_LOUDER_DB = 6.0


def rate_clock(rate: int = RATE, t0: float = 0.0) -> SampleClock:
    """Sample n is heard at t0 + n / rate: e.g. t0 = the stream time of sample 0."""
    return lambda n: t0 + n / rate


@dataclass(frozen=True)
class Detection:
    """One phrase heard. Times are on the recogniser's clock; `detected_at_s` is the clock time
    of the end of the audio the recogniser had seen when it emitted this."""

    intent: str
    phrase: str
    onset_s: float
    end_s: float
    confidence: float
    detected_at_s: float
    # Where the sound first stood ONSET_DB over the floor, when onset_s is a soft start before
    # it (an "h": `voice.audio.soft_start`); None when they are one. Where phones hear each
    # other, the faint sound before the rise may be another player's (voice/crosstalk.py).
    rise_s: float | None = None
    # Read out of several voices saying the race's phrase at once (`Recogniser(crowded=True)`):
    # the player's own shout only where another phone heard that phrase then too (the host
    # checks: voice/crosstalk.py, `Attribution`).
    crowded: bool = False

    def as_json(self) -> dict[str, object]:
        return {"intent": self.intent, "phrase": self.phrase, "onset_s": round(self.onset_s, 3),
                "end_s": round(self.end_s, 3), "confidence": round(self.confidence, 3)}


@dataclass(frozen=True)
class Word:
    """A word of a Vosk result, times as sample indices of the Vosk stream."""

    text: str
    start: int
    end: int
    conf: float


@dataclass(frozen=True)
class Match:
    phrase: Phrase
    words: tuple[Word, ...]
    last: bool  # ends at the last word of the result (it may still grow)

    @property
    def confidence(self) -> float:
        return min(w.conf for w in self.words)


def parse_words(result: dict[str, Any], rate: int = RATE) -> list[Word]:
    """The word list of a Vosk result dict: final ("result"), or partial ("partial", text
    only: its words carry no times, start = end = 0)."""
    if "partial" in result:
        return [Word(text, 0, 0, 1.0) for text in str(result["partial"]).split()]
    items = result.get("result") or []
    words = []
    for item in items:
        words.append(Word(str(item["word"]), round(float(item["start"]) * rate),
                          round(float(item["end"]) * rate), float(item.get("conf", 1.0))))
    return words


def find_phrases(words: Sequence[Word], phrases: Sequence[Phrase]) -> list[Match]:
    """Active phrases said in a row in `words`: left to right, longest phrase first, no overlap."""
    by_length = sorted(phrases, key=lambda p: -len(p.words))
    text = [w.text for w in words]
    matches: list[Match] = []
    i = 0
    while i < len(words):
        for phrase in by_length:
            n = len(phrase.words)
            if tuple(text[i:i + n]) == phrase.words:
                matches.append(Match(phrase, tuple(words[i:i + n]), i + n == len(words)))
                i += n
                break
        else:
            i += 1
    return matches


def may_grow(match: Match, phrases: Sequence[Phrase]) -> bool:
    """A match at the end of a partial that another intent's longer phrase starts with: wait
    for the next word ("chouette" may become "chouette velute")."""
    if not match.last:
        return False
    said = match.phrase.words
    return any(p.intent != match.phrase.intent and len(p.words) > len(said)
               and p.words[:len(said)] == said for p in phrases)


def open_decoder(model: VoskModel, rate: int, grammar: str) -> Any:
    """A Vosk recogniser for a checked grammar, with word times in final results.

    Partial results stay text only (SetPartialWords off): word times in a partial need the
    lattice determinized as it grows, which either trails the audio by up to 1.8 s or, with a
    delay short enough to be of use, doubles the CPU the decoder takes.
    """
    import vosk

    decoder = vosk.KaldiRecognizer(model.vosk, rate, grammar)
    decoder.SetWords(True)
    decoder.SetPartialWords(False)
    return decoder


@dataclass(frozen=True)
class NotUnderstood:
    """Something like a phrase was said, but no phrase clearly beat its rivals: the player is
    asked to say it again (a guess costs more than a repeat). Times on the recogniser's clock."""

    onset_s: float
    end_s: float
    detected_at_s: float
    reason: str

    def as_json(self) -> dict[str, object]:
        return {"intent": None, "not_understood": self.reason, "onset_s": round(self.onset_s, 3),
                "end_s": round(self.end_s, 3)}


Outcome = Detection | NotUnderstood
"""What one utterance gives: one phrase, or a request to say it again."""


@dataclass(frozen=True)
class Reading:
    """One path of Vosk's n-best list: its total log-likelihood and the phrases in it."""

    score: float
    words: tuple[Word, ...]
    matches: tuple[Match, ...]  # the grammar's phrases (active ones and decoys), in order
    whole: bool  # every word is part of a phrase or the garbage word
    garbage: bool = False  # holds the garbage word

    @property
    def mixed(self) -> bool:
        """Words of the grammar's phrases that make no phrase ("여섯 염소": 여섯 거북이's first
        word, 회사 염소's last), without the garbage word."""
        return bool(self.words) and not self.matches and not self.garbage

    def intents(self, active: set[str]) -> list[str]:
        return list(dict.fromkeys(m.phrase.intent for m in self.matches if m.phrase.intent in active))


def read_result(result: dict[str, Any], heard: Sequence[Phrase], garbage: str | None,
                rate: int = RATE) -> list[Reading]:
    """Vosk's result as readings, best first (a result without n-best is one reading)."""
    paths = result.get("alternatives") or [result]
    readings = []
    for path in paths:
        words = parse_words(path, rate)
        matches = find_phrases(words, heard)
        covered = sum(len(m.words) for m in matches) + sum(1 for w in words if w.text == garbage)
        readings.append(Reading(float(path.get("confidence", 0.0)), tuple(words), tuple(matches),
                                covered == len(words), any(w.text == garbage for w in words)))
    return readings


@dataclass(frozen=True)
class Verdict:
    """The decision on one utterance: the phrase heard (`match`), or, with a `reason`, the
    phrase that did not clearly win (not understood)."""

    match: Match
    reason: str = ""
    confidence: float = 1.0  # P(this phrase, not the rival), from their log-likelihood gap
    ask_again: bool = True  # not understood: ask to say it again (else nothing: maybe table talk)
    mixed: bool = False  # the best path mixed two phrases' words (see `_mixed_call`)

    @property
    def understood(self) -> bool:
        return not self.reason


def judge(readings: Sequence[Reading], active: set[str], margin: float,
          repair_margin: float = 0.0, nbest: bool = True, strays: bool = False,
          mixes: bool = True) -> Verdict | None:
    """One decision for one utterance, or None when nothing worth reporting was said.

    The reading believed is the best one made only of whole phrases and garbage, within
    `repair_margin` of the best path and no longer than it (noise swaps and adds words; a
    repair may drop words, never add them). It must hold exactly one active intent, and beat
    by `margin` (log-likelihood) the best whole reading that says anything else: another
    intent, two intents, a decoy, or garbage alone (none in the n-best: nothing else was
    possible). With `nbest` off (a result without
    alternatives) there is no rival to compare with. With `strays` (a noisy room), words
    outside any phrase count as garbage: noise inserts words of other phrases ("기차 회사
    염소") where a quiet room's extra words are table talk. With `mixes`, a best path that
    only mixes the words of two phrases is a close call when a reading of one phrase is within
    `margin` of it (see `_mixed_call`).
    """
    # Vosk's empty path says "silence". The decision is only kept where the audio shows speech
    # (see Recogniser._emit), and there silence is no reading at all: neither taken nor a rival.
    readings = [r for r in readings if r.words]
    if not readings:
        return None
    top = readings[0]
    chosen = next((r for r in readings if (r.whole or (strays and r.intents(active)))
                   and r.score >= top.score - repair_margin and len(r.words) <= len(top.words)), None)
    if chosen is None:
        return _mixed_call(readings, active, margin) if mixes and nbest else None  # else table talk
    intents = chosen.intents(active)
    if not intents:
        return None  # garbage or a phrase of another moment
    if len(intents) > 1:
        # Several phrases in one breath: table talk, not a shout or an answer. In a noisy room
        # noise also adds a phrase to a word: a reading of one phrase close behind is a close
        # call (for the second look), with nothing if that does not settle it.
        single = next((r for r in readings if len(r.intents(active)) == 1
                       and (r.whole or strays) and chosen.score - r.score < margin), None)
        if not strays or single is None or not nbest:
            return None
        intent = single.intents(active)[0]
        match = next(m for m in single.matches if m.phrase.intent == intent)
        return Verdict(match, f"« {match.phrase.text} » or several phrases", ask_again=False)
    match = next(m for m in chosen.matches if m.phrase.intent == intents[0])
    if not nbest:
        return Verdict(match)
    # Rivals: whole readings that say something else; in noise also readings holding another
    # phrase among stray words (stray words alone are the noise, not a rival).
    rival = next((r for r in readings if r is not chosen and r.intents(active) != intents
                  and (r.whole or (strays and r.intents(active)))), None)
    if rival is not None and chosen.score - rival.score < margin:
        others = rival.intents(active)
        if len(others) > 1:  # as likely several phrases in a row: table talk, not a call
            return Verdict(match, f"« {match.phrase.text} » too close to several phrases",
                           ask_again=False)
        return Verdict(match, f"« {match.phrase.text} » too close to {others[0] if others else 'nothing'}")
    if rival is None:
        return Verdict(match)
    return Verdict(match, confidence=1.0 / (1.0 + math.exp(rival.score - chosen.score)))


def _mixed_call(readings: Sequence[Reading], active: set[str], margin: float) -> Verdict | None:
    """A best path made of words of the grammar's phrases that make no phrase ("여섯 염소"
    for "회사 염소": the two words of a phrase, one swapped for a word of another) with one
    phrase, alone and no longer than it, within `margin` under it: the phrase a close call
    (for the second look; nothing if that does not settle it), not table talk. Vosk's grammar
    lets any of its words follow any other, and on the web bench most of the shouts it missed
    had such a mix on top with the right phrase just under it. Talk gives the garbage word
    or a phrase among other words, never only a mix: those stay nothing."""
    top = readings[0]
    if not top.mixed:
        return None
    for reading in readings[1:]:
        if top.score - reading.score >= margin:
            return None
        if not reading.mixed:
            one = reading.whole and len(reading.matches) == 1 and len(reading.words) <= len(top.words)
            if not one or not reading.intents(active):
                return None  # the first reading that is not a mix decides
            match = reading.matches[0]
            return Verdict(match, f"« {match.phrase.text} » or a mix of phrases", ask_again=False, mixed=True)
    return None


def intent_shares(readings: Sequence[Reading], active: set[str]) -> dict[str, float]:
    """Each active intent's share of one decode's n-best: the probability of the readings that
    hold it (their log-likelihoods as weights) over that of every reading with words. An intent
    absent from the n-best gets 0; a decode that heard no words gives every intent 0."""
    said = [r for r in readings if r.words]
    if not said:
        return {}
    top = max(r.score for r in said)
    weights = [(math.exp(r.score - top), r.intents(active)) for r in said]
    total = sum(w for w, _ in weights)
    shares: dict[str, float] = {}
    for weight, intents in weights:
        for intent in intents:
            shares[intent] = shares.get(intent, 0.0) + weight / total
    return shares


def pooled_choice(decodes: Iterable[Sequence[Reading]], count: int, active: set[str],
                  bar: float) -> tuple[str, float] | None:
    """The intent with the largest mean share (`intent_shares`) over `count` decodes of one
    utterance, and that mean, when it reaches `bar`; else None. Only an intent some reading
    holds alone can be chosen (a phrase heard only beside another is no call).

    The decodes are read one at a time, and reading stops once the outcome is settled whatever
    the rest say (each adds at most 1 to an intent's sum): the leader is over the bar and out
    of every other intent's reach, or no intent can reach it. The outcome is the one all of
    them would give; the mean returned is then the least it could have been.
    """
    need = bar * count
    sums: dict[str, float] = {}
    candidates: set[str] = set()
    seen = 0
    for seen, decode in enumerate(decodes, 1):
        for intent, share in intent_shares(decode, active).items():
            sums[intent] = sums.get(intent, 0.0) + share
        candidates |= {r.intents(active)[0] for r in decode if len(r.intents(active)) == 1}
        left = count - seen
        if candidates and left:
            best = max(sorted(candidates), key=lambda i: sums.get(i, 0.0))
            lead = sums.get(best, 0.0)
            rest = max([v for i, v in sums.items() if i != best], default=0.0)
            if lead >= need and lead > max(rest, 0.0) + left:
                return best, lead / count
        if max(sums.values(), default=0.0) + left < need:
            return None
    if not candidates or seen < count:
        return None
    best = max(sorted(candidates), key=lambda i: sums.get(i, 0.0))  # sorted: ties fall alike
    return (best, sums[best] / count) if sums.get(best, 0.0) >= need else None


def said_in_race(words: Sequence[Word], phrase: Phrase, garbage: str | None) -> tuple[Word, ...] | None:
    """The phrase's words where a reading of the race's grammar says `phrase`, else None: the
    phrase itself, or with the garbage word between its words (a word unclear: 내일 점심 heard
    as '내일 [unk] 점심'). With the garbage word before or after it, it is among other words."""
    texts, kept = [w.text for w in words], [w for w in words if w.text != garbage]
    if texts == list(phrase.words):
        return tuple(words)
    if garbage and [w.text for w in kept] == list(phrase.words) and garbage not in (texts[0], texts[-1]):
        return tuple(kept)
    return None


def said_among_others(words: Sequence[Word], phrase: Phrase, garbage: str | None) -> tuple[Word, ...] | None:
    """The words of a race grammar's reading made only of `phrase`'s words, holding the phrase
    whole and more of its words around it ("내일 내일 점심", "음악 기차 음악 기차", "기차 음악
    기차") or the garbage word ("[unk] 음악 기차"): what several players shouting the phrase a
    few tens of ms apart sound like to one phone, which hears its own player and the others
    8-20 dB under. Else None. Taken alone such
    a reading is no shout (talk forced into the race's grammar stumbles too: `stumbles_into`);
    the host takes it only where another phone heard the phrase at the same time."""
    kept = [w for w in words if w.text != garbage]
    texts, spoken = [w.text for w in kept], list(phrase.words)
    if texts == spoken and len(kept) < len(words):
        return tuple(kept)  # with something unclear before or after it: another's voice
    if len(texts) <= len(spoken) or not set(texts) <= set(spoken):
        return None
    if not any(texts[i:i + len(spoken)] == spoken for i in range(len(texts) - len(spoken) + 1)):
        return None
    return tuple(kept)


def its_tail(words: Sequence[Word], phrase: Phrase, garbage: str | None) -> bool:
    """Whether a reading says only the last words of `phrase`, after nothing or something
    unclear ("점심" or "[unk] 점심" for 내일 점심): the phrase with its first word lost, as a
    soft start (a nasal, an "h") under the room's noise is. Said alone a word reads the same,
    so such a reading is no shout by itself (`Recogniser`'s race look: `crowded`)."""
    kept = [w.text for w in words if w.text != garbage]
    lead = next((k for k, w in enumerate(words) if w.text != garbage), len(words))
    spoken = list(phrase.words)
    return (bool(kept) and len(kept) < len(spoken) and kept == spoken[len(spoken) - len(kept):]
            and all(w.text != garbage for w in words[lead:]))


def stumbles_into(words: Sequence[Word], phrase: Phrase) -> bool:
    """Whether a reading says the start of `phrase` and then the whole of it ("여섯 여섯 거북이"):
    a stumble, or one long first syllable. Beside the phrase said whole it is no rival (it holds
    it). Taken alone it is not taken: on the tuning talk (sentences holding no phrase), forced
    into the race's grammar, it reported the race's shout twice in 320 clip-races."""
    texts, spoken = [w.text for w in words], list(phrase.words)
    return any(texts == spoken[:repeated] + spoken for repeated in range(1, len(spoken)))


class Recogniser:
    """Detects the active intents' phrases in one input stream (int16 mono at the model rate).

    One utterance gives at most one decision: a `Detection` (one phrase) or `NotUnderstood`.
    Vosk's partial results only say when the utterance is over; the intent is then taken from
    the utterance's final n-best list, never from a partial guess (in noise those flip).

    clock: sample index -> game seconds (default: seconds from the first sample).
    denoise: spectral gating in front of Vosk (off by default: it cost accuracy in the bench).
    stable_s / end_quiet_s / max_wait_s: the utterance is closed (Vosk's final result asked
    for) once its partial result has not changed for stable_s and the speaker has been quiet
    for end_quiet_s; or once the partial has not changed for max_wait_s (a room too loud to
    hear the end); or at Vosk's own endpoint. noisy_stable_s replaces stable_s in a noisy room.
    margin / noisy_margin: the chosen reading must beat every rival reading by this much
    (log-likelihood, see `judge`), else it is a close call (for the second look); noisy_margin
    applies in a noisy room. margin 2 (it was 1): on the tuning draws, a third of the clean
    words decided outright by 1 to 2 were wrong; the pooled second look takes most of the
    right ones back (noisy_margin 2 saved no more wrong words there, for more looks).
    alternatives: the n-best list's length (0: best path only, then min_confidence, the floor
    on a phrase's lowest word confidence, is the only check).
    alternative_margin: in a noisy room, how far under the best path a reading made of whole
    phrases may be and still be taken (noise swaps words).
    pause_s: a shout must follow this much quiet (0 turns the check off): a phrase found inside
    running speech is table talk, not a shout.
    onset_bias_s: Vosk's word starts run early; added when the audio shows no onset.
    decoys: the lexicon's inactive phrases go into the grammar too, and are heard but never
    reported: with one phrase active, anything else said would otherwise be forced into it.
    noisy_snr_db: the room counts as noisy while the last 3 s of sound peak less than this far
    over the noise floor (see `noisy()`).
    second_look: a close call is decoded again at each of `look_speeds` (resampling ratios
    up/down: (9, 10) plays it 1.11 times faster), and decided for the intent holding on average
    at least `look_share` (`noisy_look_share` in a noisy room) of the n-best's probability over
    the first decode and the looks (see `_second_look`); otherwise it stays "say it again".
    mixes: a best path mixing two phrases' words with one phrase just under it is a close call
    for the second look (see `judge`), not table talk.
    skip_silence: between utterances, stretches with no 10 ms frame `skip_db` over the room's
    floor are not given to Vosk (nothing there can be a decision: that needs a frame QUIET_DB
    over it); when sound comes back Vosk gets it with the `preroll_s` before it. An utterance
    whose partial holds no active phrase is ended once its sound has stopped for `hold_s`.
    crowded: phones at one table hear each other's players, who all shout a race's phrase at
    once; where the race look finds nothing, it reads the phrase out of the others' voices too
    (`said_among_others`, and from where the sound jumps `crowd_rise_db` over what came before:
    the player's own voice over the others'), and, last, takes the phrase from under its own
    last words (its soft first word lost in the noise: `its_tail`), as a `Detection` marked
    `crowded`, which the host takes only where another phone heard that phrase at the same
    time. A race reading the whole grammar fits better by more than `race_ratio` but at most
    `crowd_ratio` is crowded too (a mixture of voices fits other words a little better; talk
    forced into the phrase, 5.8 or more on the tuning draws, far better). Off for a lone
    microphone: nothing could confirm such a reading.
    """

    def __init__(self, model: VoskModel, lexicon: Lexicon, intents: Iterable[str] | None = None,
                 clock: SampleClock | None = None, *, rate: int = RATE, denoise: bool = False,
                 min_confidence: float = 0.5, stable_s: float = 0.1, end_quiet_s: float = 0.1,
                 max_wait_s: float = 0.5, pause_s: float = 0.25,
                 onset_bias_s: float = 0.04, noisy_snr_db: float = 30.0,
                 noisy_stable_s: float = 0.2, alternatives: int = 10,
                 alternative_margin: float = 2.0, margin: float = 2.0, noisy_margin: float = 1.5,
                 refine: bool = True, decoys: bool = True, chunk: int = 800,
                 second_look: bool = True, skip_silence: bool = True, skip_db: float = 6.0,
                 preroll_s: float = 1.0, hold_s: float = 0.25,
                 look_speeds: Sequence[tuple[int, int]] = ((9, 10), (10, 9), (19, 20), (20, 19)),
                 look_share: float = 0.6, noisy_look_share: float = 0.8, mixes: bool = True,
                 race_look: bool = True, race_margin: float = 2.0, race_ratio: float = 2.0,
                 crowded: bool = False, crowd_rise_db: float = 8.0, crowd_ratio: float = 4.0,
                 ) -> None:
        self.model, self.lexicon, self.rate = model, lexicon, rate
        self.clock = clock or rate_clock(rate)
        self.denoise, self.min_confidence, self.refine = denoise, min_confidence, refine
        self.stable = round(stable_s * rate)
        self.end_quiet = round(end_quiet_s * rate)
        self.max_wait = round(max_wait_s * rate)
        self.pause_s = pause_s
        self.onset_bias = round(onset_bias_s * rate)
        self.chunk = chunk  # Vosk gets at most this much audio between two partial results
        self.garbage = garbage_word(model.knows)
        self.decoys = decoys
        self.second_look, self.look_speeds = second_look, tuple(look_speeds)
        self.mixes = mixes
        self.look_share, self.noisy_look_share = look_share, noisy_look_share
        self.skip_silence, self.skip_db = skip_silence, skip_db
        self.preroll = round(preroll_s * rate)
        self.hold = round(hold_s * rate)
        if second_look and not self.look_speeds:
            raise ValueError("second_look needs at least one speed in look_speeds")
        self.noisy_snr_db, self.alternatives = noisy_snr_db, alternatives
        self.noisy_stable = round(noisy_stable_s * rate)
        self.alternative_margin = alternative_margin
        self.margin, self.noisy_margin = margin, noisy_margin
        self.race_look, self.race_margin, self.race_ratio = race_look, race_margin, race_ratio
        self.crowded, self.crowd_rise_db, self.crowd_ratio = crowded, crowd_rise_db, crowd_ratio
        # Start-up report over the whole lexicon: phrases the model cannot hear, and intents
        # left with none (they cannot be said at all: the UI should show both).
        self._all_phrases, self.unknown_words = spell_all(lexicon, model.knows)
        for problem in self.unknown_words:
            log.warning("%s", problem)
        self.silent_intents = [i for i in lexicon.intents
                               if not any(p.intent == i for p in self._all_phrases)]
        for intent in self.silent_intents:
            log.error("intent '%s' has no phrase the model knows, so it cannot be said: add a "
                      "sound-alike spelling to %s", intent, lexicon.path)
        self.phrases: list[Phrase] = []  # the active ones
        self._heard: list[Phrase] = []  # active phrases and decoys: the grammar
        self.active: list[str] = []
        self._masks: list[tuple[float, float]] = []
        self._next: int | None = None  # absolute index of the next input sample
        self._grammar: str | None = None
        self.race: tuple[str, ...] = ()  # the intents of the race open now (see set_race)
        self._race_grammar: str | None = None
        self._race_phrases: list[Phrase] = []
        self._asked: tuple[tuple[str, ...], bool] | None = None  # set_intents' last question
        self._start_at(0)
        self._next = None
        self.set_intents(list(lexicon.intents) if intents is None else intents)

    # --- configuration ----------------------------------------------------------------------

    def set_intents(self, intents: Iterable[str], race: bool = False) -> list[Outcome]:
        """Change the active intents. The utterance under way is finished with the old grammar
        (and the race open, if any) and its decision is returned (usually none); then a race is
        open for the new intents if `race` says so (`set_race`), and closed otherwise."""
        intents = list(intents)
        if self._next is not None and (tuple(intents), race) == self._asked:
            # The same moment asked again (the session does after every bot's move): the
            # utterance under way goes on. Finished and begun again with the same grammar, a
            # phrase said across the call was lost from both halves.
            return []
        self._asked = (tuple(intents), race)
        pending = self.flush() if self._next is not None else []
        phrases, _unknown = usable_phrases(self.lexicon, intents, self.model.knows)
        self.phrases, self.active = phrases, self.lexicon.check_intents(intents)
        heard = {p.words: p for p in phrases}
        if self.decoys and phrases:
            for phrase in self._all_phrases:
                heard.setdefault(phrase.words, phrase)
        self._heard = list(heard.values())
        self._grammar = build_grammar(self._heard, self.garbage) if phrases else None
        if self._grammar is not None:
            validate_grammar(self._grammar, self.model.knows)  # a bad grammar would crash Vosk
        self.set_race(intents if race else ())  # a new moment: a race only if it is one
        self._new_decoder()
        return pending

    def set_race(self, intents: Iterable[str]) -> None:
        """The intents of the race open now (none: no race). They must be active. While a race
        is open, an utterance the recogniser would give nothing for, or leave to "say it
        again", gets one more look with a grammar of only the race's phrases and the garbage
        word (see `_race_look`)."""
        race = tuple(dict.fromkeys(intents))
        inactive = [i for i in race if i not in self.active]
        if inactive:
            raise ValueError(f"race intents {inactive} are not active; set_intents them first")
        phrases = [p for p in self.phrases if p.intent in race]
        self.race, self._race_phrases = race, phrases
        self._race_grammar = build_grammar(phrases, self.garbage) if phrases else None
        if self._race_grammar is not None:
            validate_grammar(self._race_grammar, self.model.knows)  # a bad grammar would crash Vosk

    def mask_playback(self, start_s: float, end_s: float) -> None:
        """Ignore detections whose onset falls in [start_s, end_s] (our own speaker playing a
        bot's shout). Times on this recogniser's clock; include the output latency in end_s."""
        self._masks.append((start_s, end_s))

    # --- streaming --------------------------------------------------------------------------

    def accept(self, pcm: np.ndarray, start_sample: int | None = None) -> list[Outcome]:
        """Feed a chunk of int16 mono PCM whose first sample has absolute index `start_sample`
        (default: right after the previous chunk). Returns the decisions it completed."""
        pcm = np.asarray(pcm)
        if pcm.ndim != 1:
            raise ValueError(f"expected mono PCM (one dimension), got shape {pcm.shape}")
        outcomes: list[Outcome] = []
        if self._next is None:
            self._start_at(0 if start_sample is None else start_sample)
        elif start_sample is not None and start_sample < self._next:
            raise ValueError(f"chunk starts at sample {start_sample}, before the end of the "
                             f"previous one ({self._next}): chunks must not overlap")
        elif start_sample is not None and start_sample > self._next:
            gap = start_sample - self._next  # input was dropped
            if gap > self.rate:  # a long hole: start afresh rather than decode silence
                outcomes += self.flush()
                self._start_at(start_sample)
            else:  # a short one: keep the timeline by feeding silence
                outcomes += self.accept(np.zeros(gap, dtype=np.int16))
        assert self._next is not None  # _start_at set it
        for i in range(0, len(pcm), self.chunk):
            piece = pcm[i:i + self.chunk].astype(np.float64)
            self._next += len(piece)
            outcomes += self._decode(self.gate.process(piece) if self.gate else piece)
        return outcomes

    def flush(self) -> list[Outcome]:
        """End of stream (or pause): decide on the utterance under way."""
        if self._next is None:
            return []
        if self.gate is None:
            if self._paused:  # silence kept from Vosk: its utterance was ended when that began
                return []
            return self._decide(final=True) if self._sound_since_start() else self._forget()
        outcomes = self._decode(self.gate.flush(), partial=False)
        outcomes += self._decide(final=True) if self._sound_since_start() else self._forget()
        # The gate's tail added samples no input stands for: start the timeline afresh.
        self._start_at(self._next)
        return outcomes

    def noisy(self) -> bool:
        """Whether the last 3 s of audio peak less than `noisy_snr_db` over the room's noise."""
        peak = peak_db(self._recent_level()[1])
        return peak is not None and peak < self.noisy_snr_db

    # --- internals --------------------------------------------------------------------------

    def _start_at(self, start_sample: int) -> None:
        self.gate = SpectralGate(rate=self.rate) if self.denoise else None
        self._next = start_sample
        # The Vosk stream: the audio as Vosk would hear it (after the gate, if any), whether or
        # not a stretch of silence was kept from it. Samples since _start_at:
        self._vosk_pos = 0
        # Absolute input index of Vosk-stream sample 0 (the gate delays its output).
        self._origin = start_sample - (self.gate.delay if self.gate else 0)
        self._history = np.zeros(0)  # the recent Vosk stream, for onsets and pauses (a view:
        self._buffer = np.empty(20 * self.rate)  # of this, filled up then shifted, see _decode;
        # empty, not zeros: only what was filled is read, and zeroing 20 s cost a millisecond)
        self._history_start = 0  # Vosk-stream index of _history[0]
        self._level_at = -1  # the Vosk position _level was measured at
        self._level: tuple[np.ndarray, np.ndarray] = (np.zeros(0), np.zeros(0))
        self._band, self._band_at = np.zeros(0), 0  # see _recent_level
        self._band_state: np.ndarray | None = None
        self._recent: list[tuple[str, int, int, float]] = []  # decided (intent, start, end, level dB)
        self._levels = LevelTracker(self.rate)
        self._sound_until = 0  # the Vosk-stream position where the last sound ended
        self._fed_until = 0  # ...up to which Vosk was given the audio
        self._paused = False  # silence is being kept from Vosk
        if getattr(self, "_fed", None) == 0 and self._decoder_grammar == self._grammar:
            self._restart_decoder()  # one opened for this grammar and never fed: keep it
        else:
            self._new_decoder()

    def _new_decoder(self) -> None:
        self._decoder = (open_decoder(self.model, self.rate, self._grammar)
                         if self._grammar is not None else _Deaf())
        self._decoder_grammar = self._grammar
        self._decoder.SetMaxAlternatives(self.alternatives)
        self._restart_decoder()

    def _restart_decoder(self) -> None:
        # Vosk's times count the samples it was given since its creation: remember where its
        # sample 0 is in our stream (moved on whenever skipped silence ends, see `_decode`).
        self._decoder_base = self._vosk_pos
        self._fed = 0  # samples given to this decoder
        self._clear_partial()
        self._utterance_start = self._vosk_pos

    def _clear_partial(self) -> None:
        """A new utterance: no partial result yet."""
        self._partial_raw: str | None = None  # Vosk's latest partial result, as it sent it
        self._partial_text = ""  # ...its words
        self._partial_matches: list[Match] = []  # ...the active phrases in them
        self._partial_phrase = False  # ...whether there are any
        self._partial_since = self._vosk_pos  # ...unchanged since this Vosk position

    def _sound_since_start(self) -> bool:
        """Whether the utterance under way holds any sound over the room's floor. Without one
        its final result can give nothing (a decision needs speech under its first word, see
        `_onset`), and reading it costs as much as deciding on a shout."""
        start = self._utterance_start - self._history_start
        if start < 0 or len(self._history) - start > 3 * self.rate:
            return True  # longer than the level measured: read it
        centres, level = self._recent_level()
        return bool(np.any(level[centres >= start] > QUIET_DB))

    def _forget(self) -> list[Outcome]:
        """End an utterance of silence without reading its result."""
        self._decoder.Reset()
        self._clear_partial()
        self._utterance_start = self._vosk_pos
        return []

    def _decode(self, heard: np.ndarray, partial: bool = True) -> list[Outcome]:
        if len(heard) == 0:
            return []
        # The last 10 to 20 s, appended in place: copying 10 s for every 50 ms chunk cost more
        # than the rest of the Python side together.
        n, kept = len(heard), len(self._history)
        if kept + n > len(self._buffer):
            kept = min(kept, 10 * self.rate)
            tail = self._history[len(self._history) - kept:].copy()
            if kept + n > len(self._buffer):  # a chunk longer than 10 s
                self._buffer = np.empty(2 * (kept + n))
            self._buffer[:kept] = tail
        self._buffer[kept:kept + n] = heard
        self._history = self._buffer[:kept + n]
        self._vosk_pos += len(heard)
        self._history_start = self._vosk_pos - len(self._history)
        if self.skip_silence and partial:
            loud = self._levels.loudest(heard)  # None: no floor yet, Vosk gets it
            if loud is not None and loud > self.skip_db:
                self._sound_until = self._vosk_pos
            elif loud is not None and not self._partial_phrase:
                paused = self._pause()
                if paused is not None:
                    return paused
        if self._paused:  # sound again: Vosk gets it with the audio just before
            self._paused = False
            before = min(self.preroll, self._vosk_pos - len(heard) - self._fed_until,
                         len(self._history) - len(heard))
            heard = self._history[len(self._history) - len(heard) - before:]
            self._decoder_base = self._vosk_pos - len(heard) - self._fed
            self._utterance_start = self._partial_since = self._vosk_pos - len(heard)
        self._fed += len(heard)
        self._fed_until = self._vosk_pos
        if self._decoder.AcceptWaveform(to_pcm16(heard).tobytes()):
            return self._decide(final=False)  # Vosk's own endpoint
        if partial and self._utterance_over(self._decoder.PartialResult()):
            return self._decide(final=True)
        return []

    def _pause(self) -> list[Outcome] | None:
        """Called on a quiet chunk while Vosk's partial holds no active phrase (nothing to decide
        on from partials; Vosk's endpoint would close it after its silence): keep the silence from
        Vosk (returns the decision that ends the utterance under way, usually none), or None to
        give it this chunk (sound ended less than `hold_s` ago: the speaker may go on)."""
        if self._paused:
            return []
        if self._sound_until <= self._utterance_start and self._utterance_start >= self._levels.since:
            outcomes = self._forget()  # no sound in it at all (the check in flush is dearer)
        elif self._sound_until > self._utterance_start and self._vosk_pos - self._sound_until < self.hold:
            return None
        else:  # sound ended hold_s ago, or the utterance began before the floor was known
            outcomes = self._decide(final=True) if self._sound_since_start() else self._forget()
        self._paused = True
        return outcomes

    def _utterance_over(self, raw: str) -> bool:
        """Whether to close the utterance now (`raw`: Vosk's partial result): it has settled and
        the speaker has stopped, or it has not changed for max_wait_s (too loud to hear the end)."""
        if raw != self._partial_raw:  # read again only when it changed: mostly it has not
            self._partial_raw = raw
            words = parse_words(json.loads(raw), self.rate)
            text = " ".join(w.text for w in words)
            if text != self._partial_text:
                self._partial_text, self._partial_since = text, self._vosk_pos
            self._partial_matches = [m for m in find_phrases(words, self._heard)
                                     if m.phrase.intent in self.active]
            self._partial_phrase = bool(self._partial_matches)
        matches = self._partial_matches
        if not matches:
            return False  # nothing to decide on yet: Vosk's endpoint will close it
        age = self._vosk_pos - self._partial_since
        if age >= self.max_wait:
            return True
        if may_grow(matches[-1], self.phrases):
            return False  # "chouette" may become "chouette velute" after a breath
        if age < self.stable or (age < self.noisy_stable and self.noisy()):
            return False  # in noise, Vosk's guesses flip for longer
        return self._speech_ended()

    def _decide(self, final: bool) -> list[Outcome]:
        """The utterance's one decision, from its final result (Vosk's n-best list)."""
        result = json.loads(self._decoder.FinalResult() if final else self._decoder.Result())
        self._clear_partial()
        utterance_start, self._utterance_start = self._utterance_start, self._vosk_pos
        readings = read_result(result, self._heard, self.garbage, self.rate)
        noisy = self.noisy()
        verdict = judge(readings, set(self.active), self.noisy_margin if noisy else self.margin,
                        self.alternative_margin if noisy else 0.0,
                        nbest="alternatives" in result, strays=noisy, mixes=self.mixes)
        if verdict is None:
            return self._race_look(utterance_start, readings)
        if not verdict.understood:
            first, last = (self._shift(w) for w in (verdict.match.words[0], verdict.match.words[-1]))
            onset = self._onset_after_pause(first)
            if onset is None:
                return []  # noise or table talk: nothing, and no second look to pay for
            start = max(utterance_start, first.start - self.rate * 3 // 10)
            second = self._second_look(start, readings, (first, last)) if self.second_look else None
            if second is not None:
                return self._emit(*second)
            race = self._race_look(utterance_start, readings)
            if race:
                return race
            if not verdict.ask_again:
                return []
            return self._not_understood(onset, last, verdict.reason)
        match = Match(verdict.match.phrase, tuple(map(self._shift, verdict.match.words)),
                      verdict.match.last)
        if "alternatives" not in result and match.confidence < self.min_confidence:
            return []
        return self._emit(match, verdict.confidence if "alternatives" in result else match.confidence)

    def _shift(self, word: Word) -> Word:
        base = self._decoder_base  # Vosk times run from the decoder's creation
        return Word(word.text, word.start + base, word.end + base, word.conf)

    def _speech_ended(self) -> bool:
        """Whether the last `end_quiet_s` of audio is quiet (the speaker has stopped)."""
        end = len(self._history)
        if end <= self.end_quiet + self.rate // 10:
            return False
        centres, level = self._recent_level()
        return bool(np.all(level[centres >= end - self.end_quiet] <= QUIET_DB))

    def _recent_level(self) -> tuple[np.ndarray, np.ndarray]:
        """The level of the last 3 s of audio over their noise floor (`voice.audio.loudness`),
        measured once per chunk: the end-of-speech and noisy-room checks read the same."""
        if self._level_at != self._vosk_pos:
            end = len(self._history)
            window = min(end, 3 * self.rate)
            new = self._vosk_pos - self._band_at
            # The 3 s filtered above 250 Hz, kept from the last measurement and carried on
            # over the audio since: filtering all of it again cost more than Vosk's own work.
            if self._band_state is None or new >= window:
                self._band, self._band_state = speech_band(self._history[end - window:], self.rate)
            elif new:
                more, self._band_state = speech_band(self._history[end - new:], self.rate,
                                                     self._band_state)
                self._band = np.concatenate([self._band, more])[-window:]
            self._band_at = self._vosk_pos
            self._level = loudness(self._history, end - window, end, self.rate, band=self._band)
            self._level_at = self._vosk_pos
        return self._level

    def _onset_after_pause(self, first: Word) -> int | None:
        """The onset of the speech under a word said after a pause (Vosk-stream index), or
        None: noise, music and clatter never stand QUIET_DB over the room where Vosk put the
        words (`speech_onset` finds none)."""
        found = self._onset(first)
        if found is None or (self.pause_s and not self._after_pause(*found, first)):
            return None
        return found[0]

    def _second_look(self, start: int, readings: Sequence[Reading],
                     span: tuple[Word, Word]) -> tuple[Match, float] | None:
        """A close call decided again: the audio around the phrase (from `start`, a Vosk-stream
        index 0.3 s before Vosk's start of it, to 0.2 s after its end) decoded afresh at each of
        `look_speeds`, by a new decoder with the same grammar. Changing the speed moves the
        frames the acoustic model sees, so a reading that only won by a hair on one framing
        wins or loses on the others. The evidence is pooled, not voted: each decode (the first
        one and every look) gives each intent its share of that decode's n-best probability
        (`intent_shares`), and the intent with the largest mean share is taken when that mean
        reaches `look_share` (`noisy_look_share` in a noisy room, where wrong readings win more
        framings); anything else stays a close call. Against the earlier rule (every look's
        best reading the same intent), on the close calls of the tuning draws (`--set tune`
        and `--set tune-wide`: 85 decisions) this took more right words and fewer wrong ones,
        clean and noisy, and one look on a word no longer sinks the others. The looks stop
        once the outcome is settled (`pooled_choice`): often after two or three.
        Costs up to four decodes of about a second, on close calls only (Vosk's own work, up
        to about 60 ms on the bench's machine, added to that decision's wait). A 3-best per
        look: the shares come out alike, for less CPU than a 10-best.

        Returns the match (the first reading holding that intent, or the close call's span with
        that phrase) and the confidence (the pooled share, see `pooled_choice`), or None.
        """
        stop = span[1].end + self.rate // 5 - self._history_start
        audio = self._history[max(0, start - self._history_start):max(0, stop)]
        padded = self._padded(audio)
        active = set(self.active)

        def looks() -> Iterator[Sequence[Reading]]:
            yield readings
            for up, down in self.look_speeds:
                # The best readings: a short n-best is cheaper.
                yield self._decode_afresh(to_pcm16(resample_poly(padded, up, down)).tobytes(),
                                          self._grammar or "[]", self._heard, alternatives=3)

        bar = self.noisy_look_share if self.noisy() else self.look_share
        chosen = pooled_choice(looks(), 1 + len(self.look_speeds), active, bar)
        if chosen is None:
            return None
        intent, share = chosen
        heard = next((m for r in readings for m in r.matches if m.phrase.intent == intent), None)
        if heard is not None:
            return Match(heard.phrase, tuple(map(self._shift, heard.words)), heard.last), share
        phrase = next(p for p in self.phrases if p.intent == intent)
        return Match(phrase, span, False), share

    def _padded(self, audio: np.ndarray) -> np.ndarray:
        """A cut of the history between two silences: a fresh decoder needs a little silence to
        start from."""
        pad = np.zeros(self.rate // 10)
        return np.concatenate([pad, audio, pad])

    def _decode_afresh(self, pcm: bytes, grammar: str, heard: Sequence[Phrase], alternatives: int) -> list[Reading]:
        """`pcm` decoded by a new decoder with `grammar` (the second look's and the race look's)."""
        decoder = open_decoder(self.model, self.rate, grammar)
        decoder.SetMaxAlternatives(alternatives)
        decoder.AcceptWaveform(pcm)
        return read_result(json.loads(decoder.FinalResult()), heard, self.garbage, self.rate)

    def _race_look(self, utterance_start: int, readings: Sequence[Reading]) -> list[Outcome]:
        """While a race is open: an utterance that gave nothing (or a close call the second look
        left open) decoded again with a grammar of only the race's phrases and the garbage word.

        The full grammar holds every phrase of the lexicon (decoys), and Vosk lets any of its
        words follow any other: a shout often came out as a mix of two phrases' words ("어제
        염소" for 어제 농구), or as nothing, with the race's phrase under it. With only the race's
        phrases to choose from, its words can no longer be swapped for another phrase's. But
        that grammar forces any speech into its phrase (the garbage word rarely wins: on the
        tuning clips other shouts, single words and talk came out as the race's phrase at every
        resampling speed tried), so it is taken only when (1) the best reading of that decode
        says one race phrase (alone, or with a word unclear: `said_in_race`) and beats every
        reading that does not say it (the garbage word alone, the phrase among other words, its
        last words alone: `its_tail`; a stumble into it is none: `stumbles_into`; as in `judge`,
        not the empty path) by `race_margin`, and (2) the same audio decoded with the whole grammar
        gives no reading more than `race_ratio` (log-likelihood) over it. That ratio split the
        tuning draws cleanly: shouts of the race's phrase -7.6 to 1.7 (one at 6.1), everything
        else forced into it 5.8 to 23.9.
        Not looked at: an utterance whose best reading said another phrase whole (a decoy or
        another intent: someone said something else). The onset and pause checks are those of
        every detection (`_emit`). Costs two decodes of the utterance's audio, on such
        utterances during races only. With `crowded`, a reading of the phrase among other voices
        saying it counts too; where nothing does, the audio from the player's own voice's rise
        is read again (up to two more decodes); and where that finds nothing either, the first
        readings are taken once more with the phrase's last words alone as its own (`tails`:
        the phrase just under them, or over them by less than `race_margin`): each a crowded
        detection (see the class).
        """
        if not (self.race_look and self._race_grammar):
            return []
        said = [r for r in readings if r.words]
        if said and said[0].whole and said[0].matches and not set(said[0].intents(set(self.race))):
            return []  # another phrase, said whole: not the race's
        if said:
            words = [self._shift(w) for r in said for w in r.words]
            start = max(utterance_start, min(w.start for w in words) - self.rate * 3 // 10)
            stop = max(w.end for w in words) + self.rate // 5
        else:  # Vosk heard nothing: the utterance's sound
            start, stop = utterance_start, self._vosk_pos
        first = self._race_readings(start, stop)
        found = self._race_verdict(start, *first)
        if found or not self.crowded:
            return found
        rise = self._own_rise(start, stop)
        if rise is not None:
            cut = rise - self.rate // 20
            found = self._race_verdict(cut, *self._race_readings(cut, stop), own_from=rise)
        # Last, as nothing else found it: the phrase under its own end (its first word lost).
        return found or self._race_verdict(start, *first, tails=True)

    def _own_rise(self, start: int, stop: int) -> int | None:
        """Where, between two Vosk-stream indices, a sound already there (other players' voices,
        QUIET_DB over the floor for the 100 ms before) jumps most over those 100 ms (the mean
        level of the next 50 ms against theirs), when it is `crowd_rise_db` or more: the
        player's own voice rising over the others' faint ones. None where no such jump is."""
        lo, hi = max(0, start - self._history_start), max(0, stop - self._history_start)
        centres, level = loudness(self._history, lo, hi, self.rate)  # 10 ms frames every 2.5 ms
        before, after = 40, 20  # frames: 100 ms, 50 ms
        if len(level) < before + after + 1:
            return None
        sums = np.concatenate([[0.0], np.cumsum(level)])
        at = np.arange(before, len(level) - after + 1)
        heard_before = (sums[at] - sums[at - before]) / before
        jump = (sums[at + after] - sums[at]) / after - heard_before
        # From silence, or through a pause: the start of a sound, not a voice over another.
        quietest = np.lib.stride_tricks.sliding_window_view(level, before)[:len(at)].min(axis=1)
        jump[quietest < QUIET_DB] = -np.inf
        best = int(np.argmax(jump))
        if jump[best] < self.crowd_rise_db:
            return None
        # The first frame of the louder 50 ms starts about where the sound rose.
        return self._history_start + int(centres[at[best]]) - self.rate // 200

    def _race_readings(self, start: int, stop: int) -> tuple[bytes, list[Reading]]:
        """The audio between two Vosk-stream indices (padded, as PCM) and its readings by the
        race's grammar, best first (none where there is no audio)."""
        assert self._race_grammar is not None  # a race is open
        audio = self._history[max(0, start - self._history_start):max(0, stop - self._history_start)]
        if not len(audio):
            return b"", []
        pcm = to_pcm16(self._padded(audio)).tobytes()
        looked = self._decode_afresh(pcm, self._race_grammar, self._race_phrases, self.alternatives or 10)
        return pcm, [r for r in looked if r.words]

    def _race_verdict(self, start: int, pcm: bytes, looked: Sequence[Reading], own_from: int | None = None,
                      tails: bool = False) -> list[Outcome]:
        """The race look's decision on the readings of the audio from Vosk-stream index
        `start` (`_race_readings`), under the checks `_race_look` gives: the race's phrase said
        (`said_in_race`), or, with `crowded`, said among others (`said_among_others`).
        `own_from`: the audio starts 50 ms before the own voice's rise there (`_own_rise`), not
        at the utterance's: whatever is found is crowded, and begins no earlier than that rise.
        `tails`: with `crowded`, the phrase under its own last words counts too
        (`_under_its_tail`), and its last words alone are no rival to it: tried last, so that it
        never takes the place of what the other readings find."""
        alternatives = self.alternatives or 10
        top = looked[0] if looked else None
        said_top = next(((p, placed) for p in self._race_phrases
                         if top and (placed := said_in_race(top.words, p, self.garbage))), None)
        crowded = own_from is not None
        by_its_end = False
        if said_top is None and self.crowded and top is not None:
            said_top = next(((p, placed) for p in self._race_phrases
                             if (placed := said_among_others(top.words, p, self.garbage))), None)
            if said_top is None and tails:
                said_top = self._under_its_tail(top, looked[1:])
                by_its_end = said_top is not None
            crowded = True
        if top is None or said_top is None:
            return []
        phrase, placed = said_top

        def gap_to_rival(among_others: bool, its_end_too: bool) -> float:
            """How far the top reading is over the best one not saying the phrase (among
            others' voices saying it too: `among_others`; or its last words alone, too)."""
            rival = next((r for r in looked[1:] if said_in_race(r.words, phrase, self.garbage) is None
                          and not stumbles_into(r.words, phrase)
                          and not (among_others and said_among_others(r.words, phrase, self.garbage))
                          and not (among_others and its_end_too and its_tail(r.words, phrase, self.garbage))),
                         None)
            return math.inf if rival is None else top.score - rival.score

        def lead(its_end_too: bool) -> tuple[float, bool]:
            """The gap to the rival, and whether the reading is crowded."""
            gap = gap_to_rival(crowded, its_end_too)
            if gap < self.race_margin and self.crowded and not crowded:
                # Said plainly, but just over the phrase among others' voices: crowded.
                return gap_to_rival(True, its_end_too), True
            return gap, crowded

        gap, crowded_now = lead(tails)
        if gap < self.race_margin:
            return []
        if tails and not by_its_end and lead(False)[0] >= self.race_margin:
            return []  # its end alone changes nothing: decided (and refused) without it
        crowded = crowded_now
        # The same audio with the whole grammar: how much better than the race's phrase the
        # best reading of anything else fits. A shout of the race's phrase fits it about as
        # well as anything (the whole grammar often says the phrase itself on this cut); other
        # speech, forced into the phrase, fits far worse than the words it was.
        assert self._grammar is not None  # a race's intents are active
        whole = self._decode_afresh(pcm, self._grammar, self._heard, alternatives)
        best = max((r.score for r in whole if r.words), default=-math.inf)
        log.debug("race look: %s, gap %.1f, the whole grammar's best %.1f over it",
                  phrase.text, gap, best - top.score)
        if best - top.score > self.race_ratio:
            if not (self.crowded and best - top.score <= self.crowd_ratio):
                return []
            crowded = True  # a little over the ratio: taken only where another phone bears it out
        base = start - self.rate // 10  # the silence `_padded` put before the cut
        shifted = tuple(Word(w.text, w.start + base, w.end + base, w.conf) for w in placed)
        return self._emit(Match(phrase, shifted, False), 1.0 / (1.0 + math.exp(-gap)), crowded, own_from)

    def _under_its_tail(self, top: Reading, others: Sequence[Reading]) -> tuple[Phrase, tuple[Word, ...]] | None:
        """A race phrase and its words where the race look's `top` reading says only the
        phrase's last words (`its_tail`) and a reading within `race_margin` under it says the
        whole phrase: a soft first word lost in the noise (at seeds 2-3 of the bench's tuning
        set, 8 of the 13 shouts missed at 8 phones). Placed by the whole phrase's words, so the
        onset is sought at its first word."""
        for phrase in self._race_phrases:
            if its_tail(top.words, phrase, self.garbage):
                for reading in others:
                    placed = said_in_race(reading.words, phrase, self.garbage)
                    if placed and top.score - reading.score < self.race_margin:
                        return phrase, placed
        return None

    def _not_understood(self, onset: int, last: Word, reason: str) -> list[Outcome]:
        """Say it again, for speech from `onset` (found by `_onset_after_pause`) to `last`."""
        log.info("not understood: %s", reason)
        outcome = NotUnderstood(self.clock(self._origin + onset),
                                self.clock(self._origin + last.end + self.onset_bias),
                                self.clock(self._next or 0), reason)
        return [] if self._masked(outcome.onset_s) else [outcome]

    def _emit(self, match: Match, confidence: float, crowded: bool = False,
              own_from: int | None = None) -> list[Outcome]:
        """The detection of `match` (Vosk-stream word times), its onset from the audio.
        `own_from`: where the player's own voice rose over the others' (`_own_rise`): the
        sound before it, heard over the pause, was theirs."""
        intent, start, end = match.phrase.intent, match.words[0].start, match.words[-1].end
        level = self._level_db(start, end)
        # The tail of an utterance already decided (closed early on a breath): the same voice
        # at about the same level. A voice TAIL_LOUDER_DB louder is another player's shout (on
        # a phone, its own player's after another's heard faintly), never a tail.
        if any(i == intent and s < end and start < e + self.rate // 2 and level < db + TAIL_LOUDER_DB
               for i, s, e, db in self._recent):
            return []
        found = self._onset(match.words[0]) if self.refine else (start + self.onset_bias, 0.0)
        if found is None:
            log.debug("ignored %s: no speech where Vosk heard it", intent)
            return []
        if self.pause_s and not self._after_pause(*found, match.words[0]):
            log.debug("ignored %s: said inside running speech", intent)
            return []
        rise = found[0]
        onset = self._soft_start(*found) if self.refine else rise
        if own_from is not None and onset < own_from:
            onset = rise = max(rise, own_from)
        detection = Detection(
            intent=intent, phrase=match.phrase.text,
            onset_s=self.clock(self._origin + onset),
            end_s=self.clock(self._origin + end + self.onset_bias),
            confidence=confidence,
            detected_at_s=self.clock(self._next or 0),
            rise_s=None if onset == rise else self.clock(self._origin + rise),
            crowded=crowded,
        )
        if self._masked(detection.onset_s):
            log.info("ignored %s: its onset falls in our own playback", intent)
            return []  # (not recorded: the host's sound is no utterance whose tail a shout could be)
        self._recent = [r for r in self._recent if r[2] > self._vosk_pos - 30 * self.rate]
        self._recent.append((intent, start, end, level))
        return [detection]

    def _level_db(self, start: int, end: int) -> float:
        """The RMS level (dB) of the audio under Vosk-stream span [start, end): what tells a
        louder voice from an utterance's tail. -inf where none of it is held."""
        a, b = max(0, start - self._history_start), max(0, end - self._history_start)
        level = rms(self._history[a:b])  # (0 for none of it)
        return 20 * math.log10(level) if level > 0 else float("-inf")

    def _masked(self, onset_s: float) -> bool:
        return any(a <= onset_s <= b for a, b in self._masks)

    def _onset(self, first: Word) -> tuple[int, float] | None:
        """The phrase onset in the Vosk stream, the start of the speech under its first word,
        and the level of the noise it rises from (see `speech_onset`); None: no speech there."""
        i = first.start - self._history_start
        if not 0 <= i < len(self._history):
            return first.start + self.onset_bias, 0.0
        found = speech_onset(self._history, i, first.end + self.onset_bias - self._history_start,
                             self.rate)
        return None if found is None else (self._history_start + found[0], found[1])

    def _soft_start(self, rise: int, noise_db: float) -> int:
        """A soft start before the rise `_onset` found (`voice.audio.soft_start`)."""
        i = rise - self._history_start
        if not 0 < i <= len(self._history):
            return rise
        return self._history_start + soft_start(self._history, i, noise_db, self.rate)

    def _after_pause(self, onset: int, noise_db: float, first: Word) -> bool:
        i = onset - self._history_start
        if not 0 < i <= len(self._history):
            return True
        # The floor speech_onset measured the noise against: the 3 s before the word's end.
        until = first.end + self.onset_bias - self._history_start
        return quiet_before(self._history, i, self.rate, self.pause_s, noise_db=noise_db,
                           until=min(len(self._history), until), ignore=self._played_before(i))

    def _played_before(self, i: int) -> list[tuple[int, int]]:
        """The spans of `_history` in the second before its index i where the host was playing
        (`mask_playback`): a shout right after the chirp or a bot's shout follows no speech of
        its player's, only the host's own sound and its echo."""
        if not self._masks:
            return []
        lo = max(0, i - self.rate)
        at = self.clock(self._origin + self._history_start + lo)  # host time of _history[lo]
        spans = [(lo + math.floor((a - at) * self.rate), lo + math.ceil((b - at) * self.rate)) for a, b in self._masks]
        return [(start, end) for start, end in spans if start < i and end > lo]


class _Deaf:
    """Stands in for a Vosk recogniser when no active phrase can be heard."""

    def AcceptWaveform(self, data: bytes) -> bool:  # Vosk's method names
        return False

    def PartialResult(self) -> str:
        return '{"partial": ""}'

    def Result(self) -> str:
        return '{"text": ""}'

    def FinalResult(self) -> str:
        return '{"text": ""}'

    def SetMaxAlternatives(self, count: int) -> None:
        pass

    def Reset(self) -> None:
        pass
