"""Streaming phrase detection for one player's microphone.

Audio goes in chunk by chunk with the absolute index of its first sample; `Detection`s come out
as soon as a whole active phrase shows in Vosk's *partial* result, and the final result of the
same utterance only adds what the partials missed. Each detection's onset is the first word's
start, moved from Vosk's 30 ms grid onto the energy rise in the audio, and turned into the
game's clock by sample counting (never by reading a wall clock when the result arrives).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from voice.audio import (RATE, SpectralGate, is_quiet, last_sound, peak_snr_db, quiet_before,
                         refine_onset, to_pcm16)
from voice.grammar import build_grammar, garbage_word, validate_grammar
from voice.lexicon import Lexicon, Phrase, spell_all, usable_phrases
from voice.model import VoskModel

log = logging.getLogger(__name__)

SampleClock = Callable[[int], float]
"""Maps an absolute sample index of the input stream to seconds on the game's clock."""


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


def parse_words(result: dict[str, object], rate: int = RATE) -> list[Word]:
    """The word list of a Vosk result dict, partial ("partial_result") or final ("result")."""
    items = result.get("partial_result", result.get("result")) or []
    words = []
    for item in items:  # type: ignore[union-attr]
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
    """A Vosk recogniser for a checked grammar, with word times in partial results too."""
    import vosk

    decoder = vosk.KaldiRecognizer(model.vosk, rate, grammar)
    decoder.SetWords(True)
    decoder.SetPartialWords(True)
    return decoder


