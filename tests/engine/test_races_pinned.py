"""Races (cdc_env/rulebook/races.py) by hand, event by event: the Suite's tie for last through
"Sans fin…" and the dice, a wrong phrase, the window's last millisecond, the phrases offered
without Bévues, the Chouette-Velute's dice for a six with and without the thrower, F's
subtraction, and the Suite alone in S (RULES.md, Races)."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, event, new_game, play, ruleset, score
from engine_helpers import shout_event as shout

from cdc_env.actions import Dice, Shout
from cdc_env.dice import InjectedDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

GRELOTTE, SANS_FIN, PAS_MOU = "grelotte_ca_picote", "sans_fin", "pas_mou_le_caillou"


def raced(rules: Any, players: int, dice: list[int]) -> GameState:
    """Seat 0 throws `dice` (a race), nobody buys the cul; the race is asked."""
    state = new_game(rules, players, dice=dice)
    play(state, ROLL, *[PASS] * (players - 1))
    return state


def test_a_tie_for_last_in_the_suite_goes_to_sans_fin_then_to_the_dice() -> None:
    # classic, 2,3,4: seat 0 shouts at 100 ms, seats 1 and 2 at 900 and 905 (a tie for last);
    # their "Sans fin…" at 300 and 350 ties again; dice 2 and 2 tie (the penalty goes up to
    # 20), then 5 and 3: the lowest loses (C), seat 2, 20 points.
    state = raced("classic", 3, [2, 3, 4])
    start = len(state.log)
    assert state.pending is not None and state.table.race == "suite"
    assert state.pending.options == (PASS, Shout(PAS_MOU), Shout(GRELOTTE), Shout(SANS_FIN))
    play(state, Shout(GRELOTTE, 100.0), Shout(GRELOTTE, 900.0), Shout(GRELOTTE, 905.0))
    play(state, Shout(SANS_FIN, 300.0), Shout(SANS_FIN, 350.0))
    assert state.pending.is_chance and state.pending.reason == "suite_tie"
    assert state.table.race == "" and state.table.race_shouts == {1: 300.0, 2: 350.0}
    play(state, *(Dice((die,)) for die in (2, 2, 5, 3)))
    assert state.log[start:] == [
        shout(0, "suite", GRELOTTE, 100.0),
        shout(1, "suite", GRELOTTE, 900.0),
        shout(2, "suite", GRELOTTE, 905.0),
        event("race", race="suite", shouts={"0": 100.0, "1": 900.0, "2": 905.0}, tied=[1, 2]),
        shout(1, "suite_tie", SANS_FIN, 300.0),
        shout(2, "suite_tie", SANS_FIN, 350.0),
        event("race", race="suite_tie", shouts={"1": 300.0, "2": 350.0}, tied=[1, 2]),
        event("dice", reason="suite_tie", seat=1, values=[2]),
        event("dice", reason="suite_tie", seat=2, values=[2]),
        event("dice", reason="suite_tie", seat=1, values=[5]),
        event("dice", reason="suite_tie", seat=2, values=[3]),
        score(2, -20, -20, "suite_last"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_wrong_phrase_in_a_race_is_a_bevue_and_no_shout() -> None:
    # 2 seats: "Sans fin…" is offered too (two players can tie). Seat 1 shouts "Pas mou le
    # caillou !" in the Suite: a Bévue, and as it did not shout the Suite's phrase, it is last.
    state = raced("classic", 2, [2, 3, 4])
    assert state.pending is not None
    assert state.pending.options == (PASS, Shout(PAS_MOU), Shout(GRELOTTE), Shout(SANS_FIN))
    start = len(state.log)
    play(state, Shout(GRELOTTE, 100.0), Shout(PAS_MOU, 50.0))
    assert state.log[start:-1] == [
        shout(0, "suite", GRELOTTE, 100.0),
        shout(1, "suite", PAS_MOU, 50.0),
        score(1, -10, -10, "bevue", why="shouted 'pas_mou_le_caillou' in the suite race"),
        event("race", race="suite", shouts={"0": 100.0}, tied=[1]),
        score(1, -10, -20, "suite_last"),
    ]


def test_a_shout_at_the_windows_last_millisecond_counts() -> None:
    # The window is 3000 ms: seat 1 at 3000 counts, seat 0 at 3000.5 does not.
    state = raced("classic", 2, [1, 1, 2])
    play(state, Shout(PAS_MOU, 3000.5), Shout(PAS_MOU, 3000.0))
    assert state.log[-3:-1] == [event("race", race="chouette_velute", shouts={"1": 3000.0}, tied=[1]),
                                score(1, 8, 8, "chouette_velute", True)]


def test_without_wrong_phrases_offered_a_race_offers_its_own_phrase_only() -> None:
    state = raced(ruleset("classic", bevue={"enabled": False}), 2, [2, 3, 4])
    assert state.pending is not None and state.pending.options == (PASS, Shout(GRELOTTE))


def test_tied_first_with_the_thrower_the_others_throw_for_a_six() -> None:
    # 1,1,2 (a Chouette-Velute of 2, 8 points): seats 0 and 1 tie first (100, 150); seat 1
    # alone throws a die: a 6 takes the points from the thrower.
    state = raced("classic", 3, [1, 1, 2])
    start = len(state.log)
    play(state, Shout(PAS_MOU, 100.0), Shout(PAS_MOU, 150.0), PASS)
    assert state.pending is not None and state.pending.is_chance
    assert state.table.race == "" and state.table.race_shouts == {0: 100.0, 1: 150.0}
    play(state, Dice((6,)))
    assert state.log[start:] == [
        shout(0, "chouette_velute", PAS_MOU, 100.0),
        shout(1, "chouette_velute", PAS_MOU, 150.0),
        event("race", race="chouette_velute", shouts={"0": 100.0, "1": 150.0}, tied=[0, 1]),
        event("dice", reason="chouette_velute_tie", seat=1, values=[6]),
        score(1, 8, 8, "chouette_velute", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_tied_first_without_the_thrower_the_earliest_throws_first_until_one_six() -> None:
    # The thrower is silent; seat 2 (100 ms) and seat 1 (150) tie, earliest first: 6 and 3.
    state = raced("classic", 3, [1, 1, 2, 6, 3])
    start = len(state.log)
    play(state, PASS, Shout(PAS_MOU, 150.0), Shout(PAS_MOU, 100.0))
    assert state.log[start + 2:] == [
        event("race", race="chouette_velute", shouts={"1": 150.0, "2": 100.0}, tied=[2, 1]),
        event("dice", reason="chouette_velute_tie", seat=2, values=[6]),
        event("dice", reason="chouette_velute_tie", seat=1, values=[3]),
        score(2, 8, 8, "chouette_velute", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_in_complete_every_player_tied_first_loses_the_value() -> None:
    state = raced("complete", 3, [1, 1, 2])
    play(state, Shout(PAS_MOU, 100.0), Shout(PAS_MOU, 150.0), PASS)
    assert state.log[-4:-1] == [
        event("race", race="chouette_velute", shouts={"0": 100.0, "1": 150.0}, tied=[0, 1]),
        score(0, -8, -8, "chouette_velute_tie"),
        score(1, -8, -8, "chouette_velute_tie"),
    ]


def test_alone_a_suite_unanswered_loses_ten_and_answered_nothing() -> None:
    state = GameState(load_ruleset("solo"), 1, dice=InjectedDice([2, 3, 4, 2, 3, 4]))
    play(state, ROLL, PASS)
    assert state.log[-3:] == [event("race", race="suite", shouts={}, tied=[0]),
                              score(0, -10, -10, "suite_last"),
                              {"type": "turn_start", "turn": 2, "seat": 0}]
    play(state, ROLL, Shout(GRELOTTE, 1500.0))
    assert state.log[-2] == {"type": "race", "turn": 2, "race": "suite", "shouts": {"0": 1500.0}, "tied": []}
    assert state.scores == [-10]
