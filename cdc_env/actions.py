"""Decisions a player (or the dice) can make, as small immutable values.

Every action has a JSON form `{"kind": ..., fields...}` so that a game's history can be saved,
replayed, and sent across a process or a network.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from numbers import Integral, Real
from typing import Any, ClassVar


class IllegalActionError(ValueError):
    """An action the current decision does not allow; the game state is left unchanged."""


def _integer(value: Any) -> int:
    if type(value) is int:
        return value
    # numpy integers (from an action space) are welcome; 1.0 and True are not seat numbers.
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError("an integer")
    return int(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a string")
    return value


def _onset(value: Any) -> float | None:
    # The value itself (finite, ≥ 0) is the decision's to judge: a wrong onset is refused
    # by apply_action with its own message.
    if value is not None and type(value) is not float and (isinstance(value, bool) or not isinstance(value, Real)):
        raise TypeError("a number of ms, or None")
    if value is None or isinstance(value, (int, float)):
        return value
    return float(value)  # another Real (a Fraction, a numpy float32): the field holds a float


def _integers(value: Any) -> tuple[int, ...]:
    if type(value) is tuple and all(type(v) is int for v in value):
        return value
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError("a sequence of integers")
    try:
        return tuple(_integer(v) for v in value)
    except TypeError:
        raise TypeError("a sequence of integers") from None


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise TypeError("true or false")
    return value


# Each field's check, by its annotation: it returns the value to keep or raises TypeError
# with what was expected.
_CHECKS: dict[str, Callable[[Any], Any]] = {
    "int": _integer, "str": _text, "float | None": _onset, "tuple[int, ...]": _integers,
    "bool": _flag,
}

_FIELD_CHECKS: dict[type, tuple[tuple[str, Callable[[Any], Any]], ...]] = {}


@dataclass(frozen=True)
class Action:
    kind: ClassVar[str] = ""

    def __post_init__(self) -> None:
        """A field of the wrong type is refused here, before it can reach a game."""
        cls = type(self)
        checks = _FIELD_CHECKS.get(cls)
        if checks is None:  # once per class: actions are built by the thousand in training
            checks = _FIELD_CHECKS[cls] = tuple((f.name, _CHECKS[str(f.type)]) for f in fields(cls))
        for name, check in checks:
            value = getattr(self, name)
            try:
                checked = check(value)
            except TypeError as expected:
                raise IllegalActionError(
                    f"{cls.__name__}.{name} must be {expected}, got {value!r} "
                    f"({type(value).__name__}); build the action with the right type"
                ) from None
            if checked is not value:
                object.__setattr__(self, name, checked)

    def to_json(self) -> dict[str, Any]:
        # Every action is saved in the game's history: no deep copies on this path.
        data: dict[str, Any] = {"kind": self.kind}
        for key in self.__dataclass_fields__:
            value = getattr(self, key)
            data[key] = list(value) if isinstance(value, tuple) else value
        return data

    def __str__(self) -> str:
        args = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))
        return f"{self.kind}({args})" if args else self.kind


@dataclass(frozen=True)
class Roll(Action):
    kind: ClassVar[str] = "roll"


@dataclass(frozen=True)
class Pass(Action):
    """Decline what is offered: no sirop, no bet, no shout, no challenge, keep one's Boucliette."""

    kind: ClassVar[str] = "pass"


@dataclass(frozen=True)
class DeclareCivet(Action):
    kind: ClassVar[str] = "civet"
    combination: str
    stake: int


@dataclass(frozen=True)
class BetOnSuccess(Action):
    """A bet that a Civet or a challenge succeeds."""

    kind: ClassVar[str] = "bet_on_success"


@dataclass(frozen=True)
class BuyCul(Action):
    kind: ClassVar[str] = "buy_cul"


@dataclass(frozen=True)
class Sirop(Action):
    kind: ClassVar[str] = "sirop"


@dataclass(frozen=True)
class BirdBet(Action):
    """A bet on the sirop die: Linotte 1, Alouette 2, Fauvette 3, Mouette 4, Bergeronnette 5,
    Chouette 6."""

    kind: ClassVar[str] = "bird_bet"
    face: int


BIRDS = ("linotte", "alouette", "fauvette", "mouette", "bergeronnette", "chouette")


