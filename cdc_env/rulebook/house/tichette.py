"""The Tichette and the Robobrol (Kize's cdc-engine, level 5, `lib/rule-runner/rules/level-5/tichette-rule.ts`).

A throw whose dice sum to 3, 5, 7, 11, 13 or 17, the Artichette (3, 4, 4) excepted, is a
Tichette: every player may claim it by shouting « Tichette ! » (within the race window). Its
value V is the sum plus the throw's Chouette or Cul de Chouette points (0 for any other
combination). One claimant gains V; n ≥ 2 claimants: those of them with the highest score
(scores as the dice fall) each lose n × V. The throw scores as usual.

The Robobrol: a Tichette that is a Cul de Chouette (only 1, 1, 1 sums to 3) claimed by one
player alone, who shouted « Robobrol ! » (a claim too): that player throws the three dice
again and the throw is scored as their own (after the first throw's own points)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.flow import Flow, RollOutcome
from cdc_env.rulebook import races
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game

SUMS = frozenset({3, 5, 7, 11, 13, 17})
TICHETTE, ROBOBROL = "tichette", "robobrol"


def is_tichette(dice: tuple[int, ...]) -> bool:
    return sum(dice) in SUMS and sorted(dice) != [3, 4, 4]


def value(game: Game, outcome: RollOutcome) -> int:
    """V: the sum, plus the points of a Chouette or a Cul de Chouette (Kize counts no other)."""
    name, face = outcome.combination.name, outcome.combination.face
    points = {"chouette": game.rules.scores.chouette, "cul_de_chouette": game.rules.scores.cul_de_chouette}
    return sum(outcome.dice) + (points[name][face - 1] if name in points and face else 0)


def claims(game: Game, _parameters: Mapping[str, Any], outcome: RollOutcome) -> Flow:
    """As the dice show a Tichette: the claims, settled at once. Returns the Robobrol's
    claimant, whose rethrow comes after the throw's own points."""
    if not is_tichette(outcome.dice):
        return None
    seats = game.seats_from(outcome.scorer, include_self=True)
    cul = outcome.combination.name == "cul_de_chouette"
    answers = (TICHETTE, ROBOBROL) if cul else (TICHETTE,)
    scores = list(game.scores)  # as the dice fall
    calls = yield from races.collect_calls(game, TICHETTE, seats, {seat: answers for seat in seats})
    claimants = sorted(calls, key=lambda seat: (calls[seat][1], seat))
    races.race_event(game, TICHETTE, {seat: onset for seat, (_, onset) in calls.items()}, claimants)
    if not claimants:
        return None
    worth = value(game, outcome)
    if len(claimants) == 1:
        game.change_score(claimants[0], worth, "tichette_won", tichette=worth)
        return claimants[0] if cul and calls[claimants[0]][0] == ROBOBROL else None
    best = max(scores[seat] for seat in claimants)
    for seat in claimants:
        if scores[seat] == best:
            game.change_score(seat, -len(claimants) * worth, "tichette_lost", tichette=worth,
                              claimants=len(claimants))
    return None


def robobrol(game: Game, _parameters: Mapping[str, Any], made: Any) -> Flow:
    _outcome, claimant = made
    if claimant is None:
        return
    game.event("robobrol", seat=claimant)
    dice = yield from game.roll_dice("robobrol", 3, claimant)
    yield from game.apply_combination(dice, claimant)


RULE = HouseRule(
    name="tichette",
    source="Kize's cdc-engine, level 5 (lib/rule-runner/rules/level-5/tichette-rule.ts)",
    moments={"combination_shown": claims, "roll_made": robobrol},
    phrases=(TICHETTE, ROBOBROL),
    races=(TICHETTE,),
)
