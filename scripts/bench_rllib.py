"""Environment steps per second that RLlib samples with 1 and with 2 env runners.

    .venv/bin/python scripts/bench_rllib.py [--config configs/train/classic_2p_rllib.yaml]
                                            [--runners 1 2] [--rounds 3]

Each figure: a local Ray, the config's env runners replaced by N, each runner sampling
`rllib.train_batch_size` environment steps `--rounds` times with the untrained masked module
(no learning), after one warm-up sample; wall-clock time, as a cluster sees it. The last
column is each rate over the first row's: the scaling a cluster extends with more machines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.table import Table

from agents.training import ConfigError, load_config
from cdc_env.rules import RulesetError, load_ruleset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/train/classic_2p_rllib.yaml")
    parser.add_argument("--runners", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    console = Console()
    try:
        config = load_config(args.config)
        rules = load_ruleset(config.ruleset)
    except (ConfigError, RulesetError) as error:
        console.print(f"[red]error:[/red] {error}")
        return 2
    import torch

    from agents.rllib_training import sampling_rate, start_ray

    torch.set_num_threads(1)
    start_ray(None, max(args.runners))  # one CPU per env runner; the driver only waits
    rates = [(runners, sampling_rate(config, rules, runners, args.rounds)) for runners in args.runners]
    table = Table(title=f"{config.run_name}: environment steps sampled per second")
    for column in ("env runners", "envs per runner", "steps/s", "× the first row"):
        table.add_column(column, justify="right")
    for runners, rate in rates:
        table.add_row(str(runners), str(config.rllib.envs_per_env_runner), f"{rate:,.0f}", f"{rate / rates[0][1]:.2f}")
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
