"""One player's microphone: a sounddevice input stream delivering numbered PCM blocks.

Each block comes with the absolute index of its first sample, and `clock` turns an index into
seconds on the game's clock, time.monotonic(). Sample n was captured at t0 + n / rate: sample
counting, never a clock read per detection. t0 is pinned by when blocks arrive: a block's last
sample cannot have been captured after its callback ran, so t0 <= arrival - (index + frames)
/ rate for every block, and the smallest such bound over the last seconds is the estimate
(blocks that arrive promptly make it tight; following it over a window absorbs the drift
between the sound card's clock and the computer's). PortAudio's own ADC timestamps are not
used: through the ALSA 'pulse' device they were 0.2 s off on the first blocks, then 0.02 s.
Every microphone shares the game clock, so shouts from several players (and bots' timings,
taken with time.monotonic()) compare directly.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Sequence
from types import TracebackType
from typing import Any

import numpy as np

from voice.audio import RATE

log = logging.getLogger(__name__)

CLOCK_WINDOW_S = 20.0  # blocks whose arrival times pin the clock (sound-card drift is slower)


def parse_device(spec: str | None) -> tuple[int | str | None, int]:
    """`DEVICE` or `DEVICE:CHANNEL` (channel 1-based, as a sound card labels it) as (device,
    0-based channel). ValueError for channel 0."""
    if spec is None or spec == "":
        return None, 0
    name, _, channel = spec.rpartition(":") if ":" in spec else (spec, "", "")
    if channel and not channel.isdigit():
        name, channel = spec, ""
    if channel and int(channel) == 0:  # it became channel -1: a stream of 0 channels, blamed on the card
        raise ValueError(f"--devices {spec}: channels count from 1 ({name}:1 is the first)")
    device: int | str = int(name) if name.isdigit() else name
    return device, (int(channel) - 1 if channel else 0)


def devices_refusal(humans: int, devices: Sequence[str] | None) -> str | None:
    """Why `--devices` cannot give each of `humans` players a microphone, or None. A wrong
    entry is the user's mistake, said before the game (it fell back to the keyboard, its reason
    hidden at once by the table)."""
    specs = list(devices or [])
    if len(specs) not in (0, humans) or (not specs and humans > 1):
        players = f"{humans} human{'s' * (humans > 1)}"
        given = f"{len(specs) or 'no'} --devices entr{'y' if len(specs) == 1 else 'ies'}"
        return (f"{players}, {given}: give one --devices entry per human, e.g. --devices pulse:1 pulse:2 "
                f"for two channels of one card (with one microphone for all: --web, each phone its player's "
                f"microphone, or --keyboard)")
    for spec in specs:
        try:
            parse_device(spec)
        except ValueError as error:
            return str(error)
    return None


class MicrophoneError(RuntimeError):
    """The input device is missing, unusable or stopped; the message says what to do."""


def _hint() -> str:
    return ("List the inputs with 'python -m sounddevice', pick one with --device, or play "
            "without a microphone with --keyboard.")


def input_devices() -> list[tuple[int, str, int]]:
    """(index, name, input channels) of every device that can record."""
    import sounddevice as sd

    return [(i, d["name"], d["max_input_channels"]) for i, d in enumerate(sd.query_devices())
            if d["max_input_channels"] > 0]


class Microphone:
    """Records one channel of one input device at the model rate, as int16 blocks.

    device: a sounddevice index or (part of) a name; None is the system default input.
    channel: which channel of a multi-channel device this player speaks into (0-based).
    """

    def __init__(self, device: int | str | None = None, channel: int = 0, rate: int = RATE,
                 block_s: float = 0.05, stall_s: float = 1.0) -> None:
        self.device, self.channel, self.rate = device, channel, rate
        self.block = max(1, round(block_s * rate))
        self.stall_s = stall_s
        self._queue: queue.Queue[tuple[np.ndarray, int]] = queue.Queue()
        self._stream: Any = None  # a sounddevice.InputStream once started (sounddevice is untyped)
        self._count = 0  # samples delivered so far: the next block's first index
        self._t0: float | None = None  # game time of sample 0
        self._bounds: deque[tuple[float, float]] = deque()  # (arrival, bound on t0) per block
        self._first = threading.Event()
        self._problem: str | None = None

    # --- life cycle ---------------------------------------------------------------------------

    def start(self) -> None:
        import sounddevice as sd

        try:
            info = sd.query_devices(self.device, kind="input")
        except (ValueError, sd.PortAudioError) as error:
            raise MicrophoneError(f"no input device {self.device!r} ({error}). {_hint()}") from None
        if self.channel >= info["max_input_channels"]:
            raise MicrophoneError(
                f"input device '{info['name']}' has {info['max_input_channels']} channel(s); "
                f"channel {self.channel + 1} does not exist (channels count from 1). {_hint()}")
        stream = None
        try:
            stream = sd.InputStream(
                device=self.device, samplerate=self.rate, channels=self.channel + 1,
                dtype="int16", blocksize=self.block, callback=self._callback)
            stream.start()
            self._stream = stream
        except sd.PortAudioError as error:
            if stream is not None:  # opened but not started: the device is let go now, not at collection
                with contextlib.suppress(Exception):
                    stream.close()
            self._stream = None
            raise MicrophoneError(
                f"cannot record from '{info['name']}' at {self.rate} Hz ({error}): if another program (or "
                f"another seat's --devices) holds it, free it; if it cannot take {self.rate} Hz, the 'pulse' or "
                f"'default' device converts rates for you. {_hint()}") from None
        log.info("recording from '%s' channel %d", info["name"], self.channel)

    def stop(self) -> None:
        if self._stream is not None:
            try:
                self._stream.stop()
                self._stream.close()
            except Exception as error:  # noqa: BLE001 - a vanished device may fail to close: nothing to keep
                log.warning("closing the input stream failed: %s", error)
            self._stream = None

    def __enter__(self) -> Microphone:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.stop()

    # --- reading ------------------------------------------------------------------------------

    def wait_started(self, timeout: float = 5.0) -> None:
        """Block until audio flows. The first stream of a process can take over a second to
        deliver its first block; start any playback the test or game times only after this."""
        if not self._first.wait(timeout):
            raise MicrophoneError(f"the input device delivered no audio in {timeout:.0f} s. {_hint()}")

    def read(self, timeout: float | None = None) -> tuple[np.ndarray, int]:
        """The next (int16 mono block, index of its first sample); MicrophoneError when the
        device has stopped delivering (unplugged, taken by another program)."""
        wait = self.stall_s if timeout is None else timeout
        try:
            return self._queue.get(timeout=wait)
        except queue.Empty:
            pass
        if self._problem:
            raise MicrophoneError(f"the input device failed: {self._problem}. {_hint()}")
        if self._stream is None or not self._stream.active:
            raise MicrophoneError(f"the input device is no longer recording. {_hint()}")
        raise MicrophoneError(f"no audio from the input device for {wait:.1f} s: was it "
                              f"unplugged? {_hint()}")

    def clock(self, sample_index: float) -> float:
        """Game time (time.monotonic() seconds) at which a sample was captured."""
        if self._t0 is None:
            raise MicrophoneError("the microphone has not delivered audio yet; call wait_started()")
        return self._t0 + sample_index / self.rate

    @property
    def samples(self) -> int:
        """How many samples have been delivered so far."""
        return self._count

    def _callback(self, indata: np.ndarray, frames: int, times: object, status: object) -> None:
        # Runs on PortAudio's thread: copy, stamp, queue; nothing slow.
        now = time.monotonic()
        if status and getattr(status, "input_overflow", False):
            log.warning("input overflow: some audio was lost")
            # The samples lost are not counted: every later one was captured later than its
            # number says, and the old blocks' bounds (the window's minimum) dated them up to the
            # gap early, for CLOCK_WINDOW_S. The clock starts again from the blocks after it.
            self._bounds.clear()
        start = self._count
        self._count += frames
        self._bounds.append((now, now - self._count / self.rate))
        while now - self._bounds[0][0] > CLOCK_WINDOW_S:
            self._bounds.popleft()
        self._t0 = min(bound for _, bound in self._bounds)
        self._queue.put((indata[:, self.channel].copy(), start))
        self._first.set()
