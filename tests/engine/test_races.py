"""Races resolved from shout onsets: Chouette-Velute and Suite, ties both ways, Bévue."""

from __future__ import annotations

from engine_helpers import PASS, ROLL, new_game, play, ruleset, score_events

from cdc_env.actions import Shout

PAS_MOU = "pas_mou_le_caillou"
GRELOTTE = "grelotte_ca_picote"
SANS_FIN = "sans_fin"


def chouette_velute_game(players: int = 3, extra_dice: list[int] | None = None, rules="classic"):
    """Seat 0 throws 1,1,2 (a Chouette-Velute of 8); nobody buys the cul; the race is pending."""
    state = new_game(rules, players, dice=[1, 1, 2, *(extra_dice or [])])
    play(state, ROLL)
    if state.rules.dice_buying.enabled:
        play(state, *[PASS] * (players - 1))
    assert state.pending is not None
    assert state.pending.kind == "race" and state.pending.reason == "chouette_velute"
    return state


def test_first_shouter_wins_the_chouette_velute() -> None:
    state = chouette_velute_game()
    play(state, Shout(PAS_MOU, 900), Shout(PAS_MOU, 450), Shout(PAS_MOU, 700))
    assert state.scores == [0, 8, 0]
    assert score_events(state)[-1]["reason"] == "chouette_velute"


def test_nobody_shouts_nobody_scores() -> None:
    state = chouette_velute_game()
    play(state, PASS, PASS, PASS)
    assert state.scores == [0, 0, 0]
    assert state.pending.kind == "turn_start" and state.pending.seat == 1


def test_shout_after_the_race_window_counts_as_none() -> None:
    state = chouette_velute_game()
    play(state, PASS, Shout(PAS_MOU, 3001), Shout(PAS_MOU, 2999))
    assert state.scores == [0, 0, 8]


def test_tie_with_thrower_one_six_takes_the_points() -> None:
    # Seat 0 (thrower) and seat 2 tie within 100 ms; seat 2 rolls a 6.
    state = chouette_velute_game(extra_dice=[6])
    play(state, Shout(PAS_MOU, 500), PASS, Shout(PAS_MOU, 580))
    assert state.scores == [0, 0, 8]


def test_tie_with_thrower_no_six_thrower_keeps() -> None:
    state = chouette_velute_game(extra_dice=[5, 6, 6])
    play(state, Shout(PAS_MOU, 500), Shout(PAS_MOU, 520), Shout(PAS_MOU, 600))
    # Seats 1 and 2 both roll: 5 and 6 → exactly one 6: seat 2 takes it.
    assert state.scores == [0, 0, 8]


def test_tie_with_thrower_two_sixes_thrower_keeps() -> None:
    state = chouette_velute_game(extra_dice=[6, 6])
    play(state, Shout(PAS_MOU, 500), Shout(PAS_MOU, 520), Shout(PAS_MOU, 600))
    assert state.scores == [8, 0, 0]


def test_tie_without_thrower_roll_until_exactly_one_six() -> None:
    # Seats 1 and 2 tie; rolls: (3, 4) no six, (6, 6) two sixes, (2, 6) seat 2.
    state = chouette_velute_game(extra_dice=[3, 4, 6, 6, 2, 6])
    play(state, PASS, Shout(PAS_MOU, 400), Shout(PAS_MOU, 450))
    assert state.scores == [0, 0, 8]
    tie_dice = [e for e in state.log if e["type"] == "dice" and e["reason"] == "chouette_velute_tie"]
    assert len(tie_dice) == 6


def test_tie_is_measured_from_the_earliest_onset() -> None:
    # 400 and 500 tie (100 ms apart); 510 is 110 ms after the earliest: not tied. The thrower
    # (seat 0) is out of the tie, so seats 1 and 2 roll: 6 and 3, seat 1 takes the points.
    state = chouette_velute_game(extra_dice=[6, 3])
    play(state, Shout(PAS_MOU, 510), Shout(PAS_MOU, 400), Shout(PAS_MOU, 500))
    assert state.scores == [0, 8, 0]


def test_subtract_tie_takes_the_value_from_every_tied_player() -> None:
    rules = ruleset("classic", races={"chouette_velute_tie": "subtract"})
    state = chouette_velute_game(rules=rules)
    play(state, Shout(PAS_MOU, 500), Shout(PAS_MOU, 550), Shout(PAS_MOU, 900))
    assert state.scores == [-8, -8, 0]


def test_wrong_phrase_is_a_bevue_and_no_shout() -> None:
    state = chouette_velute_game()
    play(state, Shout(GRELOTTE, 300), Shout(PAS_MOU, 600), PASS)
    assert state.scores == [-10, 8, 0]
    assert score_events(state, "bevue")[0]["seat"] == 0


