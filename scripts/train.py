"""Train a Cul de Chouette agent with MaskablePPO, then evaluate it.

    python scripts/train.py --config configs/train/classic_2p.yaml            # a new run
    python scripts/train.py --config configs/train/classic_2p.yaml --resume   # go on after a stop
    python scripts/train.py --config configs/train/classic_2p_rllib.yaml      # Ray RLlib (trainer: rllib)
    python scripts/train.py --publish runs/classic_2p     # make a run's model the champion of its table

A run, top to bottom: read the config; build the league of opponents (heuristic bots, and
frozen copies of the learner as it improves); build the environments; create the model or
load the last intact checkpoint; learn, with a progress bar, TensorBoard logs (`tensorboard
--logdir runs/NAME/tb`), checkpoints every `checkpoint_every` steps and league snapshots; save
the final model; play the evaluation tournaments (the agent against a field of each
opponent bot); write report.json and learning_curve.png, and print the verdict: a table and one
line that says whether the agent beats the strongest bot.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.vec_env import SubprocVecEnv

from agents.bots import make_bot
from agents.champion import CHAMPIONS_DIR, SEARCH_CHAMPIONS, NotShippedRules, champion_file, publish
from agents.evaluation import run_tournament
from agents.model_bot import ModelBot, ModelLoadError, write_metadata
from agents.search import NETWORK, SearchBot
from agents.single import CulDeChouetteEnv
from agents.training import (
    ConfigError,
    CorruptCheckpoint,
    League,
    PPOConfig,
    TrainConfig,
    clone_teacher,
    latest_checkpoint,
    load_config,
    load_to_resume,
    make_envs,
    new_model,
    read_loadable_checkpoint,
    read_state,
    save_checkpoint,
    save_model,
    start_from,
    teacher_samples,
)
from cdc_env.cli import (
    NO_ROOM,
    OutputError,
    UsageError,
    check_output_dir,
    game_count_or_zero,
    in_use_by_one,
    named_path,
    on_ctrl_c,
    parse_json,
    positive_float,
    positive_int,
    processes,
    run_command,
    write_atomic,
)
from cdc_env.play import play_game
from cdc_env.rules import Ruleset, RulesetError, load_ruleset
from cdc_env.spaces import STAKE_LEVELS


class RunCallback(BaseCallback):
    """Checkpoints, league snapshots and the learning curve, as the run goes."""

    def __init__(self, config: TrainConfig, rules: Ruleset, league: League,
                 curve: list[dict[str, Any]]) -> None:
        super().__init__()
        self.config, self.rules, self.league, self.curve = config, rules, league, curve
        self.solo = rules.max_players == 1
        self.out = config.output
        self.outcomes: list[float] = []  # episode returns: ±1 a game, or minus the turns in solo
        self.deadline: float | None = None

    def _on_step(self) -> bool:
        if self.deadline is not None and time.monotonic() > self.deadline:
            return False  # the time budget is spent: stop, save and evaluate what there is
        for info in self.locals["infos"]:
            if "episode" in info:
                self.outcomes.append(float(info["episode"]["r"]))
        steps = self.num_timesteps
        n_envs = self.training_env.num_envs
        if steps // self.config.league.snapshot_every != (steps - n_envs) // self.config.league.snapshot_every:
            snapshot = self.out / "snapshots" / f"step_{steps:010d}.zip"
            snapshot.parent.mkdir(parents=True, exist_ok=True)
            save_model(self.model, snapshot)
            describe(snapshot, self.config, self.rules)
            self.league.add_snapshot(snapshot)
            if isinstance(self.training_env, SubprocVecEnv):
                # Each worker process holds its own copy of the league.
                self.training_env.env_method("add_league_snapshot", str(snapshot))
        if steps // self.config.checkpoint_every != (steps - n_envs) // self.config.checkpoint_every:
            save_checkpoint(self.out / "checkpoints", self.model, steps, self.progress())
        return True

    def _on_rollout_end(self) -> None:
        recent = self.outcomes[-200:]
        if not recent:
            return
        point: dict[str, float] = {"steps": self.num_timesteps, "episodes": len(self.outcomes)}
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


def evaluate(model_path: Path, config: TrainConfig, rules: Ruleset, games_override: int | None,
             workers: int) -> dict[str, Any]:
    evaluation = config.evaluation
    if rules.max_players == 1:
        from cdc_env.solo_optimum import expected_turns, uncovered

        games = games_override if games_override is not None else evaluation.games
        if games == 0:  # (a mean of no games is NaN, which report.json, strict JSON, cannot hold)
            return {"games": 0, "mean_turns": None, "standard_error": None, "optimum_expected_turns": None,
                    "gap": None}
        bot = ModelBot.load(model_path, reaction=config.reaction)
        turns = []
        with progress_bar("evaluating", games) as advance:
            for game in range(games):
                bot.rng.seed(game)
                state = play_game(rules, [bot], seed=10_000_000 + game, max_turns=config.max_turns)
                turns.append(state.turn_number)
                advance(game + 1)
        mean = float(np.mean(turns))
        played = {"games": games, "mean_turns": mean, "standard_error": float(np.std(turns) / np.sqrt(len(turns)))}
        if (why := uncovered(rules)) is not None:  # (the optimum raised: a traceback after the training)
            return {**played, "optimum_expected_turns": None, "gap": None,
                    "no_optimum": f"the solo optimum does not cover {why}"}
        optimum = expected_turns(0, rules=rules)
        return {**played, "optimum_expected_turns": optimum, "gap": mean / optimum - 1}
    report: dict[str, Any] = {"opponents": {}}
    for rank, opponent in enumerate(evaluation.opponents):
        games = evaluation.games if rank == 0 else evaluation.games_others
        if games_override is not None:
            games = games_override
        if games == 0:
            continue
        # The agent alone against a field of the opponent: players − 1 copies, seats rotated.
        with progress_bar(f"against {opponent}", games) as advance:
            tournament = run_tournament([str(model_path)], rules, config.players, games,
                                        seed=20_000_000, reaction=config.reaction, max_turns=config.max_turns,
                                        workers=workers, field=opponent, progress=advance)
        agent = next(a for a in tournament.agents if a.name == str(model_path))
        other = next(a for a in tournament.agents if a.name == opponent)
        report["opponents"][opponent] = {
            "games": games, "win_rate": agent.win_rate, "ci95": [agent.ci_low, agent.ci_high],
            "fair_share": tournament.fair_share,  # a team's 2/N at a Doublette, where both partners win
            "elo": agent.elo, "opponent_elo": other.elo, "mean_points": agent.mean_points,
            "opponent_mean_points": other.mean_points, "unfinished": tournament.unfinished}
    return report


class progress_bar:
    """A rich progress bar on a terminal; nothing when the output is a file or CI."""

    def __init__(self, label: str, total: int) -> None:
        self.label, self.total = label, total
        self.progress: Any = None

    def __enter__(self) -> Callable[[int], None]:
        if not sys.stderr.isatty():
            return lambda done: None
        from rich.console import Console
        from rich.progress import Progress

        self.progress = Progress(console=Console(stderr=True), transient=True)
        self.progress.start()
        task = self.progress.add_task(self.label, total=self.total)
        return lambda done: self.progress.update(task, completed=done)

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.stop()


def print_verdict(results: dict[str, Any], config: TrainConfig) -> None:
    """The evaluation as a table, and one line: does the agent beat the strongest bot?"""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if "opponents" not in results and not results["games"]:
        console.print("solo: not evaluated (no evaluation games were played)")
        return
    if "opponents" not in results:
        against = (f"the optimum expects {results['optimum_expected_turns']:.2f} ({results['gap']:+.1%})"
                   if results.get("optimum_expected_turns") is not None else results.get("no_optimum", ""))
        console.print(f"solo: {results['mean_turns']:.2f} ± {results['standard_error']:.2f} turns to 343 over "
                      f"{results['games']} games; {against}")
        return
    if not results["opponents"]:  # (an empty table said nothing of why)
        console.print(f"{config.players} seats: not evaluated (no evaluation games were played: --eval-games 0, "
                      "or no evaluation.opponents)", soft_wrap=True)
        return
    fair = next(iter(results["opponents"].values()))["fair_share"]  # (the tournament's: a team's at a Doublette)
    table = Table(title=f"{config.run_name}: the agent against a field of each bot "
                        f"({config.ruleset}, {config.players} seats; a fair share is {fair:.1%})")
    for column in ("opponent", "games", "win rate", "95 % interval", "Elo (agent – bot)", "mean points (agent – bot)"):
        table.add_column(column, justify="left" if column == "opponent" else "right")
    for opponent, row in results["opponents"].items():
        table.add_row(opponent, str(row["games"]), f"{row['win_rate']:.1%}",
                      f"{row['ci95'][0]:.1%} – {row['ci95'][1]:.1%}",
                      f"{row['elo']:.0f} – {row['opponent_elo']:.0f}",
                      f"{row['mean_points']:.0f} – {row['opponent_mean_points']:.0f}")
    console.print(table)
    strongest, row = next(iter(results["opponents"].items()))
    # One unbroken line whatever the terminal's width, so that logs and scripts can grep it.
    console.print(verdict_line(strongest, row["win_rate"], row["ci95"], fair), soft_wrap=True)


def verdict_line(opponent: str, win_rate: float, interval: list[float], fair: float) -> str:
    low, high = interval
    if low > fair:
        return (f"[green]verdict: the agent beats {opponent}[/green] ({win_rate:.1%}, its 95 % interval "
                f"above the fair share {fair:.1%})")
    if high < fair:
        return (f"[red]verdict: the agent does not beat {opponent}[/red] ({win_rate:.1%}, its 95 % interval "
                f"below the fair share {fair:.1%})")
    return (f"[yellow]verdict: no clear winner against {opponent}[/yellow] ({win_rate:.1%}, its 95 % interval "
            f"{low:.1%} – {high:.1%} holds the fair share {fair:.1%}: play more games)")


def publish_run(target: Path, directory: Path) -> int:
    """`--publish RUN`: the run's model (RUN/model.zip, or a model path) becomes a champion."""
    model = target / "model.zip" if target.is_dir() else target
    if not target.is_dir() and not model.with_suffix(".zip").is_file():
        # (load_model reads `target`.zip, and would name that, a path the user did not type)
        what = "not a model (a model is a .zip)" if target.exists() else "no run folder or model there"
        raise UsageError(f"--publish {target}: {what}; give a run's folder (with its model.zip) or a model's .zip")
    check_output_dir(directory, "--champions")  # a file there was a FileExistsError traceback
    report_path = model.parent / "report.json"
    extra: dict[str, Any] = {"source": str(model)}
    lost: str | None = None
    weights = model.with_suffix(".zip")  # (a model may be given without its .zip: load_model adds it)
    stale = (report_path.exists() and weights.is_file()
             and report_path.stat().st_mtime < weights.stat().st_mtime - 1)
    if stale:  # (a run resumed, then stopped in its evaluation: the report is an earlier model's)
        print(f"{report_path} is older than {model.name} (an earlier model's): published without it")
    if report_path.exists() and not stale:
        try:
            report = parse_json(report_path.read_text(encoding="utf-8"))
            if not isinstance(report, dict):
                raise ValueError("not a JSON object")
        except (OSError, ValueError) as error:
            raise UsageError(f"--publish {target}: {report_path} is damaged ({error}); move it away to "
                             "publish the model without its report") from None
        extra.update({"steps": report.get("steps"), "training_seconds": report.get("training_seconds"),
                      "run_evaluation": report.get("evaluation")})
        lost = lost_to_bold(report)
    elif (model.parent / "state.json").exists():  # a checkpoint of a run: its step count
        try:
            extra["steps"] = read_state(model.parent).get("steps")
        except CorruptCheckpoint:
            pass  # the weights are what matters; a damaged step count is left out
    champions = set(directory.glob("*.npz")) if directory.is_dir() else set()
    try:
        out = publish(model, directory, extra)
    except NotShippedRules as error:
        raise UsageError(f"--publish {target}: {error}") from None
    # A shipped champion is replaced by a publish: said, lest it go unnoticed (git has the old one).
    replaced = f"; it replaces the earlier champion in {out}" if out in champions else ""
    print(f"published {model} as {out} ({out.stat().st_size // 1024} kB) with {out.with_suffix('.json').name}"
          f"{replaced}")
    if lost is not None:  # published as asked, but not unawares
        print(f"warning: {report_path} shows this model below bold ({lost}): it plays its table worse than the bot "
              "`bold`", file=sys.stderr)
    for (ruleset, players), searcher in SEARCH_CHAMPIONS.items():
        if champion_file(ruleset, players, directory) == out:
            # There `champion` plays the searcher: say what the new network is, lest the user
            # take its figures for the champion's.
            bot = make_bot(searcher)  # the spec read as every bot name is
            over = " and the searcher's base" if isinstance(bot, SearchBot) and bot.base_name == NETWORK else ""
            print(f"at {ruleset} with {players} seats the champion is the searcher ({searcher}): this network "
                  f"is the bot `network` there{over}")
    return 0


