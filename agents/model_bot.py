"""A saved model playing a seat, like any other bot.

A model is two files: `NAME.zip` (sb3-contrib MaskablePPO, as saved by scripts/train.py) and
`NAME.json` beside it, which says the ruleset, the number of seats and the action encoding the
model was trained on — without them its observations and actions mean nothing.

Inference runs in numpy from the policy's weights (a few small matrix products), ten times
faster than `model.predict` for one observation, so tournaments of thousands of games stay
quick; any other architecture falls back to `predict`.
"""

from __future__ import annotations

import json
import random
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from cdc_env.actions import Action, Shout
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, reaction_model
from cdc_env.rules import Ruleset

MODEL_FORMAT = "cdc-model/1"


class ModelLoadError(ValueError):
    """A model that cannot be played: says which file and what is wrong with it."""


def metadata_path(model_path: Path) -> Path:
    return model_path.with_suffix(".json")


def write_metadata(model_path: Path, rules: Ruleset, players: int, max_turns: int,
                   stake_levels: list[float], extra: dict[str, Any] | None = None) -> Path:
    path = metadata_path(model_path)
    data = {"format": MODEL_FORMAT, "ruleset": rules.to_dict(), "players": players,
            "max_turns": max_turns, "stake_levels": list(stake_levels), **(extra or {})}
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    return path


def load_model(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The MaskablePPO model and its metadata, or a ModelLoadError saying what is wrong."""
    model_path = Path(path)
    if model_path.suffix != ".zip":
        model_path = model_path.with_suffix(".zip")
    if not model_path.exists():
        raise ModelLoadError(f"no model at {model_path}")
    meta_path = metadata_path(model_path)
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(f"{meta_path} is missing: it says which ruleset and table {model_path.name} "
                             "was trained for (scripts/train.py writes it beside the model)") from None
    except json.JSONDecodeError as error:
        raise ModelLoadError(f"{meta_path} is not valid JSON ({error})") from None
    if meta.get("format") != MODEL_FORMAT:
        raise ModelLoadError(f"{meta_path} is not a cdc model description (format {meta.get('format')!r})")
    try:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(model_path, device="cpu")
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, RuntimeError, OSError) as error:
        raise ModelLoadError(f"{model_path} cannot be loaded (corrupt, or not a MaskablePPO model): {error}") from None
    return model, meta


class _NumpyPolicy:
    """The greedy (or sampled) masked action of an MLP actor, computed with numpy."""

    def __init__(self, policy: Any) -> None:
        import torch

        self.layers: list[tuple[np.ndarray, np.ndarray, str]] = []
        modules = list(policy.mlp_extractor.policy_net) + [policy.action_net]
        pending: tuple[np.ndarray, np.ndarray] | None = None
        for module in modules:
            if isinstance(module, torch.nn.Linear):
                if pending is not None:
                    self.layers.append((*pending, "none"))
                pending = (module.weight.detach().numpy().T.copy(), module.bias.detach().numpy().copy())
            elif isinstance(module, (torch.nn.Tanh, torch.nn.ReLU)) and pending is not None:
                self.layers.append((*pending, "tanh" if isinstance(module, torch.nn.Tanh) else "relu"))
                pending = None
            else:
                raise TypeError(f"unsupported layer {module}")
        if pending is not None:
            self.layers.append((*pending, "none"))

    def logits(self, observation: np.ndarray) -> np.ndarray:
        x = observation.astype(np.float32)
        for weight, bias, activation in self.layers:
            x = x @ weight + bias
            if activation == "tanh":
                x = np.tanh(x)
            elif activation == "relu":
                x = np.maximum(x, 0)
        return x


class ModelBot:
    """Plays a seat with a trained model; shouts with onsets from its reaction-time model."""

    def __init__(self, model: Any, meta: dict[str, Any], name: str = "model", seed: int | str = 0,
                 reaction: str = DEFAULT_REACTION, deterministic: bool = True) -> None:
        from cdc_env.env import raw_env

        self.name = name
        self.model = model
        self.meta = meta
        rules = Ruleset.from_dict(meta["ruleset"], source=f"{name} metadata")
        table = raw_env(rules, meta["players"], max_turns=meta["max_turns"], stake_levels=meta["stake_levels"])
        expected = getattr(getattr(model, "observation_space", None), "shape", None)
        if expected is not None and tuple(expected) != (table.encoder.size,):
            raise ModelLoadError(
                f"model {name} reads observations of {expected[0]} values, but this version of cdc "
                f"encodes {table.encoder.size} (the observation layout changed since it was trained, "
                "docs/environment.md): train it again with scripts/train.py")
        self.rules = rules
        self.players = meta["players"]
        self.encoder = table.encoder
        self.codec = table.codec
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)
        self.deterministic = deterministic
        self._checked = False
        try:
            self.fast: _NumpyPolicy | None = _NumpyPolicy(model.policy)
        except (AttributeError, TypeError):
            self.fast = None

    @classmethod
    def load(cls, path: str | Path, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> "ModelBot":
        model, meta = load_model(path)
        return cls(model, meta, name=Path(path).stem, seed=seed, reaction=reaction)

    def check_table(self, state: GameState) -> None:
        if state.players != self.players or state.rules != self.rules:
            raise ModelLoadError(
                f"model {self.name} was trained for {self.players} seats of ruleset {self.rules.name}, "
                f"not {state.players} seats of {state.rules.name}")

    def choose_index(self, observation: np.ndarray, mask: np.ndarray) -> int:
        if self.fast is None:
            index, _ = self.model.predict(observation, action_masks=mask, deterministic=self.deterministic)
            return int(index)
        logits = np.where(mask, self.fast.logits(observation), -np.inf)
        if self.deterministic:
            return int(np.argmax(logits))
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        return int(np.searchsorted(np.cumsum(probabilities), self.rng.random()))

    def act(self, state: GameState, decision: Decision) -> Action:
        seat = decision.seat
        assert seat is not None
        if not self._checked:
            self.check_table(state)
            self._checked = True
        observation = self.encoder.encode(state, seat)
        mask = self.codec.mask(decision, seat).astype(bool)
        action = self.codec.decode(self.choose_index(observation, mask), decision, seat)
        if isinstance(action, Shout):
            return Shout(action.phrase, self.reaction.sample(self.rng))
        return action
