"""The dice sources (cdc_env/dice.py) by hand: seeded dice draw what `randint` draws, their
copies and saves go on with the same dice, injected dice run out or refuse a face with one
clear line, and a saved source of an unknown kind is refused."""

from __future__ import annotations

import random
from typing import Any

import pytest

from cdc_env.dice import DiceExhaustedError, InjectedDice, SeededDice, copy_dice, dice_from_json


@pytest.mark.parametrize("sides", [2, 3, 6, 8])
def test_seeded_dice_draw_what_randint_draws(sides: int) -> None:
    dice = SeededDice(17)
    reference = random.Random(17)
    assert dice.roll(40, sides) == tuple(reference.randint(1, sides) for _ in range(40))
    six = random.Random(17)
    assert SeededDice(17).roll(3) == tuple(six.randint(1, 6) for _ in range(3))  # six sides unless told


def test_a_seeded_copy_and_a_saved_source_go_on_with_the_same_dice() -> None:
    dice = SeededDice(5)
    dice.roll(7, 6)
    twin = dice.copy()
    saved = dice.to_json()
    assert saved["kind"] == "seeded" and saved["seed"] == 5 and saved["state"][0] == 3
    loaded = dice_from_json(saved)
    assert isinstance(loaded, SeededDice) and loaded.seed == 5 and twin.seed == 5
    ahead = dice.roll(20, 6)
    assert twin.roll(20, 6) == ahead and loaded.roll(20, 6) == ahead  # each its own generator


def test_injected_dice_run_out_and_refuse_a_face_with_one_line() -> None:
    dice = InjectedDice([3, 5, 7])
    assert dice.remaining == 3 and dice.roll(1) == (3,) and dice.remaining == 2
    with pytest.raises(DiceExhaustedError) as error:
        dice.roll(3, 6)
    assert str(error.value) == "the injected dice ran out: 3 more needed, 2 left"
    with pytest.raises(ValueError) as refused:
        dice.roll(2, 6)
    assert str(refused.value) == "injected dice (5, 7) are not all within 1..6"
    assert InjectedDice([6, 1]).roll(2, 6) == (6, 1) and InjectedDice([8]).roll(1, 8) == (8,)
    with pytest.raises(ValueError, match=r"injected dice \(7,\) are not all within 1\.\.6"):
        InjectedDice([7]).roll(1)  # six sides unless told


def test_an_injected_copy_and_save_keep_what_is_left() -> None:
    dice = InjectedDice([1, 2, 3])
    dice.roll(1, 6)
    twin = dice.copy()
    assert dice.to_json() == {"kind": "injected", "values": [2, 3]}
    assert twin.roll(2, 6) == (2, 3) and dice.remaining == 2  # the copy has its own
    loaded = dice_from_json({"kind": "injected", "values": [4]})
    assert isinstance(loaded, InjectedDice) and loaded.roll(1, 6) == (4,)


class OnlyJson:
    """A source without `copy()`: copied through its JSON form."""

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        return (1,) * count

    def to_json(self) -> dict[str, Any]:
        return {"kind": "injected", "values": [6, 6]}


def test_copy_dice_copies_by_copy_or_through_json() -> None:
    assert copy_dice(None) is None
    seeded = SeededDice(3)
    twin = copy_dice(seeded)
    assert isinstance(twin, SeededDice) and twin is not seeded and twin.roll(5) == seeded.roll(5)
    through_json = copy_dice(OnlyJson())
    assert isinstance(through_json, InjectedDice) and through_json.roll(2) == (6, 6)


@pytest.mark.parametrize("data", [{"kind": "loaded"}, {"values": [1]}, ["seeded"], "seeded"])
def test_a_saved_source_of_no_known_kind_is_refused(data: Any) -> None:
    with pytest.raises(ValueError) as error:
        dice_from_json(data)
    assert str(error.value) == f"unknown dice source {data!r}"
    assert dice_from_json(None) is None


def test_injected_dice_are_checked_as_they_are_loaded_against_the_games_faces() -> None:
    # A save's dice were taken whatever they held, and failed at the roll they fell on.
    with pytest.raises(ValueError, match=r"injected die 2 is 7: each must be a whole number from 1 to 6"):
        dice_from_json({"kind": "injected", "values": [6, 7]})
    eight = dice_from_json({"kind": "injected", "values": [8]}, faces=8)  # eight seats: who starts
    assert isinstance(eight, InjectedDice) and eight.roll(1, 8) == (8,)
    with pytest.raises(ValueError) as long:  # a whole hand-edited section was quoted
        dice_from_json({"kind": "x" * 10_000})
    assert str(long.value) == "unknown dice source {'kind': '" + "x" * 49 + "…"
