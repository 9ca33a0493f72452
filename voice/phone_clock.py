"""One phone's timing chain: its samples placed on the host's clock (pure computation, no I/O).

A phone streams 16 kHz PCM in numbered chunks, each stamped with the phone's `performance.now()`
(ms) when the page received it. Three steps put any of its samples on the host's clock,
`time.monotonic()` seconds, which the host's own microphones and the bots' timings share:

1. sample index -> phone time. The last sample of a chunk was captured no later than its stamp,
   so the line `phone_ms = c + p * index` passes under every (last index, stamp) point, through
   the lowest. Late chunks (jitter, a busy main thread) sit above it and move nothing. The slope
   p follows the audio clock's drift against performance.now(); it is read from the stamps'
   floor (the earliest of each FLOOR_BIN_S), which in Chromium steps up and down by 10-12 ms as
   the capture's buffer grows and shrinks with no sample lost (`audio_drift`).
2. phone time -> host time. NTP round trips: offset = ((t2 + t3) - (t1 + t4)) / 2, wrong by at
   most half the round trip, so only the fastest round trips count: the fastest one of each
   10 s of pings, a line fitted through them once they span 30 s (the two clocks drift).
3. minus the phone's input delay (microphone, driver, resampler, worklet: tens of ms, different
   on every phone and told by no browser API), measured acoustically: the host plays a chirp,
   this finds it in the phone's stream by normalised cross-correlation, and the difference
   between where it is heard and when it was played is the delay.

Every constant lag of steps 1 and 2 (the worklet's hand-over to the main thread) lies in the
chirp's path as well as a shout's, so the calibration takes it out with the rest. Once a chirp
is found, it anchors the stream: a sample's time is the chirp's plus the samples between them
at the fitted rate, so the stamps' floor moving (the buffer) moves no onset.
"""

from __future__ import annotations

import math
import threading
from collections import deque
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.signal import correlate

RATE = 16000

# Clock sync (step 2).
PING_WINDOW_MS = 120_000.0  # round trips older than this (phone time) are forgotten
# ...and never more than this many kept: the windows are in the phone's own time, and a broken or
# hostile page whose stamps stand still (FLOOD_PER_S frames a second) would grow them for ever,
# each refit longer than the last. A page pings once a second: 120 in the window.
PINGS_KEPT = 1000
PING_BIN_MS = 10_000.0  # one fastest round trip per bin feeds the drift line
DRIFT_SPAN_MS = 30_000.0  # fit drift only over at least this span (shorter: noise, not drift)
FASTEST = 3  # before drift can be fitted: the offset is the mean of this many fastest samples
RTT_SLACK_MS = 2.0  # ...those within this (or the fastest RTT, if larger) of the fastest
MAX_CLOCK_DRIFT = 500e-6  # a fitted drift beyond this is noise: fall back to a constant offset
# Firefox and Safari round performance.now() to 1 ms (against timing attacks): a round trip
# faster than that (a LAN, 127.0.0.1) can read shorter than the host's own time on it.
PHONE_TICK_MS = 1.0

