"""What every command of the project shares to answer a user's mistake in one line.

- argparse `type=` functions for numbers in a range and for files read or written, so that a
  bad value is refused before any work, with argparse's usage line and exit status 2;
- `run_command`, the one place per command that turns a user's error into `error: ...` and
  exit status 2, and Ctrl+C into one line that says what was kept and exit status 130; any
  other exception is a bug of ours and keeps its traceback;
- `write_atomic`, so that a file the user keeps is written whole or not at all;
- `in_use_by_one`, so that two commands never write the same run folder or file at once.

Standard library only, and no part of the engine imports it: the engine does no I/O.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import signal
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; a command runs without one (`in_use_by_one`)
    fcntl = None  # type: ignore[assignment]


class UsageError(ValueError):
    """A value the command cannot work with; the message names it and says what to give."""


class OutputError(UsageError):
    """A file or folder the command was asked to write cannot be written, or holds something
    the user made that is not to be overwritten without --overwrite or --resume."""


class Stopped(Exception):
    """Ctrl+C, caught where the command knows what it kept; the message says it, and how to go on."""


def _number(text: str, kind: type[int] | type[float]) -> int | float:
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not {'a whole number' if kind is int else 'a number'}") from None
    if value != value or value in (float("inf"), float("-inf")):  # nan and inf are no counts
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def positive_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: give 1 or more")
    return value


# Upper bounds of counts that start processes or environments: beyond them a count is a typo
# (a 0 too many), not a machine, and is refused before anything starts (--workers 100000 was a
# MemoryError or a hang). Processes on this machine: 4 per core. Env runners may be spread over a
# Ray cluster, whose own CPUs are checked when it is joined: a fixed bound, far above any cluster
# of this project.
MAX_PROCESSES = 4 * (os.cpu_count() or 1)
MAX_RUNNERS = 1024
MAX_ENVS = 4096
# A tournament keeps each game's record in memory (and its schedule was made whole first:
# --games 10000000000000 filled the memory): a million games is hours of play already.
MAX_GAMES = 1_000_000
# A PPO rollout (n_steps per table × the tables) is held whole in memory, each step's observation
# and action mask: a million steps is a few GB (--n-steps 10**14 was NumPy's _ArrayMemoryError).
MAX_ROLLOUT = 1_000_000
# Steps a bench times in all: minutes of play per environment already.
MAX_BENCH_STEPS = 10_000_000


def count_at_most(limit: int, what: str, least: int = 1) -> Callable[[str], int]:
    """An argparse type: a whole number from `least` (1 or 0) to `limit` (`what` says why the limit)."""
    def count(text: str) -> int:
        value = positive_int(text) if least else non_negative_int(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"{value}: give at most {limit} ({what})")
        return value
    return count


processes = count_at_most(MAX_PROCESSES, "4 per core of this machine")
runners = count_at_most(MAX_RUNNERS, "env runners, over a whole cluster")
environments = count_at_most(MAX_ENVS, "tables stepped at once")
game_count = count_at_most(MAX_GAMES, "each game's result is kept in memory")
game_count_or_zero = count_at_most(MAX_GAMES, "each game's result is kept in memory", least=0)
bench_steps = count_at_most(MAX_BENCH_STEPS, "steps timed in all: minutes per environment already")
rollout_steps = count_at_most(MAX_ROLLOUT, "a rollout is held whole in memory")


def non_negative_int(text: str) -> int:
    value = int(_number(text, int))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value}: give 0 or more")
    return value


def positive_float(text: str) -> float:
    value = float(_number(text, float))
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value:g}: give a number above 0")
    return value


def non_negative_float(text: str) -> float:
    value = float(_number(text, float))
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value:g}: give 0 or more")
    return value


def fraction(text: str) -> float:
    value = float(_number(text, float))
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{value:g}: give a share between 0 and 1")
    return value


def number_between(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a number from `low` to `high`."""
    def number(text: str) -> float:
        value = float(_number(text, float))
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: give {low:g} to {high:g}")
        return value
    return number


# A searcher's time per decision (--budget-ms): a millisecond at least; beyond ten minutes a
# decision, a typo (a game of such decisions would last days).
MAX_BUDGET_MS = 600_000.0
budget_ms = number_between(1, MAX_BUDGET_MS)
BUDGET_HELP = ("how long a searcher may think per decision, in ms: the bot `searcher`, and `champion` where "
               "the champion searches (default: 300, what their figures were measured with); a name that "
               "gives its own (searcher:MS) keeps it")


def short_path(path: object) -> str:
    """A path as an error quotes it: whole up to 200 characters, else its start and its length."""
    name = str(path)
    return name if len(name) <= 200 else f"{name[:60]}… ({len(name)} characters)"


