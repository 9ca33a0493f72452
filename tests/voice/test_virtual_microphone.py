"""End to end through a real (virtual) microphone: PulseAudio null sink -> its monitor source ->
ALSA 'pulse' device -> sounddevice -> Microphone -> Recogniser, clips played with paplay."""

from __future__ import annotations

import subprocess
import time

import numpy as np
import pytest

from voice.audio import RATE, to_pcm16
from voice.microphone import Microphone, MicrophoneError
from voice.recogniser import Detection, Recogniser

pytestmark = [pytest.mark.audio, pytest.mark.slow]


def find_exactly(recording: np.ndarray, clip: np.ndarray) -> int:
    """Where the clip starts in the recording, by exact sample match (the path is bit-exact)."""
    first = int(np.flatnonzero(clip)[0])
    probe = clip[first:first + 800]
    for i in np.flatnonzero(recording == probe[0]):
        if np.array_equal(recording[i:i + len(probe)], probe):
            return int(i) - first
    raise AssertionError("the played clip is not in the recording bit for bit")


def test_shouts_played_into_the_virtual_microphone(virtual_microphone, ko_model, ko_lexicon,
                                                   ko_phrases, clip_maker) -> None:
    said = ["pas_mou_le_caillou", "non", "sans_fin"]
    clips = [clip_maker(ko_phrases[intent], lead_s=0.5, tail_s=0.3) for intent in said]
    recorded: list[np.ndarray] = []
    found = []
    with Microphone("pulse", channel=0) as mic:
        mic.wait_started(timeout=10.0)  # the first stream of a process starts late
        recogniser = Recogniser(ko_model, ko_lexicon, clock=mic.clock)

        def listen(seconds: float) -> None:
            until = mic.samples + int(seconds * RATE)  # measured in samples, not wall time
            while mic.samples < until:
                pcm, start = mic.read(timeout=2.0)
                recorded.append(pcm)
                found.extend(recogniser.accept(pcm, start))

        listen(0.3)
        played_at = []
        for clip in clips:
            played_at.append(time.monotonic())
            player = virtual_microphone.play(clip.path)
            while player.poll() is None:
                listen(0.1)
            assert player.returncode == 0, player.stderr.read()
            listen(1.2)  # room for the recogniser to hear the end of the shout
        found += recogniser.flush()
    recording = np.concatenate(recorded)

    assert [d.intent if isinstance(d, Detection) else d for d in found] == said
    for detection, clip, played in zip(found, clips, played_at, strict=True):
        start = find_exactly(recording, to_pcm16(clip.samples))
        truth = mic.clock(start + round(clip.onset_s * RATE))
        assert detection.onset_s == pytest.approx(truth, abs=0.1)
        # On the game clock (time.monotonic()) the speech began clip.onset_s after paplay was
        # started, plus the sound server's start-up; never before.
        assert played + clip.onset_s - 0.06 <= detection.onset_s <= played + clip.onset_s + 0.4


def test_a_microphone_that_stops_delivering_raises(virtual_microphone) -> None:
    with Microphone("pulse") as mic:
        mic.wait_started(timeout=10.0)
        mic.read(timeout=2.0)
        # Unloading the null sink removes the source we record from: an unplugged microphone.
        env = virtual_microphone.env
        modules = subprocess.run(["pactl", "list", "short", "modules"], check=True, env=env,
                                 capture_output=True, text=True).stdout
        [module] = [line.split()[0] for line in modules.splitlines() if "module-null-sink" in line]
        subprocess.run(["pactl", "unload-module", module], env=env, check=True)
        try:
            with pytest.raises(MicrophoneError, match="--keyboard"):
                for _ in range(100):  # drain what was already queued, then it must fail
                    mic.read(timeout=1.0)
        finally:
            subprocess.run(["pactl", "load-module", "module-null-sink", "sink_name=vmic",
                            "rate=16000", "channels=1", "format=s16le"], env=env, check=True,
                           capture_output=True)


def test_missing_device_or_channel_is_a_clear_error(virtual_microphone) -> None:
    with pytest.raises(MicrophoneError, match="no input device 'no-such-microphone'.*--keyboard"):
        Microphone("no-such-microphone").start()
    with pytest.raises(MicrophoneError, match="channel 1000 does not exist .channels count from 1."):
        Microphone("pulse", channel=999).start()


def test_one_microphone_that_cannot_start_stops_the_others(virtual_microphone, ko_model, ko_lexicon,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Seat 1's microphone started, seat 2's device is misspelt: the game goes on by keyboard, and
    # seat 1's stream kept recording into a queue nobody read (and kept the device open).
    from voice import live

    started: list[Microphone] = []
    real_start = Microphone.start

    def start(self: Microphone) -> None:
        real_start(self)
        started.append(self)

    monkeypatch.setattr(Microphone, "start", start)
    with pytest.raises(MicrophoneError, match="no input device 'no-such-microphone'"):
        live.open_listener(ko_model, ko_lexicon, [0, 1], ["pulse", "no-such-microphone"])
    assert len(started) == 1 and started[0]._stream is None  # stopped and closed


def test_audio_lost_in_an_overflow_does_not_date_the_samples_after_it_early(monkeypatch: pytest.MonkeyPatch) -> None:
    # The samples lost are not counted: the window's oldest bounds dated every later sample up to
    # the gap early, for 20 s. After an overflow the clock starts again from the blocks after it.
    from types import SimpleNamespace

    mic = Microphone("pulse")
    block = np.zeros((1600, 1), np.int16)
    now = [100.0]
    monkeypatch.setattr("voice.microphone.time.monotonic", lambda: now[0])
    for _ in range(10):  # 1 s of blocks, each arriving 100 ms after the last
        now[0] += 0.1
        mic._callback(block, 1600, None, None)
    assert mic.clock(16000) == pytest.approx(101.0)
    now[0] += 0.3  # 200 ms of audio lost: the next block, numbered on, was captured 0.2 s later
    mic._callback(block, 1600, None, SimpleNamespace(input_overflow=True))
    assert mic.clock(17600) == pytest.approx(101.3)
