"""The pieces of a training run that scripts/train.py puts together: its config, the league of
opponents (heuristic bots and frozen past selves), checkpoints that survive an interruption,
and the learning curve."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from cdc_env.actions import Action
from cdc_env.game import Decision, GameState

CHECKPOINT_FORMAT = "cdc-checkpoint/1"


class ConfigError(ValueError):
    pass


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PPOConfig(_Strict):
    learning_rate: float = Field(default=3e-4, gt=0)
    n_steps: int = Field(default=1024, ge=8)  # per environment, between updates
    batch_size: int = Field(default=256, ge=8)
    n_epochs: int = Field(default=5, ge=1)
    gamma: float = Field(default=0.997, gt=0, le=1)
    gae_lambda: float = Field(default=0.95, gt=0, le=1)
    clip_range: float = Field(default=0.2, gt=0)
    ent_coef: float = Field(default=0.01, ge=0)
    net_arch: list[int] = Field(default=[128, 128])


class LeagueConfig(_Strict):
    # Every `snapshot_every` steps a frozen copy of the learner joins the opponents; it meets
    # one in `self_play_fraction` of its games (the rest are against the bots).
    snapshot_every: int = Field(default=100_000, ge=1)
    max_snapshots: int = Field(default=4, ge=0)
    self_play_fraction: float = Field(default=0.3, ge=0, le=1)


class EvaluationConfig(_Strict):
    games: int = Field(default=4000, ge=0)
    opponents: list[str] = Field(default=["bold", "prudent"])
    # Fewer games against the other opponents than against the first (the strongest).
    games_others: int = Field(default=1000, ge=0)


class TrainConfig(_Strict):
    run_name: str
    ruleset: str = "classic"
    players: int = Field(default=2, ge=1, le=8)
    seed: int = 0
    total_timesteps: int = Field(default=500_000, ge=1)
    n_envs: int = Field(default=4, ge=1)
    max_turns: int = Field(default=300, ge=1)
    reaction: str = "human"
    shaping: float = Field(default=0.0, ge=0)
    opponents: list[str] = Field(default=["bold", "prudent"])
    league: LeagueConfig = Field(default_factory=LeagueConfig)
    ppo: PPOConfig = Field(default_factory=PPOConfig)
    checkpoint_every: int = Field(default=50_000, ge=1)
    evaluation: EvaluationConfig = Field(default_factory=EvaluationConfig)
    out_dir: str = "runs/{run_name}"

    @property
    def output(self) -> Path:
        return Path(self.out_dir.format(run_name=self.run_name))


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> TrainConfig:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"no training config at {path} (see configs/train/)") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a YAML mapping")
    data.update(overrides or {})
    try:
        return TrainConfig.model_validate(data)
    except ValidationError as error:
        problems = "\n".join(
            f"  - {'.'.join(map(str, e['loc']))}: "
            + ("unknown key" if e["type"] == "extra_forbidden" else f"{e['msg']} (got {e.get('input')!r})")
            for e in error.errors())
        raise ConfigError(f"training config {path} is not valid:\n{problems}") from None


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

        if self.max_snapshots == 0:
            return
        self.snapshot_paths.append(str(path))
        self.snapshots.append(ModelBot.load(path, reaction=self.reaction))
        if len(self.snapshots) > self.max_snapshots:
            self.snapshot_paths.pop(0)
            self.snapshots.pop(0)

    def pick(self, rng: random.Random) -> Any:
        if self.snapshots and rng.random() < self.self_play_fraction:
            return rng.choice(self.snapshots)
        return rng.choice(self.bots)


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


# ---------------------------------------------------------------------- checkpoints


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
    (staging / "state.json").write_text(json.dumps(state), encoding="utf-8")
    if final.exists():
        import shutil

        shutil.rmtree(final)
    staging.rename(final)
    return final


class CorruptCheckpoint(ValueError):
    pass


def read_checkpoint(path: Path) -> dict[str, Any]:
    try:
        state = json.loads((path / "state.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise CorruptCheckpoint(f"{path}: state.json unreadable ({error})") from None
    if state.get("format") != CHECKPOINT_FORMAT:
        raise CorruptCheckpoint(f"{path}: not a cdc checkpoint")
    model = path / "model.zip"
    if not model.exists() or _digest(model) != state.get("model_sha256"):
        raise CorruptCheckpoint(f"{path}: model.zip is missing or does not match its recorded checksum")
    return state


def latest_checkpoint(directory: Path, report: Any = print) -> tuple[Path, dict[str, Any]] | None:
    """The newest intact checkpoint; corrupt ones are reported and passed over, never loaded."""
    if not directory.exists():
        return None
    for path in sorted(directory.glob("step_*"), reverse=True):
        try:
            return path, read_checkpoint(path)
        except CorruptCheckpoint as error:
            report(f"skipping a corrupt checkpoint: {error}")
    return None
