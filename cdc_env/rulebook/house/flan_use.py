"""The Flan's use (aribautg/cul-de-chouette, `js/main.js`: `offerFlanUse`, `getFlanResult`):
before another player's throw, a holder of a Flan may flan the thrower by shouting « Tatan elle
fait des Flans ! », spending the Flan; that throw's Chouette, Velute or Cul de Chouette then
costs the thrower its points instead of giving them. A flanned Néant keeps the Flan (aribautg:
"le Flan est conservé pour le prochain lancer": we give it back to its holder). Needs the Flan.

Our reading where aribautg is special or silent: its Chouette-Velute and Suite reversals (the
first shouter loses) are not played, those races run as usual; a bought cul makes the
combination the buyer's and the Flan is spent for nothing; a flanned Chouette that is siroted is
judged by its sirop (the sirop is not inverted). The inversion is charged before the
combination scores (−2 × its points, then its points), so a flanned throw never wins."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.actions import BetOnSuccess, Pass
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game

INVERTED = ("chouette", "velute", "cul_de_chouette")


def offer(game: Game, _parameters: Mapping[str, Any], thrower: int) -> Flow:
    """Before `thrower` throws, each other Flan holder in seat order may flan them."""
    for seat in game.seats_from(thrower):
        if not game.items[seat]["flan"]:
            continue
        choice = yield Decision(seat, "flan_use", (BetOnSuccess(), Pass()))
        if isinstance(choice, BetOnSuccess):
            game.spend_item(seat, "flan", "flan_used")
            game.event("flan_used", seat=seat, thrower=thrower)
            game.table.house["flan"] = {"by": seat, "on": thrower}
            return


def invert(game: Game, _parameters: Mapping[str, Any], outcome: RollOutcome) -> Flow:
    """As the flanned throw shows its combination: the inversion, charged ahead."""
    flan = game.table.house.pop("flan", None)
    if flan is None:
        return None
    if outcome.combination.name == "neant":
        game.give_item(flan["by"], "flan", "flan_kept")
        return None
    if outcome.scorer != flan["on"] or outcome.combination.name not in INVERTED:
        return None
    points = outcome.combination.value
    game.change_score(outcome.scorer, -2 * points, "flan", by=flan["by"])
    return points
    yield  # a generator, like every moment rule


def siroted_back(game: Game, _parameters: Mapping[str, Any], made: Any) -> Flow:
    """A flanned Chouette that was siroted: its sirop judges it, the inversion is given back."""
    outcome, charged = made
    if charged and outcome.sirop_success is not None:
        game.change_score(outcome.scorer, 2 * charged, "flan_siroted")
    return
    yield


RULE = HouseRule(
    name="flan_use",
    source="aribautg/cul-de-chouette (js/main.js: offerFlanUse, getFlanResult)",
    moments={"turn_started": offer, "combination_shown": invert, "roll_made": siroted_back},
    needs=("flan",),
    decisions={"flan_use": "flan the thrower (« Tatan elle fait des Flans ! »): their points are inverted"},
)
