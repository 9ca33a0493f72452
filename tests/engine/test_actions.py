"""Sirotage, Achat de dé, Grelottine and Boucliette, Civet, Soufflette, the cap and the end."""

from __future__ import annotations

import pytest
from engine_helpers import PASS, ROLL, new_game, play, score_events

from cdc_env.actions import (
    BetOnSuccess,
    BirdBet,
    BuyCul,
    ChallengeGrelottine,
    ChallengeSoufflette,
    DeclareCivet,
    Dice,
    KeepDice,
    Roll,
    Sirop,
    UseBoucliette,
)
from cdc_env.dice import InjectedDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

# ------------------------------------------------------------------ first player


def test_lowest_die_starts_and_tied_lowest_roll_again() -> None:
    # Rolls 2, 2, 5 → seats 0 and 1 roll again: 4, 3 → seat 1 starts.
    state = GameState(load_ruleset("classic"), 3, dice=InjectedDice([2, 2, 5, 4, 3]))
    assert state.first_player == 1
    assert state.pending is not None
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_v004_first_player_is_random() -> None:
    state = GameState(load_ruleset("v004"), 4)
    assert state.pending is not None
    assert state.pending.is_chance and state.pending.sides == 4
    state.apply_action(Dice((3,)))
    assert state.first_player == 2


# ------------------------------------------------------------------ Chouette and Sirotage


def test_chouette_kept_scores_its_square() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2])
    play(state, ROLL, PASS)
    assert state.pending is not None
    assert state.pending.kind == "sirop"
    play(state, PASS)
    assert state.scores == [25, 0]


def test_sirop_success_scores_the_cul_de_chouette_and_bird_bets_pay() -> None:
    # Chouette of 3 siroted, the die falls on 3: 70 points. Seat 1 bet Fauvette (3): +25;
    # seat 2 bet Linotte (1): -5.
    state = new_game("classic", 3, dice=[3, 3, 5, 3])
    play(state, ROLL, PASS, PASS, Sirop(), BirdBet(3), BirdBet(1))
    assert state.scores == [70, 25, -5]
    assert [e["reason"] for e in score_events(state)] == ["bird_bet_won", "bird_bet_lost", "sirop_success"]


def test_sirop_failure_loses_the_chouette() -> None:
    state = new_game("classic", 2, dice=[4, 4, 1, 2])
    play(state, ROLL, PASS, Sirop(), PASS)
    assert state.scores == [-16, 0]
    assert state.items[0]["civet"] == 0


def test_failed_sirop_of_six_gives_a_civet_once() -> None:
    state = new_game("classic", 2, dice=[6, 6, 1, 4])
    play(state, ROLL, PASS, Sirop(), BirdBet(4))
    assert state.scores == [-36, 25]
    assert state.items[0]["civet"] == 1
    assert [e for e in state.log if e["type"] == "item"][-1]["reason"] == "civet_sirote"


def test_sirop_after_chouette_velute_dice_is_not_scored_again_in_classic() -> None:
    # 3,3 + sirop die 6 would be 3,3,6 but the classic sirop only succeeds on a 3.
    state = new_game("classic", 2, dice=[3, 3, 1, 6])
    play(state, ROLL, PASS, Sirop(), PASS)
    assert state.scores == [-9, 0]
    assert state.pending is not None
    assert state.pending.kind == "turn_start"


def test_bird_bet_gain_stops_at_the_cap() -> None:
    state = new_game("classic", 2, dice=[2, 2, 5, 2])
    state.scores[1] = 320
    play(state, ROLL, PASS, Sirop(), BirdBet(2))
    assert state.scores == [60, 332]


def test_no_sirop_when_the_ruleset_has_none() -> None:
    state = new_game("basic", 2, dice=[5, 5, 2])
    play(state, ROLL)
    assert state.scores == [25, 0]


# ------------------------------------------------------------------ Achat de dé


def test_first_in_seat_order_buys_the_cul_and_throws_the_combination() -> None:
    # Seat 0 throws 4,4; seat 1 passes, seat 2 buys (30); the cul falls 4: Cul de Chouette
    # of 4 (80) to seat 2, and seat 0 keeps the Chouette of 4 (16).
    state = new_game("classic", 3, dice=[4, 4, 4])
    play(state, ROLL, PASS, BuyCul())
    assert state.scores == [16, 0, -30 + 80]
    assert [e for e in state.log if e["type"] == "buy_cul"][0]["seat"] == 2


