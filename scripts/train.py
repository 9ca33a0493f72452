"""Train a Cul de Chouette agent with MaskablePPO, then evaluate it.

    python scripts/train.py --config configs/train/classic_2p.yaml            # a new run
    python scripts/train.py --config configs/train/classic_2p.yaml --resume   # go on after a stop

A run, top to bottom: read the config; build the league of opponents (heuristic bots, and
frozen copies of the learner as it improves); build the environments; create the model or
load the last intact checkpoint; learn, with a progress bar, TensorBoard logs (`tensorboard
--logdir runs/NAME/tb`), checkpoints every `checkpoint_every` steps and league snapshots; save
the final model; play the evaluation tournaments; write report.json and learning_curve.png.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from sb3_contrib import MaskablePPO  # noqa: E402
from stable_baselines3.common.callbacks import BaseCallback  # noqa: E402
from stable_baselines3.common.monitor import Monitor  # noqa: E402
from stable_baselines3.common.vec_env import DummyVecEnv  # noqa: E402

from agents.evaluation import run_tournament  # noqa: E402
from agents.model_bot import ModelBot, ModelLoadError, write_metadata  # noqa: E402
from agents.training import (  # noqa: E402
    ConfigError,
    League,
    LeagueOpponent,
    TrainConfig,
    clone_teacher,
    latest_checkpoint,
    load_config,
    save_checkpoint,
    teacher_samples,
)
from cdc_env.play import play_game  # noqa: E402
from cdc_env.rules import RulesetError, Ruleset, load_ruleset  # noqa: E402
from agents.single import CulDeChouetteEnv  # noqa: E402
from cdc_env.spaces import STAKE_LEVELS  # noqa: E402


class RunCallback(BaseCallback):
    """Checkpoints, league snapshots and the learning curve, as the run goes."""

    def __init__(self, config: TrainConfig, rules: Ruleset, league: League,
                 curve: list[dict[str, Any]]) -> None:
        super().__init__()
        self.config, self.rules, self.league, self.curve = config, rules, league, curve
        self.solo = rules.max_players == 1
        self.out = config.output
        self.outcomes: list[float] = []  # episode returns: ±1 a game, or minus the turns in solo

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "episode" in info:
                self.outcomes.append(float(info["episode"]["r"]))
        steps = self.num_timesteps
        n_envs = self.training_env.num_envs
        if steps // self.config.league.snapshot_every != (steps - n_envs) // self.config.league.snapshot_every:
            snapshot = self.out / "snapshots" / f"step_{steps:010d}.zip"
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            self.model.save(snapshot)
            describe(snapshot, self.config, self.rules)
            self.league.add_snapshot(snapshot)
        if steps // self.config.checkpoint_every != (steps - n_envs) // self.config.checkpoint_every:
            save_checkpoint(self.out / "checkpoints", self.model, steps, self.progress())
        return True

    def _on_rollout_end(self) -> None:
        recent = self.outcomes[-200:]
        if not recent:
            return
        point = {"steps": self.num_timesteps, "episodes": len(self.outcomes)}
        if self.solo:
            point["mean_turns"] = -float(np.mean(recent))
            self.logger.record("cdc/mean_turns", point["mean_turns"])
        else:
            point["win_rate"] = float(np.mean([r > 0 for r in recent]))
            self.logger.record("cdc/win_rate", point["win_rate"])
        self.curve.append(point)

    def progress(self) -> dict[str, Any]:
        return {"curve": self.curve, "snapshots": self.league.snapshot_paths}


def describe(model_path: Path, config: TrainConfig, rules: Ruleset) -> None:
    write_metadata(model_path, rules, config.players, config.max_turns, list(STAKE_LEVELS),
                   extra={"run_name": config.run_name})


def make_envs(config: TrainConfig, rules: Ruleset, league: League) -> DummyVecEnv:
    opponents_per_table = config.players - 1

    def make(index: int) -> Any:
        def build() -> Monitor:
            opponents = [LeagueOpponent(league, f"{config.seed}:{index}:{seat}") for seat in range(opponents_per_table)]
            table = CulDeChouetteEnv(rules, config.players, opponents=opponents,
                                     learner_seat="random" if config.players > 1 else 0,
                                     max_turns=config.max_turns, reaction=config.reaction, shaping=config.shaping,
                                     random_starts=config.random_starts)
            return Monitor(table)
        return build

    envs = DummyVecEnv([make(i) for i in range(config.n_envs)])
    envs.seed(config.seed)
    return envs


def evaluate(model_path: Path, config: TrainConfig, rules: Ruleset, games_override: int | None) -> dict[str, Any]:
    evaluation = config.evaluation
    if rules.max_players == 1:
        from cdc_env.solo_optimum import expected_turns

        games = games_override if games_override is not None else evaluation.games
        bot = ModelBot.load(model_path, reaction=config.reaction)
        turns = []
        for game in range(games):
            bot.rng.seed(game)
            state = play_game(rules, [bot], seed=10_000_000 + game, max_turns=config.max_turns)
            turns.append(state.turn_number)
        optimum = expected_turns(0, rules=rules)
        mean = float(np.mean(turns)) if turns else float("nan")
        return {"games": games, "mean_turns": mean,
                "standard_error": float(np.std(turns) / np.sqrt(len(turns))) if turns else float("nan"),
                "optimum_expected_turns": optimum, "gap": mean / optimum - 1}
    report: dict[str, Any] = {"opponents": {}}
    for rank, opponent in enumerate(evaluation.opponents):
        games = evaluation.games if rank == 0 else evaluation.games_others
        if games_override is not None:
            games = games_override
        if games == 0:
            continue
        tournament = run_tournament([str(model_path), opponent], rules, config.players, games,
                                    seed=20_000_000, reaction=config.reaction, max_turns=config.max_turns,
                                    workers=os.cpu_count() or 1)
        agent = next(a for a in tournament.agents if a.name == str(model_path))
        other = next(a for a in tournament.agents if a.name == opponent)
        report["opponents"][opponent] = {
            "games": games, "win_rate": agent.win_rate, "ci95": [agent.ci_low, agent.ci_high],
            "elo": agent.elo, "opponent_elo": other.elo, "mean_points": agent.mean_points,
            "opponent_mean_points": other.mean_points, "unfinished": tournament.unfinished}
    return report


def plot_curve(curve: list[dict[str, Any]], path: Path, solo: bool, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    key = "mean_turns" if solo else "win_rate"
    axis.plot([p["steps"] for p in curve], [p[key] for p in curve], color="#4c72b0")
    axis.set_xlabel("steps")
    axis.set_ylabel("mean turns to 343 (last 200 games)" if solo else "win rate (last 200 games)")
    if not solo:
        axis.axhline(0.5, color="grey", linestyle="--")
    axis.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", default="configs/train/classic_2p.yaml")
    parser.add_argument("--resume", action="store_true", help="go on from the last intact checkpoint")
    parser.add_argument("--timesteps", type=int, default=None, help="override total_timesteps")
    parser.add_argument("--eval-games", type=int, default=None, help="override every evaluation's game count")
    parser.add_argument("--out", default=None, help="override out_dir")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # progress lines reach a log file as they happen

    # 1. The config and the ruleset.
    overrides: dict[str, Any] = {}
    if args.timesteps is not None:
        overrides["total_timesteps"] = args.timesteps
    if args.out is not None:
        overrides["out_dir"] = args.out
    try:
        config = load_config(args.config, overrides)
        rules = load_ruleset(config.ruleset)
    except (ConfigError, RulesetError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    # Tiny networks on 2 cores: one torch thread is many times faster than two fighting.
    import torch

    torch.set_num_threads(1)
    out = config.output
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(config.model_dump_json(indent=1), encoding="utf-8")
    solo = rules.max_players == 1
    started = time.monotonic()

    # 2. The league and the environments.
    league = League(config.opponents, config.reaction, config.league.max_snapshots,
                    config.league.self_play_fraction)
    envs = make_envs(config, rules, league)

    # 3. A new model, or the last intact checkpoint.
    curve: list[dict[str, Any]] = []
    found = latest_checkpoint(out / "checkpoints") if args.resume else None
    if args.resume and found is None:
        print("no intact checkpoint to resume from: starting a new run")
    if found is not None:
        path, state = found
        print(f"resuming from {path} ({state['steps']} steps)")
        try:
            model = MaskablePPO.load(path / "model.zip", env=envs, device="cpu",
                                     tensorboard_log=str(out / "tb"))
        except Exception as error:  # noqa: BLE001 - report, do not load
            print(f"error: checkpoint {path} cannot be loaded: {error}", file=sys.stderr)
            return 2
        curve = list(state.get("curve", []))
        for snapshot in state.get("snapshots", []):
            try:
                league.add_snapshot(Path(snapshot))
            except ModelLoadError as error:
                print(f"a league snapshot is lost: {error}")
    else:
        model = MaskablePPO("MlpPolicy", envs, seed=config.seed, device="cpu", verbose=0,
                            tensorboard_log=str(out / "tb"),
                            policy_kwargs={"net_arch": list(config.ppo.net_arch)},
                            **config.ppo.model_dump(exclude={"net_arch"}))
        imitation = config.imitation
        if imitation.teacher and imitation.games:
            # A warm start: play like the teacher first, then improve on it with PPO.
            table = envs.envs[0].unwrapped.game
            samples = teacher_samples(imitation.teacher, rules, config.players, config.opponents,
                                      imitation.games, table.encoder, table.codec, config.seed,
                                      config.reaction)
            losses = clone_teacher(model, samples, imitation.epochs, imitation.batch_size,
                                   imitation.learning_rate, config.seed, imitation.label_smoothing)
            print(f"imitated {imitation.teacher} on {len(samples['actions'])} decisions of "
                  f"{imitation.games} games: loss {losses[0]:.3f} → {losses[-1]:.3f}")

    # 4. Learn.
    callback = RunCallback(config, rules, league, curve)
    remaining = config.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callback, progress_bar=sys.stderr.isatty(),
                    tb_log_name="run", reset_num_timesteps=found is None)
        save_checkpoint(out / "checkpoints", model, model.num_timesteps, callback.progress())
    final = out / "model.zip"
    model.save(final)
    describe(final, config, rules)
    trained_s = time.monotonic() - started

    # 5. Evaluate and report.
    print(f"trained {model.num_timesteps} steps in {trained_s:.0f} s; evaluating…")
    results = evaluate(final, config, rules, args.eval_games)
    report = {"run_name": config.run_name, "ruleset": rules.name, "players": config.players,
              "steps": model.num_timesteps, "training_seconds": round(trained_s, 1),
              "evaluation_seconds": round(time.monotonic() - started - trained_s, 1),
              "model": str(final), "evaluation": results, "curve": curve}
    (out / "report.json").write_text(json.dumps(report, indent=1), encoding="utf-8")
    if curve:
        plot_curve(curve, out / "learning_curve.png", solo, f"{config.run_name} ({rules.name})")
    print(json.dumps(results, indent=1))
    print(f"wrote {out / 'report.json'}" + (f" and {out / 'learning_curve.png'}" if curve else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
