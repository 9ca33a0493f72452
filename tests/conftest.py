"""What every test folder shares at the suite's start (each folder's own conftest.py re-exports
its helpers)."""

import signal
from pathlib import Path

import pytest

# A suite started in the background by a shell without job control (`… &` in a script, nohup in
# a subshell) inherits SIGINT ignored, and so would every command it starts: Python then sets no
# KeyboardInterrupt, and each test that presses Ctrl+C in a command waits out its timeout. A
# handler of Python's own is put back to the default in a child at exec, so the commands the
# tests start hear Ctrl+C however the suite was launched.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# scripts/test.sh runs the suite in two processes (pytest-xdist, --dist loadgroup). The tests that
# measure time as it passes (races' windows and onsets, the phones' clocks and streams, a real
# browser, the live table) run one after another in one of them, as they did alone: the other
# process then plays the CPU-bound ones (training, Ray, searches) beside them, never two of them
# against each other.
REAL_TIME_FOLDERS = {"play", "voice", "web"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.path)).parent.name in REAL_TIME_FOLDERS:
            item.add_marker(pytest.mark.xdist_group("real_time"))
