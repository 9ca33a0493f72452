"""The Verdier (Kize's cdc-engine, level 3, `lib/rule-runner/rules/level-3/verdier-rule.ts`):
when the two chouettes are different even faces (2-4, 2-6, 4-6), every player, the thrower
included, may bet « Vert-Linette ! » before the cul falls. If the three dice are 2, 4 and 6,
each bettor gains 25; otherwise each loses 5. The throw scores as usual."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.actions import BetOnSuccess, Pass
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game

EVEN = frozenset({2, 4, 6})


def opens(chouettes: tuple[int, ...]) -> bool:
    """Two different even chouettes: a 2, 4, 6 is still possible."""
    return len(set(chouettes)) == 2 and set(chouettes) <= EVEN


def made(dice: tuple[int, ...]) -> bool:
    return sorted(dice) == [2, 4, 6]


def bets(game: Game, _parameters: Mapping[str, Any], chouettes: tuple[int, ...]) -> Flow:
    """Before the cul: each player, from the thrower on, bets or passes. Returns the bettors."""
    if not opens(chouettes):
        return []
    thrower = game.table.thrower if game.table.thrower is not None else game.turn_seat
    assert thrower is not None
    bettors: list[int] = []
    for seat in game.seats_from(thrower, include_self=True):
        choice = yield Decision(seat, "verdier_bet", (BetOnSuccess(), Pass()))
        if isinstance(choice, BetOnSuccess):
            bettors.append(seat)
            game.event("verdier_bet", seat=seat)
            # Shown at once, as the bird bets are: « Vert-Linette ! » is said aloud.
            game.table.house["verdier_bets"] = list(bettors)
    game.table.house["verdier_bets"] = list(bettors)
    return bettors


def settle(game: Game, parameters: Mapping[str, Any], made_and_bettors: Any) -> Flow:
    outcome, bettors = made_and_bettors
    assert isinstance(outcome, RollOutcome)
    won = made(outcome.dice)
    for seat in bettors or ():
        if won:
            game.change_score(seat, parameters["win"], "verdier_won")
        else:
            game.change_score(seat, -parameters["loss"], "verdier_lost")
    game.table.house.pop("verdier_bets", None)
    return
    yield


def expected_gain(chouettes: tuple[int, ...], parameters: Mapping[str, Any]) -> float:
    """What a bet is worth on average once the chouettes show: the cul makes 2, 4, 6 once in
    six (the one missing even face), so 25/6 − 5·5/6 = 0 with Kize's numbers: a fair bet."""
    if not opens(chouettes):
        return 0.0
    return (parameters["win"] - 5 * parameters["loss"]) / 6


RULE = HouseRule(
    name="verdier",
    source="Kize's cdc-engine, level 3 (lib/rule-runner/rules/level-3/verdier-rule.ts)",
    moments={"chouettes": bets, "roll_made": settle},
    parameters={"win": 25, "loss": 5},
    minimums={"win": 0, "loss": 0},
    # « Vert-Linette ! » answers the verdier_bet decision (voice/intents.py): a bet, not a shout.
    decisions={"verdier_bet": "bet « Vert-Linette ! » that the cul makes 2, 4, 6, or pass"},
    shown_seats=("verdier_bets",),  # the observation marks who has bet on the throw in play
)
