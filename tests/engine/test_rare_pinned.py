"""F's rare combinations (cdc_env/rulebook/rare.py) by hand, event by event, in `complete`: the
Bleu-Rouge's bets and relaunch (a Velute, a Jarret, a Pélican tied to the last die), the Néant
Soufflé's Mécréants tied to the die, the Flan claimed, the Raitournelle and the Patte de canard
that win on one's own dice, the Velutée alone and tied, and the thrower's ties when the
thrower does not win them (RULES.md, Races: complete only)."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, event, new_game, nobody_buys, play, ruleset, score
from engine_helpers import shout_event as shout

from cdc_env.actions import BetSum, Dice, Shout
from cdc_env.game import GameState

GRELOTTE = "grelotte_ca_picote"


def thrown(dice: list[int], players: int = 3, rules: Any = "complete", **setup: Any) -> GameState:
    """Seat 0 throws `dice` (then the dice after them), nobody buys the cul (those asked: a
    score short of its cost is not, without negative scores)."""
    state = new_game(rules, players, dice=dice, **setup)
    play(state, ROLL)
    nobody_buys(state)
    return state


def test_a_bleu_rouge_relaunch_pays_the_sum_and_its_velute_to_the_bettor() -> None:
    # 3,3,4: seat 0 scores 9; bets 3, 10, 12; the relaunch 1,4,5 (10) pays seat 1 36 + 2 × 10
    # and its Velute of 5 (50) is seat 1's, off its turn: capped.
    state = thrown([3, 3, 4, 1, 4, 5])
    start = len(state.log)
    play(state, BetSum(3), BetSum(10))
    assert state.table.sum_bets == {0: 3, 1: 10}
    play(state, BetSum(12))
    assert state.log[start:] == [
        event("sum_bet", seat=0, total=3),
        event("sum_bet", seat=1, total=10),
        event("sum_bet", seat=2, total=12),
        event("dice", reason="bleu_rouge", seat=0, values=[1, 4, 5]),
        event("relaunch", seat=0, dice=[1, 4, 5], total=10, winner=1, combination="velute"),
        score(1, 56, 56, "bleu_rouge_bet_won", True, total=10),
        event("combination", seat=1, dice=[1, 4, 5], combination="velute", value=50, races=[]),
        score(1, 50, 106, "velute", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_bleu_rouge_relaunch_of_no_combination_is_a_jarret() -> None:
    state = thrown([3, 3, 4, 1, 3, 6])
    play(state, BetSum(3), BetSum(10), BetSum(12))
    assert state.log[-3:] == [score(1, 56, 56, "bleu_rouge_bet_won", True, total=10),
                              event("jarret", seat=0, dice=[1, 3, 6]),
                              {"type": "turn_start", "turn": 2, "seat": 1}]


def test_a_pelican_tied_to_the_end_goes_to_the_bettor_of_18_even_silent() -> None:
    # The relaunch 6,6,6 (18): seat 0 bet 18 (36 + 36) but stays silent; seats 1 and 2 tie on
    # "Pélican !", "Passe-Montagne !" and "Zbradaraldjan !": F gives the 28 to "le joueur ayant
    # relancé de 18", among the tied or not, and dice only when nobody bet 18. Then the Cul de
    # Chouette is seat 0's own.
    state = thrown([3, 3, 4, 6, 6, 6])
    play(state, BetSum(18), BetSum(10), BetSum(12))
    start = len(state.log)
    assert state.table.dice == (6, 6, 6)
    play(state, PASS)
    for race in ("pelican", "passe_montagne", "zbradaraldjan"):
        play(state, Shout(race, 100.0), Shout(race, 150.0))
    races = [e for race in ("pelican", "passe_montagne", "zbradaraldjan") for e in (
        shout(1, race, race, 100.0), shout(2, race, race, 150.0),
        event("race", race=race, shouts={"1": 100.0, "2": 150.0}, tied=[1, 2]))]
    assert state.log[start:] == [
        *races,
        score(0, 28, 109, "pelican", True),
        event("combination", seat=0, dice=[6, 6, 6], combination="cul_de_chouette", value=100, races=[]),
        score(0, 100, 209, "cul_de_chouette"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_mecreants_tied_twice_throw_for_the_grelottine() -> None:
    # 1,4,6: seats 1 and 2 shout "Mécréant !" (100, 150), tie again on "Fort heureusement…"
    # (200, 250), then throw 3 and 1: the lowest, seat 2, takes the Grelottine.
    state = thrown([1, 4, 6])
    start = len(state.log)
    play(state, PASS, Shout("mecreant", 100.0), Shout("mecreant", 150.0))
    play(state, Shout("fort_heureusement", 200.0), Shout("fort_heureusement", 250.0), Dice((3,)), Dice((1,)))
    assert state.log[start:] == [
        shout(1, "neant_souffle", "mecreant", 100.0),
        shout(2, "neant_souffle", "mecreant", 150.0),
        event("race", race="neant_souffle", shouts={"1": 100.0, "2": 150.0}, tied=[1, 2], mecreants=[1, 2]),
        shout(1, "fort_heureusement", "fort_heureusement", 200.0),
        shout(2, "fort_heureusement", "fort_heureusement", 250.0),
        event("race", race="fort_heureusement", shouts={"1": 200.0, "2": 250.0}, tied=[1, 2]),
        event("dice", reason="neant_souffle_tie", seat=1, values=[3]),
        event("dice", reason="neant_souffle_tie", seat=2, values=[1]),
        event("item", seat=2, item="grelottine", change=1, reason="mecreant"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_mecreant_below_the_minimum_is_a_bevue_and_no_shout() -> None:
    # F without negative scores: a Grelottine needs 30 points; seat 1 (20) shouts first.
    state = thrown([1, 4, 6], rules=ruleset("complete", negative_scores=False), scores=[50, 20, 50])
    assert state.pending is not None and Shout("mecreant") not in state.pending.bevues  # seat 0 has 50
    play(state, PASS)
    assert state.pending is not None and Shout("mecreant") in state.pending.bevues  # seat 1 has 20
    assert Shout("je_suis_un_miserable") not in state.pending.bevues
    play(state, Shout("mecreant", 100.0), Shout("je_suis_un_miserable", 150.0))
    assert state.log[-3:-1] == [
        score(1, -10, 10, "bevue", why="shouted Mécréant below the minimum score"),
        event("race", race="neant_souffle", shouts={"2": 150.0}, tied=[2], mecreants=[]),
    ]


def test_a_flan_claimed_with_a_kadoc_is_given() -> None:
    state = thrown([2, 5, 6], players=2)
    play(state, Shout("a_kadoc", 100.0))
    assert state.log[-2] == event("item", seat=0, item="flan", change=1, reason="a_kadoc")


def test_a_raitournelle_and_a_patte_de_canard_are_ones_own_dice_and_may_win() -> None:
    # 330 + the Artichette's Chouette of 4 (16), or + the Suite-Velutée's Velute of 3 (18),
    # from one's own dice on one's own turn: past 343, a win.
    artichette = thrown([3, 4, 4], players=2, scores=[330, 0])
    play(artichette, Shout("raitournelle", 100.0), PASS)
    assert artichette.log[-2:] == [score(0, 16, 346, "raitournelle"), event("win", seat=0, score=346)]
    velutee = thrown([1, 2, 3], players=2, scores=[330, 0])
    play(velutee, Shout(GRELOTTE, 100.0), Shout(GRELOTTE, 500.0), Shout("patte_de_canard", 100.0), PASS)
    assert velutee.log[-2:] == [score(0, 18, 348, "patte_de_canard"), event("win", seat=0, score=348)]


def suite_velutee(rules: Any = "complete", **setup: Any) -> GameState:
    """1,2,3 at 3 seats, the Suite race shouted in order (seat 2 last, −10); then the
    Suite-Velutée race is asked; the chouettes thrown again would be 2,5."""
    state = thrown([1, 2, 3, 2, 5], rules=rules, **setup)
    play(state, Shout(GRELOTTE, 100.0), Shout(GRELOTTE, 500.0), Shout(GRELOTTE, 900.0))
    return state


def test_the_first_velutee_throws_the_chouettes_again_for_itself() -> None:
    state = suite_velutee()
    start = len(state.log)
    play(state, PASS, Shout("velutee", 100.0), PASS)
    assert state.log[start:] == [
        shout(1, "suite_velutee", "velutee", 100.0),
        event("race", race="suite_velutee", shouts={"1": 100.0}, tied=[1]),
        event("dice", reason="velutee", seat=1, values=[2, 5]),
        event("combination", seat=1, dice=[2, 5, 3], combination="velute", value=50, races=[]),
        score(1, 50, 50, "velute", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_two_tied_velutees_take_the_new_combination_from_the_thrower() -> None:
    state = suite_velutee(scores=[100, 0, 0])
    start = len(state.log)
    play(state, PASS, Shout("velutee", 100.0), Shout("velutee", 150.0))
    assert state.log[start + 2:] == [
        event("race", race="suite_velutee", shouts={"1": 100.0, "2": 150.0}, tied=[1, 2]),
        event("dice", reason="velutee", seat=None, values=[2, 5]),
        event("velutee_tie", seats=[1, 2], dice=[2, 5, 3], combination="velute", value=50),
        score(0, -50, 50, "velutee_tie", combination="velute"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_thrower_who_does_not_win_ties_wins_only_alone() -> None:
    rules = ruleset("complete", suite_velutee={"thrower_wins_ties": False})
    alone = suite_velutee(rules)
    play(alone, Shout("patte_de_canard", 100.0), PASS, PASS)
    assert alone.scores == [18, 0, -10]
    tied = suite_velutee(rules)
    play(tied, Shout("patte_de_canard", 100.0), Shout("velutee", 150.0), PASS)
    assert tied.log[-5:-3] == [event("race", race="suite_velutee", shouts={"0": 100.0, "1": 150.0}, tied=[0, 1]),
                               event("dice", reason="velutee", seat=1, values=[2, 5])]
    assert tied.scores == [0, 50, -10]
