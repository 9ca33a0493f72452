"""Phones against each other: a capture that slipped, found in the sounds they all hear (pure
computation, no I/O).

Each phone's samples are placed on the host's clock by its own timing chain
(voice/phone_clock.py), anchored by the chirp. What the chain cannot see is a capture that
slips: in a recorded real run (docs/web.md) Chromium's capture moved its samples against their
numbers by a whole buffer (1024 frames at 44.1 kHz: 23.2 ms), with no stamp to show it, and
that phone's shouts sat that much off the others' until a chirp was heard again. A race 50 ms
apart was then 27 or 73 ms apart on the host's clock.

At a table every phone hears every voice, so two phones' streams on the host's clock hold the
same sounds at the same moments, give or take the sound's travel (a voice's distances to two
phones differ by 2 m at most: 6 ms). The lag between the same second of two streams is read by
generalised cross-correlation with the phase transform (GCC-PHAT: each frequency weighted
alike, so the direct sound's sharp peak stands out of the room's echoes), over speech's band,
every half second where both hold a sound. A pair's lag is measured against its usual one (the
voices' travel: one figure for the sounds louder at each of the two), and where most of its
last readings, from more than one window's audio, agree that it is off by more than OFF_S, the
pair is out of step, where readings of sounds louder at either phone say so. Whose: the phone
out of step with two others or more, all the same way, with most of those it has a lag with,
and those in step with more phones than it is (two phones slipped alike against two that did
not are a tie); with two phones streaming nobody can tell whose, and the slip is 0 s for both:
no onset moves, the chirp measures both (and so every phone of a tie). The host takes the slip
off that phone's onsets (`PhoneClock.slip`) and plays the chirp again when it may, which
measures the phone anew.

Constants chosen on the bench's tuning tables (scripts/bench_web.py --set tune --crosstalk-db 14
--browser-stamps --capture-slips, docs/web.md). What it cannot do: a phone alone at the table
(no other stream to compare), a phone that hears nobody else (a headset), and a slip that comes
and goes within the few seconds of talk a reading needs.
"""

from __future__ import annotations

import math
import threading
from collections import deque

import numpy as np

from voice.audio import RATE
from voice.crosstalk import SampleClock
from voice.phone_clock import highest_peak

WINDOW_S = 1.0  # the stretch of two streams compared...
EVERY_S = 0.5  # ...every this much of the streams (windows overlap: a shout is seen whole in one)
KEEP_S = 2.0  # each stream's recent audio kept for it
MAX_LAG_S = 0.06  # the lags looked at: a slip of a buffer or two, and the sound's travel
OFF_S = 0.015  # out of step by more than a voice's travel (6 ms at most) and the chains' error (a few ms)
AGREE_S = 0.004  # two readings this close are the same lag...
VOTES = 4  # ...and a pair's lag is the one most of its last this-many readings agree on...
CONFIRM = 3  # ...at least this many of them...
SPAN_S = 1.2  # ...spread over this much of the streams (two windows with no audio in common)
LOOK_S = 10.0  # ...all of the last this-much
BAND_HZ = (300.0, 4000.0)  # speech's strong band: below it the room's rumble, above it little voice
SOUND_DB = 15.0  # a window holds a sound both phones heard: its loud end this far over its quiet end...
MIN_CLEAR = 1.8  # ...and a correlation peak this many times the next one outside PEAK_GUARD_S
PEAK_GUARD_S = 0.007  # other voices in step (their travel differs by 6 ms at most) and echoes off the table
STALE_S = 2.0  # a stream not heard for this long (of the others' time) is not streaming


def lag_s(a: np.ndarray, b: np.ndarray, rate: int = RATE) -> tuple[float, float] | None:
    """How much later the sounds in `a` sit than the same sounds in `b` (seconds; the two of
    equal length, starting at the same moment), by GCC-PHAT over BAND_HZ within MAX_LAG_S, and
    how clear the peak is (its height over the next one's outside PEAK_GUARD_S). None where one
    of them holds no sound (`SOUND_DB`)."""
    if len(a) != len(b) or len(a) < rate // 10 or min(loudness_db(a, rate), loudness_db(b, rate)) < SOUND_DB:
        return None
    return lag_between(spectrum(a, rate), spectrum(b, rate), rate)