def lost_to_bold(report: dict[str, Any]) -> str | None:
    """How a run's report shows its model below bold (the 95 % interval of its win rate against
    a field of bold under the fair share), in words; None where it does not, or has no such row."""
    try:
        row = report["evaluation"]["opponents"]["bold"]
        rate, high, fair = float(row["win_rate"]), float(row["ci95"][1]), float(row["fair_share"])
    except (TypeError, KeyError, IndexError, ValueError):
        return None  # no row against bold (or not one a run wrote): nothing to warn of
    return f"{rate:.1%} won, 95 % interval up to {high:.1%}, a fair share {fair:.1%}" if high < fair else None


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
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    plt.close(figure)
    write_atomic(path, image.getvalue())


def finish(config: TrainConfig, rules: Ruleset, final: Path, steps: int, curve: list[dict[str, Any]],
           started: float, trained_s: float, eval_games: int | None, workers: int) -> None:
    """Evaluate the saved model; write report.json and learning_curve.png (both back ends)."""
    out = config.output
    print(f"trained {steps} steps in {trained_s:.0f} s; evaluating…")
    results = evaluate(final, config, rules, eval_games, workers)
    report = {"run_name": config.run_name, "trainer": config.trainer, "ruleset": rules.name,
              "players": config.players, "steps": steps, "training_seconds": round(trained_s, 1),
              "evaluation_seconds": round(time.monotonic() - started - trained_s, 1),
              "model": str(final), "evaluation": results, "curve": curve}
    print_verdict(results, config)  # said first: a report that cannot be written loses none of it
    try:
        write_atomic(out / "report.json", json.dumps(report, indent=1, allow_nan=False))  # strict JSON
        if curve:
            plot_curve(curve, out / "learning_curve.png", rules.max_players == 1, f"{config.run_name} ({rules.name})")
    except OSError as error:
        # The evaluation's games are not to be played again for a full disk: the report goes to a
        # new temporary folder, said where (as evaluate.py does).
        elsewhere = Path(tempfile.mkdtemp(prefix="cdc-train-")) / "report.json"
        write_atomic(elsewhere, json.dumps(report, indent=1, allow_nan=False))
        raise OutputError(f"{out} cannot be written ({error.strerror or error}): the trained model is "
                          f"{final}, its evaluation is kept in {elsewhere}") from None
    print(f"wrote {out / 'report.json'}" + (f" and {out / 'learning_curve.png'}" if curve else ""))


