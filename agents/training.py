"""The pieces of a training run that scripts/train.py puts together: its config, the league of
opponents (heuristic bots and frozen past selves), checkpoints that survive an interruption,
and the learning curve."""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from pathlib import Path
from typing import Annotated, Any, Literal

import gymnasium
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cdc_env.actions import Action
from cdc_env.cli import MAX_ENVS, MAX_GAMES, MAX_PROCESSES, MAX_ROLLOUT, MAX_RUNNERS, ignore_sigint, parse_json
from cdc_env.game import Decision, GameState
from cdc_env.yamlfile import YamlFileError, read_yaml, shown, wrong_kind

CHECKPOINT_FORMAT = "cdc-checkpoint/1"


class ConfigError(ValueError):
    pass


class _Strict(BaseModel):
    # No infinity either (NaN was refused already): `gt=0` lets .inf through, and a learning
    # rate of .inf trained its imitation and broke at PPO's first rollout, a traceback.
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class PPOConfig(_Strict):
    learning_rate: float = Field(default=3e-4, gt=0, le=10)  # (1e300 overflowed torch's float32, mid-run)
    n_steps: int = Field(default=1024, ge=8)  # per environment, between updates
    batch_size: int = Field(default=256, ge=8)
    n_epochs: int = Field(default=5, ge=1)
    gamma: float = Field(default=0.997, gt=0, le=1)
    gae_lambda: float = Field(default=0.95, gt=0, le=1)
    clip_range: float = Field(default=0.2, gt=0)
    ent_coef: float = Field(default=0.01, ge=0)
    net_arch: list[Annotated[int, Field(ge=1)]] = Field(default=[128, 128])  # units per hidden layer


class LeagueConfig(_Strict):
    # Every `snapshot_every` steps a frozen copy of the learner joins the opponents; it meets
    # one in `self_play_fraction` of its games (the rest are against the bots).
    snapshot_every: int = Field(default=100_000, ge=1)
    max_snapshots: int = Field(default=4, ge=0)
    self_play_fraction: float = Field(default=0.3, ge=0, le=1)


class EvaluationConfig(_Strict):
    games: int = Field(default=4000, ge=0, le=MAX_GAMES)
    opponents: list[str] = Field(default=["bold", "prudent"])
    # Fewer games against the other opponents than against the first (the strongest).
    games_others: int = Field(default=1000, ge=0, le=MAX_GAMES)


class ImitationConfig(_Strict):
    # Before PPO, the policy learns to play like `teacher` from `games` of its play (behaviour
    # cloning), and the value head learns those games' outcomes: PPO then starts from a
    # competent player instead of spending most of its budget on learning not to buy every cul.
    teacher: str | None = "bold"
    games: int = Field(default=1500, ge=0)
    epochs: int = Field(default=4, ge=1)
    batch_size: int = Field(default=1024, ge=16)
    learning_rate: float = Field(default=1e-3, gt=0)
    # The share of the target spread evenly over the other legal choices. A clone trained on
    # the teacher's choices alone is all but deterministic (it gives a deviation 1 chance in
    # 100 or 1000), and PPO improves only on what it samples: with the mass kept here the
    # learner goes on trying the choices the teacher never makes.
    label_smoothing: float = Field(default=0.0, ge=0, lt=1)


class RllibConfig(_Strict):
    # The Ray RLlib back end (trainer: rllib, agents/rllib_training.py). The PPO settings come
    # from `ppo` (batch_size is the minibatch, n_epochs the passes over each train batch);
    # these say how the work spreads over a machine or a cluster.
    # The upper bounds (cdc_env.cli): a count beyond them is a typo, not a cluster.
    env_runners: int = Field(default=1, ge=0, le=MAX_RUNNERS)  # sampling processes (0: in the driver)
    envs_per_env_runner: int = Field(default=4, ge=1, le=MAX_ENVS)
    learners: int = Field(default=0, ge=0, le=MAX_RUNNERS)  # 0: learn in the driver process
    # GPUs each learner uses (0: it learns on a CPU of its own; 1: one GPU each, `learners` being
    # the cluster's GPUs). With `learners: 0`, the driver's own.
    gpus_per_learner: float = Field(default=0, ge=0, le=8)
    train_batch_size: int = Field(default=4000, ge=16)   # environment steps per PPO update, over all learners
    cpus: int | None = Field(default=None, ge=1, le=MAX_RUNNERS)  # CPUs a local Ray may use (None: all)
    # Custom Ray resources each env runner needs, beyond its CPU: runners go only to the nodes
    # started with them (`ray start --resources='{"sampler": 8}'`).
    env_runner_resources: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)