def test_bought_gains_are_capped() -> None:
    state = new_game("classic", 2, dice=[6, 6, 6])
    state.scores[1] = 320
    play(state, ROLL, BuyCul())
    assert state.scores[1] == 320 - 30 + 42  # 100 capped at 332
    assert not state.is_over


def test_bought_soufflette_does_nothing() -> None:
    state = new_game("classic", 2, dice=[1, 2, 4])
    play(state, ROLL, BuyCul())
    assert state.scores == [0, -30]
    assert state.pending is not None
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_buyer_sirops_their_chouette() -> None:
    state = new_game("classic", 2, dice=[2, 5, 2])
    play(state, ROLL, BuyCul())
    assert state.pending is not None
    assert state.pending.kind == "sirop" and state.pending.seat == 1


# ------------------------------------------------------------------ Soufflette


def soufflette_game(target_dice: list[int]):
    state = new_game("classic", 3, dice=[4, 1, 2, *target_dice])
    state.scores[:] = [100, 100, 100]
    play(state, ROLL, PASS, PASS)
    assert state.pending is not None
    assert state.pending.kind == "soufflette"
    return state


@pytest.mark.parametrize(("throw", "reward"), [(1, 50), (2, 40), (3, 30)])
def test_soufflette_made_on_throw_n_takes_50_40_30(throw: int, reward: int) -> None:
    dice = {1: [4, 2, 1], 2: [6, 6, 5, 1, 2, 4], 3: [6, 6, 5, 6, 5, 2, 1, 4]}[throw]
    keeps = {1: [], 2: [KeepDice(())], 3: [KeepDice(()), KeepDice((2,))]}[throw]
    state = soufflette_game(dice)
    play(state, ChallengeSoufflette(2), *keeps)
    assert state.scores == [100 - reward, 100, 100 + reward]
    assert score_events(state, "soufflette_made")[0]["throw"] == throw


def test_soufflette_keeping_dice_between_throws() -> None:
    # Throw 1: 1,5,6 → keep 1; throw 2: 2,3 → 1,2,3 → keep 1,2; throw 3: 4 → 1,2,4 made: 30.
    state = soufflette_game([1, 5, 6, 2, 3, 4])
    play(state, ChallengeSoufflette(1), KeepDice((1,)), KeepDice((1, 2)))
    assert state.scores == [70, 130, 100]


def test_soufflette_failed_gives_thirty_to_the_challenger() -> None:
    state = soufflette_game([6, 6, 6, 6, 6, 6, 6, 6, 6])
    play(state, ChallengeSoufflette(1), KeepDice(()), KeepDice(()))
    assert state.scores == [130, 70, 100]


def test_soufflette_keep_options_never_keep_all_three() -> None:
    state = soufflette_game([1, 5, 6])
    play(state, ChallengeSoufflette(1))
    assert all(len(option.keep) <= 2 for option in state.pending.options)
    assert KeepDice((1, 5)) in state.pending.options


# ------------------------------------------------------------------ Grelottine and Boucliette


def neant_game(players: int = 3, dice_after: list[int] | None = None, scores=None, rules="classic"):
    """Seat 0 throws 1,3,6 (a Néant); scores set; every other seat holds a Grelottine."""
    state = new_game(rules, players, dice=[1, 3, 6, *(dice_after or [])])
    state.scores[:] = scores or [100] * players
    for seat in range(1, players):
        state.items[seat]["grelottine"] = 1
    play(state, ROLL)
    assert state.pending is not None
    while state.pending.kind == "buy_cul":  # v004 has no Achat de dé
        play(state, PASS)
    return state


def test_neant_gives_a_grelottine_only_once() -> None:
    state = new_game("classic", 2, dice=[1, 3, 6, 2, 6, 3, 1, 3, 6], scores=[100, 100])
    play(state, ROLL, PASS)
    assert state.items[0]["grelottine"] == 1
    play(state, ROLL, PASS)  # seat 1: 2,6,3 Néant; seat 0 may challenge
    assert state.pending is not None
    assert state.pending.kind == "grelottine" and state.pending.seat == 0
    play(state, PASS)
    play(state, ROLL, PASS)  # seat 0 again: Néant; seat 1 now challenges or passes
    assert state.pending.kind == "grelottine"
    play(state, PASS)
    assert state.items[0]["grelottine"] == 1


