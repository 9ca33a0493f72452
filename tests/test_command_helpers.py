"""What every command shares (cdc_env/cli.py) by hand: the argparse checks of numbers and
files, word for word; run_command's exit statuses and lines; one_line; write_atomic; the
worker pool's quiet Ctrl+C; the lock that keeps a second command off a run folder or a save.
(tests/test_user_errors.py runs the commands themselves.)"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cdc_env import cli


@pytest.mark.parametrize("check, text, value", [
    (cli.positive_int, "3", 3), (cli.positive_int, "1", 1), (cli.non_negative_int, "0", 0),
    (cli.positive_float, "0.5", 0.5), (cli.positive_float, "1e3", 1000.0), (cli.non_negative_float, "0", 0.0),
    (cli.fraction, "0", 0.0), (cli.fraction, "1", 1.0), (cli.fraction, "0.25", 0.25),
])
def test_a_number_in_range_is_taken(check: Callable[[str], Any], text: str, value: float) -> None:
    taken = check(text)
    assert taken == value and type(taken) is type(value)


@pytest.mark.parametrize("check, text, says", [
    (cli.positive_int, "0", "0: give 1 or more"),
    (cli.positive_int, "-2", "-2: give 1 or more"),
    (cli.positive_int, "x", "'x' is not a whole number"),
    (cli.positive_int, "1.5", "'1.5' is not a whole number"),
    (cli.non_negative_int, "-1", "-1: give 0 or more"),
    (cli.positive_float, "0", "0: give a number above 0"),
    (cli.positive_float, "-0.5", "-0.5: give a number above 0"),
    (cli.positive_float, "abc", "'abc' is not a number"),
    (cli.positive_float, "nan", "'nan' is not a finite number"),
    (cli.positive_float, "inf", "'inf' is not a finite number"),
    (cli.non_negative_float, "-inf", "'-inf' is not a finite number"),
    (cli.non_negative_float, "-0.5", "-0.5: give 0 or more"),
    (cli.fraction, "1.5", "1.5: give a share between 0 and 1"),
    (cli.fraction, "-0.1", "-0.1: give a share between 0 and 1"),
    (cli.number_between(0.1, 10.0), "0", "0 is out of range: give 0.1 to 10"),
    (cli.number_between(0.1, 10.0), "inf", "'inf' is not a finite number"),
])
def test_a_number_out_of_range_says_what_to_give(check: Callable[[str], Any], text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as error:
        check(text)
    assert str(error.value) == says


def refusal(check: Callable[[str], Any], text: str) -> str:
    with pytest.raises(argparse.ArgumentTypeError) as error:
        check(text)
    return str(error.value)


def test_an_existing_file_is_a_file_that_exists(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("a: 1\n", encoding="utf-8")
    assert cli.existing_file(str(tmp_path / "a.yaml")) == tmp_path / "a.yaml"
    assert refusal(cli.existing_file, f"{tmp_path}/none.yaml") == f"no file at {tmp_path}/none.yaml"
    assert refusal(cli.existing_file, str(tmp_path)) == f"{tmp_path} is a folder, not a file"


def test_an_output_file_is_checked_and_its_folder_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.output_file(f"{tmp_path}/new/deeper/out.json") == tmp_path / "new" / "deeper" / "out.json"
    assert (tmp_path / "new" / "deeper").is_dir()
    assert refusal(cli.output_file, str(tmp_path)) == f"{tmp_path} is a folder: give a file name"
    (tmp_path / "file").write_text("", encoding="utf-8")
    assert refusal(cli.output_file, f"{tmp_path}/file/out.json") == f"{tmp_path}/file is a file, not a folder"
    assert refusal(cli.output_file, f"{tmp_path}/file/more/out.json") == f"{tmp_path}/file is a file, not a folder"
    # The tests run as root, who may write anything: the access check is played by hand.
    kept = tmp_path / "kept.json"
    kept.write_text("{}", encoding="utf-8")
    assert cli.output_file(str(kept)) == kept
    asked: list[tuple[str, int]] = []

    def no_writing(path: Any, mode: int) -> bool:
        asked.append((str(path), mode))
        return False

    monkeypatch.setattr(cli.os, "access", no_writing)
    assert refusal(cli.output_file, str(kept)) == f"{kept} is not writable"
    assert asked == [(str(kept), os.W_OK)]
    assert refusal(cli.output_dir, str(tmp_path / "new")) == f"folder {tmp_path}/new is not writable"
    assert asked[-1] == (str(tmp_path / "new"), os.W_OK | os.X_OK)


def test_an_output_folder_is_made_or_says_why_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert cli.output_dir(f"{tmp_path}/runs/one") == tmp_path / "runs" / "one" and (tmp_path / "runs/one").is_dir()
    assert cli.output_dir(str(tmp_path)) == tmp_path

    def cannot(self: Path, parents: bool = False, exist_ok: bool = False) -> None:
        assert parents and exist_ok
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "mkdir", cannot)
    assert refusal(cli.output_dir, f"{tmp_path}/other") == f"folder {tmp_path}/other cannot be made (Permission denied)"


def test_outputs_not_from_argparse_name_their_argument(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="utf-8")
    with pytest.raises(cli.OutputError) as error:
        cli.check_output_file(tmp_path, "out_dir")
    assert str(error.value) == f"out_dir: {tmp_path} is a folder: give a file name"
    with pytest.raises(cli.OutputError) as error:
        cli.check_output_dir(tmp_path / "file" / "sub", "--out")
    assert str(error.value) == f"--out: {tmp_path}/file is a file, not a folder"
    cli.check_output_file(tmp_path / "a" / "b.json", "out")
    cli.check_output_dir(tmp_path / "c", "out")
    assert (tmp_path / "a").is_dir() and (tmp_path / "c").is_dir()


def test_a_file_is_written_whole_in_text_or_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Through a temporary file beside it (same folder, so the rename is atomic), hidden and named after it.
    renames: list[tuple[str, str]] = []
    replace = os.replace

    def recorded(source: str, target: Any) -> None:
        renames.append((source, str(target)))
        replace(source, target)

    monkeypatch.setattr(cli.os, "replace", recorded)
    cli.write_atomic(tmp_path / "a.txt", "vélutée\n")
    cli.write_atomic(tmp_path / "b.bin", b"\x00\xff")
    assert (tmp_path / "a.txt").read_bytes() == "vélutée\n".encode()
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.bin"]
    for (source, target), name in zip(renames, ("a.txt", "b.bin"), strict=True):
        temporary = Path(source)
        assert target == str(tmp_path / name) and temporary.parent == tmp_path
        assert temporary.name.startswith(f".{name}.") and temporary.name.endswith(".tmp")


def test_a_file_that_cannot_be_written_whole_is_left_as_it_was(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    cli.write_atomic(tmp_path / "report.json", "old")

    def full_disk(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        cli.write_atomic(tmp_path / "report.json", "new")
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]
    assert (tmp_path / "report.json").read_text(encoding="utf-8") == "old"


def test_a_file_written_through_a_link_is_its_target_and_the_link_stays(tmp_path: Path) -> None:
    # `play.py --save link.json`: the rename replaced the link by a file, its target left stale.
    saves = tmp_path / "saves"
    saves.mkdir()
    (saves / "real.json").write_text("old", encoding="utf-8")
    (tmp_path / "link.json").symlink_to("saves/real.json")  # relative, as `ln -s` makes them
    cli.write_atomic(tmp_path / "link.json", "new")
    assert (tmp_path / "link.json").is_symlink() and os.readlink(tmp_path / "link.json") == "saves/real.json"
    assert (saves / "real.json").read_text(encoding="utf-8") == "new"
    assert sorted(p.name for p in saves.iterdir()) == ["real.json"], "the temporary went beside the target"
    (tmp_path / "dangling.json").symlink_to(saves / "new.json")  # a link to a file still to write
    cli.write_atomic(tmp_path / "dangling.json", b"made")
    assert (tmp_path / "dangling.json").is_symlink() and (saves / "new.json").read_bytes() == b"made"


def test_a_new_file_written_through_a_dangling_link_is_its_target(tmp_path: Path) -> None:
    # `probe_rollouts --json link.json`, the link to a file not yet written: « written by another
    # command meanwhile », the results left in a temporary file.
    (tmp_path / "results").mkdir()
    (tmp_path / "link.json").symlink_to("results/probe.json")
    cli.write_new(tmp_path / "link.json", "{}")
    assert (tmp_path / "results" / "probe.json").read_text(encoding="utf-8") == "{}"
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == ["probe.json"]
    with pytest.raises(cli.OutputError, match="written by another command"):
        cli.write_new(tmp_path / "link.json", "{}")  # a file there now: never replaced


def test_run_command_answers_each_end_with_its_line_and_status(capsys: pytest.CaptureFixture[str]) -> None:
    def raising(error: BaseException) -> Callable[[], int]:
        def body() -> int:
            raise error
        return body

    assert cli.run_command(lambda: 7, ()) == 7
    assert cli.run_command(raising(cli.UsageError("--games: give 1 or more")), ()) == 2
    assert capsys.readouterr().err == "error: --games: give 1 or more\n"
    assert cli.run_command(raising(KeyError("x")), (KeyError,)) == 2
    assert capsys.readouterr().err == "error: 'x'\n"
    assert cli.run_command(raising(cli.OutputError("a:\n- b\n- c")), ()) == 2
    assert capsys.readouterr().err == "error: a: b; c\n"
    assert cli.run_command(raising(cli.Stopped("stopped: 3 games kept in r.json")), ()) == 130
    assert capsys.readouterr().err == "stopped: 3 games kept in r.json\n"
    assert cli.run_command(raising(KeyboardInterrupt()), ()) == 130
    assert capsys.readouterr().err == "stopped: nothing was written\n"
    assert cli.run_command(raising(KeyboardInterrupt()), (), stopped="stopped: run kept") == 130
    assert capsys.readouterr().err == "stopped: run kept\n"
    with pytest.raises(RuntimeError, match="a bug"):  # not a user's error: its traceback stays
        cli.run_command(raising(RuntimeError("a bug")), (KeyError,))
    assert capsys.readouterr().err == ""
    # A full disk under a file written at the end (probe_rollouts --json): a traceback after the work.
    assert cli.run_command(raising(OSError(28, "No space left on device", "out/r.json")), ()) == 2
    assert capsys.readouterr().err == "error: no room left to write out/r.json (No space left on device); make room " \
                                      "and run it again\n"
    assert cli.run_command(raising(OSError(27, "File too large")), ()) == 2
    assert capsys.readouterr().err == "error: no room left to write its results (File too large); make room and run " \
                                      "it again\n"
    with pytest.raises(PermissionError):  # any other OSError is not said to be the disk's
        cli.run_command(raising(PermissionError(13, "Permission denied", "x")), ())


def _cleaned_up_after_ctrl_c(error: Exception) -> Callable[[], int]:
    """A body whose library, stopped by Ctrl+C mid-write, fails in its clean-up (torch.save's
    zip writer: RuntimeError "unexpected pos"): that error comes out, the KeyboardInterrupt as
    its context."""
    def body() -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise error from None
    return body


def test_ctrl_c_turned_into_a_librarys_error_is_the_same_one_line_stop(capsys: pytest.CaptureFixture[str]) -> None:
    # Every command, not only train.py's three places that knew it (it was a traceback, status 1).
    for error in (RuntimeError("unexpected pos 54781 vs 54736"), OSError(5, "Input/output error"), ValueError("x")):
        assert cli.run_command(_cleaned_up_after_ctrl_c(error), (), stopped="stopped: 3 games kept") == 130
        assert capsys.readouterr().err == "stopped: 3 games kept\n"
    # Where the command knows what it kept, it says so.
    said: list[str] = []

    def body() -> int:
        with cli.on_ctrl_c(lambda: said[-1]):
            said.append("stopped: the checkpoint at step 8 is kept")
            _cleaned_up_after_ctrl_c(RuntimeError("unexpected pos"))()
        return 0

    assert cli.run_command(body, ()) == 130
    assert capsys.readouterr().err == "stopped: the checkpoint at step 8 is kept\n"
    with pytest.raises(RuntimeError, match="a bug"), cli.on_ctrl_c(lambda: "never said"):
        raise RuntimeError("a bug")  # no Ctrl+C behind it: a bug, with its traceback
    with pytest.raises(cli.Stopped, match="inner"), cli.on_ctrl_c(lambda: "outer"):
        raise cli.Stopped("inner")  # the innermost place that knows what it kept says it


def test_one_line_joins_a_files_problems() -> None:
    assert cli.one_line("configs/x.yaml:\n- games: give 1 or more\n  - seed: a whole number\n") == (
        "configs/x.yaml: games: give 1 or more; seed: a whole number")
    assert cli.one_line("one line") == "one line" and cli.one_line("") == ""


class FakeContext:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def Pool(self, processes: int, initializer: Any = None, initargs: tuple[Any, ...] = (), **options: Any) -> str:
        self.calls.append((processes, initializer, initargs, options, signal.getsignal(signal.SIGINT)))
        return "pool"


def test_workers_start_with_ctrl_c_ignored_and_the_parent_keeps_its_own() -> None:
    before = signal.getsignal(signal.SIGINT)
    context = FakeContext()
    started: list[tuple[Any, ...]] = []

    def initializer(*args: Any) -> None:
        started.append(args)

    try:
        assert cli.worker_pool(context, 3, initializer, (1, 2), maxtasksperchild=5) == "pool"
        assert signal.getsignal(signal.SIGINT) is before
        [(processes, start, initargs, options, during)] = context.calls
        assert (processes, start, options, during) == (3, cli._start_quietly, {"maxtasksperchild": 5}, signal.SIG_IGN)
        start(*initargs)  # what a worker runs first
        assert started == [(1, 2)] and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.signal(signal.SIGINT, before)
        cli.worker_pool(context, 1)
        context.calls[-1][1](*context.calls[-1][2])  # no initializer of the caller's: only the quiet start
        assert context.calls[-1][2] == (None, ()) and signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_count_at_most_a_bound_says_the_bound_and_why() -> None:
    parse = cli.count_at_most(8, "4 per core")
    assert parse("8") == 8 and parse("1") == 1
    with pytest.raises(argparse.ArgumentTypeError, match=r"^9: give at most 8 \(4 per core\)$"):
        parse("9")
    with pytest.raises(argparse.ArgumentTypeError, match=r"^0: give 1 or more$"):
        parse("0")
    with pytest.raises(argparse.ArgumentTypeError, match="is not a whole number"):
        parse("many")
    assert cli.MAX_PROCESSES == 4 * (os.cpu_count() or 1) and cli.environments("4096") == 4096


# ---------------------------------------------------------------------- one command at a time

HOLD = """
import sys, time
from pathlib import Path
from cdc_env.cli import in_use_by_one
with in_use_by_one(Path(sys.argv[1]), Path(sys.argv[2]), "train.py"):
    print("held", flush=True)
    time.sleep(60)
