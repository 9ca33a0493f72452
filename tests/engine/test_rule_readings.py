"""The readings corrected against the texts: V's table, the Civet stake, false shouts, F's
sirop, the thrower after a Velutée, and the scorekeeper's log. Hand-worked numbers."""

from __future__ import annotations

import random

import pytest
from engine_helpers import PASS, ROLL, new_game, nobody_buys, play, ruleset, score_events
from test_log_digest import random_game

from cdc_env.actions import (
    BetSum,
    BuyCul,
    ChallengeGrelottine,
    CoucheSirop,
    DeclareCivet,
    IllegalActionError,
    Shout,
    Sirop,
)
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.play import EVENT_LINES, describe_event
from cdc_env.rules import load_ruleset

PAS_MOU, GRELOTTE = "pas_mou_le_caillou", "grelotte_ca_picote"


# ------------------------------------------------------------------ V: no Achat de dé, its cap


def test_300_random_v004_games_never_offer_to_buy_the_cul() -> None:
    rules = load_ruleset("v004")
    decisions = 0
    for seed in range(300):
        state = GameState(rules, 2 + seed % 7, dice=SeededDice(seed))
        chooser = random.Random(seed)
        while not state.is_over and state.turn_number <= 12:
            legal = state.legal_actions()
            assert state.pending is not None
            assert state.pending.kind != "buy_cul" and BuyCul() not in legal
            choice = chooser.choice(legal)
            if isinstance(choice, Shout):
                choice = Shout(choice.phrase, chooser.uniform(0, 3000))
            state.apply_action(choice)
            decisions += 1
    assert decisions > 10_000  # the games were really played


def civet_from_330(rules: str) -> GameState:
    # 330 points and a Civet of 50 on a Chouette; the dice 1,1,5 make a Chouette of 1 (kept, no
    # sirop): 331 from one's own dice, then the Civet's 50.
    state = new_game(rules, 2, dice=[1, 1, 5], scores=[330, 0], items=[{"civet": 1}, {}])
    play(state, DeclareCivet("chouette", 50))
    assert state.pending is not None
    while state.pending.kind != "sirop":
        play(state, PASS)  # V: the other bets on the Civet or not; C: the cul is not bought
    play(state, PASS)
    return state


def test_an_own_turn_civet_from_330_wins_in_v004() -> None:
    state = civet_from_330("v004")
    assert state.scores[0] == 381 and state.winner == 0 and state.is_over


def test_the_same_civet_stops_at_332_in_classic() -> None:
    state = civet_from_330("classic")
    assert state.scores[0] == 332 and state.winner is None
    assert score_events(state, "civet_made")[0]["capped"] is True


def grelottine_on_own_turn(rules: str) -> GameState:
    # Seat 0 (330) throws a Néant 1,3,6; seat 1 (300) challenges on a Chouette for 99; seat 0
    # throws 2,2,5 (a Chouette of 2, kept: 334) and wins the challenge's 99.
    state = new_game(rules, 2, dice=[1, 3, 6, 2, 2, 5], scores=[330, 300],
                     items=[{}, {"grelottine": 1}])
    play(state, ROLL)
    assert state.pending is not None
    while state.pending.kind != "grelottine":
        play(state, PASS)
    play(state, ChallengeGrelottine("chouette", 99), PASS, ROLL)  # seat 0 keeps its Boucliette
    while state.pending is not None and state.pending.kind == "buy_cul":
        play(state, PASS)
    play(state, PASS)  # no sirop
    return state


def test_an_own_turn_grelottine_challenge_may_pass_332_and_win_in_v004() -> None:
    state = grelottine_on_own_turn("v004")
    assert state.scores == [334 + 99, 300 - 99] and state.winner == 0


def test_the_same_challenge_stops_at_the_score_already_above_332_in_classic() -> None:
    state = grelottine_on_own_turn("classic")
    assert state.scores == [334, 300 - 99] and state.winner is None


