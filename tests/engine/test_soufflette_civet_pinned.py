"""The Soufflette, the Civet and the false shouts' refusals (cdc_env/rulebook/soufflette.py,
civet.py, false_shouts.py) by hand, event by event (RULES.md, Actions and challenges)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import PASS, ROLL, event, new_game, nobody_buys, play, ruleset, score

from cdc_env.actions import BetOnSuccess, ChallengeSoufflette, DeclareCivet, IllegalActionError, KeepDice, Shout
from cdc_env.rulebook.phrases import RACE_SHOUTS


def soufflette(dice: list[int], rules: Any = "classic", **setup: Any) -> Any:
    """3 seats: seat 0 throws 1,2,4, nobody buys the cul; the Soufflette is asked."""
    state = new_game(rules, 3, dice=[1, 2, 4, *dice], **setup)
    play(state, ROLL)
    nobody_buys(state)
    return state


def test_a_soufflette_missed_in_three_throws_gives_thirty_to_the_challenger() -> None:
    # Seat 2 throws 1,3,5, keeps the 1; throws 2,6, keeps 1,2; throws a 3: no 1,2,4.
    state = soufflette([1, 3, 5, 2, 6, 3])
    assert state.pending is not None
    assert state.pending.options == (PASS, ChallengeSoufflette(1), ChallengeSoufflette(2))
    start = len(state.log)
    play(state, ChallengeSoufflette(2))
    assert state.table.soufflette == {"challenger": 0, "target": 2, "throw": 1} and state.table.dice == (1, 3, 5)
    assert (state.pending.kind, state.pending.seat) == ("soufflette_keep", 2)
    assert state.pending.options == tuple(KeepDice(k) for k in ((), (1,), (3,), (5,), (1, 3), (1, 5), (3, 5)))
    play(state, KeepDice((1,)))
    assert state.table.soufflette == {"challenger": 0, "target": 2, "throw": 2}
    play(state, KeepDice((1, 2)))
    assert state.log[start:] == [
        event("soufflette", seat=0, target=2),
        event("dice", reason="soufflette", seat=2, values=[1, 3, 5]),
        event("dice", reason="soufflette", seat=2, values=[2, 6]),
        event("dice", reason="soufflette", seat=2, values=[3]),
        score(2, -30, -30, "soufflette_failed"),
        score(0, 30, 30, "soufflette_won", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_soufflette_made_on_the_second_throw_takes_forty() -> None:
    state = soufflette([1, 3, 5, 2, 4])
    play(state, ChallengeSoufflette(1), KeepDice((1,)))
    assert state.log[-3:-1] == [score(0, -40, -40, "soufflette_lost", throw=2),
                                score(1, 40, 40, "soufflette_made", True, throw=2)]


def test_in_complete_a_missed_soufflettes_last_throw_scores_its_points() -> None:
    # F: the last throw 2,2,5 is a Chouette of 2: its 4 points go to the challenged.
    state = soufflette([1, 3, 5, 3, 5, 6, 2, 2, 5], rules="complete")
    play(state, ChallengeSoufflette(1), KeepDice(()), KeepDice(()))
    assert state.log[-2] == score(1, 4, -26, "soufflette_last_throw", True, combination="chouette")


def test_below_the_minimum_a_soufflette_is_a_bevue_or_not_offered() -> None:
    # F without negative scores: both players need 30. With Bévues, challenging seat 1 (10)
    # is one; without them, seat 1 is not offered.
    bevues = soufflette([], rules=ruleset("complete", negative_scores=False), scores=[50, 10, 50])
    assert bevues.pending is not None and bevues.pending.bevues == (ChallengeSoufflette(1),)  # named before
    play(bevues, ChallengeSoufflette(1))
    assert bevues.log[-2] == score(0, -10, 40, "bevue", why="a Soufflette below the minimum score")
    quiet = soufflette([], rules=ruleset("complete", negative_scores=False, bevue={"enabled": False}),
                       scores=[50, 10, 50])
    assert quiet.pending is not None and quiet.pending.options == (PASS, ChallengeSoufflette(2))


def test_a_soufflette_switched_off_challenges_nobody() -> None:
    state = new_game(ruleset("classic", soufflette={"enabled": False}), 2, dice=[1, 2, 4])
    play(state, ROLL, PASS)
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("turn_start", 1)


def test_a_civet_with_bets_in_v004_is_logged_and_pays_its_backers() -> None:
    # V: seat 1 bets on seat 0's Civet (a Velute for 20); 2,4,6 makes it.
    state = new_game("v004", 3, dice=[2, 4, 6], items=[{"civet": 1}, {}, {}], scores=[100, 0, 0])
    play(state, DeclareCivet("velute", 20))
    assert state.table.civet == {"seat": 0, "combination": "velute", "stake": 20}
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("civet_bet", 1)
    play(state, BetOnSuccess())
    assert state.table.success_bets == [1]
    play(state, PASS, ROLL)
    assert [e for e in state.log if e["type"] in ("civet", "bet_on_success", "score")] == [
        event("civet", seat=0, combination="velute", stake=20),
        event("bet_on_success", seat=1, on="civet_bet"),
        score(0, 72, 172, "velute"),
        score(0, 20, 192, "civet_made", combination="velute"),
        score(1, 25, 25, "civet_bet_won", True),
    ]


def test_one_point_is_enough_for_a_civet_of_one() -> None:
    state = new_game("classic", 2, dice=[], items=[{"civet": 1}, {}], scores=[1, 0])
    assert state.pending is not None and state.pending.stakes[0] == ("chouette", range(1, 2))


def test_a_false_shout_refused_says_why() -> None:
    state = new_game("classic", 3, dice=[])

    def refusal(shout: Shout, seat: int) -> str:
        with pytest.raises(IllegalActionError) as error:
            state.apply_action(shout, seat=seat)
        return str(error.value)

    assert refusal(Shout("pas_mou_le_caillou", 10.0), 3) == "no seat 3 at this table (seats 0–2)"
    assert refusal(Shout("pas_mou_le_caillou", None), 1) == (
        "a shout needs its onset in ms (a finite number ≥ 0), got None")
    assert refusal(Shout("vive_le_roi", 10.0), 2) == (
        "seat 2 shouted 'vive_le_roi', which is not taken now: it is not a phrase of the game "
        f"({', '.join(RACE_SHOUTS)}, grelottine, a_kadoc, sirop_gagnant)")
    assert state.log[-1]["type"] == "turn_start" and state.scores == [0, 0, 0]