def test_grelottine_priority_lowest_score_then_seat_order() -> None:
    state = neant_game(players=4, scores=[100, 90, 50, 50])
    assert state.pending.kind == "grelottine" and state.pending.seat == 2
    play(state, PASS)
    assert state.pending.seat == 3
    play(state, PASS)
    assert state.pending.seat == 1


def test_classic_stake_limits_use_percentages() -> None:
    state = neant_game(scores=[300, 100, 400])
    limits = dict(state.pending.stakes)
    # Seat 1 (score 100) asks first; min(100, 300) = 100.
    assert {name: r.stop - 1 for name, r in limits.items()} == {
        "chouette": 33, "velute": 25, "cul_de_chouette": 16, "chouette_velute": 8}
    assert limits["chouette"].start == 1


def test_v004_stake_limits_use_divisors() -> None:
    state = neant_game(scores=[299, 300, 400], rules="v004")
    limits = {name: r.stop - 1 for name, r in dict(state.pending.stakes).items()}
    assert limits == {"chouette": 99, "velute": 74, "cul_de_chouette": 59, "chouette_velute": 29}


def test_no_challenge_when_the_stake_would_be_below_one() -> None:
    # min score 5: 8% of 5 is 0 → Chouette-Velute cannot be named; with 0 nothing can.
    state = neant_game(scores=[5, 100, 100])
    assert "chouette_velute" not in dict(state.pending.stakes)
    state = neant_game(scores=[0, 100, 100])
    assert state.pending.kind == "turn_start"


def test_grelottine_made_challenged_wins_the_stake_and_scores_the_roll() -> None:
    # Seat 1 challenges seat 0 on a Velute for 20; seat 2 bets on success; seat 0 throws
    # 2,4,6: Velute of 6 (72), made.
    state = neant_game(dice_after=[2, 4, 6])
    play(state, ChallengeGrelottine("velute", 20), PASS, PASS, BetOnSuccess(), Roll())
    assert state.scores == [100 + 72 + 20, 100 - 20, 100 + 25]
    assert state.items[1]["grelottine"] == 0


def test_grelottine_failed_challenger_takes_the_stake() -> None:
    state = neant_game(dice_after=[5, 5, 1])
    play(state, ChallengeGrelottine("velute", 20), PASS, PASS, BetOnSuccess(), Roll())
    assert state.pending.kind == "sirop"
    play(state, PASS)  # keeps the Chouette of 5: 25 points, challenge failed
    assert state.scores == [100 + 25 - 20, 100 + 20, 100 - 5]


def test_grelottine_cul_de_chouette_made_through_a_sirop() -> None:
    state = neant_game(dice_after=[2, 2, 5, 2])
    play(state, ChallengeGrelottine("cul_de_chouette", 10), PASS, PASS, PASS, Roll(), Sirop(), PASS, PASS)
    assert state.scores == [100 + 60 + 10, 90, 100]


def test_boucliette_cancels_the_challenge_and_the_grelottine_is_spent() -> None:
    state = neant_game()
    play(state, ChallengeGrelottine("chouette", 30))
    assert state.pending.kind == "boucliette" and state.pending.seat == 0
    play(state, UseBoucliette())
    assert state.items[0]["boucliette"] == 0 and state.items[1]["grelottine"] == 0
    assert state.scores == [100, 100, 100]
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_boucliette_once_per_game() -> None:
    state = neant_game()
    state.items[0]["boucliette"] = 0
    play(state, ChallengeGrelottine("chouette", 30))
    # Seat 0 has none left: seat 2 is asked (seat 1 is the challenger).
    assert state.pending.kind == "boucliette" and state.pending.seat == 2


def test_challenge_throw_cannot_be_bought() -> None:
    state = neant_game(dice_after=[2, 2, 3])
    play(state, ChallengeGrelottine("velute", 20), PASS, PASS, PASS, Roll())
    assert state.pending.kind == "sirop"


def test_grelottine_stake_gains_are_capped() -> None:
    state = neant_game(dice_after=[2, 4, 6], scores=[100, 330, 400])
    play(state, ChallengeGrelottine("chouette", 30), PASS, PASS, PASS, Roll())
    # Velute made, so Chouette failed: challenger seat 1 gains 30 but stops at 332.
    assert state.scores[1] == 332