def test_v004_still_caps_gains_off_ones_own_turn() -> None:
    state = new_game("v004", 2, dice=[1, 1, 2], scores=[0, 330])
    play(state, ROLL, PASS, Shout(PAS_MOU, 300))  # seat 1 wins the Chouette-Velute's 8
    assert state.scores == [0, 332] and state.winner is None


# ------------------------------------------------------------------ the Civet stake


def test_the_civet_stake_is_bounded_by_the_holders_score() -> None:
    state = new_game("classic", 2, scores=[40, 0], items=[{"civet": 1}, {}])
    assert state.pending is not None
    assert {stakes.stop - 1 for _, stakes in state.pending.stakes} == {40}
    with pytest.raises(IllegalActionError):
        state.apply_action(DeclareCivet("velute", 41))
    assert state.items[0]["civet"] == 1 and state.pending.kind == "turn_start"
    play(state, DeclareCivet("velute", 40))
    assert state.table.civet is not None and state.table.civet["stake"] == 40


@pytest.mark.parametrize("rules", ["classic", "v004", "complete"])
def test_a_player_with_no_points_has_no_civet_to_bet(rules: str) -> None:
    state = new_game(rules, 2, scores=[0, 0], items=[{"civet": 1}, {}])
    assert state.pending is not None
    assert state.pending.staked is None and state.legal_actions() == [ROLL]


def test_without_the_parameter_the_stake_goes_to_the_maximum_whatever_the_score() -> None:
    state = new_game(ruleset("classic", civet={"stake_within_score": False}), 2,
                     scores=[0, 0], items=[{"civet": 1}, {}])
    assert state.pending is not None
    assert {stakes.stop - 1 for _, stakes in state.pending.stakes} == {102}


# ------------------------------------------------------------------ false shouts


def test_a_race_phrase_outside_a_race_is_a_bevue_and_the_decision_stays() -> None:
    state = new_game("classic", 3, dice=[2, 5, 3])
    pending = state.pending
    state.apply_action(Shout(GRELOTTE, 420.0), seat=2)
    assert state.scores == [0, 0, -10] and state.pending == pending
    bevue = score_events(state, "bevue")[0]
    assert bevue["seat"] == 2 and "no race" in bevue["why"]
    assert state.log[-2] == {"type": "false_shout", "turn": 1, "seat": 2, "phrase": GRELOTTE,
                             "onset_ms": 420.0}


def test_a_false_shout_may_come_from_the_seat_whose_decision_is_pending() -> None:
    state = new_game("classic", 2, dice=[2, 5, 3])
    state.apply_action(Shout(PAS_MOU, 10.0), seat=0)
    assert state.pending is not None
    assert state.scores == [-10, 0] and state.pending.kind == "turn_start"


def test_at_a_claim_moment_the_claim_is_the_claimants_answer_a_race_phrase_a_bevue() -> None:
    # complete: 6,5,2 is a Flan; the thrower's decision is whether to claim "À Kadoc !".
    state = new_game("complete", 2, dice=[6, 5, 2])
    play(state, ROLL, PASS)  # nobody buys the cul
    claim = state.pending
    assert claim is not None and claim.kind == "claim" and claim.seat == 0
    state.apply_action(Shout(GRELOTTE, 300.0), seat=0)
    assert state.scores == [-10, 0] and state.pending == claim
    with pytest.raises(IllegalActionError, match="asked for it one after another"):  # not the other's claim
        state.apply_action(Shout("a_kadoc", 200.0), seat=1)
    assert state.scores == [-10, 0] and state.pending == claim
    state.apply_action(Shout("a_kadoc", 900.0), seat=0)
    assert state.pending is not None
    assert state.items[0]["flan"] == 1 and state.pending.kind == "turn_start"