def spectrum(samples: np.ndarray, rate: int = RATE) -> np.ndarray:
    """A stretch's spectrum for `lag_between` (Hann-windowed, padded against wrap-around, only
    BAND_HZ kept)."""
    size = 1 << math.ceil(math.log2(2 * len(samples)))
    out = np.fft.rfft(samples * np.hanning(len(samples)), size)
    freqs = np.fft.rfftfreq(size, 1.0 / rate)
    out[(freqs < BAND_HZ[0]) | (freqs > BAND_HZ[1])] = 0.0
    return out


def lag_between(sa: np.ndarray, sb: np.ndarray, rate: int = RATE) -> tuple[float, float]:
    """`lag_s` from the two stretches' `spectrum`s."""
    cross = sa * np.conj(sb)
    cross /= np.abs(cross) + 1e-12  # the phase transform: every frequency alike
    correlation = np.fft.irfft(cross, 2 * (len(sa) - 1))
    reach = round(MAX_LAG_S * rate)
    lags = np.concatenate([correlation[-reach:], correlation[:reach + 1]])  # lags -reach..reach
    at, top, next_top = highest_peak(lags, round(PEAK_GUARD_S * rate))
    return (at - reach) / rate, top / max(next_top, 1e-12)


def loudness_db(samples: np.ndarray, rate: int = RATE) -> float:
    """How far a stretch's loud end (its loudest 10 ms frames) stands over its quiet end: a
    voice or the loudspeaker over the room's noise, whatever the microphone's gain."""
    frame = rate // 100
    count = len(samples) // frame
    energy = np.mean(samples[:count * frame].reshape(count, frame) ** 2, axis=1) + 1.0
    db = 10 * np.log10(energy)
    return float(np.percentile(db, 95) - np.percentile(db, 20))


class Stream:
    """One seat's recent audio with each sample's host time (as its chain placed it)."""

    def __init__(self) -> None:
        self.chunks: deque[tuple[np.ndarray, np.ndarray]] = deque()  # (samples, host times)

    @property
    def until(self) -> float:
        return float(self.chunks[-1][1][-1]) if self.chunks else -math.inf

    def add(self, pcm: np.ndarray, first_sample: int, clock: SampleClock) -> None:
        samples = np.asarray(pcm, dtype=np.float64)
        if not len(samples):
            return
        lo, hi = clock(float(first_sample)), clock(float(first_sample + len(samples) - 1))
        times = np.linspace(lo, hi, len(samples))
        while self.chunks and self.chunks[-1][1][-1] >= lo:  # placed further back now: times go forward
            self.chunks.pop()
        self.chunks.append((samples, times))
        while self.chunks and self.chunks[0][1][-1] < hi - KEEP_S:
            self.chunks.popleft()

    def shift(self, seconds: float) -> None:
        """Every kept sample placed this much later (negative: earlier)."""
        self.chunks = deque((samples, times + seconds) for samples, times in self.chunks)

    def window(self, lo: float, count: int) -> tuple[np.ndarray, float] | None:
        """`count` samples from the first one placed at or after `lo`, and that one's host time;
        None where the kept audio does not hold them all in a row."""
        if not self.chunks:
            return None
        samples = np.concatenate([c[0] for c in self.chunks])
        times = np.concatenate([c[1] for c in self.chunks])
        start = int(np.searchsorted(times, lo))
        if start + count > len(samples) or start >= len(times):
            return None
        span = times[start + count - 1] - times[start]
        if abs(span - (count - 1) / RATE) > 0.01 * count / RATE:  # a gap or a restart inside
            return None
        return samples[start:start + count], float(times[start])


