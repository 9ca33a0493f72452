"""The `solo` ruleset (S): one player, 2-second shouts, self-bet, Grelottine and Civet before a
roll, and the rank and grade at the end."""

from __future__ import annotations

import pytest
from engine_helpers import PASS, ROLL, play, score_events

from cdc_env.actions import BirdBet, DeclareCivet, Dice, Roll, Shout, Sirop, UseGrelottine
from cdc_env.dice import InjectedDice
from cdc_env.game import GameError, GameState
from cdc_env.rules import load_ruleset
from cdc_env.solo_optimum import grade, rank_of, solo_result

PAS_MOU, GRELOTTE = "pas_mou_le_caillou", "grelotte_ca_picote"


def solo(dice: list[int], score: int = 0, items: dict[str, int] | None = None) -> GameState:
    setup = {"scores": [score], "items": [items or {}]}
    return GameState(load_ruleset("solo"), 1, dice=InjectedDice(dice), setup=setup)


def test_one_player_only() -> None:
    with pytest.raises(GameError, match="exactly 1 player, not 2"):
        GameState(load_ruleset("solo"), 2)
    state = solo([])
    assert state.pending is not None
    assert state.first_player == 0 and state.pending.kind == "turn_start"


# ------------------------------------------------------------------ the two-second window


def test_chouette_velute_in_time_scores() -> None:
    state = solo([1, 1, 2])
    play(state, ROLL)
    # Two buttons: the right one and the wrong one (no "Sans fin" alone).
    assert state.pending is not None
    assert state.pending.options == (PASS, Shout(PAS_MOU), Shout(GRELOTTE))
    play(state, Shout(PAS_MOU, 1999))
    assert state.scores == [8]


@pytest.mark.parametrize("answer", [Shout(PAS_MOU, 2001), Shout(GRELOTTE, 500), PASS])
def test_chouette_velute_late_or_wrong_loses_its_value(answer) -> None:
    state = solo([3, 3, 6])
    play(state, ROLL, answer)
    assert state.scores == [-72]
    assert [e["reason"] for e in score_events(state)] == ["chouette_velute_missed"]  # no Bévue


def test_suite_in_time_is_safe_late_loses_ten() -> None:
    state = solo([2, 3, 4, 4, 5, 6])
    play(state, ROLL, Shout(GRELOTTE, 1500))
    assert state.scores == [0]
    play(state, ROLL, Shout(GRELOTTE, 2500))
    assert state.scores == [-10]


def test_one_two_three_scores_the_velute_and_asks_for_the_suite() -> None:
    state = solo([1, 2, 3])
    play(state, ROLL, Shout(PAS_MOU, 300))  # the wrong button
    assert state.scores == [18 - 10]


# ------------------------------------------------------------------ the self-bet


@pytest.mark.parametrize(("bet", "die", "score"), [
    (2, 2, 25 + 60),  # right bet and a Cul de Chouette of 2
    (5, 2, 60),       # a wrong bet costs nothing
    (4, 4, 25 - 4),   # right bet, failed sirop: the bonus whatever the sirop gives
])
def test_self_bet_on_the_sirop_die(bet: int, die: int, score: int) -> None:
    state = solo([2, 2, 5, die])
    play(state, ROLL, Sirop())
    assert state.pending is not None
    assert state.pending.kind == "sirop_bet" and state.pending.seat == 0
    play(state, BirdBet(bet))
    assert state.scores == [score]


# ------------------------------------------------------------------ Grelottine and Civet


def test_grelottine_before_a_roll_draws_the_combination_and_stakes_the_maximum() -> None:
    # Score 100: the game draws the 5th combination, Chouette (33 %): stake 33. The roll
    # 5,5,2 is a Chouette (kept: 25) and makes it: 100 + 25 + 33.
    state = GameState(load_ruleset("solo"), 1, setup={"scores": [100], "items": [{"grelottine": 1}]})
    assert state.pending is not None
    assert UseGrelottine() in state.pending.options
    play(state, UseGrelottine())
    assert state.pending.is_chance and state.pending.sides == 5
    play(state, Dice((5,)))
    assert state.table.challenge == {"challenger": 0, "challenged": 0, "combination": "chouette", "stake": 33}
    assert state.pending.kind == "challenge_roll"
    play(state, Roll(), Dice((5, 5)), Dice((2,)), PASS)
    assert state.scores == [158] and state.items[0]["grelottine"] == 0


def test_grelottine_failed_loses_the_stake() -> None:
    # Draw 1: Chouette-Velute (8 % of 200 = 16); the roll 2,4,6 is a Velute: 200 + 72 - 16.
    state = solo([1, 2, 4, 6], score=200, items={"grelottine": 1})
    play(state, UseGrelottine(), Roll())
    assert state.scores == [256]


def test_grelottine_needs_a_stake_on_every_combination() -> None:
    # 8 % of 12 is 0: not usable; of 13, 1.
    for score, usable in ((12, False), (13, True)):
        pending = solo([], score=score, items={"grelottine": 1}).pending
        assert pending is not None and (UseGrelottine() in pending.options) == usable


def test_a_neant_gives_a_grelottine_and_nobody_challenges() -> None:
    state = solo([1, 3, 6])
    play(state, ROLL)
    assert state.items[0]["grelottine"] == 1
    assert state.pending is not None
    assert state.pending.kind == "turn_start" and UseGrelottine() not in state.pending.options  # score 0


def test_civet_before_a_roll() -> None:
    state = solo([2, 4, 6], items={"civet": 1})
    play(state, DeclareCivet("velute", 102))
    assert state.scores == [72 + 102]


def test_one_bet_per_roll() -> None:
    state = solo([1, 2, 4, 6], score=200, items={"grelottine": 1, "civet": 1})
    play(state, UseGrelottine())
    assert state.pending is not None
    assert state.pending.kind == "challenge_roll" and state.pending.staked is None


# ------------------------------------------------------------------ rank and grade


def test_grade_formula() -> None:
    # grade = min(20, 10 × expected / turns), to one decimal.
    assert grade(20, 19.4) == 9.7
    assert grade(10, 19.4) == 19.4
    assert grade(5, 19.4) == 20.0
    assert grade(40, 20.0) == 5.0
    ranks = load_ruleset("solo").solo.ranks
    assert [rank_of(g, ranks) for g in (20, 17, 16.9, 11, 9.7, 5, 4.9, 0)] == [
        "Légende", "Légende", "Maître", "Chevalier", "Écuyer", "Paysan", "Péquenaud", "Péquenaud"]


def test_solo_result_of_a_finished_game() -> None:
    state = solo([6, 6, 6], score=300)
    play(state, ROLL)
    assert state.is_over
    result = solo_result(state)
    assert result is not None
    assert result.turns == 1 and result.grade == 20.0 and result.rank == "Légende"
    assert result.expected == pytest.approx(19.4003, abs=1e-4)
