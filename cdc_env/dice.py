"""Where chance outcomes come from when the caller does not give them itself.

The engine never draws a random number: at a chance moment it asks for dice. A state built
with a dice source answers those moments itself; without one, the caller applies `Dice`
actions (physical dice, replays, tests).
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable
from typing import Any, Protocol


class DiceExhaustedError(RuntimeError):
    pass


# Dice given in advance, at most: far more than any game rolls (a long one, a few thousand). Each
# copy of a state copies them (a searcher copies thousands), each save writes them all.
MAX_INJECTED = 100_000


class DiceSource(Protocol):
    def roll(self, count: int, sides: int) -> tuple[int, ...]: ...

    def to_json(self) -> dict[str, Any]: ...


class SeededDice:
    """Dice from a seeded generator; its whole state saves to JSON so a saved game goes on
    with the very dice it would have had."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        # What `randint(1, sides)` draws (the same bits, the same rejections), without its
        # layers of checks: dice are the engine's hottest chance path.
        bits = sides.bit_length()
        getrandbits = self._rng.getrandbits
        values = []
        for _ in range(count):
            value = getrandbits(bits)
            while value >= sides:
                value = getrandbits(bits)
            values.append(value + 1)
        return tuple(values)

    def copy(self) -> SeededDice:
        """A source that goes on with the very dice this one would give (its own generator)."""
        twin = SeededDice.__new__(SeededDice)
        twin.seed = self.seed
        twin._rng = random.Random(0)
        twin._rng.setstate(self._rng.getstate())
        return twin

    def to_json(self) -> dict[str, Any]:
        version, internal, gauss = self._rng.getstate()
        return {"kind": "seeded", "seed": self.seed, "state": [version, list(internal), gauss]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SeededDice:
        dice = cls(int(data["seed"]))
        version, internal, gauss = data["state"]
        dice._rng.setstate((version, tuple(internal), gauss))
        return dice


class InjectedDice:
    """Dice given in advance, in the order they will be needed (tests, replays of real games)."""

    def __init__(self, values: Iterable[int]) -> None:
        self._values: deque[int] = deque(values)

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        if len(self._values) < count:
            raise DiceExhaustedError(
                f"the injected dice ran out: {count} more needed, {len(self._values)} left"
            )
        values = tuple(self._values.popleft() for _ in range(count))
        if any(not 1 <= v <= sides for v in values):
            raise ValueError(f"injected dice {values} are not all within 1..{sides}")
        return values

    def copy(self) -> InjectedDice:
        return InjectedDice(self._values)

    @property
    def remaining(self) -> int:
        return len(self._values)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "injected", "values": list(self._values)}

    @classmethod
    def from_json(cls, data: dict[str, Any], faces: int = 6) -> InjectedDice:
        """Dice a save gives in advance, each a whole number from 1 to `faces` (the most faces a
        die of its game may have): a hand-edited 0, 7 or "x" is refused here, as the save is
        loaded, not at the roll it would fall on, in the middle of the game."""
        return cls(_dice_values(data["values"], faces, "injected"))


def _dice_values(values: object, faces: int, what: str) -> list[int]:
    """Dice a save lists (`what`: injected, or given again), each checked."""
    if not isinstance(values, list):
        raise ValueError(f"{what} dice: 'values' must be a list of dice, got {_kind(values)}")
    if len(values) > MAX_INJECTED:
        raise ValueError(f"{what} dice: {len(values)} given, at most {MAX_INJECTED} (more than a game rolls)")
    for index, value in enumerate(values):
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= faces:
            raise ValueError(f"{what} die {index + 1} is {_kind(value)}: each must be a whole number "
                             f"from 1 to {faces}")
    return values


class DiceAgain:
    """Dice already thrown, given again first, then a source's own: a game taken back to before
    an answer (GameState.before) throws the very dice that had followed it, so that taking an
    answer back never draws other dice. Never nested: dice again over dice again is one list."""

    def __init__(self, values: Iterable[int], then: DiceSource | None) -> None:
        given = list(values)
        if isinstance(then, DiceAgain):
            given, then = given + list(then.values), then.then
        self.values: deque[int] = deque(given)
        self.then: DiceSource | None = then

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        given: list[int] = []
        while self.values and len(given) < count:
            if not 1 <= self.values[0] <= sides:  # thrown for another kind of roll: the rest is the source's
                self.values.clear()
                break
            given.append(self.values.popleft())
        if len(given) < count:
            if self.then is None:
                raise DiceExhaustedError(f"the dice given again ran out: {count - len(given)} more needed")
            given += self.then.roll(count - len(given), sides)
        return tuple(given)

    def copy(self) -> DiceAgain:
        return DiceAgain(self.values, copy_dice(self.then))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "again", "values": list(self.values),
                "then": None if self.then is None else self.then.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any], faces: int = 6) -> DiceAgain:
        then = data["then"]
        if isinstance(then, dict) and then.get("kind") == "again":
            raise ValueError("dice given again are one list, never nested")
        return cls(_dice_values(data["values"], faces, "given again"), dice_from_json(then, faces))


def _shown(data: object) -> str:
    try:
        text = repr(data)
    except RecursionError:  # nested deeper than repr goes
        return f"(a {type(data).__name__} nested too deeply)"
    return text if len(text) <= 60 else text[:59] + "…"


def _kind(value: object) -> str:
    """A value read from a file, as an error quotes it: short, whatever it holds."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, int):
        return str(value) if abs(value) < 10**12 else "a number past 10**12"
    if isinstance(value, float | str):
        text = repr(value)
        return text if len(text) <= 30 else text[:29] + "…"
    return f"a {type(value).__name__}"  # a list or an object nested who knows how deep: not shown


def copy_dice(source: DiceSource | None) -> DiceSource | None:
    """A copy of a dice source that goes on with the same dice (by its `copy()`, or through its
    JSON form for a source that has none)."""
    if source is None:
        return None
    duplicate = getattr(source, "copy", None)
    return duplicate() if callable(duplicate) else dice_from_json(source.to_json())


def dice_from_json(data: dict[str, Any] | None, faces: int = 6) -> DiceSource | None:
    """A dice source from its JSON; `faces`: the most faces a die of its game may have."""
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("kind") not in ("seeded", "injected", "again"):
        raise ValueError(f"unknown dice source {_shown(data)}")
    if data["kind"] == "injected":
        return InjectedDice.from_json(data, faces)
    if data["kind"] == "again":
        return DiceAgain.from_json(data, faces)
    return SeededDice.from_json(data)
