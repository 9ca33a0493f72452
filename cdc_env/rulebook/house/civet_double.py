"""The Civet doublé (Kize's cdc-engine, level 2, `lib/rule-runner/rules/level-2/civet-doubled-rule.ts`):
once a Civet is declared, the other holders of a Civet may join it, each spending their own
Civet; the declarer's stake is doubled per joiner (×2, ×4, ...), won or lost. The joiners win
or lose nothing else: Kize only takes their Civet. Needs the Civet."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.actions import BetOnSuccess, Pass
from cdc_env.flow import Decision, Flow
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game


def join(game: Game, _parameters: Mapping[str, Any], declared: dict[str, Any]) -> Flow:
    """Each other holder of a Civet, in seat order, joins (spends it) or passes."""
    declarer = declared["seat"]
    joined = []
    for seat in game.seats_from(declarer):
        if not game.items[seat]["civet"]:
            continue
        choice = yield Decision(seat, "civet_double", (BetOnSuccess(), Pass()))
        if isinstance(choice, BetOnSuccess):
            game.spend_item(seat, "civet", "civet_doubled")
            joined.append(seat)
            declared["multiplier"] = 2 ** len(joined)
            game.event("civet_doubled", seat=seat, declarer=declarer, multiplier=declared["multiplier"])
    if joined and game.table.civet is not None:
        game.table.civet = {**game.table.civet, "joined": joined, "multiplier": declared["multiplier"]}


RULE = HouseRule(
    name="civet_double",
    source="Kize's cdc-engine, level 2 (lib/rule-runner/rules/level-2/civet-doubled-rule.ts)",
    moments={"civet_declared": join},
    needs=("civet",),
    decisions={"civet_double": "join the declared Civet with your own (doubling its stake), or pass"},
)
