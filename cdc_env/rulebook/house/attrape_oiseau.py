"""The Attrape-oiseau (Kize's cdc-engine, level 1, `lib/rule-runner/rules/level-1/attrape-oiseau-rule.ts`
and its spec): when a Chouette is siroted, another player may catch the bird and take the sirop
over. The thrower then keeps the Chouette's points; the sirop's gain (the Cul de Chouette) or
loss (the Chouette's points) is the catcher's (Kize: Alban's Chouette of 3 caught by Delphin:
Alban +9, Delphin −9 on a 4 or +70 on a 3). Needs the Sirotage.

Kize leaves who catches to the scorekeeper; we ask the other players in seat order from the
thrower, the first who catches takes it (decision `attrape_oiseau`, `BetOnSuccess` or `Pass`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.actions import BetOnSuccess, Pass
from cdc_env.flow import Decision, Flow
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game


def catch(game: Game, _parameters: Mapping[str, Any], sirop: tuple[int, int]) -> Flow:
    """`sirop`: (the thrower, the chouette's face). Returns the catcher, or None."""
    from cdc_env.rulebook.sirop import may_sirop  # (the sirop's rule calls this one's moment)

    thrower, face = sirop
    value = game.rules.scores.chouette[face - 1]
    for seat in game.seats_from(thrower):
        if not may_sirop(game, seat, value):
            continue  # F without negative scores: a sirop one's score does not cover is not one's to take
        choice = yield Decision(seat, "attrape_oiseau", (BetOnSuccess(), Pass()))
        if isinstance(choice, BetOnSuccess):
            game.event("attrape_oiseau", seat=seat, thrower=thrower, face=face)
            return seat
    return None


RULE = HouseRule(
    name="attrape_oiseau",
    source="Kize's cdc-engine, level 1 (lib/rule-runner/rules/level-1/attrape-oiseau-rule.ts)",
    moments={"sirop_declared": catch},
    needs=("sirotage",),
    decisions={"attrape_oiseau": "catch the bird: take the sirop over (its gain or loss is yours), or pass"},
)
