"""The Cul de Chouette contré (Kize's cdc-engine, `lib/rule-runner/rules/basic-rules/cul-de-chouette-rule.ts`
and its spec): a Cul de Chouette is claimed; if a player other than the thrower claims it
first, the thrower scores 3/5 of it and that player 2/5 (a Cul de Chouette of 2: 36 and 24).

Kize leaves who claimed first to the scorekeeper; we make it a race `cul_de_chouette_contre`:
everyone may shout « Cul de Chouette ! ». The thrower first (or tied for first), or nobody: the
thrower keeps it all; another first alone: the split. The other's 2/5 (capped like any gain off
one's dice) are taken from the thrower before the Cul de Chouette itself scores, so that the
win on 343 is judged on the thrower's 3/5. (Kize also counts a Cul de Chouette made by a sirop:
the sirop's rule would need a moment of its own there; we contre only a thrown one.)"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.flow import Flow, RollOutcome
from cdc_env.rulebook import races
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game

RACE = "cul_de_chouette_contre"
PHRASE = "cul_de_chouette"


def contre(game: Game, _parameters: Mapping[str, Any], outcome: RollOutcome) -> Flow:
    if outcome.combination.name != "cul_de_chouette":
        return None
    thrower = outcome.scorer
    seats = game.seats_from(thrower, include_self=True)
    calls = yield from races.collect_calls(game, RACE, seats, {seat: (PHRASE,) for seat in seats})
    onsets = {seat: onset for seat, (_, onset) in calls.items()}
    first = races.first_shouters(onsets, game.rules.races.tie_window_ms)
    races.race_event(game, RACE, onsets, first)
    if len(first) != 1 or first[0] == thrower:
        return None
    share = outcome.combination.value * 2 // 5
    game.change_score(thrower, -share, "cul_de_chouette_contre", by=first[0])
    game.change_score(first[0], share, "cul_de_chouette_contre", against=thrower)
    return None


RULE = HouseRule(
    name="cul_de_chouette_contre",
    source="Kize's cdc-engine (lib/rule-runner/rules/basic-rules/cul-de-chouette-rule.ts)",
    moments={"combination_shown": contre},
    phrases=(PHRASE,),
    races=(RACE,),
)