def rllib_ready(config: TrainConfig, args: argparse.Namespace) -> str | None:
    """Why `trainer: rllib` cannot run here (no Ray RLlib, no room in the Ray for the run), or None
    with Ray started."""
    try:
        from agents import rllib_training
    except ImportError as error:
        return (f"trainer: rllib needs Ray RLlib ({error}): run scripts/setup.sh, which installs the project's "
                "rllib extra")
    try:
        rllib_training.ready_ray(config, args.address)
    except rllib_training.RunError as error:
        return str(error)
    return None


def train_rllib(config: TrainConfig, rules: Ruleset, args: argparse.Namespace,
                found: tuple[Path, dict[str, Any]] | None, started: float) -> int:
    """`trainer: rllib`: Ray RLlib trains (agents/rllib_training.py), the same report follows."""
    from agents import rllib_training

    out = config.output

    def stopped() -> str:
        if rllib_training.latest_checkpoint(out / "checkpoints", report=lambda _: None) is None:
            return "stopped before the first checkpoint: nothing learnt is kept; start again"
        return f"stopped: the run's last checkpoint is kept in {out}; go on with --resume"

    try:
        with on_ctrl_c(stopped):
            final, steps, curve = rllib_training.train(config, rules, found, args.address,
                                                       time_limit=args.time_limit)
    except rllib_training.RunError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    trained_s = time.monotonic() - started
    with on_ctrl_c(lambda: kept_evaluating(config, steps)):
        finish(config, rules, final, steps, curve, started, trained_s, args.eval_games, args.workers)
    return 0


