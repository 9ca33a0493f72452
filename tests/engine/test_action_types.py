"""Action fields are type-checked when an action is built: a bad field never reaches a game."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pytest

from cdc_env.actions import (
    Action,
    BetSum,
    BirdBet,
    ChallengeGrelottine,
    ChallengeSoufflette,
    DeclareCivet,
    Dice,
    IllegalActionError,
    Join,
    KeepDice,
    Roll,
    Shout,
    action_from_json,
    valid_onset,
)


@pytest.mark.parametrize("build, says", [
    (lambda: ChallengeSoufflette(target=1.0), "ChallengeSoufflette.target must be an integer, got 1.0 (float)"),
    (lambda: ChallengeSoufflette(True), "ChallengeSoufflette.target must be an integer, got True (bool)"),
    (lambda: BirdBet("6"), "BirdBet.face must be an integer, got '6' (str)"),
    (lambda: BetSum(12.5), "BetSum.total must be an integer"),
    (lambda: DeclareCivet("velute", 20.0), "DeclareCivet.stake must be an integer"),
    (lambda: DeclareCivet(5, 20), "DeclareCivet.combination must be a string, got 5 (int)"),
    (lambda: ChallengeGrelottine(None, 10), "ChallengeGrelottine.combination must be a string"),
    (lambda: Shout(["pas_mou_le_caillou"]), "Shout.phrase must be a string"),
    (lambda: Shout("pas_mou_le_caillou", "300"), "Shout.onset_ms must be a number of ms, or None"),
    (lambda: Shout("pas_mou_le_caillou", False), "Shout.onset_ms must be a number of ms, or None"),
    (lambda: KeepDice((1, 2.0)), "KeepDice.keep must be a sequence of integers"),
    (lambda: KeepDice("12"), "KeepDice.keep must be a sequence of integers"),
    (lambda: Dice((1, True, 3)), "Dice.values must be a sequence of integers"),
    (lambda: KeepDice(b"12"), "KeepDice.keep must be a sequence of integers, got b'12' (bytes)"),
    (lambda: Join("Ana", sung="yes"), "Join.sung must be true or false, got 'yes' (str)"),
    (lambda: Join("Ana", sung=1), "Join.sung must be true or false, got 1 (int)"),
])
def test_a_field_of_the_wrong_type_is_refused_at_construction(build: Callable[[], Action], says: str) -> None:
    with pytest.raises(IllegalActionError, match="build the action with the right type") as error:
        build()
    assert says in str(error.value)


def test_a_bad_field_in_a_saved_action_is_refused_too() -> None:
    with pytest.raises(IllegalActionError, match="target must be an integer"):
        action_from_json({"kind": "soufflette", "target": 1.0})


def test_right_types_pass_and_numpy_integers_become_ints() -> None:
    assert ChallengeSoufflette(np.int64(2)) == ChallengeSoufflette(2)
    assert type(ChallengeSoufflette(np.int64(2)).target) is int
    assert KeepDice([np.int32(5), 1]).keep == (1, 5)
    assert Dice([3, 4]).values == (3, 4)
    assert Shout("pas_mou_le_caillou", 250).onset_ms == 250 and Shout("sans_fin").onset_ms is None
    # A tuple of numpy integers (an action space's) is made of ints too; another Real a float.
    assert [type(v) for v in Dice((np.int64(3), np.int32(4))).values] == [int, int]
    for onset in (Fraction(1, 2), np.float32(0.5)):
        assert type(Shout("sans_fin", onset).onset_ms) is float and Shout("sans_fin", onset).onset_ms == 0.5
    assert Join("Ana").sung is False and Join("Ana", True).sung is True


def test_an_action_class_is_checked_from_its_first_action() -> None:
    # The checks of a class are built when its first action is; a class new to the game too.
    @dataclass(frozen=True)
    class Toy(Action):
        kind = "toy"
        count: int
        name: str = ""

    with pytest.raises(IllegalActionError, match=r"Toy.count must be an integer, got '2' \(str\)"):
        Toy("2")
    assert Toy(np.int64(2), "x").count == 2
    with pytest.raises(IllegalActionError, match="Toy.name must be a string"):
        Toy(2, 3)


def test_actions_print_and_save_as_their_kind_and_fields() -> None:
    assert [str(a) for a in (Roll(), Shout("sans_fin", 300.0), Dice((1, 2)))] == [
        "roll", "shout(phrase='sans_fin', onset_ms=300.0)", "dice(values=(1, 2))"]
    assert Dice((1, 2)).to_json() == {"kind": "dice", "values": [1, 2]}
    assert type(Dice((1, 2)).to_json()["values"]) is list and Roll().to_json() == {"kind": "roll"}
    assert action_from_json({"kind": "dice", "values": [1, 2]}) == Dice((1, 2))


@pytest.mark.parametrize("data, says", [
    ({"target": 1}, "an action must be an object with a 'kind', got {'target': 1}"),
    (["kind"], "an action must be an object with a 'kind', got ['kind']"),
    ({"kind": "nope"}, "unknown action kind 'nope'; known kinds: roll, pass, civet, bet_on_success, buy_cul, "
                       "sirop, bird_bet, shout, soufflette, keep, grelottine, boucliette, dice, beau_sirop, "
                       "couche_sirop, bet_sum, use_grelottine, join"),
    ({"kind": "roll", "seat": 1}, "action 'roll' has unknown fields ['seat']"),
    ({"kind": "bird_bet"}, "action 'bird_bet': BirdBet.__init__() missing 1 required positional argument: 'face'"),
    ({"kind": "shout", "phrase": ["sans_fin"]},
     "Shout.phrase must be a string, got ['sans_fin'] (list); build the action with the right type"),
])
def test_a_saved_action_that_cannot_be_read_says_why(data: object, says: str) -> None:
    with pytest.raises(IllegalActionError) as error:
        action_from_json(data)
    assert str(error.value) == says


def test_an_onset_is_a_finite_number_of_ms_from_0() -> None:
    assert [valid_onset(v) for v in (0, 0.0, 0.5, 250, 1e9)] == [True] * 5
    assert [valid_onset(v) for v in (-0.1, float("inf"), float("nan"), None, True)] == [False] * 5


def test_a_refused_action_leaves_the_game_unchanged() -> None:
    from cdc_env.dice import InjectedDice
    from cdc_env.game import GameState
    from cdc_env.rules import load_ruleset

    state = GameState(load_ruleset("classic"), 2, dice=InjectedDice([1, 6, 2, 2, 3]))
    before = state.to_json()
    with pytest.raises(IllegalActionError):
        state.apply_action(ChallengeSoufflette(target=1.0))
    assert state.to_json() == before