# ------------------------------------------------------------------ Civet


HOLDER = 150  # the Civet's holder has the points to stake (C: "un certain nombre de ses points")


def civet_game(dice: list[int], rules="classic", players: int = 2):
    return new_game(rules, players, dice=dice, items=[{"civet": 1}] + [{}] * (players - 1),
                    scores=[HOLDER] + [0] * (players - 1))


def test_civet_made_wins_the_stake_plus_the_combination() -> None:
    state = civet_game([2, 4, 6])
    play(state, DeclareCivet("velute", 80))
    assert state.scores == [HOLDER + 72 + 80, 0]
    assert state.items[0]["civet"] == 0


def test_civet_failed_loses_the_stake_but_scores_the_combination() -> None:
    state = civet_game([5, 5, 2])
    play(state, DeclareCivet("velute", 80), PASS)
    assert state.scores == [HOLDER + 25 - 80, 0]


def test_civet_cul_de_chouette_with_sirotage() -> None:
    state = civet_game([3, 3, 1, 3])
    play(state, DeclareCivet("cul_de_chouette_sirote", 50), Sirop(), PASS)
    assert state.scores == [HOLDER + 70 + 50, 0]


def test_civet_cul_de_chouette_without_sirotage_is_not_made_by_a_sirop() -> None:
    state = civet_game([3, 3, 1, 3])
    play(state, DeclareCivet("cul_de_chouette", 50), Sirop(), PASS)
    assert state.scores == [HOLDER + 70 - 50, 0]


def test_civet_on_a_suite_counts_one_two_three() -> None:
    state = civet_game([1, 2, 3])
    from cdc_env.actions import Shout
    play(state, DeclareCivet("suite", 10), Shout("grelotte_ca_picote", 100), Shout("grelotte_ca_picote", 500))
    assert state.scores == [HOLDER + 18 + 10, -10]


def test_civet_stake_limits() -> None:
    state = civet_game([1, 1, 1])
    from cdc_env.actions import IllegalActionError
    with pytest.raises(IllegalActionError, match="civet"):
        state.apply_action(DeclareCivet("velute", 103))
    with pytest.raises(IllegalActionError):
        state.apply_action(DeclareCivet("velute", 0))
    with pytest.raises(IllegalActionError):
        state.apply_action(DeclareCivet("flan", 10))


def test_v004_others_bet_on_the_civet() -> None:
    state = civet_game([2, 4, 6], rules="v004", players=3)
    assert state.first_player == 0
    play(state, DeclareCivet("velute", 10))
    assert state.pending.kind == "civet_bet"
    play(state, BetOnSuccess(), PASS)
    assert state.scores == [HOLDER + 82, 25, 0]


def test_v004_civet_stake_stops_below_102() -> None:
    state = civet_game([1, 1, 1], rules="v004")
    assert dict(state.pending.stakes)["velute"] == range(1, 102)


def test_no_civet_without_holding_one() -> None:
    state = new_game("classic", 2, dice=[1, 1, 1])
    assert state.pending is not None
    assert state.pending.options == (Roll(),) and state.pending.staked is None


# ------------------------------------------------------------------ the cap and the end


def test_a_win_needs_own_dice_on_own_turn() -> None:
    state = new_game("classic", 2, dice=[6, 6, 6])
    state.scores[0] = 250
    play(state, ROLL, PASS)
    assert state.winner == 0 and state.is_over
    assert state.log[-1] == {"type": "win", "turn": 1, "seat": 0, "score": 350}
    with pytest.raises(Exception, match="game is over"):
        state.apply_action(ROLL)


def test_cap_never_lowers_a_score_already_above_it() -> None:
    state = new_game("classic", 3, dice=[3, 3, 5, 3])
    state.scores[:] = [0, 336, 0]
    play(state, ROLL, PASS, PASS, Sirop(), BirdBet(3), PASS)
    assert state.scores[1] == 336
    assert score_events(state, "bird_bet_won")[0]["delta"] == 0


def test_every_score_change_is_an_event_with_its_reason() -> None:
    state = new_game("classic", 3, dice=[3, 3, 5, 3])
    play(state, ROLL, PASS, PASS, Sirop(), BirdBet(3), BirdBet(2))
    totals = [0, 0, 0]
    for event in score_events(state):
        totals[event["seat"]] += event["delta"]
        assert event["reason"]
    assert totals == state.scores