def test_chouette_velute_won_by_another_player_is_capped() -> None:
    state = chouette_velute_game()
    state.scores[1] = 330
    play(state, PASS, Shout(PAS_MOU, 300), PASS)
    assert state.scores[1] == 332


def test_chouette_velute_won_by_the_thrower_can_win_the_game() -> None:
    state = chouette_velute_game()
    state.scores[0] = 340
    play(state, Shout(PAS_MOU, 300), PASS, PASS)
    assert state.winner == 0 and state.is_over


def suite_game(players: int = 3, dice=(2, 3, 4), extra: list[int] | None = None, rules="classic"):
    state = new_game(rules, players, dice=[*dice, *(extra or [])])
    play(state, ROLL, *[PASS] * (players - 1))
    assert state.pending is not None
    assert state.pending.reason == "suite"
    return state


def test_last_to_shout_loses_ten() -> None:
    state = suite_game()
    play(state, Shout(GRELOTTE, 500), Shout(GRELOTTE, 1500), Shout(GRELOTTE, 800))
    assert state.scores == [0, -10, 0]


def test_not_shouting_counts_as_last() -> None:
    state = suite_game()
    play(state, Shout(GRELOTTE, 2500), Shout(GRELOTTE, 1500), PASS)
    assert state.scores == [0, 0, -10]


def test_one_two_three_gives_the_velute_and_the_suite_race() -> None:
    state = suite_game(dice=(1, 2, 3))
    play(state, Shout(GRELOTTE, 700), Shout(GRELOTTE, 300), Shout(GRELOTTE, 400))
    assert state.scores == [18 - 10, 0, 0]


def test_tie_for_last_goes_to_sans_fin_then_lowest_die_loses() -> None:
    # Seats 1 and 2 tie for last; they tie again on "Sans fin"; dice 2 vs 5: seat 1 loses 10.
    state = suite_game(extra=[2, 5])
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 900), Shout(GRELOTTE, 950))
    assert state.pending.reason == "suite_tie" and state.pending.seat == 1
    play(state, Shout(SANS_FIN, 600), Shout(SANS_FIN, 620))
    assert state.scores == [0, -10, 0]


def test_sans_fin_round_decides_the_last() -> None:
    state = suite_game()
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 900), Shout(GRELOTTE, 950))
    play(state, Shout(SANS_FIN, 400), Shout(SANS_FIN, 700))
    assert state.scores == [0, 0, -10]


def test_dice_tie_again_raises_the_loss_to_twenty_then_thirty() -> None:
    # Tied dice (3, 3) → 20 at stake; (4, 4) → 30; (1, 2): seat 1 lowest loses 30.
    state = suite_game(extra=[3, 3, 4, 4, 1, 2])
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 900), Shout(GRELOTTE, 950))
    play(state, PASS, PASS)  # nobody shouts "Sans fin": both count as last
    assert state.scores == [0, -30, 0]


def test_highest_die_loses_in_the_f_variant() -> None:
    rules = ruleset("classic", races={"suite_tie_die": "highest"})
    state = suite_game(extra=[2, 5], rules=rules)
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 900), Shout(GRELOTTE, 950))
    play(state, Shout(SANS_FIN, 600), Shout(SANS_FIN, 620))
    assert state.scores == [0, 0, -10]


def test_sans_fin_without_a_tie_is_a_bevue() -> None:
    state = suite_game()
    play(state, Shout(SANS_FIN, 300), Shout(GRELOTTE, 500), Shout(GRELOTTE, 800))
    # Seat 0's wrong phrase is a Bévue and no shout, so seat 0 is also last.
    assert state.scores == [-20, 0, 0]


def test_tie_window_is_a_parameter() -> None:
    rules = ruleset("classic", races={"tie_window_ms": 0})
    state = suite_game(rules=rules)
    play(state, Shout(GRELOTTE, 300), Shout(GRELOTTE, 900), Shout(GRELOTTE, 901))
    assert state.scores == [0, 0, -10]


def test_race_window_is_a_parameter() -> None:
    rules = ruleset("classic", races={"race_window_ms": 1000})
    state = chouette_velute_game(rules=rules)
    play(state, Shout(PAS_MOU, 1200), PASS, Shout(PAS_MOU, 1500))
    assert state.scores == [0, 0, 0]


def test_basic_offers_only_the_right_phrase() -> None:
    state = chouette_velute_game(players=2, rules="basic")
    assert [a for a in state.pending.options] == [PASS, Shout(PAS_MOU)]
