"""Train several tables side by side, one process per config (each with one torch thread).

    python scripts/train_tables.py configs/train/classic_3p.yaml configs/train/v004_4p.yaml
    python scripts/train_tables.py --time-limit 300 configs/train/*_[2-8]p.yaml

Each run writes its folder as scripts/train.py does, and its output to runs/NAME.log.
Options after `--` go to every scripts/train.py (e.g. `-- --eval-games 200`).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("configs", nargs="+", type=Path)
    parser.add_argument("--time-limit", type=float, default=None, help="each run's learning time, in seconds")
    parser.add_argument("--workers", type=int, default=1, help="each run's evaluation processes")
    parser.add_argument("--logs", type=Path, default=Path("runs"))
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    missing = [str(c) for c in args.configs if not c.exists()]
    if missing:
        print(f"error: no config at {', '.join(missing)}", file=sys.stderr)
        return 2
    args.logs.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    runs = []
    for config in args.configs:
        command = [sys.executable, str(ROOT / "scripts" / "train.py"), "--config", str(config),
                   "--workers", str(args.workers), *extra]
        if args.time_limit is not None:
            command += ["--time-limit", str(args.time_limit)]
        log = (args.logs / f"{config.stem}.log").open("w", encoding="utf-8")
        runs.append((config, subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT), log))
    failed = 0
    for config, process, log in runs:
        code = process.wait()
        log.close()
        failed += code != 0
        outcome = "done" if code == 0 else f"failed (exit {code})"
        print(f"{config.stem}: {outcome} at {time.monotonic() - started:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
