"""Train several tables side by side, one process per config (each with one torch thread).

    python scripts/train_tables.py configs/train/classic_3p.yaml configs/train/v004_4p.yaml
    python scripts/train_tables.py --time-limit 300 configs/train/*_[2-8]p.yaml

Each run writes its folder as scripts/train.py does, and its output to runs/NAME.log.
Options after `--` go to every scripts/train.py (e.g. `-- --eval-games 200`).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import cdc_env.ctrl_c_at_start  # noqa: E402, F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.training import ConfigError, load_config  # noqa: E402
from cdc_env.cli import (  # noqa: E402
    Stopped,
    UsageError,
    existing_file,
    output_dir,
    positive_float,
    processes,
    run_command,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("configs", nargs="+", type=existing_file)
    parser.add_argument("--time-limit", type=positive_float, default=None, help="each run's learning time, in seconds")
    parser.add_argument("--workers", type=processes, default=1, help="each run's evaluation processes")
    parser.add_argument("--logs", type=output_dir, default="runs")
    # Split at `--` by hand: argparse would read what follows as more configs, and a misspelt
    # option before it would reach every scripts/train.py instead of being refused here.
    argv = sys.argv[1:] if argv is None else list(argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]
    return run_command(lambda: train_tables(args, extra), (ConfigError,))


def check_passed_on(extra: list[str]) -> None:
    """The options after `--` are scripts/train.py's, whole names (a misspelt one made every run
    fail in its log, an abbreviated `--ou` got past `check_apart`)."""
    spec = importlib.util.spec_from_file_location("cdc_train", ROOT / "scripts" / "train.py")
    assert spec is not None and spec.loader is not None
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    parser = train.arguments()
    parser.exit_on_error = False  # its errors said here, in one line naming train.py (not its usage as ours)
    try:
        passed, unknown = parser.parse_known_args(["--config", "-", *extra])
    except argparse.ArgumentError as error:
        raise UsageError(f"after --: scripts/train.py's {error}") from None
    if unknown:
        raise UsageError(f"{unknown[0]} after --: not an option of scripts/train.py (its --help lists them, "
                         f"names in full)")
    if (clash := train.options_clash(passed)) is not None:  # (after its parsing: each run failed in its log)
        raise UsageError(f"--resume and --overwrite after --: {clash}")


def check_apart(configs: list[Path], extra: list[str]) -> None:
    """Two runs never share a folder or a log: each would overwrite the other's."""
    if extra:
        check_passed_on(extra)
    given = {arg.split("=", 1)[0] for arg in extra}  # `--out=x` as well as `--out x`
    if "--out" in given:
        raise UsageError("--out after --: every run would write into that one folder; set each config's out_dir")
    for option in ("--config", "--publish"):
        if option in given:  # every run would train that one config (--publish: none at all)
            raise UsageError(f"{option} after --: the runs train the configs given before --; give them there")
    seen: dict[Path, Path] = {}
    logs: dict[str, Path] = {}
    for config in configs:
        out = load_config(config).output.resolve()
        if config.resolve() in {c.resolve() for c in seen.values()}:
            raise UsageError(f"{config} is given twice: give each config once")
        if out in seen:
            raise UsageError(f"{seen[out]} and {config} both train into {out}: give one of them another out_dir")
        if config.stem in logs:
            raise UsageError(f"{logs[config.stem]} and {config} would share the log {config.stem}.log: rename one")
        seen[out], logs[config.stem] = config, config


def train_tables(args: argparse.Namespace, extra: list[str]) -> int:
    check_apart(args.configs, extra)
    started = time.monotonic()
    runs = []
    for config in args.configs:
        command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(config),
                   "--workers", str(args.workers), *extra]
        if args.time_limit is not None:
            command += ["--time-limit", str(args.time_limit)]
        path = args.logs / f"{config.stem}.log"
        begins = path.stat().st_size if path.is_file() else 0  # (this run's own lines come after)
        log = path.open("a", encoding="utf-8")  # a resumed run adds to its log
        runs.append((config, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log, begins))
    failed = 0
    try:
        for config, process, log, _ in runs:
            code = process.wait()
            log.close()
            failed += code != 0
            print(f"{config.stem}: {'done' if code == 0 else f'failed (exit {code})'} at "
                  f"{time.monotonic() - started:.0f} s")
    except KeyboardInterrupt:
        # Ctrl+C reached every run too: each says in its log what it kept (a checkpoint, or nothing
        # before its first one), and that last line is said here for each.
        said = []
        for config, process, log, begins in runs:
            code = process.wait()
            log.close()
            what = "done (it finished before the stop)" if code == 0 else last_line(Path(log.name), begins)
            said.append(f"  {config.stem}: {what}")
        raise Stopped(f"stopped; what each run kept (its log in {args.logs} has the rest):\n" + "\n".join(said)
                      + "\ngo on with -- --resume where a checkpoint is kept") from None
    return 1 if failed else 0


def last_line(log: Path, begins: int) -> str:
    """The last line a run wrote to its log since `begins` (its Ctrl+C line, which says what it
    kept: a checkpoint, or nothing before its first)."""
    with log.open("rb") as file:
        file.seek(max(begins, log.stat().st_size - 4096))  # (a long run's log is long: its end is enough)
        lines = file.read().decode("utf-8", errors="replace").splitlines()
    return next((line.strip() for line in reversed(lines) if line.strip()), "said nothing (see its log)")


if __name__ == "__main__":
    sys.exit(main())