@dataclass(frozen=True)
class BeauSirop(Action):
    """F: "Beau-Sirop !", a bet that the sirop succeeds (instead of naming the chouette's bird)."""

    kind: ClassVar[str] = "beau_sirop"


@dataclass(frozen=True)
class CoucheSirop(Action):
    """F: "Couche-Sirop !" or "File-Sirop !", the announced refusal to bet on a sirop."""

    kind: ClassVar[str] = "couche_sirop"


@dataclass(frozen=True)
class BetSum(Action):
    """F: a bet on the sum of the Bleu-Rouge relaunch ("Je relance de 15 !")."""

    kind: ClassVar[str] = "bet_sum"
    total: int


@dataclass(frozen=True)
class UseGrelottine(Action):
    """S: use one's Grelottine before one's roll (the game then draws the combination)."""

    kind: ClassVar[str] = "use_grelottine"


@dataclass(frozen=True)
class Shout(Action):
    """A shout in a race. `onset_ms` is when the shout began, in ms after the dice showed:
    the caller's clock (audio timestamps, key presses, a bot's reaction time)."""

    kind: ClassVar[str] = "shout"
    phrase: str
    onset_ms: float | None = None


@dataclass(frozen=True)
class ChallengeSoufflette(Action):
    kind: ClassVar[str] = "soufflette"
    target: int


@dataclass(frozen=True)
class KeepDice(Action):
    """Between Soufflette throws: the faces kept (the others are thrown again)."""

    kind: ClassVar[str] = "keep"
    keep: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "keep", tuple(sorted(self.keep)))


@dataclass(frozen=True)
class ChallengeGrelottine(Action):
    kind: ClassVar[str] = "grelottine"
    combination: str
    stake: int


@dataclass(frozen=True)
class UseBoucliette(Action):
    kind: ClassVar[str] = "boucliette"


@dataclass(frozen=True)
class Dice(Action):
    """A chance outcome: the faces that fell (or, for a random first player, 1..players)."""

    kind: ClassVar[str] = "dice"
    values: tuple[int, ...] = ()


@dataclass(frozen=True)
class Join(Action):
    """A player joins the game under way (the Chante-Sloubi house rule): the host's act, not
    an answer to the pending decision; kept in the history like any action so that a saved
    game replays it. `sung`: the newcomer sang the Sloubi to its end (Kize's « Sloubi réussi »)."""

    kind: ClassVar[str] = "join"
    name: str
    sung: bool = False


ACTION_TYPES: dict[str, type[Action]] = {
    cls.kind: cls
    for cls in (
        Roll, Pass, DeclareCivet, BetOnSuccess, BuyCul, Sirop, BirdBet, Shout,
        ChallengeSoufflette, KeepDice, ChallengeGrelottine, UseBoucliette, Dice,
        BeauSirop, CoucheSirop, BetSum, UseGrelottine, Join,
    )
}


def action_from_json(data: Any) -> Action:
    """Rebuild an action from its JSON form, with an error that says what is wrong."""
    if not isinstance(data, dict) or "kind" not in data:
        raise IllegalActionError(f"an action must be an object with a 'kind', got {data!r}")
    cls = ACTION_TYPES.get(data["kind"])
    if cls is None:
        raise IllegalActionError(
            f"unknown action kind {data['kind']!r}; known kinds: {', '.join(ACTION_TYPES)}"
        )
    names = {f.name for f in fields(cls)}
    extra = set(data) - names - {"kind"}
    if extra:
        raise IllegalActionError(f"action {data['kind']!r} has unknown fields {sorted(extra)}")
    # A JSON list stays a list: the sequence fields' check makes it a tuple, and any other field
    # refuses it naming what the file holds.
    args = {k: v for k, v in data.items() if k != "kind"}
    try:
        return cls(**args)
    except TypeError as error:
        raise IllegalActionError(f"action {data['kind']!r}: {error}") from None


# A shout's onset is at most this many ms (31 years): a whole number past a float's range made
# math.isfinite raise OverflowError, and a saved game holding one was a traceback on --resume.
MAX_ONSET_MS = 1e12


def valid_onset(onset_ms: float | None) -> bool:
    return (isinstance(onset_ms, (int, float)) and not isinstance(onset_ms, bool)
            and 0 <= onset_ms <= MAX_ONSET_MS)  # (NaN compares False: refused too)