# Sample clock (step 1).
CHUNK_WINDOW_MS = 60_000.0  # chunk stamps kept for the lower envelope
CHUNKS_KEPT = 2000  # ...and never more (see PINGS_KEPT): a page sends 600 chunks of 100 ms a minute
# A sample rate off by up to this is followed (by over 0.1 %, once a minute of floors shows it:
# TREND_BINS); by more, the drift is clamped here (the page resamples).
MAX_AUDIO_DRIFT = 5e-3
# The audio clock's drift (`audio_drift`), from the stamps' floor: headless Chromium on a loaded
# machine (docs/web.md) stamps chunks 5-30 ms late, and its floor steps by 10-12 ms every tens
# of seconds (the capture's buffer; no sample lost: two phones hearing one sound stayed aligned
# to the sample). The hull of the last 60 s read those steps as drift (300-1500 ppm): onsets
# 24 ms off at the median, 77 at p95 (scripts/bench_stamps.py).
FLOOR_BIN_S = 2.0  # the floor: each 2 s of audio's earliest stamp (over the nominal rate)
STEP_MS = 4.0  # a floor this far from the last ones' is a step of the buffer: a new piece
PIECE_BINS = 5  # a piece of the floor this long (10 s) shows the drift
# A floor that moves this fast, bin to bin over TREND_BINS or more, is cut into pieces along that
# trend (`audio_drift`). Not over fewer: real Chromium floors crept up 0.6-0.9 ms a second for
# their first 10-50 s (the buffer growing as capture starts: scripts/bench_stamps.py), which read
# as drift put onsets 15 ms off (max; p95 2.8 -> 4.5 ms).
TREND_CUT = 500e-6
TREND_BINS = 30
DRIFT_PRIOR = 100e-6  # audio clocks drift tens of ppm: a short or ragged floor moves the slope little
FLOOR_SCATTER_MS = 0.6  # a piece's floor is believed no closer than this (the stamps' ms)
FLOOR_BINS_KEPT = 1800  # an hour of floors: the drift from all of a stream, not a window
STARTUP_S = 1.0  # a stream's first second (a capture starting comes in bursts and stalls)...
STARTUP_AFTER_S = 2.0  # ...is left out of the envelope once this much audio follows its start
STALL_RECENT_S = 3.0  # if every stamp of the last this-much audio sits above the envelope...
STALL_MS = 20.0  # ...by more than this, the capture lost samples (a stall): the envelope restarts

# Calibration (step 3).
CHIRP_S = 0.15
CHIRP_LOW_HZ, CHIRP_HIGH_HZ = 1000.0, 6000.0
SEARCH_BEFORE_S, SEARCH_AFTER_S = 0.1, 0.6  # where the chirp may be heard, around its play time
MIN_PEAK = 0.3  # normalised correlation the chirp's peak must reach...
MIN_MARGIN = 1.6  # ...and this many times the next peak outside PEAK_GUARD_S of it
PEAK_GUARD_S = 0.008  # reflections off the table and near walls arrive within this
AUDIO_KEPT_S = 6.0  # recent audio kept for the search

# "rechecking": the sample clock's envelope jumped after a calibration (see _follow): a grown
# capture buffer and lost samples look alike in the stamps; only a chirp heard again can tell.
CalibrationState = Literal["pending", "ok", "failed", "rechecking"]


class PhoneClockError(RuntimeError):
    """A time was asked for before the phone's clock could be known (no round trip or no
    audio chunk yet)."""


def make_chirp(rate: int = RATE) -> np.ndarray:
    """The calibration sound: a 150 ms linear sweep from 1 to 6 kHz with 10 ms raised-cosine
    edges, float32 at full scale 1.0. Its autocorrelation is one narrow peak (5 kHz of
    bandwidth: 0.2 ms wide), it sits mostly above speech's strongest band, and it is short
    enough to play whenever a phone joins."""
    n = round(CHIRP_S * rate)
    t = np.arange(n) / rate
    sweep = (CHIRP_HIGH_HZ - CHIRP_LOW_HZ) / CHIRP_S
    chirp = np.sin(2 * np.pi * (CHIRP_LOW_HZ * t + 0.5 * sweep * t * t))
    edge = round(0.010 * rate)
    ramp = 0.5 - 0.5 * np.cos(np.pi * np.arange(edge) / edge)
    chirp[:edge] *= ramp
    chirp[n - edge:] *= ramp[::-1]
    return (0.8 * chirp).astype(np.float32)


@dataclass(frozen=True)
class Peak:
    """The chirp found in a stretch of audio: where it starts (fractional sample of that
    stretch), its normalised correlation and the next peak's outside PEAK_GUARD_S."""

    at: float
    height: float
    runner_up: float

    @property
    def clear(self) -> bool:
        return self.height >= MIN_PEAK and self.height >= MIN_MARGIN * self.runner_up


def find_chirp(audio: np.ndarray, chirp: np.ndarray, rate: int = RATE) -> Peak | None:
    """The best match of `chirp` in `audio` by normalised cross-correlation (either polarity:
    some microphones invert), the peak placed between samples by a parabola through its three
    highest values. None when the audio is shorter than the chirp."""
    x = np.asarray(audio, dtype=np.float64)
    c = np.asarray(chirp, dtype=np.float64)
    n = len(c)
    if len(x) < n:
        return None
    raw = correlate(x, c, mode="valid", method="fft")
    power = np.concatenate([[0.0], np.cumsum(x * x)])
    local = np.sqrt(np.maximum(power[n:] - power[:-n], 0.0))
    score = np.abs(raw) / (local * np.linalg.norm(c) + 1e-9 * n)
    return Peak(*highest_peak(score, round(PEAK_GUARD_S * rate)))