def tensorboard_dir(out: Path) -> str | None:
    """TensorBoard logs when tensorboard is installed (the `train` extra has it); none otherwise."""
    try:
        import torch.utils.tensorboard  # noqa: F401
    except ImportError:
        return None
    return str(out / "tb")


# What a run folder holds once a run has learnt something: never overwritten without asking.
RUN_OUTPUTS = ("model.zip", "model.json", "report.json", "learning_curve.png", "checkpoints", "snapshots", "tb")
# The settings a checkpoint's network and observations are made for, and the PPO settings it
# carries (a resumed model learns with its own, whatever the config says): a resumed run keeps them.
RESUME_KEYS = ("trainer", "ruleset", "players", "max_turns", *(f"ppo.{key}" for key in PPOConfig.model_fields))


def earlier_run(out: Path) -> list[str]:
    """What `out` holds of an earlier run (a final model, checkpoints, a report), in words."""
    held = []
    if (out / "model.zip").exists():
        held.append("a final model")
    checkpoints = len(list((out / "checkpoints").glob("step_*"))) if (out / "checkpoints").is_dir() else 0
    if checkpoints:
        held.append(f"{checkpoints} checkpoint{'s' if checkpoints > 1 else ''}")
    if (out / "report.json").exists():
        held.append("a report")
    return held


