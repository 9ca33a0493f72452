"""Playing whole games: a driver loop over the engine, and a readable text log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from cdc_env.actions import Action
from cdc_env.dice import SeededDice
from cdc_env.game import Decision, GameState
from cdc_env.rules import Ruleset


class Policy(Protocol):
    def act(self, state: GameState, decision: Decision) -> Action: ...


def play_game(rules: Ruleset, policies: Sequence[Policy], seed: int,
              max_turns: int | None = None) -> GameState:
    """Play one game: seat i is played by policies[i], the dice by `seed`. It ends with a
    winner, or after `max_turns` turns when given (then `state.is_over` is False)."""
    state = GameState(rules, len(policies), dice=SeededDice(seed))
    while (decision := state.pending) is not None:
        if max_turns is not None and state.turn_number > max_turns:
            break
        assert decision.seat is not None  # the seeded dice answer every chance moment
        state.apply_action(policies[decision.seat].act(state, decision))
    return state


BIRD_NAMES = ("Linotte", "Alouette", "Fauvette", "Mouette", "Bergeronnette", "Chouette")


def describe_event(event: dict[str, Any], names: Sequence[str] | None = None) -> str:
    """One line of the log in a scorekeeper's words; `names` gives the players' names by seat."""

    def who(seat: int | None) -> str:
        if seat is None:
            return "the table"
        return names[seat] if names is not None else f"seat {seat}"

    def group(seats: Sequence[int]) -> str:
        return ", ".join(who(s) for s in seats) or "nobody"

    kind = event["type"]
    seat = event.get("seat")
    if kind == "first_player":
        return f"{who(seat)} starts"
    if kind == "turn_start":
        return f"— turn {event['turn']}: {who(seat)} throws"
    if kind == "dice":
        owner = "" if seat is None else f" ({who(seat)})"
        return f"  dice for {event['reason'].replace('_', ' ')}{owner}: {event['values']}"
    if kind == "combination":
        races = f", races: {', '.join(event['races'])}" if event["races"] else ""
        return f"  {who(seat)}: {event['dice']} = {event['combination']} ({event['value']}){races}"
    if kind == "score":
        return "  " + _describe_score(event, who(seat))
    if kind == "item":
        verb = "gains" if event["change"] > 0 else "spends"
        return f"  {who(seat)} {verb} a {event['item']} ({event['reason'].replace('_', ' ')})"
    if kind == "shout":
        return f"  {who(seat)} shouts {event['phrase']} at {event['onset_ms']:.0f} ms"
    if kind == "false_shout":
        return f"  {who(seat)} shouts {event['phrase']} out of any race"
    if kind == "race":
        # The Suite and its tie-break are lost by the last shouter; every other race is won
        # by the first.
        place = "last" if event["race"] in ("suite", "suite_tie") else "first"
        if len(event["tied"]) > 1:
            return f"  race {event['race']}: {group(event['tied'])} tied {place}"
        if event["tied"]:
            return f"  race {event['race']}: {who(event['tied'][0])} {place}"
        return f"  race {event['race']}: nobody shouted in time"
    if kind == "win":
        return f"*** {who(seat)} wins with {event['score']} ***"
    if kind == "civet":
        return f"  {who(seat)} stakes a Civet of {event['stake']} on {event['combination']}"
    if kind == "grelottine":
        return (f"  {who(seat)} challenges {who(event['challenged'])}: a Grelottine of "
                f"{event['stake']} on {event['combination']}")
    if kind == "challenge_result":
        made = "makes it" if event["made"] else "misses it"
        return f"  {who(event['challenged'])} {made} (challenge of {who(event['challenger'])})"
    if kind == "boucliette":
        return f"  {who(seat)} cancels {who(event['challenger'])}'s challenge with a Boucliette"
    if kind == "bet_on_success":
        return f"  {who(seat)} bets on success"
    if kind == "buy_cul":
        return f"  {who(seat)} buys the cul from {who(event['from_seat'])}"
    if kind == "sirop":
        return f"  {who(seat)} sirops the Chouette of {event['face']}"
    if kind in ("bird_bet", "beau_sirop"):
        bird = "Beau-Sirop" if kind == "beau_sirop" else BIRD_NAMES[event["face"] - 1]
        return f"  {who(seat)} bets {bird} ({event['face']})"
    if kind == "soufflette":
        return f"  {who(seat)} challenges {who(event['target'])} to a Soufflette"
    if kind == "sum_bet":
        return f"  {who(seat)} bets on a sum of {event['total']}"
    if kind == "relaunch":
        return f"  {who(seat)} relaunches {event['dice']} (sum {event['total']}): {event['combination']}"
    if kind == "claim":
        return f"  {who(seat)} claims: {event['phrase']}"
    if kind == "bet_unclaimed":
        return f"  {who(seat)}'s winning bet was not claimed"
    if kind == "velutee_tie":
        return f"  Velutée tie between {group(event['seats'])}: {event['dice']} = {event['combination']}"
    if kind == "jarret":
        return f"  {who(seat)}: a Jarret {event['dice']}"
    fields = ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "turn", "seat"))
    return f"  {who(seat)} {kind.replace('_', ' ')}" + (f": {fields}" if fields else "")


def _describe_score(event: dict[str, Any], name: str) -> str:
    reason = event["reason"].replace("_", " ")
    if event["reason"] == "bevue":
        reason = f"a Bévue ({event['why']})" if event.get("why") else "a Bévue"
    line = f"{name} {event['delta']:+d} for {reason}"
    if event["delta"] != event["points"]:
        # Held by the cap (a gain) or by negative_scores: false (a loss held at 0).
        held = "capped" if event["points"] > 0 else "held at 0"
        line += f" (of {event['points']:+d}, {held})"
    return f"{line} → {event['score']}"