def highest_peak(score: np.ndarray, guard: int) -> tuple[float, float, float]:
    """Where `score` is highest (a fractional index: between samples by a parabola through its
    three highest values), that height, and the highest value more than `guard` samples from it
    (0 where there is none)."""
    k = int(np.argmax(score))
    at = float(k)
    if 0 < k < len(score) - 1:
        a, b, d = score[k - 1], score[k], score[k + 1]
        bend = a - 2 * b + d
        if bend < 0:
            at += 0.5 * (a - d) / bend
    rest = np.concatenate([score[:max(0, k - guard)], score[k + guard + 1:]])
    return at, float(score[k]), float(rest.max()) if len(rest) else 0.0


def audio_drift(times_s: np.ndarray, floors_ms: np.ndarray) -> float:
    """The audio clock's drift against performance.now() (ms per ms; 0: the nominal rate) from
    the stamps' floor: at each time (audio seconds, ascending) the earliest stamp's lateness over
    the nominal rate. The floor is cut into pieces where it steps by over STEP_MS (the capture's
    buffer), and one drift is fitted to the pieces of PIECE_BINS or more, each at its own level,
    each weighted by its own scatter (FLOOR_SCATTER_MS at least), with no drift as the prior
    (DRIFT_PRIOR): a short or ragged floor (a busy start-up) moves it little. Clamped to
    MAX_AUDIO_DRIFT.
    A drift of 0.1 % or more moves the floor STEP_MS in two bins: every floor was then a step
    from the last ones', no piece was long enough, and the drift read 0 (onsets 1.5 ms a second
    off at 0.15 %). So the floor is cut where it steps from its overall trend (the median of its
    moves from bin to bin: the buffer's steps are few), where that trend is one the pieces
    could not follow (TREND_CUT) and has held for a minute (TREND_BINS); the pieces' slopes are
    read from the floor itself. A drift of 0.1-0.5 % is then followed after its first minute."""
    level = np.asarray(floors_ms, dtype=np.float64)
    if len(level) >= TREND_BINS:
        trend = float(np.median(np.diff(level) / np.diff(times_s)))  # ms of floor per s of audio
        if abs(trend) > TREND_CUT * 1000.0:
            level = level - trend * np.asarray(times_s)
    pieces: list[list[int]] = []
    for j in range(len(level)):
        if pieces and abs(level[j] - np.median(level[pieces[-1][-3:]])) <= STEP_MS:
            pieces[-1].append(j)
        else:
            pieces.append([j])
    spread, shared = 1.0 / (DRIFT_PRIOR * 1000.0) ** 2, 0.0  # in ms of floor per s of audio
    for piece in pieces:
        if len(piece) < PIECE_BINS:
            continue
        t = times_s[piece] - times_s[piece].mean()
        m = floors_ms[piece] - floors_ms[piece].mean()
        own = float(t @ m) / float(t @ t)
        scatter = max(FLOOR_SCATTER_MS, float(np.sqrt(np.sum((m - own * t) ** 2) / (len(piece) - 2))))
        spread += float(t @ t) / scatter**2
        shared += float(t @ m) / scatter**2
    drift = shared / spread / 1000.0
    return min(max(drift, -MAX_AUDIO_DRIFT), MAX_AUDIO_DRIFT)


