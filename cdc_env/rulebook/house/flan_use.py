"""The Flan's use (aribautg/cul-de-chouette, `js/main.js`: `offerFlanUse`, `getFlanResult`):
before another player's throw, a holder of a Flan may flan the thrower by shouting « Tatan elle
fait des Flans ! », spending the Flan; that throw's Chouette, Velute or Cul de Chouette then
costs the thrower its points instead of giving them. A flanned Néant keeps the Flan (aribautg:
"le Flan est conservé pour le prochain lancer": we give it back to its holder). Needs the Flan.

Our reading where aribautg is special or silent: its Chouette-Velute and Suite reversals (the
first shouter loses) are not played, those races run as usual; a bought cul makes the
combination the buyer's and the Flan is spent for nothing; a flanned Chouette that is siroted is
judged by its sirop (the sirop is not inverted). The inversion is charged before the
combination scores (−2 × its points, then its points), so a flanned throw never wins. Without
negative scores (F's option) that charge stops at 0: what it could not take is charged once the
points are given, so a flanned throw still costs its points (down to 0) and never gains."""

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
    if outcome.scorer != flan["on"]:
        return None  # a bought cul: the throw is the buyer's, the Flan spent for nothing (a Néant too)
    if outcome.combination.name == "neant":
        game.give_item(flan["by"], "flan", "flan_kept")
        return None
    if outcome.combination.name not in INVERTED:
        return None
    points = outcome.combination.value
    before = game.scores[outcome.scorer]
    game.change_score(outcome.scorer, -2 * points, "flan", by=flan["by"])
    return {"by": flan["by"], "due": 2 * points, "taken": before - game.scores[outcome.scorer], "before": before,
            "at": len(game.log)}
    yield  # a generator, like every moment rule


def settled(game: Game, _parameters: Mapping[str, Any], made: Any) -> Flow:
    """Once the flanned throw has scored: a siroted Chouette is judged by its sirop, so the
    inversion is given back; otherwise what the charge ahead could not take (a score stopped at
    0) is charged now that the points are given."""
    outcome, charged = made
    if not charged:
        return
    if outcome.sirop_success is not None:
        # The score the thrower would have without the flan: its start and what the sirop moved
        # since (asked, not held: without negative scores the charge's floor held a failed sirop's
        # loss, and giving back what was taken made the flan a gain).
        seat = outcome.scorer
        moved = sum(e["points"] for e in game.log[charged["at"]:] if e["type"] == "score" and e["seat"] == seat)
        target = charged["before"] + moved if game.rules.negative_scores else max(0, charged["before"] + moved)
        game.change_score(seat, target - game.scores[seat], "flan_siroted")
    elif charged["taken"] < charged["due"]:
        game.change_score(outcome.scorer, charged["taken"] - charged["due"], "flan", by=charged["by"])
    return
    yield


RULE = HouseRule(
    name="flan_use",
    source="aribautg/cul-de-chouette (js/main.js: offerFlanUse, getFlanResult)",
    moments={"turn_started": offer, "combination_shown": invert, "roll_made": settled},
    needs=("flan",),
    decisions={"flan_use": "flan the thrower (« Tatan elle fait des Flans ! »): their points are inverted"},
)