def path_error(error: OSError) -> str:
    """An OSError about a path the user gave, in one line: the path cut short (a name too long
    for the file system, a whole 5,000 characters, was quoted whole in a traceback)."""
    name = short_path(error.filename) if error.filename is not None else ""
    what = error.strerror or type(error).__name__
    advice = "; give a shorter path" if error.errno == errno.ENAMETOOLONG else ""
    return f"{name}: {what}{advice}" if name else f"{what}{advice}"


def _stat_checked(check: Callable[[str], Path]) -> Callable[[str], Path]:
    """An argparse type whose file system checks may raise OSError (a name too long): an
    argparse error, not a traceback (argparse turns only ValueError and TypeError into one).
    An empty path is refused: `--out "$DIR"` with DIR unset wrote into the current folder."""
    def checked(text: str) -> Path:
        if not text.strip():
            raise argparse.ArgumentTypeError("an empty path; give a folder or file name (. for the current folder)")
        try:
            return check(text)
        except OSError as error:
            raise argparse.ArgumentTypeError(path_error(error)) from None
    checked.__name__ = check.__name__
    checked.__doc__ = check.__doc__
    return checked


@_stat_checked
def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.exists():
        raise argparse.ArgumentTypeError(f"no file at {text}")
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} is a folder, not a file")
    return path


def _writable_folder(folder: Path) -> None:
    """`folder` exists as a writable folder, or can be made (it is made)."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and not existing.is_dir():
        raise argparse.ArgumentTypeError(f"{existing} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise argparse.ArgumentTypeError(f"folder {folder} cannot be made ({error.strerror})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"folder {folder} is not writable")
    # os.access trusts the mode bits: root is let into /proc and /sys, and a read-only mount or
    # a full disk passes too, so a run's results failed to be written only at its end. A file is
    # made there (and goes at once) to know.
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise argparse.ArgumentTypeError(f"no file can be made in folder {folder} ({error.strerror}); "
                                         f"give a path in a folder of your own") from None


@_stat_checked
def output_file(text: str) -> Path:
    """A file the command will write: not a folder, in a folder that exists or can be made and
    is writable. Checked before any work, so that results are never lost at the end."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a folder: give a file name")
    if path.exists() and not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"{text} is not writable")
    _writable_folder(path.parent)
    return path


def refuse_existing(parser: argparse.ArgumentParser, path: Path | str | None, option: str) -> None:
    """A file written at the end of a long run must be new: one that exists is refused before
    any work (a usage error, exit 2), never written over and never lost after the run."""
    if path and Path(path).exists():
        parser.error(f"{option} {path} exists; give a new file name (nothing is overwritten)")


@_stat_checked
def named_path(text: str) -> Path:
    """A file or folder named on the command line, checked when it is used: not empty."""
    return Path(text)


@_stat_checked
def output_dir(text: str) -> Path:
    """A folder the command will write into: made if need be, and writable."""
    path = Path(text)
    _writable_folder(path)
    return path


def check_output_file(path: Path, argument: str) -> None:
    """`output_file` for a path that does not come from argparse (a config's out_dir, say)."""
    try:
        output_file(str(path))
    except argparse.ArgumentTypeError as error:
        raise OutputError(f"{argument}: {error}") from None


def check_output_dir(path: Path, argument: str) -> None:
    try:
        output_dir(str(path))
    except argparse.ArgumentTypeError as error:
        raise OutputError(f"{argument}: {error}") from None


def write_atomic(path: Path, data: str | bytes, private: bool = False) -> None:
    """Writes `path` whole or not at all: a temporary file beside it, then a rename (atomic on
    one file system), so that an interruption or a full disk leaves the old file as it was.
    The file gets the mode of the one it replaces, or a new file's (the umask's); `private`:
    the user's alone (0600), from the first byte (a key). Through a symbolic link: its target is
    written (created where the link dangles), the link kept; a rename onto the link replaced
    the link with a file, and left the target (which `lock_path` locks) as it was."""
    path = Path(os.path.realpath(path))
    temporary = _written_beside(path, data, private)
    try:
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_new(path: Path, data: str | bytes) -> None:
    """Writes `path` whole, as a new file: OutputError if one appeared there since the command
    checked (`--json` is a new file, never overwritten: two runs given one name, the second's
    write_atomic replaced the first's figures). The data is then kept beside it, said where."""
    path = Path(os.path.realpath(path))  # a link to a file still to write: that file (as write_atomic)
    temporary = _written_beside(path, data, private=False)
    try:
        os.link(temporary, path)  # fails where a file is: no replacing, unlike a rename
    except FileExistsError:
        raise OutputError(f"{path} was written by another command meanwhile, and is not replaced: these results "
                          f"are in {temporary}") from None
    os.unlink(temporary)