class PhoneClock:
    """One phone: its clock against the host's, its sample clock, and its input delay.

    The host feeds it the phone's `clock` messages (`ping`), each audio chunk's header
    (`chunk`) and samples (`feed`), and says when it plays the chirp (`expect_chirp`). Then
    `host_time(index)` is when the sound in sample `index` reached the phone's microphone, in
    host seconds: the `clock` to give that phone's Recogniser.
    """

    def __init__(self, rate: int = RATE) -> None:
        self.rate = rate
        self.chirp = make_chirp(rate)
        self.input_delay_s: float | None = None
        self.calibration_state: CalibrationState = "pending"
        self.calibration_peak: Peak | None = None  # the last search's peak (for the board/logs)
        self._pings: deque[tuple[float, float, float]] = deque(maxlen=PINGS_KEPT)  # (phone ms, rtt ms, offset ms)
        self._offset: tuple[float, float, float] | None = None  # (offset ms, drift, at phone ms)
        self._chunks: deque[tuple[int, float]] = deque(maxlen=CHUNKS_KEPT)  # (last sample index, phone ms)
        self._floors: dict[int, tuple[int, float]] = {}  # FLOOR_BIN_S bin: (last index, ms late)
        self._drift: float | None = None  # audio_drift of the floors' closed bins (None: to read)
        self._line: tuple[float, float, int] | None = None  # (phone ms at ref, ms per sample, ref)
        self._audio = np.zeros(0, dtype=np.float32)
        self._audio_start = 0  # stream index of self._audio[0]
        self._expected: list[float] = []  # host seconds at which chirps were played
        self._stream_first: int | None = None  # the first sample index of this stream seen
        # A recent chirp: its index, play time, phone ms (on the line when found) and that phone
        # time in host seconds (frozen once its round trips leave the window: `_settle`).
        self._chirp_at: tuple[float, float, float, float] | None = None
        self._line_seen: tuple[float, float, int] | None = None  # the last line fitted once settled
        self.slip_s = 0.0  # how late this stream's sounds sat against the other phones' (`slip`)
        # The host pings from its network loop and decodes on a worker thread: one lock.
        self._lock = threading.RLock()

    # --- step 2: the phone's clock against the host's ------------------------------------------

    def ping(self, t1: float, t2: float, t3: float, t4: float) -> None:
        """One NTP sample, all in ms: t1 sent and t4 received on the phone (performance.now()),
        t2 received and t3 answered on the host (monotonic() * 1000)."""
        rtt = (t4 - t1) - (t3 - t2)
        if not all(map(math.isfinite, (t1, t2, t3, t4))) or rtt < -PHONE_TICK_MS or t3 < t2:
            raise ValueError(f"impossible round trip t1={t1} t2={t2} t3={t3} t4={t4}")
        rtt = max(rtt, 0.0)  # within the phone clock's tick: as fast as it can tell
        with self._lock:
            self._pings.append(((t1 + t4) / 2, rtt, ((t2 + t3) - (t1 + t4)) / 2))
            while self._pings[-1][0] - self._pings[0][0] > PING_WINDOW_MS:
                self._pings.popleft()
            self._offset = None

    @property
    def synced(self) -> bool:
        """Whether a round trip has been seen (to_host works)."""
        return bool(self._pings)

    @property
    def round_trip_ms(self) -> float | None:
        """The fastest round trip kept: twice the worst-case error of the offset."""
        return min(p[1] for p in self._pings) if self._pings else None

    def _fit_offset(self) -> tuple[float, float, float]:
        with self._lock:
            if self._offset is None:
                self._offset = self._fit_pings()
            return self._offset

    def _fit_pings(self) -> tuple[float, float, float]:
        if not self._pings:
            raise PhoneClockError("no clock round trip from this phone yet")
        pings = np.array(self._pings)
        first = pings[0, 0]
        bins = ((pings[:, 0] - first) // PING_BIN_MS).astype(int)
        best = [int(np.flatnonzero(bins == b)[np.argmin(pings[bins == b, 1])]) for b in np.unique(bins)]
        fastest = pings[:, 1].min()
        slack = max(RTT_SLACK_MS, fastest)
        kept = pings[[i for i in best if pings[i, 1] <= fastest + slack]]
        fit: tuple[float, float, float] | None = None
        if len(kept) >= 3 and kept[-1, 0] - kept[0, 0] >= DRIFT_SPAN_MS:
            at = float(kept[:, 0].mean())
            drift, offset = np.polyfit(kept[:, 0] - at, kept[:, 2], 1)
            if abs(drift) <= MAX_CLOCK_DRIFT:
                fit = (float(offset), float(drift), at)
        if fit is None:
            order = np.argsort(pings[:, 1], kind="stable")[:FASTEST]
            near = order[pings[order, 1] <= fastest + slack]
            fit = (float(pings[near, 2].mean()), 0.0, float(pings[near, 0].mean()))
        return fit

    def to_host(self, phone_ms: float) -> float:
        """A phone time (performance.now() ms) in host seconds."""
        offset, drift, at = self._fit_offset()
        return (phone_ms + offset + drift * (phone_ms - at)) / 1000.0

    def to_phone(self, host_s: float) -> float:
        """A host time (seconds) in phone ms: the inverse of to_host."""
        offset, drift, at = self._fit_offset()
        return (host_s * 1000.0 - offset + drift * at) / (1.0 + drift)

    # --- step 1: sample index against phone time ----------------------------------------------

    def chunk(self, first_sample: int, frames: int, phone_ms: float) -> None:
        """An audio chunk's header: sample first_sample + frames - 1 was captured no later than
        phone_ms (the page's performance.now() on receiving it)."""
        if frames <= 0 or first_sample < 0 or not math.isfinite(phone_ms):
            raise ValueError(f"bad chunk header first_sample={first_sample} frames={frames} "
                             f"phone_ms={phone_ms}")
        with self._lock:
            if self._stream_first is None or first_sample < self._stream_first:
                self._stream_first = first_sample
            last = first_sample + frames - 1
            self._chunks.append((last, phone_ms))
            while phone_ms - self._chunks[0][1] > CHUNK_WINDOW_MS:
                self._chunks.popleft()
            self._line = None
            start = self._stream_first + STARTUP_S * self.rate  # a capture starting: left out
            if last >= start:
                late = phone_ms - last * 1000.0 / self.rate
                b = int((last - start) // (FLOOR_BIN_S * self.rate))
                newest = next(reversed(self._floors), None)  # (bins come in order)
                if newest is not None and b > newest:
                    self._drift = None  # a bin closed
                if b not in self._floors or late < self._floors[b][1]:
                    self._floors[b] = (last, late)
                while len(self._floors) > FLOOR_BINS_KEPT:
                    del self._floors[next(iter(self._floors))]

    def _fit_samples(self) -> tuple[float, float, int]:
        with self._lock:
            if self._line is None:
                self._line = self._fit_chunks()
                if self._line_seen is not None:
                    self._follow(self._line_seen, self._line)
                if self._chirp_at is not None:
                    self._settle(self._line, *self._chirp_at)
                if self._settled():
                    self._line_seen = self._line
            return self._line

    def _follow(self, old: tuple[float, float, int], new: tuple[float, float, int]) -> None:
        """The envelope moved by more than STALL_MS since the last fit (a restart after a
        stall, or stamps suddenly earlier than any before): with a delay measured, that move
        is either the capture's buffer growing or shrinking (the samples' true times did not
        change: the delay moves with the envelope) or samples lost or made up (they did: the
        delay stays). The stamps cannot tell (docs/web.md, issue 26); in Chromium under load
        the buffer was seen to grow 20-40 ms with no sample lost, so host_time does not jump
        (a chirp of this stream anchors it, `_settle`; else the delay follows the move) and
        the calibration is to be checked by a chirp again (`calibration_state` "rechecking",
        the host plays one when it may)."""
        at, slope, ref = new
        was = old[0] + old[1] * (ref - old[2])  # the old line where the new one is anchored
        if abs(at - was) <= STALL_MS or self.input_delay_s is None:
            return
        if self._chirp_at is None:
            self.input_delay_s += self.to_host(at) - self.to_host(was)
        if self.calibration_state != "pending":  # a search under way settles it anyway
            self.calibration_state = "rechecking"

    def _settle(self, line: tuple[float, float, int], index: float, play_s: float, phone_ms: float,
                host_s: float) -> float:
        """The delay measured from a chirp at `index` of this stream (at `phone_ms` on the line
        when it was found, `host_s` in host seconds), with the current line: on every fit, for
        the stream's life, so the chirp anchors the stream. Its sample stays at its play time,
        and every other sample is placed from it by the slope alone; the line's level (the
        stamps' floor: the start-up's stamps, the capture's buffer growing or shrinking) moves
        no onset.
        The chirp's phone time is put on the host's clock by the round trips around it, and
        kept so once they have left the window (PING_WINDOW_MS): converted through the drift
        fitted on the last two minutes' round trips, an hour from them, it moved by that fit's
        error times the hour (a few ppm: onsets 15-40 ms off after 1-2 hours, no drift at all).
        A sample is then the chirp's phone time plus the samples since (the slope), put on the
        host's clock where the round trips are: its error no longer grows with the time since."""
        at, slope, ref = line
        if self._pings and self._pings[0][0] <= phone_ms:  # its round trips still kept: fitted anew
            host_s = self.to_host(phone_ms)
            self._chirp_at = (index, play_s, phone_ms, host_s)
        # (to_host is a line: this is to_host(sample's phone ms - the line's move since) - delay.)
        delay = self.to_host(at + slope * (index - ref)) - self.to_host(phone_ms) + host_s - play_s
        self.input_delay_s = delay
        return delay

    def _fit_chunks(self) -> tuple[float, float, int]:
        if not self._chunks:
            raise PhoneClockError("no audio chunk from this phone's stream yet")
        points = np.array(self._chunks, dtype=np.float64)
        x, y = points[:, 0], points[:, 1]
        first = self._stream_first or 0
        if x.max() - first >= STARTUP_AFTER_S * self.rate:
            # Samples a starting capture made up or bunched sit below the envelope: left out.
            later = x >= first + STARTUP_S * self.rate
            x, y = x[later], y[later]
        ref = int(x[-1])
        x = x - ref
        if self._drift is None:
            closed = sorted(self._floors)[:-1]  # the newest bin is still filling
            floors = np.array([self._floors[b] for b in closed], dtype=np.float64).reshape(-1, 2)
            self._drift = audio_drift(floors[:, 0] / self.rate, floors[:, 1])
        slope = 1000.0 / self.rate * (1 + self._drift)
        # The line with that slope through the lowest point: under every stamp, touching one.
        at = float(np.min(y - slope * x))
        recent = x >= x.max() - STALL_RECENT_S * self.rate
        if x.max() - x.min() > STALL_RECENT_S * self.rate and np.min(y[recent] - slope * x[recent]) - at > STALL_MS:
            # A browser that stalls drops captured audio: the samples after it were captured
            # later than their numbers say, and the old stamps would pin the line too early
            # for a whole window. Start the envelope again from the stamps after the stall; a
            # chirp heard before it still anchors the stream (the microphone's path did not
            # change), and the jump asks for a recheck (`_follow`).
            last = int(ref + x[~recent].max())
            while self._chunks and self._chunks[0][0] <= last:
                self._chunks.popleft()
            return self._fit_chunks()
        return at, slope, ref

    def phone_time(self, sample_index: float) -> float:
        """Phone ms at which a sample of the current stream was captured (input delay not
        removed)."""
        at, slope, ref = self._fit_samples()
        return at + slope * (sample_index - ref)

    def sample_at(self, host_s: float) -> float:
        """The (fractional) sample index captured at a host time: the inverse of the chain
        without the input delay."""
        at, slope, ref = self._fit_samples()
        return ref + (self.to_phone(host_s) - at) / slope

    def capture_time(self, sample_index: float) -> float:
        """Host seconds at which a sample was captured, input delay not removed."""
        return self.to_host(self.phone_time(sample_index))

    def host_time(self, sample_index: float) -> float:
        """Host seconds at which the sound in this sample reached the phone's microphone: its
        capture time less the measured input delay (nothing taken off before calibration).
        Raises PhoneClockError before the first round trip and the first chunk."""
        with self._lock:
            return self.capture_time(sample_index) - (self.input_delay_s or 0.0) - self.slip_s

    def slip(self, seconds: float) -> None:
        """This stream's sounds sit `seconds` late (negative: early) against the other phones'
        (voice/alignment.py: the capture moved its samples against their numbers, which no stamp
        shows): taken off its host times from now on, until a chirp heard again measures the
        phone anew (the calibration is to be checked: "rechecking", from "failed" too: the room
        plays the chirp for a phone rechecking at its own pace). A search under way ("pending")
        measures it anyway."""
        if not math.isfinite(seconds):
            raise ValueError(f"a slip of {seconds} s")
        with self._lock:
            self.slip_s += seconds
            if self.calibration_state in ("ok", "failed"):
                self.calibration_state = "rechecking"

    @property
    def ready(self) -> bool:
        """Whether host_time can answer (a round trip and an audio chunk seen)."""
        return bool(self._pings) and bool(self._chunks)

    def reset_stream(self) -> None:
        """A new audio stream: sample numbering restarts. The clock sync and the input delay
        (the same phone, the same microphone) are kept; so is a chirp still being looked for."""
        with self._lock:
            self._chunks.clear()
            self._floors.clear()
            self._drift = None
            self._line = None
            self._stream_first = None
            self._line_seen = None  # a new numbering: its lines are not compared with the old
            self._chirp_at = None  # the delay measured stays as it is
            self.slip_s = 0.0  # a new capture: the old one's slip went with it
            self._audio = np.zeros(0, dtype=np.float32)
            self._audio_start = 0

    # --- step 3: the input delay, from the chirp ----------------------------------------------

    def expect_chirp(self, host_play_s: float) -> None:
        """The host's loudspeaker starts playing make_chirp() at this host time: look for it in
        the audio that comes (and the little already kept)."""
        with self._lock:
            self._expected = sorted([*self._expected, host_play_s])
            self.calibration_state = "pending"

    def feed(self, pcm_int16: np.ndarray, first_sample: int) -> float | None:
        """The samples of a chunk (after its chunk() header). Returns the input delay in
        seconds when this chunk completed a search that found the chirp, else None."""
        pcm = np.asarray(pcm_int16)
        if pcm.ndim != 1:
            raise ValueError(f"expected mono PCM, got shape {pcm.shape}")
        with self._lock:
            return self._feed(pcm, first_sample)

    def _feed(self, pcm: np.ndarray, first_sample: int) -> float | None:
        end = self._audio_start + len(self._audio)
        if not len(self._audio) or first_sample < end or first_sample - end > self.rate:
            self._audio, self._audio_start = np.zeros(0, dtype=np.float32), first_sample
        elif first_sample > end:  # a few samples lost: keep positions with silence
            self._audio = np.concatenate([self._audio, np.zeros(first_sample - end, np.float32)])
        self._audio = np.concatenate([self._audio, pcm.astype(np.float32)])
        kept = round(AUDIO_KEPT_S * self.rate)
        if len(self._audio) > kept:
            self._audio_start += len(self._audio) - kept
            self._audio = self._audio[-kept:]
        found: float | None = None
        while self._expected and self.ready:
            outcome = self._search(self._expected[0])
            if outcome == "wait":
                break
            self._expected.pop(0)
            if isinstance(outcome, float):
                found = outcome
        return found

    def _search(self, play_s: float) -> float | str:
        """Look for the chirp played at play_s: its delay, "failed", or "wait" for audio."""
        lo = math.floor(self.sample_at(play_s - SEARCH_BEFORE_S))
        hi = math.ceil(self.sample_at(play_s + SEARCH_AFTER_S)) + len(self.chirp)
        if hi <= (self._stream_first or 0):
            return self._fail()  # played before this stream began
        if self._audio_start + len(self._audio) < hi or not self._settled():
            return "wait"
        start = max(lo, self._audio_start)
        peak = find_chirp(self._audio[start - self._audio_start:hi - self._audio_start], self.chirp,
                          self.rate)
        self.calibration_peak = peak
        if peak is None or not peak.clear:
            return self._fail()
        line = self._fit_samples()
        index = start + peak.at
        phone_ms = line[0] + line[1] * (index - line[2])
        self._chirp_at = (index, play_s, phone_ms, self.to_host(phone_ms))
        self.slip_s = 0.0  # the chirp measures the stream as it is now, any slip with the rest
        delay = self._settle(line, *self._chirp_at)
        self.calibration_state = "ok"
        return delay

    def _settled(self) -> bool:
        """Whether the stream's start-up is out of the envelope (see STARTUP_AFTER_S): a chirp
        heard as a stream starts is looked for only then, where the envelope puts it."""
        if not self._chunks or self._stream_first is None:
            return False
        return self._chunks[-1][0] - self._stream_first >= STARTUP_AFTER_S * self.rate

    def _fail(self) -> str:
        self.calibration_state = "failed"  # input_delay_s keeps the last good measurement
        return "failed"
