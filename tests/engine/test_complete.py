"""The `complete` ruleset (F): each rule with hand-worked numbers and injected dice."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import Counter

import pytest
from engine_helpers import PASS, ROLL, new_game, nobody_buys, play, ruleset, score_events

from cdc_env.actions import (
    BeauSirop,
    BetSum,
    BirdBet,
    BuyCul,
    ChallengeSoufflette,
    CoucheSirop,
    DeclareCivet,
    IllegalActionError,
    KeepDice,
    Shout,
    Sirop,
)
from cdc_env.combinations import classify
from cdc_env.rules import load_ruleset

PAS_MOU, GRELOTTE = "pas_mou_le_caillou", "grelotte_ca_picote"
ALL_ROLLS = list(itertools.product(range(1, 7), repeat=3))


def events(state, type_: str) -> list[dict]:
    return [e for e in state.log if e["type"] == type_]


def after_roll(dice: list[int], players: int = 3, rules="complete", scores=None, items=None):
    """Seat 0 throws `dice` (then the dice that follow); nobody buys the cul (those asked: a
    score short of its cost is not, without negative scores)."""
    state = new_game(rules, players, dice=dice, scores=scores, items=items)
    play(state, ROLL)
    nobody_buys(state)
    return state


# ------------------------------------------------------------------ the table


def test_every_roll_is_classified_and_order_never_matters() -> None:
    rules = load_ruleset("complete")
    names: Counter[str] = Counter()
    for dice in ALL_ROLLS:
        combination = classify(dice, rules)
        names[combination.name] += 1
        for permutation in itertools.permutations(dice):
            assert classify(permutation, rules) == combination
    # 216 ordered rolls: 6 triples; 3 sets of three different faces × 6 orders for each of
    # Suite-Velutée, Soufflette, Flan, Néant Soufflé; 3 orders for Artichette and Bleu-Rouge.
    assert names == {"cul_de_chouette": 6, "suite_velutee": 6, "artichette": 3, "bleu_rouge": 3,
                     "chouette_velute": 9, "velute": 30, "chouette": 75, "suite": 18,
                     "soufflette": 6, "flan": 6, "neant_souffle": 6, "neant": 48}


@pytest.mark.parametrize(("dice", "name", "value", "races"), [
    ((3, 1, 2), "suite_velutee", 18, ("suite", "suite_velutee")),
    ((4, 3, 4), "artichette", 16, ("artichette",)),
    ((3, 4, 3), "bleu_rouge", 9, ()),
    ((6, 5, 2), "flan", 0, ()),
    ((1, 4, 6), "neant_souffle", 0, ("neant_souffle",)),
    ((3, 3, 6), "chouette_velute", 72, ("chouette_velute",)),
    ((1, 3, 6), "neant", 0, ()),
])
def test_complete_rows(dice, name, value, races) -> None:
    combination = classify(dice, load_ruleset("complete"))
    assert (combination.name, combination.value, combination.races) == (name, value, races)


def test_rules_table_cli_classifies_the_216_rolls_of_complete() -> None:
    out = subprocess.run([sys.executable, "-m", "cdc_env", "rules-table", "--ruleset", "complete"],
                         capture_output=True, text=True, check=True).stdout
    table = json.loads(out)
    assert [row["dice"] for row in table] == [list(d) for d in ALL_ROLLS]
    assert len({row["combination"] for row in table}) == 12


def test_complete_takes_fs_tie_rules() -> None:
    rules = load_ruleset("complete")
    assert rules.races.chouette_velute_tie == "subtract"
    assert rules.races.suite_tie_die == "highest"
    state = after_roll([1, 1, 2])
    play(state, Shout(PAS_MOU, 500), Shout(PAS_MOU, 550), Shout(PAS_MOU, 900))
    assert state.scores == [-8, -8, 0]


# ------------------------------------------------------------------ Suite-Velutée


def suite_velutee_game(extra: list[int] | None = None):
    """Seat 0 throws 1,2,3; the Suite race is run first: seat 2 is last and loses 10."""
    state = after_roll([1, 2, 3, *(extra or [])])
    assert state.pending.reason == "suite"
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 500), Shout(GRELOTTE, 900))
    assert state.pending.reason == "suite_velutee"
    return state


def test_suite_velutee_race_asks_the_thrower_and_the_others_different_phrases() -> None:
    state = suite_velutee_game()
    assert state.pending.answers == ("patte_de_canard",)
    play(state, PASS)
    assert state.pending.answers == ("velutee",)


def test_patte_de_canard_validates_the_velute_and_wins_ties() -> None:
    # The thrower at 400, a "Velutée !" at 450: within 100 ms, the thrower has a chouette.
    state = suite_velutee_game()
    play(state, Shout("patte_de_canard", 400), Shout("velutee", 450), PASS)
    assert state.scores == [18, 0, -10]
    assert score_events(state)[-1]["reason"] == "patte_de_canard"


def test_first_velutee_rerolls_the_chouettes_and_takes_the_combination() -> None:
    # Seat 1 first (200 ms); new chouettes 5,5 with the cul 3: a Chouette of 5, which seat 1
    # keeps (it may sirop it: the combination is theirs): 25, capped like any gain off turn.
    state = suite_velutee_game(extra=[5, 5])
    play(state, Shout("patte_de_canard", 600), Shout("velutee", 200), PASS)
    assert state.pending.kind == "sirop" and state.pending.seat == 1
    play(state, PASS)
    assert state.scores == [0, 25, -10]
    assert events(state, "combination")[-1]["dice"] == [5, 5, 3]


def test_two_tied_velutees_subtract_the_points_from_the_thrower() -> None:
    # Seats 1 and 2 tie (300, 350): they re-roll 6,6; with the cul 3 a Chouette of 6, and
    # only its points, 36, are subtracted from the thrower.
    state = suite_velutee_game(extra=[6, 6])
    play(state, Shout("patte_de_canard", 500), Shout("velutee", 300), Shout("velutee", 350))
    assert state.scores == [-36, 0, -10]
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_nobody_shouts_the_velute_is_not_validated() -> None:
    state = suite_velutee_game()
    play(state, PASS, PASS, PASS)
    assert state.scores == [0, 0, -10]


def test_the_others_phrase_from_the_thrower_is_a_bevue() -> None:
    state = suite_velutee_game()
    play(state, Shout("velutee", 100), PASS, PASS)
    assert state.scores == [-10, 0, -10]


def test_a_suite_velutee_is_a_velute_for_a_civet() -> None:
    state = new_game("complete", 2, dice=[1, 2, 3], items=[{"civet": 1}, {}], scores=[100, 0])
    play(state, DeclareCivet("velute", 10))
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 500), PASS, PASS)
    assert state.scores == [100 + 10, -10]


# ------------------------------------------------------------------ Artichette


@pytest.mark.parametrize(("thrower_ms", "other_ms", "scores", "reason"), [
    (500, 700, [16, 0, 0], "raitournelle"),
    (500, 300, [-16, 0, 0], "artichette"),
    (500, 450, [16, 0, 0], "raitournelle"),  # a tie: the thrower has priority
])
def test_raitournelle_against_artichette(thrower_ms, other_ms, scores, reason) -> None:
    state = after_roll([4, 3, 4])
    assert state.pending.reason == "artichette"  # no sirop on an Artichette
    play(state, Shout("raitournelle", thrower_ms), Shout("artichette", other_ms), PASS)
    assert state.scores == scores
    assert score_events(state)[-1]["reason"] == reason


def test_artichette_nobody_shouts_nothing() -> None:
    state = after_roll([4, 3, 4])
    play(state, PASS, PASS, PASS)
    assert state.scores == [0, 0, 0]


# ------------------------------------------------------------------ Bleu-Rouge and Pélican


def bleu_rouge_game(relaunch: list[int], bets=(10, 11, 12), extra: list[int] | None = None):
    """Seat 0 throws 3,4,3 (a Chouette of 3: 9), the three seats bet `bets`, the relaunch."""
    state = after_roll([3, 4, 3, *relaunch, *(extra or [])])
    assert state.scores == [9, 0, 0]
    for seat, total in enumerate(bets):
        assert state.pending.kind == "bleu_rouge_bet" and state.pending.seat == seat
        play(state, BetSum(total))
    return state


def test_each_player_bets_a_different_sum() -> None:
    state = after_roll([3, 4, 3])
    play(state, BetSum(10))
    assert BetSum(10) not in state.pending.options and len(state.pending.options) == 15
    with pytest.raises(IllegalActionError):
        state.apply_action(BetSum(10))
    assert PASS not in state.pending.options  # the bet is compulsory


def test_right_sum_wins_36_plus_twice_the_sum_plus_the_combination() -> None:
    # Relaunch 2,3,5 = 10, seat 0's bet: 36 + 2 × 10 = 56, and the Velute of 5 (50) is theirs.
    state = bleu_rouge_game([2, 3, 5])
    assert state.scores == [9 + 56 + 50, 0, 0]
    assert [e["reason"] for e in score_events(state)] == ["bleu_rouge", "bleu_rouge_bet_won", "velute"]


def test_nobody_finds_the_sum_no_combination_applies() -> None:
    state = bleu_rouge_game([4, 4, 4], bets=(10, 11, 9))  # 12: the Cul de Chouette is lost
    assert state.scores == [9, 0, 0]
    assert events(state, "relaunch")[0]["winner"] is None


def test_a_neant_relaunch_is_a_jarret_and_gives_no_grelottine() -> None:
    state = bleu_rouge_game([1, 3, 6])  # 10: seat 0 wins 56; the Néant is a Jarret
    assert state.scores == [9 + 56, 0, 0]
    assert events(state, "jarret") and state.items[0]["grelottine"] == 0


def test_pelican_first_shout_wins_28_and_the_18_bettor_the_cul_de_chouette() -> None:
    # Relaunch 6,6,6 = 18, seat 2's bet: 36 + 36; seat 1 shouts "Pélican !" first: 28; then
    # the Cul de Chouette of 6 (100) is seat 2's (capped as any gain off turn: 172 < 332).
    state = bleu_rouge_game([6, 6, 6], bets=(10, 11, 18))
    assert state.pending.reason == "pelican"
    play(state, PASS, Shout("pelican", 300), Shout("pelican", 600))
    assert state.scores == [9, 28, 172]


def test_pelican_the_200_points_of_f() -> None:
    state = bleu_rouge_game([6, 6, 6], bets=(10, 11, 18))
    play(state, PASS, PASS, Shout("pelican", 300))
    assert state.scores == [9, 0, 36 + 36 + 100 + 28]


def test_pelican_ties_go_to_passe_montagne_zbradaraldjan_then_the_18_bettor() -> None:
    state = bleu_rouge_game([6, 6, 6], bets=(10, 11, 18))
    play(state, PASS, Shout("pelican", 300), Shout("pelican", 350))
    assert state.pending.reason == "passe_montagne"
    play(state, Shout("passe_montagne", 400), Shout("passe_montagne", 420))
    assert state.pending.reason == "zbradaraldjan"
    play(state, Shout("zbradaraldjan", 500), Shout("zbradaraldjan", 510))
    assert state.scores == [9, 0, 72 + 28 + 100]


def test_pelican_tie_goes_to_the_18_bettor_even_silent() -> None:
    # Seat 0 bet 18 and stays silent; seats 1 and 2 tie three times: F gives the 28 to "le
    # joueur ayant relancé de 18", whether among the tied or not.
    state = bleu_rouge_game([6, 6, 6], bets=(18, 11, 12), extra=[2, 5])
    play(state, PASS, Shout("pelican", 300), Shout("pelican", 350))
    play(state, Shout("passe_montagne", 400), Shout("passe_montagne", 420))
    play(state, PASS, PASS)  # nobody shouts "Zbradaraldjan !": still tied
    assert state.scores == [9 + 72 + 28 + 100, 0, 0]


def test_pelican_tie_without_an_18_bettor_lowest_die_wins() -> None:
    # Nobody bet 18: seats 1 and 2 tie three times, then throw a die each: 2 and 5, seat 1.
    state = bleu_rouge_game([6, 6, 6], bets=(10, 11, 12), extra=[2, 5])
    play(state, PASS, Shout("pelican", 300), Shout("pelican", 350))
    play(state, Shout("passe_montagne", 400), Shout("passe_montagne", 420))
    play(state, PASS, PASS)
    assert [(e["seat"], e["values"]) for e in state.log if e.get("reason") == "pelican_tie"] == [(1, [2]), (2, [5])]
    assert state.scores[1:] == [28, 0]


def test_passe_montagne_decides_a_tie() -> None:
    state = bleu_rouge_game([6, 6, 6], bets=(10, 11, 18))
    play(state, PASS, Shout("pelican", 300), Shout("pelican", 350))
    play(state, Shout("passe_montagne", 400), Shout("passe_montagne", 900))
    assert state.scores == [9, 28, 172]


# ------------------------------------------------------------------ Néant Soufflé


def neant_souffle_game(shouts, extra=None, scores=None, rules="complete"):
    state = after_roll([1, 4, 6, *(extra or [])], scores=scores, rules=rules)
    assert state.pending.reason == "neant_souffle"
    assert set(state.pending.answers) == {"mecreant", "je_suis_un_miserable"}
    play(state, *shouts)
    return state


def grelottines(state) -> list[int]:
    return [holding["grelottine"] for holding in state.items]


def test_first_mecreant_takes_a_grelottine() -> None:
    state = neant_souffle_game([Shout("je_suis_un_miserable", 500), Shout("mecreant", 300), PASS])
    assert grelottines(state) == [0, 1, 0]


def test_a_first_miserable_means_nobody_takes_it() -> None:
    state = neant_souffle_game([PASS, Shout("mecreant", 400), Shout("je_suis_un_miserable", 200)])
    assert grelottines(state) == [0, 0, 0]


def test_mecreant_wins_a_tie_against_miserable() -> None:
    state = neant_souffle_game([PASS, Shout("mecreant", 350), Shout("je_suis_un_miserable", 300)])
    assert grelottines(state) == [0, 1, 0]


def test_tied_mecreants_say_fort_heureusement_then_roll_lowest() -> None:
    # The thrower (seat 0) and seat 2 tie; tie again on "Fort heureusement…"; dice 4 and 2.
    state = neant_souffle_game([Shout("mecreant", 300), PASS, Shout("mecreant", 320)], extra=[4, 2])
    assert state.pending.reason == "fort_heureusement"
    play(state, Shout("fort_heureusement", 400), Shout("fort_heureusement", 450))
    assert grelottines(state) == [0, 0, 1]


def test_fort_heureusement_decides() -> None:
    state = neant_souffle_game([Shout("mecreant", 300), PASS, Shout("mecreant", 320)])
    play(state, Shout("fort_heureusement", 800), Shout("fort_heureusement", 450))
    assert grelottines(state) == [0, 0, 1]


def test_neant_souffle_is_no_neant_nothing_follows_it() -> None:
    state = new_game("complete", 2, dice=[1, 4, 6], items=[{}, {"grelottine": 1}], scores=[100, 100])
    play(state, ROLL, PASS, PASS, PASS)
    assert grelottines(state) == [0, 1]
    assert state.pending is not None
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


# ------------------------------------------------------------------ Flan


def test_a_kadoc_gives_a_flan() -> None:
    state = after_roll([6, 5, 2])
    assert state.pending.kind == "claim" and state.pending.reason == "a_kadoc"
    play(state, Shout("a_kadoc", 1200))
    assert state.items[0]["flan"] == 1 and state.scores == [0, 0, 0]


def test_forgetting_a_kadoc_gives_nothing() -> None:
    state = after_roll([6, 5, 2])
    play(state, PASS)
    assert state.items[0]["flan"] == 0
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_one_flan_at_a_time() -> None:
    state = after_roll([6, 5, 2], items=[{"flan": 1}, {}, {}])
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


# ------------------------------------------------------------------ Sirotage in F


def sirop_game(dice: list[int], scores=None, rules="complete"):
    state = after_roll(dice, scores=scores, rules=rules)
    play(state, Sirop())
    return state


def test_beau_sirop_bets_on_success_and_the_own_bird_is_a_bevue() -> None:
    # Chouette of 3 siroted into 3: 70. Seat 1 "Beau-Sirop !" and claims "Sirop gagnant !":
    # +25. Seat 2 named Fauvette (3), the chouette's own bird: a Bévue, no bet.
    state = sirop_game([3, 3, 5, 3])
    options = state.pending.options
    assert BeauSirop() in options and CoucheSirop() in options and BirdBet(3) in options
    play(state, BeauSirop(), BirdBet(3))
    assert state.pending.kind == "claim" and state.pending.reason == "sirop_gagnant"
    play(state, Shout("sirop_gagnant", 800))
    assert state.scores == [70, 25, -10]


def test_an_unclaimed_winning_bet_pays_nothing_and_costs_nothing() -> None:
    state = sirop_game([3, 3, 5, 2])
    play(state, BirdBet(2), CoucheSirop(), PASS)
    assert state.scores == [-9, 0, 0]
    assert events(state, "bet_unclaimed")[0]["seat"] == 1


def test_silence_on_a_sirop_is_a_bevue_couche_sirop_is_not() -> None:
    state = sirop_game([3, 3, 5, 1])
    play(state, PASS, CoucheSirop())
    assert state.scores == [-9, -10, 0]


def test_a_lost_bird_bet_costs_five() -> None:
    state = sirop_game([3, 3, 5, 1])
    play(state, BirdBet(5), CoucheSirop())
    assert state.scores == [-9, -5, 0]


def test_a_chouette_velute_made_by_the_sirop_starts_its_race() -> None:
    # 3,3 siroted into 6: the sirop fails (-9), then 3,3,6 is a Chouette-Velute (72).
    state = sirop_game([3, 3, 1, 6])
    play(state, CoucheSirop(), CoucheSirop())
    assert state.pending.kind == "race" and state.pending.reason == "chouette_velute"
    play(state, Shout(PAS_MOU, 300), PASS, PASS)
    assert state.scores == [-9 + 72, 0, 0]


# ------------------------------------------------------------------ Soufflette in F


def test_a_failed_soufflette_then_scores_the_last_throw_for_the_challenged() -> None:
    # Throws 6,6,5 / 6,6,5 / 5,5,2: failed, the challenged gives 30 and then gets the
    # Chouette of 5 of the last throw (25): 100 - 30 + 25.
    state = after_roll([4, 1, 2, 6, 6, 5, 6, 6, 5, 5, 5, 2], scores=[100, 100, 100])
    play(state, ChallengeSoufflette(2), KeepDice(()), KeepDice(()))
    assert state.scores == [130, 100, 95]
    assert score_events(state)[-1]["reason"] == "soufflette_last_throw"


# ------------------------------------------------------------------ scores never negative


def no_negative(**overrides: object):
    return ruleset("complete", negative_scores=False, **overrides)


def test_without_negative_scores_a_score_stops_at_zero() -> None:
    state = after_roll([3, 3, 5, 1], rules=ruleset("complete", negative_scores=False,
                                                    minimum_scores={"sirotage_covers_chouette": False}))
    play(state, Sirop(), CoucheSirop(), CoucheSirop())
    assert state.scores == [0, 0, 0]


def test_sirop_needs_a_score_that_covers_the_chouette() -> None:
    state = after_roll([4, 4, 1], rules=no_negative(), scores=[10, 0, 0])
    assert state.scores == [26, 0, 0]  # no sirop offered: the Chouette of 4 is scored
    state = after_roll([4, 4, 1], rules=no_negative(), scores=[16, 0, 0])
    assert state.pending.kind == "sirop"


def test_a_sirop_bet_below_five_is_a_bevue_that_drops_to_zero() -> None:
    rules = no_negative(bevue={"penalty": 1})
    state = sirop_game([3, 3, 5, 3], scores=[50, 4, 0], rules=rules)
    play(state, BirdBet(3 + 1), CoucheSirop())
    assert state.scores == [50 + 70, 0, 0]
    assert [e["reason"] for e in score_events(state)][:2] == ["bevue", "sirop_bet_below_minimum"]
    assert state.table.sirop_bets == {}


def test_soufflette_needs_thirty_on_both_sides() -> None:
    state = after_roll([4, 1, 2], rules=no_negative(), scores=[50, 20, 100])
    play(state, ChallengeSoufflette(1))
    assert state.scores == [40, 20, 100]  # a Bévue, and no challenge
    assert state.pending.kind == "turn_start"


def test_a_neant_gives_a_grelottine_only_from_thirty() -> None:
    state = after_roll([1, 3, 6], rules=no_negative(), scores=[29, 0, 0])
    assert grelottines(state) == [0, 0, 0]
    state = after_roll([1, 3, 6], rules=no_negative(), scores=[30, 0, 0])
    assert grelottines(state) == [1, 0, 0]


def test_mecreant_below_thirty_is_a_bevue_and_no_shout() -> None:
    state = neant_souffle_game([PASS, Shout("mecreant", 300), Shout("mecreant", 500)],
                               scores=[0, 20, 50], rules=no_negative())
    assert grelottines(state) == [0, 0, 1]
    assert state.scores == [0, 10, 50]


def test_the_cul_is_offered_only_to_a_buyer_whose_score_covers_its_cost() -> None:
    # Held at 0, a buyer at 29 would have the whole combination for 29 points, one at 0 for
    # nothing: seat 1 (29) is not asked, seat 2 (30) is, and pays the whole 30.
    state = new_game(no_negative(), 3, dice=[1, 2, 6], scores=[50, 29, 30])
    play(state, ROLL)
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("buy_cul", 2)
    play(state, BuyCul())
    assert state.scores[2] == 0 and score_events(state)[0]["reason"] == "achat_du_cul"
    # The option off, or negative scores played, seat 1 is asked first as before.
    for rules in (no_negative(minimum_scores={"achat_covers_cost": False}), ruleset("complete")):
        state = new_game(rules, 3, dice=[1, 2], scores=[50, 29, 30])
        play(state, ROLL)
        assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("buy_cul", 1)
