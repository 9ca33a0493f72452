"""Audio helpers: WAV reading in any format, mono mix, resampling, noise, gating, onsets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.io import wavfile

from voice.audio import (
    RATE,
    AudioError,
    LevelTracker,
    SpectralGate,
    add_noise,
    load_clip,
    loudness,
    peak_snr_db,
    pink_noise,
    quiet_before,
    read_wav,
    rms,
    soft_start,
    sound_span,
    speech_band,
    speech_onset,
    synthesise,
)


def tone(seconds: float, rate: int = RATE, freq: float = 440.0, amplitude: float = 8000.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return amplitude * np.sin(2 * np.pi * freq * t)


def buzz(seconds: float, pitch: float = 150.0) -> np.ndarray:
    """A voiced-speech stand-in: a 150 Hz pitch with its harmonics up to 4 kHz."""
    t = np.arange(int(seconds * RATE)) / RATE
    return sum((4000 / k * np.sin(2 * np.pi * pitch * k * t) for k in range(1, 27)), np.zeros_like(t))


def test_a_synthesised_clip_is_the_same_on_every_run() -> None:
    """sox dithers as it resamples to 16 bits: drawn afresh on each run, every clip the benches
    and tests make (and every figure on it) differed by a bit or two from one machine to another."""
    first, again = synthesise("pas mou le caillou", "fr"), synthesise("pas mou le caillou", "fr")
    assert len(first) > RATE // 2 and np.array_equal(first, again)


def test_wav_formats_read_in_int16_units(tmp_path: Path) -> None:
    x = tone(0.1)
    wavfile.write(tmp_path / "i16.wav", RATE, np.rint(x).astype(np.int16))
    wavfile.write(tmp_path / "f32.wav", RATE, (x / 32768).astype(np.float32))
    wavfile.write(tmp_path / "i32.wav", RATE, (np.rint(x) * 65536).astype(np.int32))
    for name in ("i16.wav", "f32.wav", "i32.wav"):
        samples, rate = read_wav(tmp_path / name)
        assert rate == RATE and samples.shape == (len(x), 1)
        assert np.max(np.abs(samples[:, 0] - x)) < 1.0, name


def test_clips_are_mixed_to_mono_and_resampled(tmp_path: Path) -> None:
    left, right = tone(1.0, 44100, 300), tone(1.0, 44100, 300) * 0.5
    wavfile.write(tmp_path / "stereo.wav", 44100, np.rint(np.stack([left, right], 1)).astype(np.int16))
    clip = load_clip(tmp_path / "stereo.wav")
    assert len(clip) == RATE
    assert rms(clip[1000:-1000]) == pytest.approx(rms(tone(1.0, RATE, 300)) * 0.75, rel=0.01)


def test_bad_audio_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(AudioError, match="no such audio file"):
        read_wav(tmp_path / "missing.wav")
    (tmp_path / "text.wav").write_text("not audio")
    with pytest.raises(AudioError, match="not a readable WAV file"):
        read_wav(tmp_path / "text.wav")
    wavfile.write(tmp_path / "zero_hz.wav", 0, np.zeros(1000, np.int16))  # a damaged header
    with pytest.raises(AudioError, match="header says 0 samples per second"):
        load_clip(tmp_path / "zero_hz.wav")


def test_pink_noise_at_a_given_snr() -> None:
    rng = np.random.default_rng(1)
    noise = pink_noise(RATE * 4, rng)
    assert rms(noise) == pytest.approx(1.0)
    spectrum = np.abs(np.fft.rfft(noise)) ** 2
    low, high = spectrum[100:200].mean(), spectrum[10000:20000].mean()
    assert 50 < low / high < 200  # power falls as 1/f: 100 times from bin 150 to 15000
    clean = np.concatenate([np.zeros(RATE), tone(1.0), np.zeros(RATE)])
    noisy = add_noise(clean, (RATE, 2 * RATE), 10.0, np.random.default_rng(2))
    assert 20 * np.log10(rms(clean[RATE:2 * RATE]) / rms(noisy - clean)) == pytest.approx(10.0, abs=0.01)


def test_peak_snr_tells_a_noisy_room_from_a_quiet_one() -> None:
    clean = np.concatenate([np.zeros(RATE), buzz(1.0), np.zeros(RATE)])
    noisy = add_noise(clean, (RATE, 2 * RATE), 10.0, np.random.default_rng(3))
    quiet_room = add_noise(clean, (RATE, 2 * RATE), 40.0, np.random.default_rng(3))
    assert (snr := peak_snr_db(clean, 0, len(clean))) is not None and snr > 60
    assert (snr := peak_snr_db(quiet_room, 0, len(clean))) is not None and snr > 30  # the recogniser's noisy-room line
    assert (snr := peak_snr_db(noisy, 0, len(clean))) is not None and snr < 30
    assert peak_snr_db(clean, 0, 10) is None  # less than one 10 ms frame


def test_spectral_gate_is_transparent_then_quiets_stationary_noise() -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal(RATE * 3) * 300
    x[2 * RATE:2 * RATE + 4000] += tone(0.25)
    gate = SpectralGate()
    y = np.concatenate([gate.process(x[i:i + 777]) for i in range(0, len(x), 777)] + [gate.flush()])
    d = gate.delay
    # Before it has a noise estimate (0.3 s) it passes the audio through untouched.
    assert np.max(np.abs(y[d:d + 3000] - x[:3000])) < 1e-6
    noise_in, noise_out = rms(x[RATE:2 * RATE]), rms(y[d + RATE:d + 2 * RATE])
    assert noise_out < noise_in / 2  # at least 6 dB quieter
    tone_in, tone_out = rms(x[2 * RATE:2 * RATE + 4000]), rms(y[d + 2 * RATE:d + 2 * RATE + 4000])
    assert tone_out > 0.8 * tone_in


def test_speech_onset_finds_the_rise_in_silence_and_in_noise() -> None:
    start = RATE + 1234
    clean = np.zeros(3 * RATE)
    clean[start:start + RATE // 2] = buzz(0.5)
    assert (span := sound_span(clean)) is not None and span[0] == pytest.approx(start, abs=2)
    for guess in (start - 900, start + 500):  # Vosk's start, early or late
        found = speech_onset(clean, guess, start + RATE // 2)
        assert found is not None
        onset, noise_db = found
        assert onset == pytest.approx(start, abs=RATE * 0.01) and noise_db == 0
    noisy = add_noise(clean, (start, start + RATE // 2), 10.0, np.random.default_rng(4))
    found = speech_onset(noisy, start - 700, start + RATE // 2)
    assert found is not None and found[0] == pytest.approx(start, abs=RATE * 0.03)


def test_an_onset_is_never_moved_to_the_noises_start() -> None:
    # Silence, then pink noise from 1.0 s, then speech at 1.2 s (10 dB over the noise); Vosk
    # puts the word's start in the noise, 0.15 s early.
    start = int(1.2 * RATE)
    x = np.zeros(3 * RATE)
    x[start:start + RATE // 2] = buzz(0.5)
    noise = pink_noise(3 * RATE, np.random.default_rng(2)) * rms(x[start:start + RATE // 2]) / 10 ** 0.5
    x[RATE:] += noise[RATE:]
    found = speech_onset(x, start - int(0.15 * RATE), start + RATE // 2)
    assert found is not None
    onset, noise_db = found
    assert onset == pytest.approx(start, abs=RATE * 0.03)
    assert noise_db > 10  # the noise's level over the silence it rose from
    # Without the plateau rule the rise is the noise's, 0.2 s before the speech.
    found = speech_onset(x, start - int(0.15 * RATE), start + RATE // 2, plateau_db=1e9)
    assert found is not None
    early, _ = found
    assert early == pytest.approx(RATE, abs=RATE * 0.03)
    # The pause rule measures quiet over that noise, so the shout still follows a pause.
    assert quiet_before(x, onset, noise_db=noise_db, until=start + RATE // 2)
    assert not quiet_before(x, onset, until=start + RATE // 2)


def test_a_soft_start_that_ends_with_the_word_is_the_speech_s_own() -> None:
    # "음악": a nasal 12 dB under the vowel for 0.18 s, then the vowel, then quiet again, in a
    # room. The steady nasal looks like a noise that began (the plateau rule), but it ends with
    # the word: the onset stays at its start (it was read 0.15 s late, at the vowel).
    start = int(1.2 * RATE)
    x = pink_noise(3 * RATE, np.random.default_rng(5)) * 40.0
    soft = int(0.18 * RATE)
    x[start:start + soft] += buzz(0.18) / 4
    x[start + soft:start + soft + RATE // 2] += buzz(0.5)
    found = speech_onset(x, start - 800, start + soft + RATE // 4)
    assert found is not None and found[0] == pytest.approx(start, abs=RATE * 0.015)
    # With nothing heard after the word yet, the plateau rule reads it as before.
    found = speech_onset(x, start - 800, start + soft + RATE // 4, after_s=0.0)
    assert found is not None and found[0] == pytest.approx(start + soft, abs=RATE * 0.015)


def test_an_h_a_few_db_over_the_noise_starts_the_word() -> None:
    # "회사": an "h" (a hiss 80 ms long, a few dB over the room's noise above 250 Hz, never
    # ONSET_DB over it for long) before the vowel. Its onset was read at the vowel, 77 ms late.
    start, soft = int(1.2 * RATE), int(0.08 * RATE)
    for seed in range(6):
        rng = np.random.default_rng(seed)
        x = pink_noise(3 * RATE, rng) * 40.0
        x[start:start + soft] += rng.normal(0.0, 20.0, soft)
        x[start + soft:start + soft + RATE // 2] += buzz(0.5)
        found = speech_onset(x, start - 800, start + soft + RATE // 4)
        assert found is not None and found[0] > start + soft * 0.9  # the rise: the vowel
        assert soft_start(x, *found) == pytest.approx(start, abs=RATE * 0.01)


def test_a_word_rising_from_the_noise_at_once_keeps_its_onset() -> None:
    # The sum that finds an "h" finds nothing in the noise before a plain start: never early.
    start = int(1.2 * RATE)
    for seed in range(10):
        x = pink_noise(3 * RATE, np.random.default_rng(seed)) * 40.0
        x[start:start + RATE // 2] += buzz(0.5)
        found = speech_onset(x, start - 800, start + RATE // 4)
        assert found is not None and start - RATE * 0.005 <= soft_start(x, *found) <= start + RATE * 0.005


def test_a_word_whose_loudest_frame_ends_the_window_gets_its_onset() -> None:
    """Vosk placed a word ending where a loud sound had only begun (talk under other players'
    voices at a table did this): the loudest frame is the window's last, with no plateau after
    the rise to read. It crashed the recogniser's thread; the onset is the rise."""
    rng = np.random.default_rng(0)
    samples = rng.standard_normal(2 * RATE) * 100
    samples[int(0.997 * RATE):] += rng.standard_normal(2 * RATE - int(0.997 * RATE)) * 3000
    found = speech_onset(samples, int(0.9 * RATE), RATE)
    assert found is not None
    assert abs(found[0] - 0.997 * RATE) < 0.006 * RATE