def _written_beside(path: Path, data: str | bytes, private: bool) -> str:
    """`data` in a new temporary file beside `path`, whole and on the disk: its name. Nothing of
    it is left where writing fails (a full disk). Its mode is `path`'s (`_mode_for`), or 0600
    from the first byte where `private` (mkstemp's own)."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            if not private:  # (mkstemp's 0600 made every report, model and save private)
                os.fchmod(out.fileno(), _mode_for(path))
            out.write(data.encode("utf-8") if isinstance(data, str) else data)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def _mode_for(path: Path) -> int:
    """The mode of the file at `path`, or that of a new file (0666 less the umask)."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        umask = os.umask(0o077)  # read by setting it (meanwhile the strictest), then set back at once
        os.umask(umask)
        return 0o666 & ~umask


# The first words of every lock file: a file at a lock's path without them is someone's own,
# never written over nor deleted.
LOCK_MARK = "cdc lock:"
_HOLDER = re.compile(rf"{re.escape(LOCK_MARK)} pid (\d+), (.+)")


def lock_path(path: Path) -> Path:
    """The lock file of a file the command writes: beside it, never the file itself; beside
    the file a link leads to, so that two names of one file have one lock."""
    path = Path(os.path.realpath(path))
    return path.with_name(f"{path.name}.lock")


@contextmanager
def in_use_by_one(lock: Path, what: Path, command: str) -> Iterator[None]:
    """Holds `lock` (a file: RUN/.lock, SAVE.lock) for the life of the `with`, so that a second
    command writing `what` (the run folder, the save) is refused at once: OutputError, one
    line naming the holder's pid, nothing touched. Take it before anything is written or
    deleted. The lock is the kernel's (flock): a holder that died holds nothing, so a lock file
    it left never blocks; a lock file is deleted as its holder ends. Where flock is not
    (Windows, some network file systems) the command runs without a lock."""
    handle = _take(lock, what, command) if fcntl is not None else None
    if handle is None:
        yield
        return
    try:
        held = os.read(handle, 200).decode("utf-8", "replace")
        if held.strip() and not held.startswith(LOCK_MARK):
            raise OutputError(f"{short_path(lock)} is not a lock file of this project (it holds something else), "
                              "and this command locks it; move it away")
        os.ftruncate(handle, 0)
        os.pwrite(handle, f"{LOCK_MARK} pid {os.getpid()}, {command}\n".encode(), 0)
        try:
            yield
        finally:
            try:
                if os.path.samestat(os.stat(lock, follow_symlinks=False), os.fstat(handle)):
                    os.unlink(lock)  # still locked: no one else can be holding this file
            except OSError:
                pass  # gone or moved: nothing of ours to delete
    finally:
        os.close(handle)


