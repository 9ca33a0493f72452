"""Action fields are type-checked when an action is built: a bad field never reaches a game."""

from __future__ import annotations

from collections.abc import Callable

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
    KeepDice,
    Shout,
    action_from_json,
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


def test_a_refused_action_leaves_the_game_unchanged() -> None:
    from cdc_env.dice import InjectedDice
    from cdc_env.game import GameState
    from cdc_env.rules import load_ruleset

    state = GameState(load_ruleset("classic"), 2, dice=InjectedDice([1, 6, 2, 2, 3]))
    before = state.to_json()
    with pytest.raises(IllegalActionError):
        state.apply_action(ChallengeSoufflette(target=1.0))
    assert state.to_json() == before