def in_the_way(out: Path) -> list[str]:
    """Files a run writes that `out` holds without an earlier run's model, checkpoints or report
    (a user's model.json or learning_curve.png, the snapshots of a run stopped early): a new run
    would write over them, so it asks for --overwrite first."""
    found = [name for name in ("model.json", "learning_curve.png") if (out / name).exists()]
    snapshots = sorted((out / "snapshots").glob("step_*")) if (out / "snapshots").is_dir() else []
    return found + [str(path.relative_to(out)) for path in snapshots[:3]] + (
        [f"{len(snapshots) - 3} more in snapshots/"] if len(snapshots) > 3 else [])


def setting(data: dict[str, Any], key: str) -> Any:
    for part in key.split("."):
        data = data.get(part, {}) if isinstance(data, dict) else {}
    return data


def check_run_folder(config: TrainConfig, resume: bool, overwrite: bool) -> None:
    """Before anything is written: a new run never lands on an earlier one unless --overwrite,
    and --resume goes on only with the run's own kind of table and network."""
    out = config.output
    held = earlier_run(out)
    if held and not resume and not overwrite:
        raise OutputError(f"{out} already holds a run ({', '.join(held)}): go on with --resume, or give "
                          "--overwrite to start again from nothing, or another --out")
    strays = [] if held else in_the_way(out)
    if strays and not overwrite:  # (--resume too: with no run there, it starts a new one)
        raise OutputError(f"{out} holds {', '.join(strays)}, which the run would write over: give another --out, "
                          "or --overwrite to replace them")
    saved_path = out / "config.json"
    if saved_path.exists() and not overwrite and not run_config(saved_path):
        if not held:  # (--overwrite deletes nothing else where no run is: `clear_run`)
            raise OutputError(f"{saved_path} is not a training run's config (a file of yours?): the run would "
                              "write its own there; give another --out, or --overwrite to replace it")
        # Beside a run's checkpoints it is the run's, damaged (only --resume gets here, the other
        # cases were refused above): --overwrite, once advised, would have deleted every checkpoint.
        print(f"{saved_path} is damaged (not a training run's config): it is written again from this config, "
              "and the checkpoint's own load says whether it fits")
        return
    if not resume or not saved_path.exists():
        return
    try:
        saved = parse_json(saved_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # a damaged config.json: the checkpoint's own load says whether it fits
    mine = json.loads(config.model_dump_json())
    for key in RESUME_KEYS:
        if setting(saved, key) != {} and setting(saved, key) != setting(mine, key):
            raise UsageError(f"--resume: the run in {out} was trained with {key}: {setting(saved, key)}, this config "
                             f"gives {setting(mine, key)}; resume with the run's own config, or give another "
                             "out_dir (--out)")


def run_config(path: Path) -> bool:
    """Whether `path` is a config.json a run wrote (a training config's keys), not a file of the user's."""
    try:
        data = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"run_name", "ruleset", "players", "total_timesteps"} <= set(data)