def test_noise_alone_has_no_speech_onset() -> None:
    noise = pink_noise(3 * RATE, np.random.default_rng(3)) * 3000
    assert speech_onset(noise, RATE, RATE + 8000) is None


def test_running_speech_has_no_onset_and_no_pause_before() -> None:
    x = np.zeros(3 * RATE)
    for at in range(RATE // 2, 2 * RATE, RATE // 4):  # syllables since 0.5 s
        x[at:at + 2400] = buzz(0.15)
    guess = int(1.5 * RATE)
    assert speech_onset(x, guess, guess + 2400) == (guess, 0.0)  # no rise of its own
    assert not quiet_before(x, guess)
    assert quiet_before(x, RATE // 2 + 10)


def measured(levels: list[float | None]) -> list[float]:
    """Levels that must all have been measured (None: not yet)."""
    assert None not in levels, levels
    return [level for level in levels if level is not None]


def test_the_level_tracker_hears_sound_over_the_rooms_floor_chunk_by_chunk() -> None:
    rng = np.random.default_rng(3)
    room = pink_noise(6 * RATE, rng) * 30.0  # a quiet room
    stream = room.copy()
    stream[4 * RATE:4 * RATE + RATE // 2] += buzz(0.5)  # a shout at 4 s
    tracker = LevelTracker()
    levels = [tracker.loudest(stream[i:i + 800]) for i in range(0, len(stream), 800)]
    assert levels[:10] == [None] * 10  # no floor before the first 0.5 s
    quiet, shout = measured(levels[10:80]), measured(levels[80:90])  # 0.5-4 s, 4-4.5 s
    assert max(quiet) < 6.0 and min(shout) > 20.0
    # Chunks of any size: a frame left over is measured with the next chunk.
    odd = LevelTracker()
    uneven = [odd.loudest(stream[i:i + 333]) for i in range(0, len(stream), 333)]
    assert max(x for x in uneven[48:192] if x is not None) < 6.0  # 1-4 s
    assert max(measured(uneven[193:216])) > 20.0


def test_loudness_on_a_stream_filtered_as_it_came_equals_filtering_the_window() -> None:
    rng = np.random.default_rng(4)
    stream = pink_noise(5 * RATE, rng) * 100.0
    stream[3 * RATE:3 * RATE + 4000] += buzz(0.25)
    first, state = speech_band(stream[:RATE])
    rest, _ = speech_band(stream[RATE:], state=state)
    band = np.concatenate([first, rest])[2 * RATE:]
    kept = loudness(stream, 2 * RATE, 5 * RATE, RATE, band=band)
    fresh = loudness(stream, 2 * RATE, 5 * RATE, RATE)
    assert np.array_equal(kept[0], fresh[0])
    # The window's first milliseconds differ (the filter starts from rest): nothing that shows.
    assert np.allclose(kept[1][40:], fresh[1][40:], atol=0.05)


def test_the_fast_percentile_gives_numpys_numbers() -> None:
    from voice.audio import _percentile

    rng = np.random.default_rng(5)
    for shape in [(7, 200), (200,), (41,), (1,)]:
        values = rng.standard_normal(shape)
        for q in (0, 20, 50, 98, 100):
            assert np.allclose(_percentile(values, q), np.percentile(values, q, axis=-1))


def test_the_small_percentile_and_median_give_numpys_numbers_to_the_bit() -> None:
    # The level tracker's floor goes through them every 0.5 s: bit for bit, so that skipping
    # numpy there changes no decision.
    from voice.audio import _small_median, _small_percentile

    rng = np.random.default_rng(6)
    for n in (1, 2, 5, 6, 49, 50):
        for _ in range(200):
            values = list(np.abs(rng.standard_normal(n)) * 10 ** rng.uniform(0, 9))
            assert _small_percentile(values, 20) == np.percentile(values, 20)
            assert _small_percentile(values, 98) == np.percentile(values, 98)
            assert _small_median(values) == np.median(values)


def test_a_microphone_that_opens_but_will_not_start_lets_its_device_go(monkeypatch: pytest.MonkeyPatch) -> None:
    # The stream opened and its start failed: it was dropped unclosed, the device held until
    # the garbage collector came by (a second seat's --devices, or a retry, found it busy).
    # A stand-in sounddevice: the real one, imported here, starts PortAudio before the virtual
    # microphone's PulseAudio runs, and its 'pulse' device was missing from every later test.
    import sys
    import types

    from voice.microphone import Microphone, MicrophoneError

    closed: list[bool] = []

    class PortAudioError(Exception):
        pass

    class Stubborn:
        def __init__(self, **_: object) -> None:
            pass

        def start(self) -> None:
            raise PortAudioError("Device unavailable")

        def close(self) -> None:
            closed.append(True)

    sd = types.SimpleNamespace(PortAudioError=PortAudioError, InputStream=Stubborn,
                               query_devices=lambda device, kind: {"name": "test mic", "max_input_channels": 1})
    monkeypatch.setitem(sys.modules, "sounddevice", sd)
    microphone = Microphone("test")
    with pytest.raises(MicrophoneError, match="cannot record from 'test mic'"):
        microphone.start()
    assert closed == [True] and microphone._stream is None


def test_a_fault_while_listening_is_said_as_the_microphone_lost_never_a_deaf_seat() -> None:
    # Anything but a MicrophoneError ended the seat's listening thread without a word: the seat
    # deaf, the table still showing it as listening.
    import threading
    import time

    from voice.live import MicrophoneListener, _Ear
    from voice.session import InputLost

    class OneBlock:
        given = False

        def __init__(self) -> None:
            self.clock = lambda index: index / RATE

        def read(self) -> tuple[np.ndarray, int]:
            if self.given:
                time.sleep(0.01)
                return np.zeros(800, np.int16), 800
            self.given = True
            return np.zeros(800, np.int16), 0

        def stop(self) -> None:
            pass

    class Broken:
        lexicon: dict[str, object] = {}

        def accept(self, block: np.ndarray, start: int) -> list[object]:
            raise RuntimeError("a fault of ours")

    listener = MicrophoneListener([_Ear(1, OneBlock(), Broken(), threading.Lock())])  # type: ignore[arg-type]
    try:
        deadline = time.monotonic() + 5
        while listener._problem is None and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(InputLost, match=r"seat 2's listening stopped \(RuntimeError: a fault of ours\)"):
            listener.poll()
    finally:
        listener.close()
