"""A saved model playing a seat, like any other bot.

A model is two files: `NAME.zip` (sb3-contrib MaskablePPO, as saved by scripts/train.py) and
`NAME.json` beside it, which says the ruleset, the number of seats and the action encoding the
model was trained on — without them its observations and actions mean nothing.

Inference runs in numpy from the policy's weights (a few small matrix products), ten times
faster than `model.predict` for one observation, so tournaments of thousands of games stay
quick; any other architecture falls back to `predict`.
"""

from __future__ import annotations

import io
import json
import random
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from cdc_env.actions import Action, Shout
from cdc_env.cli import parse_json, write_atomic
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, reaction_model
from cdc_env.rules import Ruleset

MODEL_FORMAT = "cdc-model/1"
WEIGHTS_FORMAT = "cdc-weights/1"  # a champion: the actor's arrays (.npz) and this metadata


class ModelLoadError(ValueError):
    """A model that cannot be played: says which file and what is wrong with it."""


def metadata_path(model_path: Path) -> Path:
    return model_path.with_suffix(".json")


def write_metadata(model_path: Path, rules: Ruleset, players: int, max_turns: int,
                   stake_levels: list[float], extra: dict[str, Any] | None = None) -> Path:
    path = metadata_path(model_path)
    data = {"format": MODEL_FORMAT, "ruleset": rules.to_dict(), "players": players,
            "max_turns": max_turns, "stake_levels": list(stake_levels), **(extra or {})}
    write_atomic(path, json.dumps(data, indent=1))
    return path