def resumable(out: Path, found: tuple[Path, dict[str, Any]] | None) -> tuple[Path, dict[str, Any]] | None:
    """--resume: the newest intact checkpoint (either trainer's); none, a run that holds
    something is refused (not started again over its model and report), an empty one starts."""
    if found is None and earlier_run(out):
        raise OutputError(f"--resume: no intact checkpoint in {out / 'checkpoints'}, and nothing of the run "
                          "was changed; give --overwrite to start again from nothing")
    if found is None:
        print(f"no checkpoint in {out}: starting a new run")
    return found


def clear_run(out: Path) -> None:
    """--overwrite: the earlier run's outputs go, so that nothing of it is resumed or reported.
    Only a run's: a folder no run has written (no run's config.json, no model, checkpoint or
    report) keeps what it holds, a `checkpoints/` or `tb/` of the user's own included (--overwrite
    then replaces a config.json of theirs alone, as asked)."""
    if not run_config(out / "config.json") and not earlier_run(out):
        return
    for name in RUN_OUTPUTS:
        path = out / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def kept_evaluating(config: TrainConfig, steps: int) -> str:
    """Ctrl+C's one line during the final evaluation: the model is kept; --resume evaluates it
    again only where the run reached its total_timesteps (after a --time-limit stop it trains on,
    and replaces the model), so the line to evaluate it as it is comes with it then."""
    model = config.output / "model.zip"
    if steps >= config.total_timesteps:
        return f"stopped during the evaluation: the trained model is kept in {model}; --resume evaluates it again"
    command = ["python", "scripts/evaluate.py", "--agents", str(model)]
    if config.players > 1:  # against a field of the strongest bot, as the run's evaluation
        command += ["--field", config.evaluation.opponents[0] if config.evaluation.opponents else "bold"]
    command += ["--ruleset", config.ruleset, "--seats", str(config.players)]
    if config.reaction != "human":
        command += ["--reaction", config.reaction]
    return (f"stopped during the evaluation: the model trained {steps} of {config.total_timesteps} steps is kept in "
            f"{model}; --resume trains it on to {config.total_timesteps} steps (and replaces it); evaluate it as it "
            f"is with: {shlex.join(command)}")


def kept(out: Path) -> str:
    """Ctrl+C's one line in the training: what the interrupted run kept, and how to go on."""
    found = latest_checkpoint(out / "checkpoints", report=lambda _: None)
    if found is None:
        return f"stopped before the first checkpoint: nothing learnt is kept in {out}; start again with --overwrite"
    path, state = found
    return f"stopped: the checkpoint at {state['steps']} steps is kept in {path}; go on with --resume"


