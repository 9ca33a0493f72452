"""Audio helpers: WAV reading, mono mix, resampling, PCM conversion, noise and onsets.

Signals are float64 arrays in int16 units (full scale 32768) unless said otherwise, so the same
numbers go to Vosk (which takes int16 PCM) and to the onset and noise code.
"""

from __future__ import annotations

import math
import struct
import warnings
from collections import deque
from collections.abc import Iterable, Sequence
from functools import lru_cache
from math import gcd
from pathlib import Path

import numpy as np
from scipy.io import wavfile
from scipy.signal import butter, lfilter, resample_poly

RATE = 16000  # the rate of the Vosk models this project uses
FULL_SCALE = 32768.0
QUIET_DB = 10.0  # a 10 ms frame this far above the recent noise floor is sound, below is quiet
ONSET_DB = 4.0  # ...and the soft start of a sound is traced back while it stays this far above
SOFT_START_S = 0.12  # ...then a soft start up to this much further, a sound this far over the
SOFT_EXCESS_DB = 1.5  # noise in sum (`soft_start`)


class AudioError(ValueError):
    """An audio file that cannot be used; the message says which and why."""


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    """A WAV file as (samples, rate): float64 in int16 units, shape (frames, channels)."""
    path = Path(path)
    if not path.is_file():
        raise AudioError(f"{path}: no such audio file")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", wavfile.WavFileWarning)
            rate, data = wavfile.read(path)
    except (struct.error, EOFError):
        raise AudioError(f"{path}: the WAV file ends inside its header (cut short); record or copy it again") from None
    except ValueError as error:
        raise AudioError(f"{path}: not a readable WAV file ({error}); convert it with "
                         f"'sox {path.name} -b 16 out.wav'") from None
    # scipy reads a file cut short up to its end, and only warns: played, it would be a clip
    # with its end missing, so it is refused.
    short = [w for w in caught if "EOF" in str(w.message)]
    if short:
        raise AudioError(f"{path}: the WAV file is cut short ({short[0].message}); record or copy it again")
    samples = np.asarray(data)
    if samples.dtype.kind == "f":
        samples = samples.astype(np.float64) * FULL_SCALE
    elif samples.dtype == np.uint8:
        samples = (samples.astype(np.float64) - 128.0) * 256.0
    else:  # int16 / int32: scale to int16 units
        samples = samples.astype(np.float64) * (FULL_SCALE / 2.0 ** (8 * samples.itemsize - 1))
    if samples.ndim == 1:
        samples = samples[:, None]
    if int(rate) <= 0:  # a damaged header: resampling from 0 Hz was a ValueError traceback
        raise AudioError(f"{path}: the WAV file's header says {int(rate)} samples per second; record or "
                         "convert it again")
    return samples, int(rate)


def to_mono(samples: np.ndarray) -> np.ndarray:
    """Mix channels by their mean (a one-channel array passes through)."""
    return samples if samples.ndim == 1 else samples.mean(axis=1)


