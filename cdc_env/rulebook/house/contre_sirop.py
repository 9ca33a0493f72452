"""The Contre-Sirop (the 2010 rules PDF at fichier-pdf.fr, p. 4; also LeoBosse/Cul-de-Chouette
and aribautg/cul-de-chouette): after a failed sirop, the first player to shout « J'apprécie les
fruits au sirop ! » wins a fifth of the Cul de Chouette that was tried (10, 12, 14, 16, 18, 20
with the usual scores); players tied for first win nothing. The thrower who failed does not
take part. Needs the Sirotage."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.flow import Flow
from cdc_env.rulebook import races
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game

RACE = "contre_sirop"
PHRASE = "j_apprecie_les_fruits_au_sirop"


def worth(game: Game, face: int) -> int:
    """A fifth of the Cul de Chouette of `face` that the sirop tried for."""
    return game.rules.scores.cul_de_chouette[face - 1] // 5


def race(game: Game, _parameters: Mapping[str, Any], failed: tuple[int, int]) -> Flow:
    """`failed`: (the siroter, the chouette's face)."""
    siroter, face = failed
    seats = game.seats_from(siroter)
    if not seats:
        return
    calls = yield from races.collect_calls(game, RACE, seats, {seat: (PHRASE,) for seat in seats})
    onsets = {seat: onset for seat, (_, onset) in calls.items()}
    first = races.first_shouters(onsets, game.rules.races.tie_window_ms)
    races.race_event(game, RACE, onsets, first)
    if len(first) == 1:
        game.change_score(first[0], worth(game, face), "contre_sirop", face=face)


RULE = HouseRule(
    name="contre_sirop",
    source="fichier-pdf.fr/2010/12/12/cul-de-chouette (p. 4)",
    moments={"sirop_failed": race},
    needs=("sirotage",),
    phrases=(PHRASE,),
    races=(RACE,),
)