def test_grelottine_without_holding_one_or_without_a_neant_is_a_bevue() -> None:
    # RULES.md's Bévue: "a bet or challenge a player may not make". Without a Grelottine, or
    # holding one with no Néant to challenge: a Bévue each, saying which.
    state = new_game("classic", 2, items=[{}, {"grelottine": 1}])
    state.apply_action(Shout("grelottine", 0.0), seat=0)
    state.apply_action(Shout("grelottine", 0.0), seat=1)
    assert state.scores == [-10, -10]
    assert [e["why"] for e in score_events(state, "bevue")] == [
        "challenged with 'grelottine' without holding a Grelottine",
        "challenged with 'grelottine' with no Néant to challenge"]
    assert state.items[1]["grelottine"] == 1  # nothing spent


def test_at_a_neant_a_holder_shouting_grelottine_out_of_its_turn_is_refused_not_charged() -> None:
    # Seat 0 throws a Néant (and so holds a Grelottine); seats 1 and 2 hold one and are asked
    # in turn (the lowest score first: seat 2). Seat 1's "Grelottine !" meanwhile waits,
    # uncharged; seat 3's, without one, is a Bévue as anywhere.
    state = new_game("classic", 4, dice=[1, 3, 6], scores=[100, 100, 50, 100],
                     items=[{}, {"grelottine": 1}, {"grelottine": 1}, {}])
    play(state, ROLL)
    nobody_buys(state)
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("grelottine", 2)
    for seat in (0, 1):
        with pytest.raises(IllegalActionError, match="asked for it one after another"):
            state.apply_action(Shout("grelottine", 10.0), seat=seat)
    assert state.scores == [100, 100, 50, 100]
    state.apply_action(Shout("grelottine", 10.0), seat=3)
    assert state.scores == [100, 100, 50, 90] and state.pending.seat == 2


def test_a_claim_with_nothing_to_claim_is_a_bevue() -> None:
    # "Sirop gagnant !" with no winning bet, "À Kadoc !" with no Flan thrown: claims a player
    # may not make (RULES.md's Bévue), taken from any seat at any moment outside their own.
    state = new_game("complete", 2, dice=[])
    state.apply_action(Shout("sirop_gagnant", 0.0), seat=1)
    state.apply_action(Shout("a_kadoc", 0.0), seat=0)
    assert state.scores == [-10, -10]
    assert [e["why"] for e in score_events(state, "bevue")] == [
        "claimed 'sirop_gagnant' with nothing to claim", "claimed 'a_kadoc' with nothing to claim"]


def test_a_phrase_that_is_no_race_phrase_is_refused_and_changes_nothing() -> None:
    state = new_game("classic", 2)
    before = state.to_json()
    for bad in (Shout("vive_le_roi", 0.0), Shout(GRELOTTE, -1.0), Shout(GRELOTTE, float("nan"))):
        with pytest.raises(IllegalActionError):
            state.apply_action(bad, seat=1)
    with pytest.raises(IllegalActionError, match="no seat"):
        state.apply_action(Shout(GRELOTTE, 0.0), seat=5)
    assert state.to_json() == before


def test_without_bevues_a_false_shout_costs_nothing() -> None:
    state = new_game("basic", 2)
    state.apply_action(Shout(PAS_MOU, 0.0), seat=1)
    assert state.scores == [0, 0] and state.log[-1]["type"] == "false_shout"


def test_during_a_race_a_seat_shouts_at_its_own_race_decision_only() -> None:
    state = new_game("classic", 3, dice=[1, 1, 2])
    play(state, ROLL, PASS, PASS)
    assert state.pending is not None
    assert state.pending.kind == "race" and state.pending.seat == 0
    with pytest.raises(IllegalActionError, match="out of turn"):
        state.apply_action(Shout(PAS_MOU, 100.0), seat=1)


def test_a_game_with_false_shouts_saves_and_replays_exactly() -> None:
    state = new_game("classic", 2, dice=[2, 5, 3, 4, 4, 1])
    state.apply_action(Shout(GRELOTTE, 5.0), seat=1)
    play(state, ROLL, PASS)
    state.apply_action(Shout("sans_fin", 7.0), seat=0)
    loaded = GameState.from_json(state.to_json())
    assert loaded.log == state.log and loaded.scores == state.scores == [50 - 10, -10]