def _take(lock: Path, what: Path, command: str) -> int | None:
    """`lock` opened and flocked (its descriptor), None where the file system has no flock."""
    for _ in range(10):  # a holder deletes its file as it ends: lock the file at the path, not one gone
        try:
            handle = os.open(lock, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        except OSError as error:
            if error.errno == errno.ENAMETOOLONG:  # the user's path, a few characters short of too long
                raise OSError(error.errno, error.strerror, str(what)) from None
            advice = f"move {short_path(lock)} away" if os.path.lexists(lock) else "give a folder you can write in"
            raise OutputError(f"{short_path(what)} cannot be locked for this {command} ({path_error(error)}); "
                              f"{advice}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            held = os.read(handle, 200).decode("utf-8", "replace")
            os.close(handle)
            if error.errno != errno.EWOULDBLOCK:
                return None  # no flock here (ENOLCK, EOPNOTSUPP): the command runs without a lock
            holder = _HOLDER.match(held)
            by = f"another {holder[2]} (pid {holder[1]})" if holder else "another command"
            raise OutputError(f"{short_path(what)} is in use by {by}; wait for it or stop it") from None
        try:
            there: os.stat_result | None = os.stat(lock, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        if there is not None and os.path.samestat(there, os.fstat(handle)):
            return handle
        os.close(handle)  # locked a file its holder had just deleted: again, with the one at the path
    raise OutputError(f"{short_path(what)} is in use by other commands starting and ending; try again")


class _NotJson(json.JSONDecodeError):
    def __str__(self) -> str:
        return self.msg  # no "line 1 column 1 (char 0)": the fault is nowhere in particular


def parse_json(text: str) -> Any:
    """`json.loads`, where JSON nested deeper than Python's recursion limit (a damaged or
    hand-made file: `[[[[...`) or holding a number of more than 4,300 digits is a
    JSONDecodeError like any other text that is not JSON: it was a RecursionError traceback,
    or a ValueError telling to call sys.set_int_max_str_digits(). Every reader of a file the
    user keeps goes through it."""
    try:
        return json.loads(text)
    except RecursionError:
        raise _NotJson("nested too deeply (a damaged file)", text, 0) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # Python's limit on the digits of an integer read from text
        raise _NotJson(f"a number of more than {sys.get_int_max_str_digits()} digits (a damaged file)",
                       text, 0) from None


@contextmanager
def standard_output(what: str) -> Iterator[None]:
    """Printing `what` (a command's result) within: a full disk or a closed pipe on the standard
    output is the user's place to write, not a bug: OutputError, one line, not an OSError traceback."""
    try:
        yield
        sys.stdout.flush()
    except OSError as error:
        # What stays buffered would be written again as Python exits, with its own traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        if isinstance(error, BrokenPipeError):
            # `| head` read what it wanted and closed the pipe: no mistake, nothing to say; the
            # status of a command the pipe ended (128 + SIGPIPE), as other tools give.
            raise SystemExit(128 + signal.SIGPIPE) from None
        raise OutputError(f"{what} cannot be written to the standard output ({error.strerror}); "
                          "write it where there is room") from None


def ignore_sigint() -> None:
    """A worker process's initializer: Ctrl+C reaches the whole process group, but only the
    parent is to answer it (it terminates the pool), so a worker prints no traceback."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start_quietly(initializer: Callable[..., object] | None, initargs: tuple[object, ...]) -> None:
    ignore_sigint()
    if initializer is not None:
        initializer(*initargs)


def worker_pool(context: Any, processes: int, initializer: Callable[..., object] | None = None,
                initargs: tuple[object, ...] = (), **options: Any) -> Any:
    """`context.Pool(...)` whose workers ignore Ctrl+C from their first instant: a spawned
    worker is started with SIGINT ignored (Python keeps an ignored SIGINT ignored), and its
    initializer ignores it again (for workers the pool starts later). The parent answers
    Ctrl+C; leaving the pool's `with` terminates the workers."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        return context.Pool(processes, initializer=_start_quietly, initargs=(initializer, initargs), **options)
    finally:
        signal.signal(signal.SIGINT, previous)


NO_ROOM = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # a full disk, a file size limit, a quota


def by_ctrl_c(error: BaseException) -> bool:
    """Whether Ctrl+C brought this error about: a KeyboardInterrupt that stops a library in the
    middle of writing a file comes out as the error its clean-up then meets (torch.save's zip
    writer: RuntimeError "unexpected pos"), with the KeyboardInterrupt as its context."""
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            return True
        seen = seen.__context__
    return False


@contextmanager
def on_ctrl_c(said: Callable[[], str]) -> Iterator[None]:
    """Ctrl+C within: Stopped(said()), read when it comes (what was kept by then), also where a
    library's clean-up turned it into another error (`by_ctrl_c`). Anything else goes on."""
    try:
        yield
    except (KeyboardInterrupt, Exception) as error:
        if isinstance(error, Stopped) or not by_ctrl_c(error):
            raise
        raise Stopped(said()) from None


def run_command(body: Callable[[], int], user_errors: tuple[type[BaseException], ...],
                stopped: str = "stopped: nothing was written") -> int:
    """Runs a command's body: a user's error (`user_errors`, UsageError and OutputError) is one
    line on stderr and exit status 2; Ctrl+C is one line (the body's Stopped message, else
    `stopped`) and exit status 130, also where a library's clean-up turned it into another error
    (`by_ctrl_c`). Anything else propagates, with its traceback: a bug."""
    errors: tuple[type[BaseException], ...] = (UsageError, *user_errors)
    try:
        return body()
    except Stopped as stop:
        print(str(stop), file=sys.stderr)
        return 130
    except KeyboardInterrupt:
        print(stopped, file=sys.stderr)
        return 130
    except errors as error:
        print(f"error: {one_line(str(error))}", file=sys.stderr)
        return 2
    except Exception as error:
        if by_ctrl_c(error):
            print(stopped, file=sys.stderr)
            return 130
        if not isinstance(error, OSError):
            raise
        if error.errno in NO_ROOM:
            # A full disk (or a file size limit, a quota) under a file the command writes: the
            # user's to fix, said in one line (it was a traceback after all the work).
            what = "its results" if error.filename is None else short_path(error.filename)
            print(f"error: no room left to write {what} ({error.strerror}); make room and run it again",
                  file=sys.stderr)
            return 2
        if error.errno != errno.ENAMETOOLONG:
            raise
        # A path the user typed that no file system takes, wherever it was first looked at.
        print(f"error: {path_error(error)}", file=sys.stderr)
        return 2


def one_line(message: str) -> str:
    """Several problems of one file read on one line: `; `-joined."""
    parts = [part.strip() for part in message.splitlines()]
    parts = [part[2:] if part.startswith("- ") else part for part in parts]  # a list's bullets
    return "; ".join(part for part in parts if part).replace(":;", ":")
