"""House rules by hand, event by event (cdc_env/rulebook/house/): the Civet doublé joined by
three holders, and the Verdier's bets as they are shown and settled."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, new_game, play, ruleset

from cdc_env.actions import BetOnSuccess, DeclareCivet, Dice


def event(type_: str, **fields: Any) -> dict[str, Any]:
    return {"type": type_, "turn": 1, **fields}


def test_three_holders_double_a_civet_three_times() -> None:
    # 5 seats: seats 1, 3 and 4 hold a Civet (seat 2 none, so it is not asked); each joins:
    # the stake of 10 is doubled three times, 80, won on a Velute.
    rules = ruleset("classic", house_rules={"civet_double": True}, dice_buying={"enabled": False})
    state = new_game(rules, 5, items=[{"civet": 1}, {"civet": 1}, {}, {"civet": 1}, {"civet": 1}],
                     scores=[100, 0, 0, 0, 0])
    play(state, DeclareCivet("velute", 10))
    start = len(state.log)
    assert state.pending is not None and [state.pending.seat, state.pending.kind] == [1, "civet_double"]
    play(state, BetOnSuccess(), BetOnSuccess(), BetOnSuccess())
    assert state.table.civet == {"seat": 0, "combination": "velute", "stake": 10, "joined": [1, 3, 4],
                                 "multiplier": 8}
    play(state, Dice((2, 4)), Dice((6,)))
    joins = [e for seat, multiplier in ((1, 2), (3, 4), (4, 8)) for e in (
        event("item", seat=seat, item="civet", change=-1, reason="civet_doubled"),
        event("civet_doubled", seat=seat, declarer=0, multiplier=multiplier))]
    assert state.log[start:start + 6] == joins
    assert state.log[-2] == event("score", seat=0, points=80, delta=80, score=252, reason="civet_made",
                                  capped=True, combination="velute")
    # A holder who passes leaves the Civet on the table as it was declared.
    alone = new_game(rules, 2, items=[{"civet": 1}, {"civet": 1}], scores=[100, 0])
    play(alone, DeclareCivet("velute", 10), PASS)
    assert alone.pending is not None and alone.pending.reason == "chouettes"
    assert alone.table.civet == {"seat": 0, "combination": "velute", "stake": 10}


def test_verdier_bets_are_shown_as_they_are_made_and_cleared_when_settled() -> None:
    # Chouettes 2,4 open the Verdier: seat 0 bets, its bet is on the table at once; seat 1
    # passes; the cul 5 makes a Néant: the bet is lost and gone from the table when seat 1,
    # holding a Grelottine, is asked to challenge.
    rules = ruleset("classic", house_rules={"verdier": True}, dice_buying={"enabled": False})
    state = new_game(rules, 2, items=[{}, {"grelottine": 1}], scores=[100, 100])
    play(state, ROLL, Dice((2, 4)))
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("verdier_bet", 0)
    start = len(state.log)
    play(state, BetOnSuccess())
    assert state.table.house == {"verdier_bets": [0]} and state.pending.seat == 1
    play(state, PASS, Dice((5,)))
    assert state.log[start] == event("verdier_bet", seat=0)
    assert (state.pending.kind, state.pending.seat) == ("grelottine", 1) and state.table.house == {}
    # Nobody bets: the table shows an empty list of bets while the cul is awaited.
    quiet = new_game(rules, 2)
    play(quiet, ROLL, Dice((2, 4)), PASS, PASS)
    assert quiet.pending is not None and quiet.pending.reason == "cul" and quiet.table.house == {"verdier_bets": []}
