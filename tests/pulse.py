"""A private PulseAudio daemon for the tests that play sound into a virtual device (the voice
tests' microphone, the web tests' room): one starter, so both start and stop it alike."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def private_pulseaudio(runtime: Path, null_sink: str, **env_extra: str) -> Iterator[dict[str, str]]:
    """Starts a PulseAudio daemon of its own in `runtime` with one null sink (`null_sink`: the
    module's arguments), waits until it answers, yields the environment that reaches it, and
    kills it afterwards. Fails (never skips) when the tools are missing or it does not start."""
    missing = [tool for tool in ("pulseaudio", "paplay", "pactl") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"PulseAudio tools missing ({', '.join(missing)}): run 'bash scripts/setup.sh --dev'")
    runtime.chmod(0o700)
    # Another daemon's server, sink and source (the voice tests' virtual microphone sets them in
    # os.environ while it lives) name nothing in this one: a browser given them has no output.
    env = {k: v for k, v in os.environ.items() if k not in ("PULSE_SERVER", "PULSE_SINK", "PULSE_SOURCE")}
    env.update(XDG_RUNTIME_DIR=str(runtime), HOME=str(runtime), **env_extra)
    command = ["pulseaudio", "-D", "-n", "--exit-idle-time=-1", "--disallow-exit", "--disable-shm",
               "--load=module-native-protocol-unix", f"--load=module-null-sink {null_sink}"]
    if os.geteuid() == 0:
        command.append("--system=false")
    started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    if started.returncode != 0:
        pytest.fail(f"PulseAudio did not start (rc {started.returncode}): {started.stderr.strip()}")
    try:
        for _ in range(50):  # the daemon forks: wait until it answers
            if subprocess.run(["pactl", "info"], env=env, capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail("PulseAudio started but does not answer 'pactl info'")
        yield env
    finally:
        subprocess.run(["pulseaudio", "--kill"], env=env, capture_output=True)
