"""Imported first by every command (scripts/*.py), for its effect: a Ctrl+C while the command's
libraries load (torch, stable-baselines3, Ray and Vosk take seconds) is one line and exit status
130, as it is once the command runs (cdc_env.cli.run_command), not a traceback through the
import machinery. Any other uncaught exception keeps Python's own report: a bug. (The hook is in
place once the cdc_env package itself has loaded, its first few tenths of a second; a library
that imports cdc_env is left alone: only the commands import this module.)"""

from __future__ import annotations

import sys
from types import TracebackType

STOPPED = "stopped: nothing was written"

_python_hook = sys.excepthook


def _hook(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
    if issubclass(kind, KeyboardInterrupt):
        # Python still ends the process as one stopped by Ctrl+C (status 130 in a shell).
        print(STOPPED, file=sys.stderr)
        return
    _python_hook(kind, error, traceback)


sys.excepthook = _hook
