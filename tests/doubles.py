"""Test doubles shared by the play and voice tests, and the loader of a script as a module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import yaml

from cdc_env.actions import Action, Pass, Roll, Shout
from cdc_env.game import RACE_PHRASES, Decision, GameState

if TYPE_CHECKING:
    from voice.session import PlaySession

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def script(name: str, as_name: str | None = None) -> ModuleType:
    """scripts/<name>.py as a module (scripts are no package), loaded afresh, under the name
    `as_name` (default script_<name>; a bench's worker processes find it by its own name)."""
    spec = importlib.util.spec_from_file_location(as_name or f"script_{name}", SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


class FixedBot:
    """Rolls, passes, and shouts the right phrase at a fixed onset."""

    def __init__(self, onset_ms: float) -> None:
        self.onset_ms = onset_ms

    def act(self, state: GameState, decision: Decision) -> Action:
        if decision.kind == "race":
            return Shout(RACE_PHRASES[decision.reason], self.onset_ms)
        return Roll() if decision.allows(Roll()) else Pass()


class FirstLegalAgent:
    """A researcher's agent brought as `doubles:FirstLegalAgent`: the first legal action, built
    with no arguments (the tournament gives it an `rng` of its own)."""

    def act(self, state: GameState, decision: Decision) -> Action:
        return decision.legal_actions()[0]


class OutOfTurnAgent:
    """A brought agent that does not play legal moves: it always passes, where passing is not
    allowed too."""

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed

    def act(self, state: GameState, decision: Decision) -> Action:
        return Pass()


def tiny_config(tmp_path: Path, name: str = "tiny", **changes: Any) -> Path:
    """A tiny training config in `tmp_path` (2 seats of classic, 256 steps, a tiny network):
    a run of a few seconds for the commands' tests. `changes` replace its keys."""
    config: dict[str, Any] = {
        "run_name": name, "ruleset": "classic", "players": 2, "seed": 3, "total_timesteps": 256,
        "n_envs": 2, "max_turns": 60, "opponents": ["simple"], "imitation": {"teacher": None},
        "league": {"snapshot_every": 128, "max_snapshots": 1, "self_play_fraction": 0.5},
        "ppo": {"n_steps": 64, "batch_size": 64, "n_epochs": 1, "net_arch": [16]},
        "checkpoint_every": 128, "evaluation": {"games": 2, "games_others": 2, "opponents": ["simple"]},
        "out_dir": str(tmp_path / name),
    }
    config.update(changes)
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


class Recorder:
    """A play session's view that keeps what it is told: each line said, each decision's kind asked."""

    def __init__(self) -> None:
        self.said: list[str] = []
        self.asked: list[str] = []

    def show(self, session: PlaySession) -> None:
        pass

    def say(self, text: str) -> None:
        self.said.append(text)

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        self.asked.append(decision.kind)

    def voice(self, seat: int, status: str) -> None:
        self.said.append(f"voice {seat}: {status}")
