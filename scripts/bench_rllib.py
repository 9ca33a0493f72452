"""Environment steps per second that RLlib samples with 1 and with 2 env runners, on this
machine or on a running Ray cluster.

    .venv/bin/python scripts/bench_rllib.py [--config configs/train/classic_2p_rllib.yaml]
                                            [--runners 1 2] [--rounds 3] [--address HOST:PORT]

Each figure: the config's env runners replaced by N, each runner sampling
`rllib.train_batch_size` environment steps `--rounds` times with the untrained masked module
(no learning), after one warm-up sample. "In all" is wall-clock time, as a run sees it; each
runner's rate is over its own sampling time, summed per node. The last column is each total
over the first row's: the scaling a cluster extends with more machines. Without --address (or
RAY_ADDRESS), a local Ray with one CPU per runner; with it, the cluster's runners go where Ray
places them (the config's `rllib.env_runner_resources` included), one CPU each.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agents.training import ConfigError, load_config
from cdc_env.cli import MAX_RUNNERS, UsageError, run_command
from cdc_env.rules import RulesetError, load_ruleset

MAX_ROUNDS = 100  # a round is seconds of sampling per runner count: 10**14 ran forever
MAX_COUNTS = 16


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/train/classic_2p_rllib.yaml")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2],
                        help="env runner counts to measure, each ≥ 1 (default: 1 2)")
    parser.add_argument("--rounds", type=int, default=3, help="samples per runner and count, ≥ 1 (default: 3)")
    parser.add_argument("--address", default=None,
                        help="the Ray cluster to measure on (default: $RAY_ADDRESS, else a local Ray)")
    args = parser.parse_args(argv)
    # run_command: each error one line on stderr (the console wrapped them and read [..] as markup),
    # Ctrl+C one line too.
    return run_command(lambda: bench(args), (ConfigError, RulesetError),
                       stopped="stopped: no figure was written (the bench reports at its end)")


def bench(args: argparse.Namespace) -> int:
    console = Console()
    wrong = (f"--runners {min(args.runners)}: each count of env runners must be 1 or more" if min(args.runners) < 1
             else f"--runners {max(args.runners)}: give at most {MAX_RUNNERS} env runners (over a whole cluster)"
             if max(args.runners) > MAX_RUNNERS  # a local Ray was started with that many CPUs, then the runners
             else f"--rounds {args.rounds}: it must be 1 or more" if args.rounds < 1
             else f"--runners: {len(args.runners)} counts; give at most {MAX_COUNTS} (each is sampled --rounds times)"
             if len(args.runners) > MAX_COUNTS
             else f"--rounds {args.rounds}: give at most {MAX_ROUNDS} (each samples every runner count)"
             if args.rounds > MAX_ROUNDS else None)
    if wrong:
        raise UsageError(wrong)
    config = load_config(args.config)
    rules = load_ruleset(config.ruleset)
    import torch

    from agents.rllib_training import RunError, check_capacity, sampling_rates, start_ray

    torch.set_num_threads(1)
    address = args.address or os.environ.get("RAY_ADDRESS")
    where = f"the Ray cluster at {address}" if address else "the local Ray"
    try:
        console.print(escape(start_ray(address, max(args.runners))))  # one CPU per env runner; the driver only waits
        check_capacity(config.rllib.model_copy(update={"env_runners": max(args.runners)}), where)
    except RunError as error:
        raise UsageError(str(error)) from None
    measured = [(runners, *sampling_rates(config, rules, runners, args.rounds)) for runners in args.runners]
    first = measured[0][1]
    # The config's run name and the address as typed: a '[/x]' in either was rich's MarkupError after the bench.
    table = Table(title=f"{escape(config.run_name)}: environment steps sampled per second, {escape(where)}")
    for column in ("env runners", "runner", "node", "steps/s", "× the first row"):
        table.add_column(column, justify="right")
    for runners, total, per_runner in measured:
        for index, (node, rate) in enumerate(per_runner):
            table.add_row(str(runners), f"#{index + 1}", node, f"{rate:,.0f}", "")
        per_node: dict[str, float] = defaultdict(float)
        for node, rate in per_runner:
            per_node[node] += rate
        if len(per_node) > 1:
            for node, rate in per_node.items():
                table.add_row(str(runners), "node", node, f"{rate:,.0f}", "")
        table.add_row(str(runners), "[bold]in all[/bold]", f"{len(per_node)} node(s)", f"[bold]{total:,.0f}[/bold]",
                      f"{total / first:.2f}", end_section=True)
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