def arguments() -> argparse.ArgumentParser:
    """train.py's options (scripts/train_tables.py checks what it passes on with them). Only whole
    names: `--ou` for `--out` would get past train_tables.py's checks of the options it passes on."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
                                     allow_abbrev=False)
    parser.add_argument("--config", default="configs/train/classic_2p.yaml")
    parser.add_argument("--resume", action="store_true", help="go on from the last intact checkpoint")
    parser.add_argument("--overwrite", action="store_true",
                        help="start again from nothing in a folder that holds an earlier run (deletes it)")
    parser.add_argument("--timesteps", type=positive_int, default=None, help="override total_timesteps")
    parser.add_argument("--eval-games", type=game_count_or_zero, default=None,
                        help="override every evaluation's game count")
    parser.add_argument("--out", type=named_path, default=None, help="override out_dir")
    parser.add_argument("--address", default=None,
                        help="trainer: rllib only: the Ray cluster to join (default: $RAY_ADDRESS, "
                             "else a local Ray on this machine)")
    parser.add_argument("--time-limit", type=positive_float, default=None,
                        help="stop learning after this many seconds (then save and evaluate)")
    parser.add_argument("--workers", type=processes, default=os.cpu_count() or 1,
                        help="processes playing the evaluation games (default: one per core)")
    parser.add_argument("--publish", type=named_path, default=None, metavar="RUN",
                        help="train nothing: install RUN's model (RUN/model.zip) as the champion of its table")
    parser.add_argument("--champions", type=named_path, default=CHAMPIONS_DIR,
                        help="where --publish writes (default: the package's champions)")
    return parser


def options_clash(args: argparse.Namespace) -> str | None:
    """Options that cannot go together (scripts/train_tables.py asks it of what it passes on)."""
    if args.resume and args.overwrite:
        return "--resume goes on with a run, --overwrite deletes it: give one of them"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = arguments()
    args = parser.parse_args(argv)
    if (clash := options_clash(args)) is not None:
        parser.error(clash)
    if isinstance(sys.stdout, io.TextIOWrapper):  # not when a caller swapped it (a StringIO)
        sys.stdout.reconfigure(line_buffering=True)  # progress lines reach a log file as they happen
    return run_command(lambda: run(args), (ConfigError, RulesetError, ModelLoadError))


def run(args: argparse.Namespace) -> int:
    if args.publish is not None:
        return publish_run(args.publish, args.champions)

    # 1. The config and the ruleset; every check before anything is written.
    overrides: dict[str, Any] = {}
    if args.timesteps is not None:
        overrides["total_timesteps"] = args.timesteps
    if args.out is not None:
        overrides["out_dir"] = str(args.out)
    config = load_config(args.config, overrides, resuming=args.resume)
    if args.address and config.trainer != "rllib":  # it was ignored: the run trained on this machine alone
        raise UsageError(f"--address {args.address}: a Ray cluster trains with trainer: rllib, and {args.config} "
                         f"trains with {config.trainer} on this machine; drop --address, or give an rllib config")
    rules = load_ruleset(config.ruleset)
    out = config.output
    check_output_dir(out, "--out" if args.out is not None else f"out_dir of {args.config}")
    # One run at a time in a folder, checked before anything of it is read, written or deleted:
    # two runs (the same config twice, a --resume beside the live run) mixed their checkpoints.
    with in_use_by_one(out / ".lock", out, "train.py"):
        return train_in(config, rules, args)


def train_in(config: TrainConfig, rules: Ruleset, args: argparse.Namespace) -> int:
    """The run, its folder locked: the folder's checks, then training and the report."""
    out = config.output
    check_run_folder(config, args.resume, args.overwrite)
    found = None
    if args.resume and config.trainer == "sb3":
        # A checkpoint whose model.zip matches its checksum but cannot be loaded is passed over too.
        found = resumable(out, latest_checkpoint(out / "checkpoints", read=read_loadable_checkpoint))
    if config.trainer == "rllib":
        # Ray, and room in it for the run, before anything of an earlier run is deleted below.
        refusal = rllib_ready(config, args)
        if refusal is not None:
            print(f"error: {refusal}", file=sys.stderr)
            return 2
        from agents import rllib_training

        if args.resume:  # (before config.json is written: a refusal changes nothing of the run)
            found = resumable(out, rllib_training.latest_checkpoint(out / "checkpoints"))
    if args.overwrite:
        clear_run(out)
    # Tiny networks on 2 cores: one torch thread is many times faster than two fighting.
    import torch

    torch.set_num_threads(1)
    write_atomic(out / "config.json", config.model_dump_json(indent=1))
    started = time.monotonic()
    if config.trainer == "rllib":
        return train_rllib(config, rules, args, found, started)
    try:
        # (Ctrl+C in a checkpoint's torch.save comes out as its zip writer's error: `on_ctrl_c`.)
        with on_ctrl_c(lambda: kept(out)):
            train_sb3(config, rules, args, found, started)
    except OSError as error:
        if error.errno not in NO_ROOM:
            raise
        # A checkpoint, a snapshot or the report could not be written: the user's disk, not a bug.
        raise OutputError(f"no room to write in {out} ({error.strerror}): the run {kept(out)}; "
                          "make room first") from None
    return 0


