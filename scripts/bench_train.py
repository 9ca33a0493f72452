"""The training loop's speed against the speed of its environments alone.

    .venv/bin/python scripts/bench_train.py [--config configs/train/classic_2p.yaml] [--steps 60000]
                                            [--vec-env subproc] [--n-envs 16] [--n-steps 256]

In one run, on the config's tables (its ruleset, seats, opponents, league and reaction model):
1. the environments alone: the config's `n_envs` tables stepped in this process with a random
   legal action each (the opponents' moves included), steps per second on one core;
2. the learner: MaskablePPO learning on the same tables for `--steps` steps (no imitation, no
   checkpoints), learner steps per second, with the vector env, `n_envs` and `n_steps` given;
and their ratio, the share of the environments' own speed the training loop keeps (1.0: the
learner costs nothing). Wall-clock time; the two take turns, `--rounds` slices each, and each
one's best slice is its figure, so that the load of other processes hits both alike.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.training import ConfigError, League, load_config, make_envs, new_model
from cdc_env.cli import UsageError, bench_steps, count_at_most, environments, rollout_steps, run_command
from cdc_env.rules import RulesetError, load_ruleset


def environment_rate(envs: list, steps: int, rng: np.random.Generator) -> float:
    started = time.perf_counter()
    for step in range(steps):
        table = envs[step % len(envs)]
        legal = np.flatnonzero(table.action_masks())
        _, _, terminated, truncated, _ = table.step(int(rng.choice(legal)))
        if terminated or truncated:
            table.reset()
    return steps / (time.perf_counter() - started)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/train/classic_2p.yaml")
    parser.add_argument("--steps", type=bench_steps, default=60_000, help="learner steps to time, in all")
    parser.add_argument("--env-steps", type=bench_steps, default=60_000, help="environment steps to time, in all")
    parser.add_argument("--rounds", type=count_at_most(100, "each round builds its model again"), default=3)
    parser.add_argument("--vec-env", choices=["dummy", "subproc"], default=None)
    parser.add_argument("--n-envs", type=environments, default=None)
    parser.add_argument("--n-steps", type=rollout_steps, default=None, help="PPO rollout length per environment")
    parser.add_argument("--batch-size", type=rollout_steps, default=None)
    args = parser.parse_args(argv)
    return run_command(lambda: bench(args), (ConfigError, RulesetError))


def bench(args: argparse.Namespace) -> int:
    if args.steps < args.rounds or args.env_steps < args.rounds:
        raise UsageError(f"--steps {args.steps} and --env-steps {args.env_steps} are shared among --rounds "
                         f"{args.rounds}: give at least one step per round")
    overrides: dict = {key: value for key, value in (("vec_env", args.vec_env), ("n_envs", args.n_envs),
                                                     ("ppo.n_steps", args.n_steps),
                                                     ("ppo.batch_size", args.batch_size)) if value}
    # This bench times stable-baselines3's loop: on an RLlib config its figure would be of a loop never run
    # (said first: the bench's sb3 settings would be refused in such a config as another trainer's).
    trainer = load_config(args.config).trainer
    if trainer != "sb3":
        raise UsageError(f"--config {args.config} trains with {trainer}: time its sampling with "
                         "scripts/bench_rllib.py, or give a stable-baselines3 config")
    # The config's own checks (a batch no larger than a rollout, say) hold for the bench's changes too.
    config = load_config(args.config, overrides)
    ppo = config.ppo

    import torch

    torch.set_num_threads(1)
    rules = load_ruleset(config.ruleset)
    league = League(config.opponents, config.reaction, config.league.max_snapshots, config.league.self_play_fraction)

    alone = config.model_copy(update={"vec_env": "dummy"})
    tables = make_envs(alone, rules, league).envs
    rng = np.random.default_rng(config.seed)
    for index, table in enumerate(tables):
        table.reset(seed=config.seed + index)

    envs = make_envs(config, rules, league)
    model = new_model(config, envs)
    model.learn(total_timesteps=ppo.n_steps * config.n_envs)  # warm-up: the first rollout and update
    env_rates, learner_rates = [], []
    for _ in range(args.rounds):
        env_rates.append(environment_rate(tables, args.env_steps // args.rounds, rng))
        started = time.perf_counter()
        before = model.num_timesteps
        model.learn(total_timesteps=args.steps // args.rounds, reset_num_timesteps=False)
        learner_rates.append((model.num_timesteps - before) / (time.perf_counter() - started))
    envs.close()
    env_rate, learner_rate = max(env_rates), max(learner_rates)

    print(f"config {args.config}: {config.ruleset}, {config.players} seats, opponents {config.opponents}")
    print(f"learner: {config.vec_env} vector env, {config.n_envs} tables, n_steps {ppo.n_steps}, "
          f"batch {ppo.batch_size}, {ppo.n_epochs} epochs")
    print(f"environments alone (one core):  {env_rate:8.0f} steps/s")
    print(f"training loop (learner):        {learner_rate:8.0f} steps/s")
    print(f"ratio learner / environments:   {learner_rate / env_rate:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