# ------------------------------------------------------------------ F: the combination after a sirop


def sirop(dice: list[int]) -> GameState:
    state = new_game("complete", 3, dice=dice)
    play(state, ROLL, PASS, PASS, Sirop(), CoucheSirop(), CoucheSirop())
    return state


def test_a_sirop_that_makes_an_artichette_applies_its_rule() -> None:
    # 4,4 siroted into 3: the sirop fails (-16), then 4,4,3 is an Artichette: the thrower's
    # "Raitournelle !" first wins the Chouette of 4 (16).
    state = sirop([4, 4, 1, 3])
    assert state.pending is not None
    assert state.pending.kind == "race" and state.pending.reason == "artichette"
    play(state, Shout("raitournelle", 300), PASS, PASS)
    assert [e["reason"] for e in score_events(state)] == ["sirop_failure", "raitournelle"]
    assert state.scores == [-16 + 16, 0, 0]


def test_a_sirop_that_makes_a_bleu_rouge_applies_its_rule() -> None:
    # 3,3 siroted into 4: the sirop fails (-9), then 3,3,4 is a Bleu-Rouge: the Chouette of 3
    # (9) and the relaunch. Seat 1 bets the sum 9 and the relaunch 1,3,5 makes it: 36 + 2×9.
    state = sirop([3, 3, 1, 4, 1, 3, 5])
    assert state.pending is not None
    assert state.pending.kind == "bleu_rouge_bet"
    play(state, BetSum(10), BetSum(9), BetSum(11))
    assert state.scores == [-9 + 9, 54, 0]
    # 1,3,5 is no combination: a Jarret, nothing for the winner
    assert [e["dice"] for e in state.log if e["type"] == "jarret"] == [[1, 3, 5]]


# ------------------------------------------------------------------ the thrower after a Velutée


def test_after_a_velutee_reroll_the_table_names_whose_combination_it_is() -> None:
    # 1,2,3 in complete: seat 1's "Velutée !" comes first; its chouettes 5,5 with the cul 3 are
    # its Chouette of 5, and its sirop decision.
    state = new_game("complete", 3, dice=[1, 2, 3, 5, 5])
    play(state, ROLL, PASS, PASS)
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 500), Shout(GRELOTTE, 900))
    assert state.table.thrower == 0
    play(state, PASS, Shout("velutee", 200), PASS)
    assert state.pending is not None
    assert state.pending.kind == "sirop" and state.pending.seat == 1
    assert state.table.thrower == 1 and state.turn_seat == 0


# ------------------------------------------------------------------ the scorekeeper's log


def test_a_bevue_line_says_why() -> None:
    state = new_game("classic", 2)
    state.apply_action(Shout(GRELOTTE, 0.0), seat=1)
    line = describe_event(state.log[-1], ["Ana", "Bob"])
    assert line.strip() == "Bob -10 for a Bévue (shouted « grelotte ça picote » when no race was on) → -10"


def test_a_score_held_at_zero_is_not_called_capped() -> None:
    state = new_game(ruleset("complete", negative_scores=False), 2)
    state.apply_action(Shout(GRELOTTE, 0.0), seat=1)
    line = describe_event(state.log[-1])
    assert "held at 0" in line and "capped" not in line
    capped = {"type": "score", "turn": 3, "seat": 0, "points": 25, "delta": 2, "score": 332,
              "reason": "bird_bet_won", "capped": True}
    assert "(of +25, capped)" in describe_event(capped)


@pytest.mark.parametrize("rules,players", [("classic", 4), ("complete", 5), ("v004", 3)])
def test_no_line_of_a_game_names_seat_none(rules: str, players: int) -> None:
    lines = [describe_event(event) for seed in range(20)
             for event in random_game(rules, players, seed).log]
    assert len(lines) > 1000 and not [line for line in lines if "None" in line]