def read_metadata(path: Path, expected_format: str, writer: str) -> dict[str, Any]:
    """The JSON beside a model or weights file, or a ModelLoadError saying what is wrong."""
    meta_path = metadata_path(path)
    try:
        meta = parse_json(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ModelLoadError(f"{meta_path} is missing: it says which ruleset and table {path.name} "
                             f"was trained for ({writer})") from None
    except OSError as error:
        raise ModelLoadError(f"{meta_path} cannot be read ({error.strerror}): it says which ruleset and table "
                             f"{path.name} was trained for ({writer})") from None
    except UnicodeDecodeError:
        raise ModelLoadError(f"{meta_path} is not UTF-8 text: restore it ({writer})") from None
    except json.JSONDecodeError as error:
        raise ModelLoadError(f"{meta_path} is not valid JSON ({error})") from None
    if not isinstance(meta, dict) or meta.get("format") != expected_format:
        raise ModelLoadError(f"{meta_path} is not a cdc model description (format "
                             f"{meta.get('format') if isinstance(meta, dict) else None!r}, "
                             f"expected {expected_format})")
    if (problem := metadata_problem(meta)) is not None:
        raise ModelLoadError(f"{meta_path} is damaged: {problem}; restore it ({writer})")
    return meta


def metadata_problem(meta: dict[str, Any]) -> str | None:
    """What is wrong with the keys a model's table is built from (ModelBot), or None: a file
    edited by hand or cut short fails here with the key's name, not later with a KeyError."""
    if not isinstance(meta.get("ruleset"), dict):
        return f"'ruleset' must be the ruleset's keys and values, got {shown(meta, 'ruleset')}"
    for key in ("players", "max_turns"):
        value = meta.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            return f"{key!r} must be a whole number of 1 or more, got {shown(meta, key)}"
    levels = meta.get("stake_levels")
    if not isinstance(levels, list) or not all(isinstance(x, int | float) and not isinstance(x, bool) for x in levels):
        return f"'stake_levels' must be a list of numbers, got {shown(meta, 'stake_levels')}"
    return None


def shown(meta: dict[str, Any], key: str) -> str:
    return json.dumps(meta[key])[:60] if key in meta else "nothing (the key is missing)"


def load_model(path: str | Path) -> tuple[Any, dict[str, Any]]:
    """The MaskablePPO model and its metadata, or a ModelLoadError saying what is wrong."""
    model_path = Path(path)
    if model_path.suffix != ".zip":
        model_path = model_path.with_suffix(".zip")
    if not model_path.exists():
        raise ModelLoadError(f"no model at {model_path}")
    meta = read_metadata(model_path, MODEL_FORMAT, "scripts/train.py writes it beside the model")
    try:
        from sb3_contrib import MaskablePPO

        model = MaskablePPO.load(model_path, device="cpu")
    except Exception as error:  # noqa: BLE001 - a damaged zip or policy.pth fails in many ways (pickle, torch, zip)
        raise ModelLoadError(f"{model_path} cannot be loaded (corrupt, or not a MaskablePPO model: "
                             f"{type(error).__name__}: {error}); train it again or restore it") from None
    return model, meta


def save_weights(model_path: str | Path, out: Path, extra: dict[str, Any] | None = None) -> Path:
    """Writes a saved model's actor as numpy arrays (`out`, .npz) with its metadata beside it
    (`out` .json, the model's own plus the observation size): what a champion ships as, a few
    hundred kB, played without torch."""
    model, meta = load_model(model_path)
    policy = NumpyPolicy.from_torch(model.policy)
    out.parent.mkdir(parents=True, exist_ok=True)
    arrays = io.BytesIO()  # written whole or not at all: a shipped champion is never left half-written
    np.savez_compressed(arrays, **policy.to_arrays())  # type: ignore[arg-type]  # numpy's stub: any **key could be allow_pickle
    write_atomic(out, arrays.getvalue())
    data = {**meta, **(extra or {}), "format": WEIGHTS_FORMAT, "observation_size": policy.input_size,
            "actions": int(policy.layers[-1][0].shape[1])}
    write_atomic(metadata_path(out), json.dumps(data, indent=1))
    return out


def load_weights(path: str | Path) -> tuple[NumpyPolicy, dict[str, Any]]:
    """The numpy actor of a weights file (.npz) and its metadata, or a ModelLoadError."""
    path = Path(path)
    if not path.exists():
        raise ModelLoadError(f"no weights file at {path}")
    meta = read_metadata(path, WEIGHTS_FORMAT, "scripts/train.py --publish writes it")
    if not zipfile.is_zipfile(path):  # np.load would read it as a pickle, and say to trust it
        raise ModelLoadError(f"{path} is not a weights file (not an .npz archive): restore it "
                             "(scripts/train.py --publish writes it)")
    try:
        with np.load(path, allow_pickle=False) as arrays:
            policy = NumpyPolicy.from_arrays(arrays)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as error:
        raise ModelLoadError(f"{path} cannot be read (corrupt, or not a weights file: {error}); restore it "
                             "(scripts/train.py --publish writes it)") from None
    if policy.input_size != meta.get("observation_size"):
        raise ModelLoadError(f"{path} reads {policy.input_size} values but its metadata says "
                             f"{meta.get('observation_size')}")
    return policy, meta


ACTIVATIONS = ("tanh", "relu", "none")


class NumpyPolicy:
    """The greedy (or sampled) masked action of an MLP actor, computed with numpy. Built from a
    MaskablePPO policy (`from_torch`) or from the arrays of a champion file (`from_arrays`)."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray, str]]) -> None:
        self.layers = layers

    @classmethod
    def from_torch(cls, policy: Any) -> NumpyPolicy:
        import torch

        layers: list[tuple[np.ndarray, np.ndarray, str]] = []
        modules = list(policy.mlp_extractor.policy_net) + [policy.action_net]
        pending: tuple[np.ndarray, np.ndarray] | None = None
        for module in modules:
            if isinstance(module, torch.nn.Linear):
                if pending is not None:
                    layers.append((*pending, "none"))
                pending = (module.weight.detach().numpy().T.copy(), module.bias.detach().numpy().copy())
            elif isinstance(module, (torch.nn.Tanh, torch.nn.ReLU)) and pending is not None:
                layers.append((*pending, "tanh" if isinstance(module, torch.nn.Tanh) else "relu"))
                pending = None
            else:
                raise TypeError(f"unsupported layer {module}")
        if pending is not None:
            layers.append((*pending, "none"))
        return cls(layers)

    def to_arrays(self) -> dict[str, np.ndarray]:
        arrays: dict[str, np.ndarray] = {}
        for index, (weight, bias, activation) in enumerate(self.layers):
            arrays[f"weight_{index}"] = weight.astype(np.float32)
            arrays[f"bias_{index}"] = bias.astype(np.float32)
            arrays[f"activation_{index}"] = np.array(activation)
        return arrays

    @classmethod
    def from_arrays(cls, arrays: Any) -> NumpyPolicy:
        layers: list[tuple[np.ndarray, np.ndarray, str]] = []
        index = 0
        while f"weight_{index}" in arrays:
            weight = np.asarray(arrays[f"weight_{index}"], np.float32)
            bias = np.asarray(arrays[f"bias_{index}"], np.float32)
            activation = str(arrays[f"activation_{index}"])
            # Checked here, so that damaged arrays fail when the file is loaded, not mid-game.
            inputs = layers[-1][0].shape[1] if layers else None
            if weight.ndim != 2 or bias.shape != (weight.shape[1],) or inputs not in (None, weight.shape[0]):
                after = f", after a layer of {inputs} outputs" if inputs is not None else ""
                raise ValueError(f"layer {index}'s arrays do not fit together (weight {weight.shape}, bias "
                                 f"{bias.shape}{after})")
            if activation not in ACTIVATIONS:
                raise ValueError(f"layer {index}'s activation {activation!r} is not one of {', '.join(ACTIVATIONS)}")
            layers.append((weight, bias, activation))
            index += 1
        if not layers:
            raise ValueError("no layers")
        return cls(layers)

    @property
    def input_size(self) -> int:
        return int(self.layers[0][0].shape[0])

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
                 reaction: str = DEFAULT_REACTION, deterministic: bool = True,
                 fast: NumpyPolicy | None = None, rules: Ruleset | None = None, source: str | None = None) -> None:
        # `model` is None for a weights file: its numpy arrays (`fast`) are all it plays with.
        # `rules` replaces the ruleset of the metadata: a champion plays its table's rules as
        # they are now (a rule fixed since it was trained changes no observation or action).
        # `source`: the file it was loaded from, as given, which a refusal names (every run's
        # model is a `model`).
        from cdc_env.env import raw_env

        self.name = name
        self.source = source or name
        self.model = model
        self.meta = meta
        rules = rules or Ruleset.from_dict(meta["ruleset"], source=f"{name} metadata")
        try:
            table = raw_env(rules, meta["players"], max_turns=meta["max_turns"], stake_levels=meta["stake_levels"])
        except ValueError as error:  # values of the right types that make no table (7 seats of a 2-4 game)
            raise ModelLoadError(f"model {name}: its metadata makes no table ({error}); restore it or "
                                 "train it again") from None
        try:
            self.fast: NumpyPolicy | None = fast or NumpyPolicy.from_torch(model.policy)
        except (AttributeError, TypeError):
            self.fast = None
        expected = getattr(getattr(model, "observation_space", None), "shape", None)
        if expected is None and self.fast is not None:
            expected = (self.fast.input_size,)
        if expected is not None and tuple(expected) != (table.encoder.size,):
            raise ModelLoadError(
                f"model {name} reads observations of {expected[0]} values, but its table ({meta['players']} seats "
                f"of {rules.name}) is encoded in {table.encoder.size}: its metadata was edited or damaged (restore "
                "it), or the observation layout changed since it was trained (docs/environment.md: train it again "
                "with scripts/train.py)")
        self.rules = rules
        self.players = meta["players"]
        self.encoder = table.encoder
        self.codec = table.codec
        actions = int(self.fast.layers[-1][0].shape[1]) if self.fast is not None else table.codec.size
        if actions != table.codec.size:
            raise ModelLoadError(
                f"model {name} chooses among {actions} actions, but this version of cdc has {table.codec.size} "
                "(the action encoding changed since it was trained, docs/environment.md): train it again")
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)
        self.deterministic = deterministic
        self._checked = False

    @classmethod
    def load(cls, path: str | Path, seed: int | str = 0, reaction: str = DEFAULT_REACTION,
             rules: Ruleset | None = None) -> ModelBot:
        if Path(path).suffix == ".npz":
            fast, meta = load_weights(path)
            return cls(None, meta, name=Path(path).stem, seed=seed, reaction=reaction, fast=fast, rules=rules,
                       source=str(path))
        model, meta = load_model(path)
        return cls(model, meta, name=Path(path).stem, seed=seed, reaction=reaction, source=str(path))

    def check_seats(self, rules: Ruleset, players: int) -> None:
        """Whether this model can play a table grown to `players` (a late friend joining), and
        of these rules: a model reads and acts for the table it was trained for only (`act`
        asks this at its first move; callers ask it before the game)."""
        if players != self.players:
            raise ModelLoadError(f"model {self.source} was trained for {self.players} seats, not {players}: play it "
                                 f"at a table of {self.players}, or give a model trained for {players} seats")
        if rules != self.rules:
            other = " with other rules (house rules, or the ruleset changed since)" if rules.name == self.rules.name \
                else ""
            raise ModelLoadError(f"model {self.source} was trained for ruleset {self.rules.name}, not {rules.name}"
                                 f"{other}: play it at its own table, or train one for this table")

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
            self.check_seats(state.rules, state.players)
            self._checked = True
        observation = self.encoder.encode(state, seat)
        mask = self.codec.mask(decision, seat).astype(bool)
        # A network trained against bold meets some moments seldom (another seat's sirop, a
        # rare race), and there chose Bévues a rule names in advance: 37 silent passes on
        # random's sirops in one game of `maison`, −370. They are left out of its choice.
        for bevue in decision.bevues:
            mask[self.codec.index_of(bevue, seat, decision)] = False
        action = self.codec.decode(self.choose_index(observation, mask), decision, seat)
        if isinstance(action, Shout):
            return Shout(action.phrase, self.reaction.sample(self.rng))
        return action