def train_sb3(config: TrainConfig, rules: Ruleset, args: argparse.Namespace,
              found: tuple[Path, dict[str, Any]] | None, started: float) -> None:
    out = config.output

    # 2. The league and the environments.
    league = League(config.opponents, config.reaction, config.league.max_snapshots,
                    config.league.self_play_fraction)
    envs = make_envs(config, rules, league, steps=int(found[1]["steps"]) if found is not None else 0)
    tensorboard = tensorboard_dir(out)

    # 3. A new model, or the last intact checkpoint.
    curve: list[dict[str, Any]] = []
    if found is not None:
        path, state = found
        print(f"resuming from {path} ({state['steps']} steps)")
        try:
            model = load_to_resume(path / "model.zip", envs, config, int(state["steps"]), tensorboard)
        except Exception as error:  # noqa: BLE001 - report, do not load
            raise ModelLoadError(f"checkpoint {path} cannot be loaded: {error}") from None
        curve = list(state.get("curve", []))
        for snapshot in state.get("snapshots", []):
            # In this run's folder, wherever it was when the checkpoint named it (a run moved, or
            # resumed from another folder, took its snapshots from the old place: lost, or another
            # run's networks there played as its league).
            here = out / "snapshots" / Path(snapshot).name
            try:
                league.add_snapshot(here)
            except ModelLoadError as error:
                # Reported once, and dropped from the league: the next checkpoint no longer lists it.
                print(f"a league snapshot is lost and dropped from the league: {error}")
                continue
            if isinstance(envs, SubprocVecEnv):
                # Each table's process holds its own copy of the league, forked before this.
                envs.env_method("add_league_snapshot", str(here))
    elif config.init_from is not None:
        model = start_from(Path(config.init_from), envs, config, tensorboard)
        print(f"going on from {config.init_from}")
    else:
        model = new_model(config, envs, tensorboard)
        imitation = config.imitation
        if imitation.teacher and imitation.games:
            # A warm start: play like the teacher first, then improve on it with PPO.
            table = CulDeChouetteEnv(rules, config.players, opponents="random",
                                     max_turns=config.max_turns).game  # its encoder and codec
            samples = teacher_samples(imitation.teacher, rules, config.players, config.opponents,
                                      imitation.games, table.encoder, table.codec, config.seed,
                                      config.reaction)
            losses = clone_teacher(model, samples, imitation.epochs, imitation.batch_size,
                                   imitation.learning_rate, config.seed, imitation.label_smoothing)
            print(f"imitated {imitation.teacher} on {len(samples['actions'])} decisions of "
                  f"{imitation.games} games: loss {losses[0]:.3f} → {losses[-1]:.3f}")

    # 4. Learn.
    callback = RunCallback(config, rules, league, curve)
    if args.time_limit is not None:
        callback.deadline = time.monotonic() + args.time_limit
    remaining = config.total_timesteps - model.num_timesteps
    if remaining > 0:
        model.learn(total_timesteps=remaining, callback=callback, progress_bar=sys.stderr.isatty(),
                    tb_log_name="run", reset_num_timesteps=found is None)
        save_checkpoint(out / "checkpoints", model, model.num_timesteps, callback.progress())
    final = out / "model.zip"
    save_model(model, final)
    describe(final, config, rules)
    trained_s = time.monotonic() - started

    # 5. Evaluate and report.
    envs.close()
    with on_ctrl_c(lambda: kept_evaluating(config, model.num_timesteps)):
        finish(config, rules, final, model.num_timesteps, curve, started, trained_s, args.eval_games,
               args.workers)


if __name__ == "__main__":
    sys.exit(main())