def test_every_kind_of_event_has_a_scorekeepers_line() -> None:
    kinds = {event["type"] for rules in ("classic", "v004", "complete", "solo", "basic", "maison")
             for seed in range(30) for event in random_game(rules, 1 if rules == "solo" else 4, seed).log}
    assert {"score", "race", "grelottine", "sirop", "relaunch", "verdier_bet", "attrape_oiseau"} <= kinds
    assert kinds <= set(EVENT_LINES), sorted(kinds - set(EVENT_LINES))


# ---------------------------------------------------------------------- a Bévue while a choice waits


def test_a_bevue_while_a_civet_waits_puts_it_again_with_the_score_it_left() -> None:
    # Seat 0 holds a Civet at 5 (stakes 1..5 within its score), shouts falsely (-10: -5), then
    # staked 5: accepted, and the Civet won 5 (a player with no points has no Civet to bet).
    state = new_game("classic", 2, dice=[2, 2, 5], scores=[5, 100], items=[{"civet": 1}, {}])
    assert state.pending is not None and dict(state.pending.stakes)["chouette"] == range(1, 6)
    state.apply_action(Shout("pas_mou_le_caillou", 10), seat=0)
    assert state.scores[0] == -5
    assert state.pending is not None and state.pending.kind == "turn_start" and state.pending.stakes == ()
    with pytest.raises(IllegalActionError):
        state.apply_action(DeclareCivet("chouette", 5), seat=0)
    assert [e for e in state.log if e["type"] == "score" and e["reason"].startswith("civet")] == []
    # A copy (the searcher's samples) replays the false shout, and puts the moment again too.
    twin = state.clone()
    assert twin.pending is not None and twin.pending.stakes == ()
    with pytest.raises(IllegalActionError):
        twin.apply_action(DeclareCivet("chouette", 5), seat=0)


def test_a_bevue_while_a_grelottine_challenge_waits_puts_it_again_at_the_new_limit() -> None:
    # The challenger at 30 (a Chouette: at most floor(30 × 0.33) = 9) shouts falsely: at 20 the
    # most is 6, where 9 was still accepted.
    state = new_game("classic", 2, dice=[1, 3, 6], scores=[100, 30], items=[{}, {"grelottine": 1}])
    play(state, ROLL, PASS)  # seat 1 does not buy the cul
    assert state.pending is not None and state.pending.kind == "grelottine"
    assert dict(state.pending.stakes)["chouette"].stop - 1 == 9
    state.apply_action(Shout("pas_mou_le_caillou", 10), seat=1)
    assert state.pending is not None and dict(state.pending.stakes)["chouette"].stop - 1 == 6
    with pytest.raises(IllegalActionError):
        state.apply_action(ChallengeGrelottine("chouette", 9), seat=1)
    state.apply_action(ChallengeGrelottine("chouette", 6), seat=1)


def test_a_bevue_while_f_asks_for_a_sirop_leaves_only_the_chouette_where_the_score_no_longer_covers_it() -> None:
    # complete without negative scores: at 36 a Chouette of 6 (36 points) may be siroted; a false
    # shout leaves 26, and the sirop was still accepted (its failure then took the 26).
    rules = ruleset("complete", negative_scores=False)
    rules = rules.model_copy(update={"minimum_scores": rules.minimum_scores.model_copy(
        update={"sirotage_covers_chouette": True})})
    state = new_game(rules, 2, dice=[6, 6, 2], scores=[36, 100])
    while state.pending is not None and state.pending.kind != "sirop":
        state.apply_action(ROLL if state.pending.allows(ROLL) else PASS)
    assert state.pending is not None and state.pending.allows(Sirop())
    state.apply_action(Shout("pas_mou_le_caillou", 10), seat=0)
    assert state.scores[0] == 26
    assert state.pending is not None and state.pending.kind == "sirop" and not state.pending.allows(Sirop())