def resample(samples: np.ndarray, rate_in: int, rate_out: int = RATE) -> np.ndarray:
    """Polyphase resampling (scipy), exact for any pair of integer rates."""
    if rate_in == rate_out:
        return samples
    g = gcd(rate_in, rate_out)
    return resample_poly(samples, rate_out // g, rate_in // g, axis=0)


def load_clip(path: str | Path, rate: int = RATE) -> np.ndarray:
    """A WAV file as mono float64 at `rate` (the model's rate)."""
    samples, rate_in = read_wav(path)
    return resample(to_mono(samples), rate_in, rate)


def to_pcm16(samples: np.ndarray) -> np.ndarray:
    """Round and clip to int16, the PCM Vosk takes."""
    rounded = np.rint(samples)  # a new array: clipped in place (np.clip's checks cost more)
    np.minimum(rounded, 32767, out=rounded)
    np.maximum(rounded, -32768, out=rounded)
    return rounded.astype(np.int16)


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0


def sound_span(samples: np.ndarray, threshold: float = 64.0) -> tuple[int, int] | None:
    """First and one-past-last sample louder than `threshold` (int16 units), or None."""
    loud = np.flatnonzero(np.abs(samples) > threshold)
    return (int(loud[0]), int(loud[-1]) + 1) if len(loud) else None


def pink_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS pink (1/f power) noise: white noise shaped in the frequency domain."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    f = np.arange(len(spectrum), dtype=np.float64)
    f[0] = 1.0
    noise = np.fft.irfft(spectrum / np.sqrt(f), n)
    return noise / rms(noise)


def add_noise(samples: np.ndarray, speech: tuple[int, int], snr_db: float,
              rng: np.random.Generator) -> np.ndarray:
    """Add pink noise over the whole clip at `snr_db` below the RMS of the speech span."""
    level = rms(samples[speech[0]:speech[1]]) / 10 ** (snr_db / 20)
    return samples + pink_noise(len(samples), rng) * level


class SpectralGate:
    """Streaming spectral gating: per-bin noise floor tracked by a running low percentile,
    Wiener-like gain with a floor, weighted overlap-add.

    Output sample k is input sample k - `delay`; callers shift sample indices by it.
    """

    def __init__(self, n_fft: int = 512, hop: int = 128, history_s: float = 3.0,
                 percentile: float = 15.0, over: float = 1.5, floor: float = 0.15,
                 rate: int = RATE) -> None:
        self.n_fft, self.hop, self.rate = n_fft, hop, rate
        self.delay = n_fft - hop
        self.window = np.sqrt(np.hanning(n_fft + 1)[:-1])  # sqrt-Hann in and out: Hann overall
        self.scale = hop / (n_fft / 2)  # Hann at this overlap sums to n_fft / (2 hop)
        self.percentile, self.over, self.floor = percentile, over, floor
        self.history = np.zeros((max(1, int(history_s * rate / hop)), n_fft // 2 + 1))
        self.frames_seen = 0
        self.noise: np.ndarray | None = None
        self.pending = np.zeros(n_fft - hop)  # input not yet framed
        self.tail = np.zeros(n_fft - hop)  # overlap-add carry
        self.prev_power: np.ndarray | None = None

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Denoise a chunk; returns the output samples made final by it (a multiple of `hop`,
        possibly empty). Output sample k (counted over all calls) is input sample k - `delay`."""
        buffer = np.concatenate([self.pending, np.asarray(chunk, dtype=np.float64)])
        count = (len(buffer) - self.n_fft) // self.hop + 1 if len(buffer) >= self.n_fft else 0
        if count == 0:
            self.pending = buffer
            return np.zeros(0)
        idx = np.arange(self.n_fft)[None, :] + self.hop * np.arange(count)[:, None]
        spectra = np.fft.rfft(buffer[idx] * self.window, axis=1)
        power = np.abs(spectra) ** 2
        self._track_noise(power)
        frames = np.fft.irfft(spectra * self._gains(power), self.n_fft, axis=1)
        out = np.zeros(count * self.hop + self.delay)
        out[: self.delay] = self.tail
        for i, frame in enumerate(frames * self.window * self.scale):
            out[i * self.hop: i * self.hop + self.n_fft] += frame
        used = count * self.hop
        self.pending = buffer[used:]
        self.tail = out[used:]
        return out[:used]

    def flush(self) -> np.ndarray:
        """The output still held back (the last `delay` samples and any partial hop)."""
        return self.process(np.zeros(self.delay + self.hop))

    def _track_noise(self, power: np.ndarray) -> None:
        for row in power:  # a ring buffer of recent frame spectra
            self.history[self.frames_seen % len(self.history)] = row
            self.frames_seen += 1
        filled = min(self.frames_seen, len(self.history))
        # Needs ~0.3 s of audio before the floor means anything.
        if filled * self.hop >= 0.3 * self.rate:
            # A bin's noise power is exponentially distributed: its q-quantile is the mean
            # times -ln(1 - q), so divide that out to get the mean noise power.
            low = np.percentile(self.history[:filled], self.percentile, axis=0)
            self.noise = low / -np.log(1 - self.percentile / 100)

    def _gains(self, power: np.ndarray) -> np.ndarray:
        if self.noise is None:
            return np.ones_like(power)
        # Smooth power over time a little: fewer isolated "musical noise" blips.
        smoothed = power.copy()
        previous = self.prev_power if self.prev_power is not None else power[0]
        for i in range(len(power)):
            smoothed[i] = 0.5 * power[i] + 0.5 * previous
            previous = power[i]
        self.prev_power = previous
        gain = 1.0 - self.over * self.noise / np.maximum(smoothed, 1e-12)
        return np.sqrt(np.clip(gain, self.floor ** 2, 1.0))


def envelope_db(samples: np.ndarray, frame: int = 160, hop: int = 40) -> np.ndarray:
    """Short-time energy in dB, one value per `hop` samples (frame centred at i*hop + frame/2)."""
    if len(samples) < frame:
        return np.zeros(0)
    count = (len(samples) - frame) // hop + 1
    # Frame sums as differences of one running sum: frames overlap 4 times, and the recogniser
    # reads 3 s of level several times a second.
    total = np.concatenate([[0.0], np.cumsum(np.square(samples, dtype=np.float64))])
    starts = hop * np.arange(count)
    energy = np.maximum(total[starts + frame] - total[starts], 0.0) / frame
    return 10 * np.log10(energy + 1.0)


@lru_cache(maxsize=4)
def _speech_band(rate: int) -> tuple[np.ndarray, np.ndarray]:
    # Transfer-function form: a second-order filter is stable that way, and scipy's lfilter
    # costs a fifth of sosfilt on a 50 ms chunk (its checks, not the arithmetic).
    return butter(2, 250, btype="highpass", fs=rate)


def _percentile(values: np.ndarray, q: float) -> np.ndarray | float:
    """np.percentile(values, q, axis=-1) (linear interpolation), by a partial sort: the same
    numbers at a quarter of the cost, and the level code asks several times a second."""
    n = values.shape[-1]
    h = (n - 1) * q / 100
    lo = int(h)
    hi = min(lo + 1, n - 1)
    part = np.partition(values, (lo, hi), axis=-1)
    return part[..., lo] + (h - lo) * (part[..., hi] - part[..., lo])


def _small_percentile(values: Iterable[float], q: float) -> float:
    """np.percentile(values, q) of a few Python floats, to the last bit (numpy's linear
    interpolation, its rounding included), at a twentieth of its cost: the level tracker
    asks every 0.5 s of every stream."""
    ordered = sorted(values)
    h = (q / 100) * (len(ordered) - 1)
    lo = math.floor(h)
    t = h - lo
    a, b = ordered[lo], ordered[min(lo + 1, len(ordered) - 1)]
    return b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t


def _small_median(values: Iterable[float]) -> float:
    """np.median(values) of a few Python floats, to the last bit, without numpy's overhead."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def speech_band(samples: np.ndarray, rate: int = RATE,
                state: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """`samples` above 250 Hz, and the filter's state after them: pass it back with the next
    samples of the stream to go on where they left off (None: start from rest)."""
    b, a = _speech_band(rate)
    if state is None:
        state = np.zeros(max(len(a), len(b)) - 1)
    return lfilter(b, a, samples, zi=state)


def loudness(samples: np.ndarray, lo: int, hi: int, rate: int,
              until: int | None = None, band: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """For 10 ms frames every 2.5 ms between lo and hi: their centres (sample indices) and
    their level in dB over the noise floor of the 3 s before `until` (default `hi`).

    Measured above 250 Hz: room noise is mostly low-pitched, and over the whole band a
    fricative ("s") sinks under it and splits a word in two. `band`: those 3 s already
    filtered (`speech_band`), by a caller that keeps the stream filtered as it comes."""
    frame, hop = rate // 100, rate // 400
    end = max(hi, until or hi)
    ref_lo = max(0, end - 3 * rate)
    if band is None or len(band) != end - ref_lo:
        band = speech_band(samples[ref_lo:end], rate)[0]
    env = envelope_db(band, frame, hop)
    centres = ref_lo + np.arange(len(env)) * hop + frame // 2
    if len(env) == 0:
        return centres, env
    # The room's noise: the median of the quiet end (20th percentile) of each 0.5 s. A noise
    # that began in the window then counts as the floor once it fills half of it, where one
    # percentile over the whole window would take the silence before it. (The whole blocks
    # in one call: this runs several times a second.)
    whole = len(env) // 200
    lows = list(np.asarray(_percentile(env[:whole * 200].reshape(whole, 200), 20))) if whole else []
    if len(env) - whole * 200 >= 40:
        lows.append(float(_percentile(env[whole * 200:], 20)))
    floor = _small_median(lows or [float(_percentile(env, 20))])
    keep = (centres >= lo) & (centres < hi + frame // 2)
    return centres[keep], env[keep] - floor


def pre_emphasis(chunk: np.ndarray, last: float) -> np.ndarray:
    """x[n] - 0.97 x[n-1] of a chunk of a stream (float64), going on from `last`, the previous
    chunk's last sample: -20 dB at 250 Hz, -8 dB at 1 kHz, the room's low rumble kept out of a
    level for a tenth of a filter's cost."""
    emphasised = np.empty_like(chunk)
    emphasised[0] = chunk[0] - 0.97 * last
    np.subtract(chunk[1:], 0.97 * chunk[:-1], out=emphasised[1:])
    return emphasised


class LevelTracker:
    """The loudness of a stream as it arrives, cheap enough for every 50 ms chunk: 10 ms
    frames in dB over the room's noise floor (the median of the quiet end, 20th percentile, of
    each 0.5 s of the last 3 s, as in `loudness`, which re-measures a 3 s window and costs as
    much as Vosk's own work on the chunk). Frames are pre-emphasised (`pre_emphasis`) rather
    than filtered: like `loudness`'s 250 Hz high-pass it keeps the room's low rumble out."""

    def __init__(self, rate: int = RATE, window_s: float = 3.0, block_s: float = 0.5) -> None:
        self.frame = rate // 100
        self.last = 0.0  # the previous chunk's last sample, for the pre-emphasis
        self.pending = np.zeros(0)  # pre-emphasised samples short of a whole frame
        self.block: list[float] = []  # the energies of the 0.5 s block under way
        self.block_frames = round(block_s * 100)
        self.lows: deque[float] = deque(maxlen=max(1, round(window_s / block_s)))
        self.floor: float | None = None
        self.heard = 0  # samples measured so far
        self.since: float = math.inf  # ...when the floor became known (samples since the start)

    def loudest(self, chunk: np.ndarray) -> float | None:
        """The level over the floor of the loudest frame this chunk completes (-inf: none);
        None while no 0.5 s block has been heard (no floor yet)."""
        chunk = np.asarray(chunk, dtype=np.float64)
        if len(chunk) == 0:
            return None if self.floor is None else float("-inf")
        emphasised = pre_emphasis(chunk, self.last)
        self.last = float(chunk[-1])
        # Every line here runs 20 times a second: no copy when the chunk is whole frames.
        buffer = np.concatenate([self.pending, emphasised]) if len(self.pending) else emphasised
        count = len(buffer) // self.frame
        self.pending = buffer[count * self.frame:]
        frames = buffer[:count * self.frame].reshape(count, self.frame)
        energy = np.einsum("ij,ij->i", frames, frames)
        floor = self.floor  # this chunk is measured against the floor before it
        if floor is not None and self.since == math.inf:
            self.since = self.heard
        self.heard += len(chunk)
        self.block += energy.tolist()
        while len(self.block) >= self.block_frames:
            block, self.block = self.block[:self.block_frames], self.block[self.block_frames:]
            low = _small_percentile(block, 20) / self.frame
            self.lows.append(10 * math.log10(low + 1.0))
            self.floor = _small_median(self.lows)
        if floor is None:
            return None
        return 10 * math.log10(float(energy.max()) / self.frame + 1.0) - floor if count else float("-inf")


def speech_onset(samples: np.ndarray, start: int, end: int, rate: int = RATE,
                 before_s: float = 0.4, min_gap_s: float = 0.1, plateau_db: float = 8.0,
                 after_s: float = 1.5) -> tuple[int, float] | None:
    """The start of the speech that carries a word Vosk placed between `start` and `end`
    (indices into `samples`) and the level (dB over the floor) of the noise it rises from;
    None when there is none.

    The search starts from the word's own sound (its loudest 10 ms frame), never from Vosk's
    start, which noise can pull a second early; from there it walks back while the level stays
    ONSET_DB over the floor (dips under `min_gap_s`, a stop inside a word, do not split it). A rise
    that leads only to a plateau more than `plateau_db` under the
    word's peak, and steady, is the noise's start, not the speech's: the floor is raised to that plateau
    and the walk done again, unless the audio after the word (up to `after_s` past its loudest
    frame, as far as `samples` go) falls 6 dB under that plateau for 0.1 s: a noise that began
    goes on after the word, where a soft start of the speech itself (the nasal of "음악", 10-12
    dB under the vowel for 0.15 s) ends with it. None when the word has no sound over QUIET_DB (noise, not
    speech); `start` itself when the sound runs from more than `before_s` before it (running
    speech: no onset of its own, and the pause rule will say so).
    """
    lo = max(0, start - int((before_s + 0.1) * rate))
    hi = min(len(samples), max(end, start + rate // 20))
    centres, level = loudness(samples, lo, hi, rate)
    inside = np.flatnonzero(centres >= start)
    if len(inside) == 0 or float(np.max(level[inside])) <= QUIET_DB:
        return None
    anchor = int(inside[np.argmax(level[inside])])
    peak = float(level[anchor])
    # The walk reads a 20 ms average: single 10 ms frames of noise poke over ONSET_DB often
    # enough to bridge any gap.
    raw, level = level, np.convolve(level, np.ones(8) / 8, mode="same")
    gap, span = max(1, int(min_gap_s * 400)), int(0.15 * 400)
    threshold = ONSET_DB
    first = anchor
    for _ in range(3):
        first = _sound_start(level, anchor, threshold, gap)
        if anchor - first < span + 8:
            break  # no plateau before the word's peak (and none to read where the peak ends the window)
        plateau = level[first + 8:first + 8 + span]  # past the average's 20 ms ramp
        steady = float(np.percentile(plateau, 90) - np.percentile(plateau, 10)) < 6.0
        if not steady or float(np.median(plateau)) > peak - plateau_db:
            break  # speech from its start (a noise is steady; syllables are not)
        if _ends_after(samples, int(centres[first]), int(centres[anchor]), float(np.median(plateau)),
                       rate, after_s):
            break  # it stopped when the speech did: the speech's own soft start
        threshold = float(np.median(plateau)) + ONSET_DB  # the noise's level: speech rises over it
    # The averaged level rises a little before the sound: the onset is the first frame of the
    # sound itself from there.
    first += int(np.argmax(raw[first:anchor + 1] > threshold))
    onset = int(centres[first])
    if (first == 0 and lo > 0 and level[0] > threshold) or onset < start - before_s * rate:
        onset = start  # one sound from before the window: running speech, no rise of its own
    return onset, threshold - ONSET_DB


def soft_start(samples: np.ndarray, onset: int, noise_db: float = 0.0, rate: int = RATE,
               back_s: float = SOFT_START_S, excess_db: float = SOFT_EXCESS_DB) -> int:
    """Where a soft start (an "h", an "f") leaves the noise, back from `onset` (`speech_onset`'s,
    the first frame ONSET_DB over the floor, `noise_db` the level of a noise it rose from): a
    change point. Going back frame by frame, the sum of each frame's level over the noise's own
    (the median of the frames before the search, or `noise_db` if higher) less `excess_db` grows
    while the frames are a sound `excess_db` or more over the noise, and falls in the noise: the
    soft start is where it peaks, within `back_s`. An "h" 2-8 dB over the floor never stands
    ONSET_DB over it for long, yet 50-90 ms of frames each a few dB over the noise are plain in
    their sum. A word rising from the noise at once gives a sum that only falls: `onset` itself.
    Any faint sound just before the word counts, another player's voice too (voice/crosstalk.py
    checks that where phones hear each other)."""
    lo = max(0, onset - int((back_s + 0.4) * rate))
    centres, level = loudness(samples, lo, onset + rate // 100, rate)
    first = int(np.searchsorted(centres, onset))
    before = level[centres < onset - int((back_s + 0.05) * rate)]
    if first == 0 or len(before) < 40:  # under 0.1 s of noise to measure: leave the onset as it is
        return onset
    noise = max(float(np.median(before)), noise_db)
    stop = max(0, first - int(back_s * 400))  # frames every 2.5 ms
    excess = np.cumsum(level[stop:first][::-1] - noise - excess_db)  # back from the onset
    if len(excess) == 0 or float(excess.max()) <= 0.0:
        return onset
    return int(centres[first - 1 - int(np.argmax(excess))])


def _ends_after(samples: np.ndarray, rise: int, peak: int, plateau: float, rate: int,
                after_s: float) -> bool:
    """Whether the sound that rose at `rise` to `plateau` (dB over the floor, as `loudness`
    measured it up to the word) falls 6 dB under that plateau for 0.1 s somewhere between
    `peak` and `after_s` later. Both are read in one measurement, so its floor cancels out."""
    hi = min(len(samples), peak + int(after_s * rate))
    if hi - peak < rate // 5:
        return False  # nothing after the word yet: keep the noise's reading
    centres, level = loudness(samples, rise, hi, rate)
    hop = rate // 400
    at_plateau = level[(centres >= rise + 8 * hop) & (centres < rise + 68 * hop)]
    after = level[centres > peak]
    if len(at_plateau) == 0 or len(after) < 40:
        return False
    smooth = np.convolve(after, np.ones(40) / 40, mode="valid")  # 0.1 s
    return bool(smooth.min() < float(np.median(at_plateau)) - 6.0)


def _sound_start(level: np.ndarray, anchor: int, threshold: float, gap: int) -> int:
    """The first frame of the sound holding frame `anchor`: back while frames stay over
    `threshold`, across dips shorter than `gap` frames."""
    first, quiet = anchor, 0
    for i in range(anchor - 1, -1, -1):
        if level[i] > threshold:
            first, quiet = i, 0
        else:
            quiet += 1
            if quiet >= gap:
                break
    return first


def peak_snr_db(samples: np.ndarray, lo: int, hi: int, rate: int = RATE) -> float | None:
    """How far the loud sounds between lo and hi (their 98th percentile, 10 ms frames above
    250 Hz) rise over the noise floor, in dB; None for too little audio. Clean speech stands
    60 dB or more over a quiet room's floor; speech at 10 dB SNR (RMS) about 20 dB."""
    _centres, level = loudness(samples, lo, hi, rate)
    return peak_db(level)


def peak_db(level: np.ndarray) -> float | None:
    """The loud end (98th percentile) of levels from `loudness`; None when there are none."""
    return float(_percentile(level, 98)) if len(level) else None


def quiet_before(samples: np.ndarray, onset: int, rate: int = RATE, pause_s: float = 0.25,
                 gap_s: float = 0.05, loud_share: float = 0.3, noise_db: float = 0.0,
                 until: int | None = None, ignore: Sequence[tuple[int, int]] = ()) -> bool:
    """Whether the `pause_s` before an onset (ending `gap_s` before it) is mostly quiet:
    under the sound threshold over the floor, or over `noise_db` (the level of a noise that
    rose there, measured by `speech_onset` against the floor of the 3 s before `until`).
    `ignore`: spans of samples [start, end) left out of the pause (the host's own playback:
    its sound is nobody's speech).

    A shout is said on its own; a phrase found in the middle of running speech is not one.
    """
    lo = max(0, onset - int((pause_s + gap_s) * rate))
    hi = onset - int(gap_s * rate)
    if hi - lo < rate // 20:  # too little audio before the onset to judge: give it the benefit
        return True
    centres, level = loudness(samples, lo, hi, rate, until)
    if ignore:
        level = level[np.all([(centres < start) | (centres >= end) for start, end in ignore], axis=0)]
    return len(level) == 0 or float(np.mean(level > QUIET_DB + noise_db)) < loud_share

def synthesise(text: str, voice: str = "fr", speed: int = 160, pitch: int = 50,
               rate: int = RATE) -> np.ndarray:
    """Speak `text` with espeak-ng (the bots' voice) as mono float64 at `rate`, via sox."""
    import subprocess

    speech = subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-p", str(pitch),
                             "--stdout", text], check=True, capture_output=True).stdout
    # -R: sox's dither (added when it resamples to 16 bits) drawn the same on every run, so that a
    # clip, and every figure measured on it, is the same on every machine and every run.
    pcm = subprocess.run(["sox", "-R", "-q", "-t", "wav", "-", "-t", "raw", "-r", str(rate), "-c", "1",
                          "-b", "16", "-e", "signed-integer", "-L", "-"],
                         input=speech, check=True, capture_output=True).stdout
    return np.frombuffer(pcm, dtype="<i2").astype(np.float64)


def write_wav(path: str | Path, samples: np.ndarray, rate: int = RATE) -> None:
    wavfile.write(path, rate, to_pcm16(samples))