class TrainConfig(_Strict):
    run_name: str
    trainer: Literal["sb3", "rllib"] = "sb3"
    ruleset: str = "classic"
    players: int = Field(default=2, ge=1, le=8)
    # NumPy's legacy seeding (stable-baselines3 seeds through it, each table at seed + its index)
    # takes 0 to 2**32 - 1: -1 or 10**20 was a ValueError traceback once the run had begun.
    seed: int = Field(default=0, ge=0, le=2**31 - 1)
    total_timesteps: int = Field(default=500_000, ge=1)
    n_envs: int = Field(default=4, ge=1, le=MAX_ENVS)  # tables stepped at once (cdc_env.cli's bound)
    # dummy: every table steps in the learner's process; subproc: one process per table.
    vec_env: Literal["dummy", "subproc"] = "dummy"
    max_turns: int = Field(default=300, ge=1)
    reaction: str = "human"
    shaping: float = Field(default=0.0, ge=0)
    random_starts: float = Field(default=0.0, ge=0, le=1)
    opponents: list[str] = Field(default=["bold", "prudent"])
    # A saved model (scripts/train.py's model.zip; a checkpoint's needs the run's model.json copied
    # beside it, as --publish of a checkpoint does) to go on from with new
    # opponents or settings, instead of a new network and its imitation: a champion trained
    # against bold, taught again by playing against itself, starts from what it knows.
    init_from: str | None = None
    league: LeagueConfig = Field(default_factory=LeagueConfig)
    imitation: ImitationConfig = Field(default_factory=ImitationConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    rllib: RllibConfig = Field(default_factory=RllibConfig)
    checkpoint_every: int = Field(default=50_000, ge=1)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    out_dir: str = "runs/{run_name}"

    @property
    def output(self) -> Path:
        return Path(self.out_dir.format(run_name=self.run_name))


def load_config(path: str | Path, overrides: dict[str, Any] | None = None, resuming: bool = False) -> TrainConfig:
    """`resuming`: the run goes on from its own checkpoint (train.py --resume), so init_from's
    model is not read again (moved or overwritten since, it refused the resume)."""
    path = Path(path)
    try:
        data = read_yaml(path)
    except FileNotFoundError:
        raise ConfigError(f"no training config at {path} (see configs/train/)") from None
    except IsADirectoryError:
        raise ConfigError(f"training config {path} is a folder: give a .yaml file (see configs/train/)") from None
    except OSError as error:
        raise ConfigError(f"training config {path} cannot be read: {error.strerror}") from None
    except YamlFileError as error:
        raise ConfigError(f"training config {error}") from None
    if (refusal := wrong_kind(path, data, "training config", TrainConfig.model_fields,
                              "run_name: ..., ruleset: ..., players: ...; see configs/train/")) is not None:
        raise ConfigError(refusal)
    for key, value in (overrides or {}).items():
        # "ppo.n_steps": a key inside a section, as a bench or a test overrides it.
        *sections, last = key.split(".")
        target = data
        for section in sections:
            target = target.setdefault(section, {}) if isinstance(target.get(section, {}), dict) else {}
        target[last] = value
    try:
        config = TrainConfig.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(
            f"  - {'.'.join(map(str, e['loc']))}: "
            + ("unknown key" if e["type"] == "extra_forbidden" else e["msg"] if e["type"] == "missing"
               else f"{e['msg']} (got {shown(e.get('input'))})")
            for e in error.errors())
        raise ConfigError(f"training config {path} is not valid:\n{problems}") from None
    name_problems = config_name_problems(config, resuming)
    if name_problems:
        raise ConfigError(f"training config {path} is not valid:\n" + "\n".join(f"  - {p}" for p in name_problems))
    return config


def config_name_problems(config: TrainConfig, resuming: bool = False) -> list[str]:
    """Every name in a config that would fail later (a bot, a reaction level, the ruleset and its
    seat count), found when the config is loaded, before any work: a typo in the evaluation's
    opponents must not wait for the end of a training run to be found."""
    from agents.bots import check_table, make_bot
    from agents.champion import champion_path
    from cdc_env.cli import one_line
    from cdc_env.reaction import REACTION_LEVELS
    from cdc_env.rules import Ruleset, RulesetError, load_ruleset

    problems = []
    try:
        _ = config.output
    except (KeyError, IndexError, ValueError, AttributeError, TypeError) as error:  # ({run_name.x}, {run_name[x]})
        wrong = f"unknown placeholder {{{error.args[0]}}}" if isinstance(error, KeyError) else str(error)
        problems.append(f"out_dir: {config.out_dir!r}: {wrong}; the one placeholder is {{run_name}}")
    if config.trainer == "sb3" and config.vec_env == "subproc" and config.n_envs > MAX_PROCESSES:
        problems.append(f"n_envs: {config.n_envs} tables each in a process of its own (vec_env: subproc) is more than "
                        f"{MAX_PROCESSES} (4 per core of this machine); give at most that, or vec_env: dummy")
    rollout = config.ppo.n_steps * config.n_envs
    if config.trainer == "sb3" and rollout > MAX_ROLLOUT:  # held whole: 10**14 was an _ArrayMemoryError
        problems.append(f"ppo.n_steps: a rollout of {config.ppo.n_steps} × {config.n_envs} tables = {rollout} steps is "
                        f"more than {MAX_ROLLOUT} (it is held whole in memory); give fewer ppo.n_steps")
    elif config.trainer == "sb3" and config.ppo.batch_size > rollout:
        problems.append(f"ppo.batch_size: {config.ppo.batch_size} is more than a rollout (ppo.n_steps × n_envs = "
                        f"{config.ppo.n_steps} × {config.n_envs} = {rollout}); give at most {rollout}")
    share = config.rllib.train_batch_size // max(1, config.rllib.learners)  # each learner's part of an update
    if config.trainer == "rllib" and config.ppo.batch_size > share:
        problems.append(f"ppo.batch_size: {config.ppo.batch_size} is more than each learner's share of "
                        f"rllib.train_batch_size ({share}); give at most that")
    rules: Ruleset | None = None
    try:
        rules = load_ruleset(config.ruleset)
        if (refusal := rules.players_refusal(config.players)) is not None:
            problems.append(f"players: {refusal}")
            rules = None
        elif config.trainer == "rllib" and rules.max_players == 1:
            problems.append(f"trainer: rllib trains tables of several seats; {rules.name} is played alone: "
                            "use trainer: sb3")
    except RulesetError as error:
        problems.append(f"ruleset: {error}")
    if config.reaction not in REACTION_LEVELS:
        problems.append(f"reaction: unknown level {config.reaction!r}; choose from {', '.join(REACTION_LEVELS)}")
    bots = [("opponents", name) for name in config.opponents]
    bots += [("evaluation.opponents", name) for name in config.evaluation.opponents]
    if config.imitation.teacher:
        bots.append(("imitation.teacher", config.imitation.teacher))
    for key, name in bots:
        try:
            if name in ("champion", "network"):
                champion_path(config.ruleset, config.players)
            elif rules is not None:
                # A bot that exists but cannot sit at this table (solo_optimal at 2 seats, a model of
                # 4 seats at 2) was met only in the run: the evaluation's, after all the learning.
                check_table(make_bot(name), rules, config.players)
            else:
                make_bot(name)
        except ValueError as error:
            problems.append(f"{key}: {one_line(str(error))}")
    if config.players > 1 and not config.opponents:
        problems.append("opponents: a table of several players needs at least one opponent bot")
    if config.init_from is not None and not config.init_from.strip():  # (Path("") is the current folder)
        problems.append("init_from: empty; give the model.zip to go on from, or drop the key")
    elif config.init_from is not None and config.trainer == "sb3":  # (rllib: other_trainers_keys says drop it)
        if config.imitation.teacher and config.imitation.games:
            problems.append("init_from: a run that goes on from a saved model imitates no teacher first: "
                            "set imitation.games: 0 (or drop init_from)")
        if rules is not None and not resuming:
            problems += [f"init_from: {problem}" for problem in start_model_problems(
                Path(config.init_from), rules, config.players, list(config.ppo.net_arch))]
    problems += other_trainers_keys(config)
    return problems


def other_trainers_keys(config: TrainConfig) -> list[str]:
    """Keys the config's trainer does not read, given all the same (they were taken without a
    word: an `rllib:` section trained with SB3 on one machine)."""
    if config.trainer == "sb3":
        return ["rllib: a section of trainer: rllib, and this config trains with sb3 (the default): set "
                "trainer: rllib, or drop the section"] if "rllib" in config.model_fields_set else []
    sb3_only = {"n_envs": "rllib.env_runners and rllib.envs_per_env_runner", "vec_env": "rllib.env_runners"}
    problems = [f"{key}: sb3's, and this config trains with rllib: set {instead} instead"
                for key, instead in sb3_only.items() if key in config.model_fields_set]
    if config.init_from is not None:
        problems.append("init_from: sb3's (a MaskablePPO model.zip), and this config trains with rllib: drop it")
    if "n_steps" in config.ppo.model_fields_set:
        problems.append("ppo.n_steps: sb3's, and this config trains with rllib: set rllib.train_batch_size "
                        "(the steps of one update) instead")
    return problems


# ---------------------------------------------------------------------- the league


class League:
    """The opponents a learner meets: bots by name, and frozen past selves."""

    def __init__(self, bots: list[str], reaction: str, max_snapshots: int, self_play_fraction: float) -> None:
        from agents.bots import make_bot

        self.bot_names = list(bots)
        self.bots = [make_bot(name, reaction=reaction) for name in bots]
        self.reaction = reaction
        self.max_snapshots = max_snapshots
        self.self_play_fraction = self_play_fraction
        self.snapshot_paths: list[str] = []
        self.snapshots: list[Any] = []

    def add_snapshot(self, path: Path) -> None:
        from agents.model_bot import ModelBot

        if self.max_snapshots == 0 or str(path) in self.snapshot_paths:
            return  # several tables of one process share a league: each adds the snapshot once
        # Loaded before it is listed: a snapshot that cannot be loaded never enters the list
        # the checkpoints keep.
        self.snapshots.append(ModelBot.load(path, reaction=self.reaction))
        self.snapshot_paths.append(str(path))
        if len(self.snapshots) > self.max_snapshots:
            self.snapshot_paths.pop(0)
            self.snapshots.pop(0)

    def pick(self, rng: random.Random) -> Any:
        if self.snapshots and rng.random() < self.self_play_fraction:
            return rng.choice(self.snapshots)
        return rng.choice(self.bots)


class LeagueTable(gymnasium.Wrapper):
    """A training table that knows its league, so a snapshot reaches a table in a worker process
    (`env_method("add_league_snapshot", path)`)."""

    def __init__(self, env: Any, league: League) -> None:
        super().__init__(env)
        self.league = league

    def add_league_snapshot(self, path: str) -> None:
        self.league.add_snapshot(Path(path))

    def action_masks(self) -> np.ndarray:
        from agents.single import CulDeChouetteEnv

        table = self.env.unwrapped
        assert isinstance(table, CulDeChouetteEnv)  # make_envs wraps only these
        return table.action_masks()


class LeagueOpponent:
    """One opponent seat: a new member of the league for every game."""

    def __init__(self, league: League, seed: int | str) -> None:
        self.league = league
        self.rng = random.Random(seed)  # the env reseeds it each episode
        self._game: GameState | None = None
        self._member: Any = None

    def act(self, state: GameState, decision: Decision) -> Action:
        if state is not self._game:
            self._game = state
            self._member = self.league.pick(self.rng)
            self._member.rng.seed(self.rng.random())
        return self._member.act(state, decision)


def save_model(model: Any, path: Path) -> None:
    """model.save, whole or not at all: into a temporary file beside `path`, then renamed (an
    export cut short left a broken model.zip where a finished run's was)."""
    temporary = path.with_name(f".{path.stem}.tmp.zip")
    model.save(temporary)
    os.replace(temporary, path)


def segment_seed(seed: int, steps: int) -> int:
    """The seed of a run's segment that begins after `steps` (0: the run's own seed). A resumed
    run reseeded its tables with the run's seed, and played again the very games it began with
    (each chunk of a --resume --time-limit recipe trained on the same games)."""
    return seed if steps == 0 else (seed * 1_000_003 + steps) % 2**31


def load_to_resume(path: Path, envs: Any, config: TrainConfig, steps: int, tensorboard: str | None) -> Any:
    """A checkpoint's model, to go on learning on `envs` (made with `steps`): SB3's load seeds
    the run's own seed again (its generators and the tables'), so the segment's is given after
    it, or the resumed run played the run's first games again."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(path, env=envs, device="cpu", tensorboard_log=tensorboard)
    model.set_random_seed(segment_seed(config.seed, steps))
    return model


def make_envs(config: TrainConfig, rules: Any, league: League, steps: int = 0) -> Any:
    """The config's training tables as a vector env: each a CulDeChouetteEnv whose other seats
    are played by members of the league. `steps`: those trained already (a resumed run): its
    tables play new games (`segment_seed`)."""
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv, VecEnv

    from agents.single import CulDeChouetteEnv

    opponents_per_table = config.players - 1

    def make(index: int) -> Any:
        def build() -> LeagueTable:
            if config.vec_env == "subproc":
                # A table's own process: Ctrl+C is the learner's to answer (it keeps its checkpoints).
                ignore_sigint()
            run = f"{config.seed}" if steps == 0 else f"{config.seed}:{steps}"
            opponents = [LeagueOpponent(league, f"{run}:{index}:{seat}") for seat in range(opponents_per_table)]
            table = CulDeChouetteEnv(rules, config.players, opponents=opponents,
                                     learner_seat="random" if config.players > 1 else 0,
                                     max_turns=config.max_turns, reaction=config.reaction, shaping=config.shaping,
                                     random_starts=config.random_starts)
            return LeagueTable(Monitor(table), league)
        return build

    if config.vec_env == "subproc":
        # One process per environment, each with its own copy of the league (snapshots reach
        # them through env_method): the tables step on every core while the learner waits.
        envs: VecEnv = SubprocVecEnv([make(i) for i in range(config.n_envs)], start_method="fork")
    else:
        envs = DummyVecEnv([make(i) for i in range(config.n_envs)])
    envs.seed(segment_seed(config.seed, steps))
    return envs


# ---------------------------------------------------------------------- checkpoints


def new_model(config: TrainConfig, envs: Any, tensorboard: str | None = None) -> Any:
    """An untrained MaskablePPO of the config's network and PPO settings on `envs` (the
    training run's and the throughput bench's, so that the bench times the run's own loop)."""
    from sb3_contrib import MaskablePPO

    return MaskablePPO("MlpPolicy", envs, seed=config.seed, device="cpu", verbose=0,
                       tensorboard_log=tensorboard,
                       policy_kwargs={"net_arch": list(config.ppo.net_arch)},
                       **config.ppo.model_dump(exclude={"net_arch"}))


def start_model_problems(path: Path, rules: Any, players: int, net_arch: list[int]) -> list[str]:
    """What keeps a saved model from being `init_from`'s start at this table: a missing,
    unreadable or damaged file (model_bot.load_model says which), one trained for another
    ruleset or seat count, or another network's shape (found when the config is loaded, before
    a run folder is made)."""
    from agents.model_bot import ModelBot, ModelLoadError, load_model

    if not path.is_file():
        return [f"{path} is not a file: give a model.zip that scripts/train.py saved"]
    if path.suffix != ".zip":
        return [f"{path} is not a saved model (.zip): a champion's weights (.npz) hold no value head to go on from; "
                "give the model.zip of the run that made it"]
    run_meta = path.parent.parent.parent / "model.json"
    if path.parent.parent.name == "checkpoints" and not path.with_suffix(".json").exists() and run_meta.is_file():
        # A checkpoint keeps no model.json of its own (the run's says what they all are).
        return [f"{path} is a checkpoint's model, with no model.json beside it: copy {run_meta} there "
                f"(it says the table they were trained for)"]
    try:
        saved, meta = load_model(path)
        # ModelBot's own checks: observations and actions of this version's table (a model of an
        # older layout was a size-mismatch traceback once the run folder was made).
        ModelBot(saved, meta, name=str(path))
    except ModelLoadError as error:
        return [str(error)]
    if meta.get("ruleset") != rules.to_dict() or meta.get("players") != players:
        name = meta.get("ruleset", {}).get("name", "?") if isinstance(meta.get("ruleset"), dict) else "?"
        return [f"{path} was trained for {name} at {meta.get('players')} seats, and this config trains "
                f"{rules.name} at {players}: give a model of this table"]
    arch = list(saved.policy_kwargs.get("net_arch", []))
    if arch != net_arch:
        return [f"{path} is a network of hidden layers {arch}, and this config's ppo.net_arch is {net_arch}: "
                f"set ppo.net_arch: {arch}"]
    return []


def start_from(path: Path, envs: Any, config: TrainConfig, tensorboard: str | None = None) -> Any:
    """A new model of the config's settings (new_model) holding a saved model's weights, policy
    and value: the run goes on from what that model learnt, with this config's PPO settings,
    opponents and seeds. The config's load checked the model (start_model_problems); a file
    damaged since is load_model's ModelLoadError, one line."""
    from agents.model_bot import load_model

    model = new_model(config, envs, tensorboard)
    saved, _ = load_model(path)
    model.policy.load_state_dict(saved.policy.state_dict())
    return model


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def save_checkpoint(directory: Path, model: Any, steps: int, progress: dict[str, Any]) -> Path:
    """Writes checkpoint `steps` atomically: a checkpoint either exists whole or not at all."""
    final = directory / f"step_{steps:010d}"
    staging = directory / f".staging_{steps:010d}"
    staging.mkdir(parents=True, exist_ok=True)
    model.save(staging / "model.zip")
    state = {"format": CHECKPOINT_FORMAT, "steps": steps, "model_sha256": _digest(staging / "model.zip"),
             **progress}
    (staging / "state.json").write_text(json.dumps(state, allow_nan=False), encoding="utf-8")  # strict JSON
    if final.exists():
        import shutil

        shutil.rmtree(final)
    staging.rename(final)
    return final


class CorruptCheckpoint(ValueError):
    pass


def read_state(path: Path, checkpoint_format: str = CHECKPOINT_FORMAT) -> dict[str, Any]:
    """A checkpoint's state.json, checked to be of `checkpoint_format` (each back end its own)."""
    try:
        state = parse_json((path / "state.json").read_text(encoding="utf-8"))
    except UnicodeDecodeError:  # a damaged disk's bytes: a ValueError, not a JSONDecodeError
        raise CorruptCheckpoint(f"{path}: state.json unreadable (not UTF-8 text)") from None
    except (OSError, json.JSONDecodeError) as error:
        raise CorruptCheckpoint(f"{path}: state.json unreadable ({error})") from None
    if not isinstance(state, dict) or state.get("format") != checkpoint_format:
        raise CorruptCheckpoint(f"{path}: not a {checkpoint_format} checkpoint")
    if (problem := progress_problem(state, checkpoint_format)) is not None:
        raise CorruptCheckpoint(f"{path}: state.json {problem}")
    # A point of no game (a NaN win rate, written by an earlier RLlib back end) is no point:
    # report.json, strict JSON, cannot hold it.
    state["curve"] = [point for point in state.get("curve", [])
                      if all(math.isfinite(value) for value in point.values())]
    return state


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def progress_problem(state: dict[str, Any], checkpoint_format: str) -> str | None:
    """What in a checkpoint's state.json is not what a run writes (JSON of the wrong kinds: a
    hand edit, a damaged disk), in words; None where all is. Resuming from it was a ValueError
    or TypeError traceback ("steps": "lots", "curve": 5)."""
    if not _count(state.get("steps")):
        return f"has steps {shown(state.get('steps'))}, not a count"
    curve = state.get("curve", [])
    if not isinstance(curve, list) or not all(
            isinstance(point, dict) and _count(point.get("steps")) and ({"win_rate", "mean_turns"} & set(point))
            and all(_number(value) for value in point.values()) for point in curve):
        return f"has a curve {shown(curve)}, not a list of points (steps and a win rate or mean turns)"
    snapshots = state.get("snapshots")
    if checkpoint_format == CHECKPOINT_FORMAT:  # SB3's: the snapshots' paths
        if snapshots is not None and not (isinstance(snapshots, list) and all(isinstance(p, str) for p in snapshots)):
            return f"has snapshots {shown(snapshots)}, not a list of paths"
    elif snapshots is not None and not _count(snapshots):  # RLlib's: how many were frozen
        return f"has snapshots {shown(snapshots)}, not a count"
    outcomes = state.get("outcomes", [])  # RLlib's window of the learner's last games
    if not isinstance(outcomes, list) or not all(_number(o) and 0 <= o <= 1 for o in outcomes):
        return f"has outcomes {shown(outcomes)}, not a list of game outcomes (0 or 1)"
    return None


def read_checkpoint(path: Path) -> dict[str, Any]:
    state = read_state(path)
    model = path / "model.zip"
    if not model.exists() or _digest(model) != state.get("model_sha256"):
        raise CorruptCheckpoint(f"{path}: model.zip is missing or does not match its recorded checksum")
    return state


def read_loadable_checkpoint(path: Path) -> dict[str, Any]:
    """read_checkpoint, and its model read: a model.zip that matches its checksum but cannot be
    loaded (written damaged) is a corrupt checkpoint too, passed over for the one before (it
    stopped the run, with its intact predecessors beside it)."""
    from sb3_contrib import MaskablePPO

    from cdc_env.cli import by_ctrl_c, one_line

    state = read_checkpoint(path)
    try:
        MaskablePPO.load(path / "model.zip", device="cpu")  # without the tables: the model's own bytes
    except Exception as error:  # whatever unzipping and unpickling raise: it cannot be loaded
        if by_ctrl_c(error):
            raise
        raise CorruptCheckpoint(f"{path}: model.zip cannot be loaded ({type(error).__name__}: "
                                f"{one_line(str(error))})") from None
    return state


def latest_checkpoint(directory: Path, report: Any = print,
                      read: Any = read_checkpoint) -> tuple[Path, dict[str, Any]] | None:
    """The newest intact checkpoint; corrupt ones are reported and passed over, never loaded.
    `read` checks one checkpoint (the RLlib back end has its own) or raises CorruptCheckpoint."""
    if not directory.exists():
        return None
    for path in sorted(directory.glob("step_*"), reverse=True):
        try:
            return path, read(path)
        except CorruptCheckpoint as error:
            report(f"skipping a corrupt checkpoint: {error}")
    return None


# ---------------------------------------------------------------------- imitation


def teacher_samples(teacher: str, rules: Any, players: int, opponents: list[str], games: int,
                    encoder: Any, codec: Any, seed: int, reaction: str) -> dict[str, np.ndarray]:
    """The teacher's decisions in `games` games against the opponents: observations, masks,
    action indices, and the game's outcome for the teacher (+1 win, -1 loss, 0 unfinished).
    Forced decisions (a single legal option) are left out, as the environment skips them."""
    from agents.bots import make_bot
    from cdc_env.dice import SeededDice

    observations, masks, outcomes = [], [], []
    actions: list[int] = []
    rng = random.Random(seed)
    for game in range(games):
        seat_of_teacher = game % players
        bots = []
        for seat in range(players):
            name = teacher if seat == seat_of_teacher else rng.choice(opponents or [teacher])
            bots.append(make_bot(name, seed=f"{seed}:{game}:{seat}", reaction=reaction))
        state = GameState(rules, players, dice=SeededDice(seed * 1_000_003 + game))
        first = len(actions)
        while (decision := state.pending) is not None and state.turn_number <= 300:
            assert decision.seat is not None  # the seeded dice answer every chance moment
            action = bots[decision.seat].act(state, decision)
            if decision.seat == seat_of_teacher:
                mask = codec.mask(decision, decision.seat)
                if int(mask.sum()) > 1:
                    try:
                        index = codec.encode(action, decision, decision.seat)
                    except Exception:  # noqa: BLE001 - a choice the encoding cannot express
                        index = -1
                    if index >= 0 and mask[index]:
                        observations.append(encoder.encode(state, decision.seat))
                        masks.append(mask.astype(bool))
                        actions.append(index)
            state.apply_action(action)
        # A win of the teacher's side, as the environment's reward has it: its partner's at a
        # Doublette too (the seat alone taught the value head that a team's win was a loss).
        result = 0.0 if state.winner is None else (1.0 if seat_of_teacher in state.teams[state.winner] else -1.0)
        outcomes.extend([result] * (len(actions) - first))
    return {"observations": np.asarray(observations, np.float32), "masks": np.asarray(masks, bool),
            "actions": np.asarray(actions, np.int64), "outcomes": np.asarray(outcomes, np.float32)}


def clone_teacher(model: Any, samples: dict[str, np.ndarray], epochs: int, batch_size: int,
                  learning_rate: float, seed: int, label_smoothing: float = 0.0) -> list[float]:
    """Behaviour cloning into the model's policy (cross-entropy on the teacher's masked
    choices, `label_smoothing` of the target spread over every legal choice) and value head
    (the outcomes). Returns the mean loss of each epoch."""
    import torch

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    generator = np.random.default_rng(seed)
    count = len(samples["actions"])
    losses = []
    policy.set_training_mode(True)
    for _ in range(epochs):
        order = generator.permutation(count)
        total = 0.0
        for start in range(0, count, batch_size):
            batch = order[start:start + batch_size]
            observations = torch.as_tensor(samples["observations"][batch])
            actions = torch.as_tensor(samples["actions"][batch])
            masks = samples["masks"][batch]
            values, log_prob, _ = policy.evaluate_actions(observations, actions, action_masks=masks)
            outcomes = torch.as_tensor(samples["outcomes"][batch])
            imitation = -log_prob
            if label_smoothing:
                legal = torch.as_tensor(masks)
                log_probs = policy.get_distribution(observations, action_masks=masks).distribution.logits
                spread = -(log_probs * legal).sum(dim=1) / legal.sum(dim=1)
                imitation = (1 - label_smoothing) * imitation + label_smoothing * spread
            loss = imitation.mean() + 0.5 * ((values.flatten() - outcomes) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(batch)
        losses.append(total / max(count, 1))
    policy.set_training_mode(False)
    return losses