class Recogniser:
    """Detects the active intents' phrases in one input stream (int16 mono at the model rate).

    clock: sample index -> game seconds (default: seconds from the first sample).
    denoise: spectral gating in front of Vosk (off by default: it cost accuracy in the bench).
    min_confidence: floor on the phrase's lowest word confidence.
    stable_s: a phrase must show in the partial results for this much audio before it counts
    (the last word of a partial is Vosk's early guess and flips while the word is being said).
    end_quiet_s / max_wait_s: a partial phrase is emitted once the speaker has been quiet for
    end_quiet_s (the shout is over, so Vosk's guess covers all of it), or after max_wait_s of
    unchanged partials when the room is too loud to hear the end. cover_s: and only if the
    phrase's last word (as Vosk has it so far) ends at most this long before the last sound,
    so a guess made before the last words were decoded waits for them.
    pause_s: a shout must follow this much quiet (0 turns the check off): a phrase found inside
    running speech is table talk, not a shout.
    onset_bias_s: Vosk's word starts run early; this is added before the audio refinement.
    decoys: the lexicon's inactive phrases go into the grammar too, and are heard but never
    reported: with one phrase active, anything else said would otherwise be forced into it.
    noisy_snr_db: the room counts as noisy while the last 3 s of sound peak less than this far
    over the noise floor (see `noisy()`); then a partial must hold for `noisy_stable_s`, and a
    final result is read from Vosk's `alternatives`-best list, taking the best alternative
    made of whole phrases within `alternative_margin` (log-likelihood) of the best path.
    `alternatives=0` turns the n-best reading off. Quiet rooms keep the strict behaviour, so
    table talk is not read as a shout. (N-best results carry no word confidences, so
    min_confidence does not apply to them.)
    """

    def __init__(self, model: VoskModel, lexicon: Lexicon, intents: Iterable[str] | None = None,
                 clock: SampleClock | None = None, *, rate: int = RATE, denoise: bool = False,
                 min_confidence: float = 0.5, stable_s: float = 0.1, end_quiet_s: float = 0.1,
                 max_wait_s: float = 0.5, cover_s: float = 0.35, pause_s: float = 0.25,
                 onset_bias_s: float = 0.04, noisy_snr_db: float = 30.0,
                 noisy_stable_s: float = 0.2, alternatives: int = 8,
                 alternative_margin: float = 2.0,
                 refine: bool = True, decoys: bool = True, chunk: int = 800) -> None:
        self.model, self.lexicon, self.rate = model, lexicon, rate
        self.clock = clock or rate_clock(rate)
        self.denoise, self.min_confidence, self.refine = denoise, min_confidence, refine
        self.stable = round(stable_s * rate)
        self.end_quiet = round(end_quiet_s * rate)
        self.max_wait = round(max_wait_s * rate)
        self.cover_slack = round(cover_s * rate)
        self.pause_s = pause_s
        self.onset_bias = round(onset_bias_s * rate)
        self.chunk = chunk  # Vosk gets at most this much audio between two partial results
        self.garbage = garbage_word(model.knows)
        self.decoys = decoys
        self.noisy_snr_db, self.alternatives = noisy_snr_db, alternatives
        self.noisy_stable = round(noisy_stable_s * rate)
        self.alternative_margin = alternative_margin
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
        self._start_at(0)
        self._next = None
        self.set_intents(list(lexicon.intents) if intents is None else intents)

    # --- configuration ----------------------------------------------------------------------

    def set_intents(self, intents: Iterable[str]) -> list[Detection]:
        """Change the active intents. The utterance under way is finished with the old grammar
        and its detections are returned (usually none)."""
        intents = list(intents)
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
        self._new_decoder()
        return pending

    def mask_playback(self, start_s: float, end_s: float) -> None:
        """Ignore detections whose onset falls in [start_s, end_s] (our own speaker playing a
        bot's shout). Times on this recogniser's clock; include the output latency in end_s."""
        self._masks.append((start_s, end_s))

    # --- streaming --------------------------------------------------------------------------

    def accept(self, pcm: np.ndarray, start_sample: int | None = None) -> list[Detection]:
        """Feed a chunk of int16 mono PCM whose first sample has absolute index `start_sample`
        (default: right after the previous chunk). Returns the detections it completed."""
        pcm = np.asarray(pcm)
        if pcm.ndim != 1:
            raise ValueError(f"expected mono PCM (one dimension), got shape {pcm.shape}")
        detections: list[Detection] = []
        if self._next is None:
            self._start_at(0 if start_sample is None else start_sample)
        elif start_sample is not None and start_sample < self._next:
            raise ValueError(f"chunk starts at sample {start_sample}, before the end of the "
                             f"previous one ({self._next}): chunks must not overlap")
        elif start_sample is not None and start_sample > self._next:
            gap = start_sample - self._next  # input was dropped
            if gap > self.rate:  # a long hole: start afresh rather than decode silence
                detections += self.flush()
                self._start_at(start_sample)
            else:  # a short one: keep the timeline by feeding silence
                detections += self.accept(np.zeros(gap, dtype=np.int16))
        for i in range(0, len(pcm), self.chunk):
            piece = pcm[i:i + self.chunk].astype(np.float64)
            self._next += len(piece)
            detections += self._decode(self.gate.process(piece) if self.gate else piece)
        return detections

    def flush(self) -> list[Detection]:
        """End of stream (or pause): finish the utterance under way and return its detections."""
        if self._next is None:
            return []
        if self.gate is None:
            return self._final(self._result(final=True))
        detections = self._decode(self.gate.flush(), partial=False)
        detections += self._final(self._result(final=True))
        # The gate's tail added samples no input stands for: start the timeline afresh.
        self._start_at(self._next)
        return detections

    # --- internals --------------------------------------------------------------------------

    def _start_at(self, start_sample: int) -> None:
        self.gate = SpectralGate(rate=self.rate) if self.denoise else None
        self._next = start_sample
        self._vosk_pos = 0  # samples given to Vosk since _start_at
        # Absolute input index of Vosk-stream sample 0 (the gate delays its output).
        self._origin = start_sample - (self.gate.delay if self.gate else 0)
        self._history = np.zeros(0)  # recent audio as Vosk heard it, for onsets and pauses
        self._history_start = 0  # Vosk-stream index of _history[0]
        self._recent: list[tuple[str, int, int]] = []  # emitted (intent, start, end)
        self._new_decoder()

    def _new_decoder(self) -> None:
        self._decoder = (open_decoder(self.model, self.rate, self._grammar)
                         if self._grammar is not None else _Deaf())
        # Vosk counts time from the decoder's creation: remember where that is in our stream.
        self._decoder_base = self._vosk_pos
        self._seen: dict[tuple[str, int], int] = {}  # match -> Vosk position first seen

    def _decode(self, heard: np.ndarray, partial: bool = True) -> list[Detection]:
        if len(heard) == 0:
            return []
        self._history = np.concatenate([self._history, heard])[-10 * self.rate:]
        self._vosk_pos += len(heard)
        self._history_start = self._vosk_pos - len(self._history)
        if self._decoder.AcceptWaveform(to_pcm16(heard).tobytes()):
            # Result keeps the speaker and noise adaptation for the next utterance.
            return self._final(self._result(final=False))
        return self._partial(json.loads(self._decoder.PartialResult())) if partial else []

    def _partial(self, result: dict[str, object]) -> list[Detection]:
        seen: dict[tuple[str, int], int] = {}
        out: list[Detection] = []
        ended: bool | None = None
        noisy: bool | None = None
        for match in self._matches(result):
            if may_grow(match, self._heard) or match.confidence < self.min_confidence:
                continue
            intent, start = match.phrase.intent, match.words[0].start
            # Word starts may shift by a frame between partials: the same match all the same.
            since = min((pos for (i, s), pos in self._seen.items()
                         if i == intent and abs(s - start) <= 0.07 * self.rate),
                        default=self._vosk_pos)
            seen[(intent, start)] = since
            age = self._vosk_pos - since
            if age < self.stable:
                continue
            if age < self.noisy_stable:  # in noise, Vosk's guesses flip for longer
                if noisy is None:
                    noisy = self.noisy()
                if noisy:
                    continue
            if ended is None:
                ended = self._speech_ended()
            if (ended and self._covers_speech(match)) or age >= self.max_wait:
                out += self._emit(match)
        self._seen = seen
        return out

    def noisy(self) -> bool:
        """Whether the last 3 s of audio peak less than `noisy_snr_db` over the room's noise."""
        end = len(self._history)
        snr = peak_snr_db(self._history, max(0, end - 3 * self.rate), end, self.rate)
        return snr is not None and snr < self.noisy_snr_db

    def _result(self, final: bool) -> dict[str, object]:
        """The utterance's result. In a noisy room, Vosk's n-best list: the best path often
        swaps one word of a phrase for a word of another (the grammar lets any of its words
        follow any other), while the whole phrase is a close second ("내일 여섯 점심" /
        "내일 점심"). In a quiet room the single best result, so table talk is not read as a
        shout because one of its n-best happens to be a phrase."""
        wanted = self.alternatives if self.alternatives and self.noisy() else 0
        self._decoder.SetMaxAlternatives(wanted)
        result = json.loads(self._decoder.FinalResult() if final else self._decoder.Result())
        alternatives = result.get("alternatives")
        return self._whole_phrases(alternatives) if alternatives else result

    def _whole_phrases(self, alternatives: list[dict[str, Any]]) -> dict[str, object]:
        """The best alternative made only of grammar phrases (and garbage) among those within
        `alternative_margin` (log-likelihood) of the best and no longer than it; the best when
        there is none. Noise adds words, so a repair may drop words but never add them."""
        top = float(alternatives[0]["confidence"])
        length = len(parse_words(alternatives[0], self.rate))
        for alternative in alternatives:
            if float(alternative["confidence"]) < top - self.alternative_margin:
                break
            words = parse_words(alternative, self.rate)
            if len(words) > length:
                continue
            matched = sum(len(m.words) for m in find_phrases(words, self._heard))
            garbage = sum(1 for w in words if w.text == self.garbage)
            if matched and matched + garbage == len(words):
                return alternative
        return alternatives[0]

    def _final(self, result: dict[str, object]) -> list[Detection]:
        self._seen = {}
        out: list[Detection] = []
        for match in self._matches(result):
            if match.confidence >= self.min_confidence:
                out += self._emit(match)
        return out

    def _matches(self, result: dict[str, object]) -> list[Match]:
        """Active phrases in a result; decoys take their words but are not reported."""
        active = set(self.active)
        return [m for m in find_phrases(self._words(result), self._heard) if m.phrase.intent in active]

    def _words(self, result: dict[str, object]) -> list[Word]:
        base = self._decoder_base  # Vosk times run from the decoder's creation
        return [Word(w.text, w.start + base, w.end + base, w.conf)
                for w in parse_words(result, self.rate)]

    def _speech_ended(self) -> bool:
        """Whether the last `end_quiet_s` of audio is quiet (the speaker has stopped)."""
        end = len(self._history)
        return end > self.end_quiet + self.rate // 10 and is_quiet(
            self._history, end - self.end_quiet, end, self.rate)

    def _covers_speech(self, match: Match) -> bool:
        """Whether the phrase runs to the end of what was said: a guess Vosk made before the
        last words were decoded ends well before the last sound."""
        end = len(self._history)
        last = last_sound(self._history, max(0, end - 3 * self.rate), end, self.rate)
        if last is None:
            return True
        return match.words[-1].end - self._history_start >= last - self.cover_slack

    def _emit(self, match: Match) -> list[Detection]:
        intent, start, end = match.phrase.intent, match.words[0].start, match.words[-1].end
        if any(i == intent and s < end and start < e for i, s, e in self._recent):
            return []  # already emitted from an earlier partial of the same utterance
        onset = self._onset(start)
        if self.pause_s and not self._after_pause(onset):
            log.debug("ignored %s: said inside running speech", intent)
            return []
        self._recent = [r for r in self._recent if r[2] > self._vosk_pos - 30 * self.rate]
        self._recent.append((intent, start, end))
        detection = Detection(
            intent=intent, phrase=match.phrase.text,
            onset_s=self.clock(self._origin + onset),
            end_s=self.clock(self._origin + end + self.onset_bias),
            confidence=match.confidence,
            detected_at_s=self.clock(self._next or 0),
        )
        if any(a <= detection.onset_s <= b for a, b in self._masks):
            log.info("ignored %s: its onset falls in our own playback", intent)
            return []
        return [detection]

    def _onset(self, start: int) -> int:
        """The phrase onset in the Vosk stream: Vosk's start plus its bias, then the energy rise."""
        guess = start + self.onset_bias
        i = guess - self._history_start
        if not self.refine or not 0 <= i < len(self._history):
            return guess
        refined = refine_onset(self._history, i, self.rate)
        return guess if refined is None else self._history_start + refined

    def _after_pause(self, onset: int) -> bool:
        i = onset - self._history_start
        if not 0 < i <= len(self._history):
            return True
        return quiet_before(self._history, i, self.rate, self.pause_s)


class _Deaf:
    """Stands in for a Vosk recogniser when no active phrase can be heard."""

    def AcceptWaveform(self, data: bytes) -> bool:  # noqa: N802 - Vosk's names
        return False

    def PartialResult(self) -> str:  # noqa: N802
        return '{"partial": ""}'

    def Result(self) -> str:  # noqa: N802
        return '{"text": ""}'

    def FinalResult(self) -> str:  # noqa: N802
        return '{"text": ""}'

    def SetMaxAlternatives(self, count: int) -> None:  # noqa: N802
        pass
