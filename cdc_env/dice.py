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

    @property
    def remaining(self) -> int:
        return len(self._values)

    def to_json(self) -> dict[str, Any]:
        return {"kind": "injected", "values": list(self._values)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> InjectedDice:
        return cls(data["values"])


def dice_from_json(data: dict[str, Any] | None) -> DiceSource | None:
    if data is None:
        return None
    kinds: dict[str, type[SeededDice] | type[InjectedDice]] = {"seeded": SeededDice, "injected": InjectedDice}
    if not isinstance(data, dict) or data.get("kind") not in kinds:
        raise ValueError(f"unknown dice source {data!r}")
    return kinds[data["kind"]].from_json(data)