"""


def holder(lock: Path, what: Path) -> subprocess.Popen[str]:
    """Another process holding `lock` (for a minute), once it said so."""
    process = subprocess.Popen([sys.executable, "-c", HOLD, str(lock), str(what)], stdout=subprocess.PIPE, text=True,
                               cwd=Path(__file__).resolve().parents[1])
    assert process.stdout is not None and process.stdout.readline() == "held\n"
    return process


def test_a_second_holder_is_refused_naming_the_first_and_the_lock_goes_with_its_holder(tmp_path: Path) -> None:
    run, lock = tmp_path / "run", tmp_path / "run" / ".lock"
    run.mkdir()
    first = holder(lock, run)
    try:
        assert lock.read_text(encoding="utf-8") == f"cdc lock: pid {first.pid}, train.py\n"
        with pytest.raises(cli.OutputError) as refused, cli.in_use_by_one(lock, run, "train.py"):
            pass
        assert str(refused.value) == f"{run} is in use by another train.py (pid {first.pid}); wait for it or stop it"
        assert lock.read_text(encoding="utf-8") == f"cdc lock: pid {first.pid}, train.py\n", "the holder's, as it was"
    finally:
        first.kill()  # SIGKILL: no `finally` of its own runs, its lock file stays behind
        first.wait()
    assert lock.exists()  # left by a dead holder: it blocks nothing (the kernel let go of its lock)
    with cli.in_use_by_one(lock, run, "play.py"):
        assert lock.read_text(encoding="utf-8") == f"cdc lock: pid {os.getpid()}, play.py\n"
        with pytest.raises(cli.OutputError, match=r"in use by another play\.py \(pid \d+\)"), \
                cli.in_use_by_one(lock, run, "play.py"):
            pass  # the same process, another open of the file: refused too (tests call main twice)
    assert not lock.exists(), "its holder ending deletes the lock file"
    assert list(run.iterdir()) == []


def test_a_lock_is_never_the_users_file_nor_written_over(tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    assert cli.lock_path(save) == tmp_path / "game.json.lock" != save
    (tmp_path / "link.json").symlink_to(save)  # another name of the save: its one lock
    assert cli.lock_path(tmp_path / "link.json") == cli.lock_path(save)
    mine = cli.lock_path(save)
    mine.write_text("my notes", encoding="utf-8")  # a file of the user's where the lock would be
    with pytest.raises(cli.OutputError) as refused, cli.in_use_by_one(mine, save, "play.py"):
        pass
    assert str(refused.value) == (f"{mine} is not a lock file of this project (it holds something else), and this "
                                  "command locks it; move it away")
    assert mine.read_text(encoding="utf-8") == "my notes"
    mine.unlink()
    mine.mkdir()  # a folder there: one line, not an IsADirectoryError
    with pytest.raises(cli.OutputError) as refused, cli.in_use_by_one(mine, save, "play.py"):
        pass
    assert str(refused.value) == f"{save} cannot be locked for this play.py ({mine}: Is a directory); move {mine} away"


def test_without_flock_a_command_runs_unlocked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli, "fcntl", None)  # Windows
    with cli.in_use_by_one(tmp_path / ".lock", tmp_path, "train.py"), \
            cli.in_use_by_one(tmp_path / ".lock", tmp_path, "train.py"):
        assert not (tmp_path / ".lock").exists()


def test_a_path_too_long_for_its_lock_is_said_as_the_users_path(tmp_path: Path) -> None:
    save = tmp_path / ("x" * 252)  # a name the file system takes, and its lock's (+ ".lock") not
    with pytest.raises(OSError) as refused, cli.in_use_by_one(cli.lock_path(save), save, "play.py"):
        pass
    assert refused.value.filename == str(save) and cli.path_error(refused.value).endswith(
        "File name too long; give a shorter path")


def test_compare_decisions_counts_a_partners_win_as_the_agents_at_a_doublette() -> None:
    # The agent's seat alone was counted: its team's win by its partner was a loss, the fair share 1/N.
    from doubles import script

    from cdc_env.dice import SeededDice
    from cdc_env.game import GameState
    from cdc_env.rules import load_ruleset

    tally = script("compare_decisions").Tally()
    state = GameState(load_ruleset("classic").with_house_rules(["doublette"]), 4, dice=SeededDice(1))
    state.winner = 2  # the partner of seat 0 (seats 0 and 2 play together)
    tally.add(state, 0)
    tally.add(state, 1)
    assert tally.wins == 1 and tally.team_size == 2


def test_an_output_folder_where_no_file_can_be_made_is_refused_before_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root passes os.access in /proc, whose files cannot be made: a run's --json failed there at
    # its end with a traceback, its figures lost.
    assert refusal(cli.output_file, "/proc/out.json").startswith("no file can be made in folder /proc (")

    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli.tempfile, "TemporaryFile", full)
    assert refusal(cli.output_file, f"{tmp_path}/out.json") == (
        f"no file can be made in folder {tmp_path} (No space left on device); give a path in a folder of your own")
    assert refusal(cli.output_dir, str(tmp_path)).startswith(f"no file can be made in folder {tmp_path} (")


def test_ctrl_c_while_a_commands_libraries_load_is_one_line_not_a_traceback() -> None:
    # torch, stable-baselines3, Ray and Vosk take seconds to import: a Ctrl+C then came out as a
    # traceback through the import machinery, before run_command could say "stopped".
    root = Path(__file__).resolve().parents[1]
    loading = "import cdc_env.ctrl_c_at_start\nraise KeyboardInterrupt  # as if it came while torch loads"
    stopped = subprocess.run([sys.executable, "-c", loading], capture_output=True, text=True, cwd=root, timeout=60)
    assert stopped.stderr == "stopped: nothing was written\n"
    assert stopped.returncode in (130, -signal.SIGINT)
    # A bug keeps Python's own report.
    bug = subprocess.run([sys.executable, "-c", "import cdc_env.ctrl_c_at_start\n1 / 0"], capture_output=True,
                         text=True, cwd=root, timeout=60)
    assert bug.returncode == 1 and "Traceback" in bug.stderr and "ZeroDivisionError" in bug.stderr
    # Every command imports it before its libraries (the first import after its sys.path line).
    for script in sorted((root / "scripts").glob("*.py")):
        lines = script.read_text(encoding="utf-8").splitlines()
        first = next(i for i, line in enumerate(lines) if line.split("  #")[0].endswith("ctrl_c_at_start"))
        later = [line for line in lines[first + 1:] if line.startswith(("import ", "from "))]
        assert later and all("__future__" not in line for line in later), script
        assert not any(line.startswith(("import torch", "from stable_baselines3", "import ray", "import vosk",
                                        "from agents", "from voice")) for line in lines[:first]), script
