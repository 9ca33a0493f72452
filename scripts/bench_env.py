"""Agent-steps per second under random legal play, ours beside PettingZoo's classic games.

    .venv/bin/python scripts/bench_env.py [--ruleset classic] [--players 4] [--steps 30000]
                                          [--rounds 30]

Every environment runs the same loop on one core: read the agent's observation, pick a
uniformly random index among the legal ones (the action mask), step; a dead agent steps None;
a finished game resets. A step is one `step()` call (the dead agents' `None` steps count too,
as they do for every environment measured). Time is this process's CPU time, so that other
processes on a shared machine do not count; the environments also take turns, `steps / rounds`
steps each per round, and each one's best round is its figure, so that what load remains
(caches, frequency) hits them alike. The Gymnasium environment plays one seat with MaskablePPO's
`action_masks()` against random bots; one of its steps includes the opponents' moves up to the
learner's next decision. The last column is our wrapped env()'s rate over each row's.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from cdc_env import ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.single import CulDeChouetteEnv
from cdc_env.cli import bench_steps, count_at_most, positive_int, run_command
from cdc_env.env import env as cdc_env
from cdc_env.env import raw_env
from cdc_env.game import GameError
from cdc_env.rules import RulesetError


class AecRun:
    """The random-legal loop on a PettingZoo AEC environment, run in slices of steps."""

    def __init__(self, make: Callable[[], Any], seed: int = 0) -> None:
        self.table = make()
        self.rng = random.Random(seed)
        self.table.reset(seed=seed)
        self.agents = iter(self.table.agent_iter())

    def run(self, steps: int) -> float:
        """Plays `steps` steps; returns the seconds they took."""
        table, rng = self.table, self.rng
        start = time.process_time()
        done = 0
        while done < steps:
            if next(self.agents, None) is None:  # the game is over: the next one
                table.reset()
                self.agents = iter(table.agent_iter())
                continue
            observation, _, terminated, truncated, _ = table.last()
            if terminated or truncated:
                action = None
            else:
                action = rng.choice(np.flatnonzero(observation["action_mask"]).tolist())
            table.step(action)
            done += 1
        return time.process_time() - start


class SingleRun:
    """The same loop on the Gymnasium environment, with MaskablePPO's `action_masks()`."""

    def __init__(self, make: Callable[[], CulDeChouetteEnv], seed: int = 0) -> None:
        self.table = make()
        self.rng = random.Random(seed)
        self.table.reset(seed=seed)

    def run(self, steps: int) -> float:
        table, rng = self.table, self.rng
        start = time.process_time()
        for _ in range(steps):
            action = rng.choice(np.flatnonzero(table.action_masks()).tolist())
            _, _, terminated, truncated, _ = table.step(action)
            if terminated or truncated:
                table.reset()
        return time.process_time() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=bench_steps, default=30000, help="steps of each environment, in all")
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--players", type=positive_int, default=4)
    parser.add_argument("--max-turns", type=positive_int, default=300)
    parser.add_argument("--rounds", type=count_at_most(1000, "slices of the steps"), default=30)
    args = parser.parse_args(argv)
    if args.steps < args.rounds:  # (it ran one step a round, more than --steps in all)
        parser.error(f"--steps {args.steps} are shared among --rounds {args.rounds}: give at least one step per round")
    return run_command(lambda: bench(args), (RulesetError, GameError, ValueError))  # ValueError: the seat count


def bench(args: argparse.Namespace) -> int:
    raw_env(ruleset=args.ruleset, players=args.players, max_turns=args.max_turns)  # a bad ruleset or seat count: now
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})  # one core

    from pettingzoo.classic import connect_four_v3, texas_holdem_v4

    ours = dict(ruleset=args.ruleset, players=args.players, max_turns=args.max_turns)
    label = f"{args.ruleset}, {args.players} players"
    runs: dict[str, Any] = {
        f"cdc raw_env ({label})": AecRun(lambda: raw_env(**ours)),
        f"cdc env() ({label})": AecRun(lambda: cdc_env(**ours)),
        f"cdc env() ({label}), auto_forced=False": AecRun(lambda: cdc_env(**ours, auto_forced=False)),
        f"cdc CulDeChouetteEnv ({label}, vs random bots)": SingleRun(
            lambda: CulDeChouetteEnv(args.ruleset, args.players, opponents="random",
                                     max_turns=args.max_turns)),
        "pettingzoo texas_holdem_v4.env()": AecRun(texas_holdem_v4.env),
        "pettingzoo connect_four_v3.env()": AecRun(connect_four_v3.env),
    }
    # The machine may be shared: CPU time, and the environments take turns, a slice each per
    # round, each one's best round being its figure, so that load elsewhere hits them alike.
    best = dict.fromkeys(runs, 0.0)
    per_round = max(1, args.steps // args.rounds)
    for _ in range(args.rounds):
        for name, run in runs.items():
            best[name] = max(best[name], per_round / run.run(per_round))
    wrapped = best[f"cdc env() ({label})"]
    print(f"random legal play, {args.rounds} rounds of {per_round} steps, best round, "
          f"steps per CPU second, one core")
    print(f"{'environment':60s} {'steps/s':>8s} {'env() ×':>8s}")
    for name, rate in best.items():
        print(f"{name:60s} {rate:8.0f} {wrapped / rate:8.2f}")
    for other in ("texas_holdem_v4", "connect_four_v3"):
        print(f"cdc env() / {other}.env(): {wrapped / best[f'pettingzoo {other}.env()']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