class Alignment:
    """The table's phones checked against each other: `feed` each seat's audio as its chain
    places it, and apply the slips it returns (seat, seconds that seat's sounds sit late).
    Streams feed it from their own threads."""

    def __init__(self) -> None:
        self.streams: dict[int, Stream] = {}
        # (a, b): (time, lag a - b, side: 0 where a heard it louder, else 1)
        self.readings: dict[tuple[int, int], deque[tuple[float, float, int]]] = {}
        # (a, b, side): the pair's lag when in step (the voices' travel: louder at a, the voice is
        # mostly a's own player's, nearer a, and a hears it earlier than b; louder at b, later)
        self.usual: dict[tuple[int, int, int], float] = {}
        self.slips: deque[tuple[float, int, float]] = deque(maxlen=1000)  # (host time, seat, seconds) found
        self.flagged: set[int] = set()  # seats out of step, whose unknown (0 s), until the chirp measures them
        self._checked = -math.inf  # the end of the last window read
        self._lock = threading.Lock()

    def feed(self, seat: int, pcm: np.ndarray, first_sample: int, clock: SampleClock,
             timed: bool = True) -> list[tuple[int, float]]:
        """A chunk of the seat's stream; `timed`: its input delay is known (before the chirp a
        stream sits tens of ms off the others, and is not compared). Returns the slips found
        now: (seat, seconds), each to take off that seat's host times from now on."""
        with self._lock:
            if not timed:
                self.streams.pop(seat, None)
                self._forget(seat)
                return []
            self.streams.setdefault(seat, Stream()).add(pcm, first_sample, clock)
            return self._check()

    def measured(self, seat: int) -> None:
        """The chirp measured the seat's phone anew: its readings from before are forgotten (they
        would find the slip the chirp set right), and it may be flagged again."""
        with self._lock:
            self._forget(seat)
            self.flagged.discard(seat)

    def _forget(self, seat: int) -> None:
        for pair in [p for p in self.readings if seat in p]:
            del self.readings[pair]

    def _streaming(self) -> list[int]:
        newest = max((s.until for s in self.streams.values()), default=-math.inf)
        return sorted(seat for seat, s in self.streams.items() if s.until >= newest - STALE_S)

    def _check(self) -> list[tuple[int, float]]:
        seats = self._streaming()
        if len(seats) < 2:
            return []
        until = min(self.streams[s].until for s in seats) - MAX_LAG_S
        if until < self._checked + EVERY_S:
            return []
        self._checked = until
        count = round(WINDOW_S * RATE)
        spectra: dict[int, tuple[np.ndarray, float, float]] = {}  # each seat's once, for all its pairs
        for seat in seats:
            window = self.streams[seat].window(until - WINDOW_S, count)
            if window is not None and (loud := loudness_db(window[0])) >= SOUND_DB:  # a sound in it
                spectra[seat] = spectrum(window[0]), window[1], loud
        for i, a in enumerate(seats):
            for b in seats[i + 1:]:
                if a not in spectra or b not in spectra:
                    continue
                (sa, ta, la), (sb, tb, lb) = spectra[a], spectra[b]
                lag, clear = lag_between(sa, sb)
                if clear >= MIN_CLEAR:
                    reading = (until, lag + ta - tb, 0 if la >= lb else 1)
                    self.readings.setdefault((a, b), deque(maxlen=VOTES)).append(reading)
        return self._slips(seats, until)

    def _lag(self, a: int, b: int, now: float) -> float | None:
        """How far the pair is out of step (a's sounds later than b's, seconds): its readings'
        lags less the pair's usual one on their side (`usual`), where most of its last VOTES
        readings of the last LOOK_S, CONFIRM or more over SPAN_S, agree on one (within AGREE_S
        of their median); else None. Not one reading, nor a few of one shout: where several
        players shout one phrase a few tens of ms apart, a window can match one player's voice
        at one phone with another's at the other (in the bench, two players saying the same
        recorded clip, or two phones that hear only their own players). Out of step only where
        readings of both sides say so: a capture that slipped moves every sound the pair hears,
        louder at either phone. In step, the usual lags are read again from these readings."""
        pair = (min(a, b), max(a, b))
        readings = [r for r in self.readings.get(pair, ()) if r[0] >= now - LOOK_S]
        if len(readings) < CONFIRM:
            return None
        out = [lag - self.usual.get((pair[0], pair[1], side), 0.0) for _, lag, side in readings]
        middle = float(np.median(out))
        near = [k for k, excess in enumerate(out) if abs(excess - middle) <= AGREE_S]
        if (len(near) < CONFIRM or 2 * len(near) <= len(readings)
                or readings[near[-1]][0] - readings[near[0]][0] < SPAN_S):
            return None
        step = float(np.mean([out[k] for k in near]))
        if abs(step) > OFF_S and len({readings[k][2] for k in near}) < 2:
            return None  # out of step only in sounds louder at one of them: see above
        if abs(step) <= OFF_S:
            for side in (0, 1):
                lags = [readings[k][1] for k in near if readings[k][2] == side]
                if lags:
                    self.usual[(pair[0], pair[1], side)] = float(np.mean(lags))
        return step if a < b else -step

    def _slips(self, seats: list[int], now: float) -> list[tuple[int, float]]:
        """The slips the pairs' lags show: the phone that sits off OFF_S or more, the same way,
        against two others or more, most of those it has a lag with, and those in step with
        more phones than it is (a pair alone cannot tell which of its two slipped), by the
        median of how far out of step it is with them (`_lag`); with only two phones streaming,
        0 s for both (nobody can tell whose: the host's chirp measures both again), and so for
        every phone of a tie. One slip at a time: its pairs are read again after it."""
        off: dict[int, dict[int, float]] = {s: {} for s in seats}  # seat: its lag against each it is off from
        in_step: dict[int, set[int]] = {s: set() for s in seats}  # seat: those it is known in step with
        for i, a in enumerate(seats):
            for b in seats[i + 1:]:
                lag = self._lag(a, b, now)
                if lag is None:
                    continue
                if abs(lag) > OFF_S:
                    off[a][b], off[b][a] = lag, -lag
                else:
                    in_step[a].add(b)
                    in_step[b].add(a)
        if len(seats) == 2:
            a, b = seats
            if b not in off[a]:
                return []
            # Nobody can tell whose capture it was, nor a slip from two players saying one
            # recording (the bench's shared clips): no onset moves, the chirp measures both.
            slips = [(a, 0.0), (b, 0.0)]
        else:
            # A phone that slipped is off from most of those it is known against, all the same
            # way, and they stand in step with more phones than it does: two phones that slipped
            # alike against two that did not are a tie nobody can break here.
            def group(s: int) -> int:
                return 1 + len(in_step[s])

            # And its lags agree: a slip moves it alike against every other, give or take their
            # travel (a pairing of two players saying one recording is not so).
            alike = [s for s in seats if len(off[s]) >= 2 and len(off[s]) > len(in_step[s])
                     and max(off[s].values()) - min(off[s].values()) <= OFF_S
                     and (min(off[s].values()) > 0 or max(off[s].values()) < 0)]
            blamed = [s for s in alike if max(group(t) for t in off[s]) > group(s)]
            if blamed:
                seat = min(blamed, key=lambda s: (group(s), -len(off[s]), s))
                slips = [(seat, float(np.median(list(off[seat].values()))))]
            elif alike:
                # A tie (as many phones in step on each side): no onset moves, and the chirp
                # measures every phone of it, as with two phones.
                slips = [(s, 0.0) for s in alike]
            else:
                return []
        # A flag (0 s) is said once, until the chirp measures the phone (`measured`); its readings
        # stay, so that a tie is still one when the next reading comes. A slip is taken off.
        slips = [(seat, seconds) for seat, seconds in slips if seconds or seat not in self.flagged]
        for seat, seconds in slips:
            if seconds:
                self.streams[seat].shift(-seconds)
                self._forget(seat)
            else:
                self.flagged.add(seat)
            self.slips.append((now, seat, seconds))
        return slips
