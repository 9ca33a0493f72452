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


def describe_event(event: dict[str, Any], names: Sequence[str] | None = None) -> str:
    """One line of the log, in words; `names` gives the players' names by seat."""
    kind = event["type"]
    seat = event.get("seat")
    who = f"seat {seat}" if names is None or seat is None else names[seat]
    if kind == "first_player":
        return f"{who} starts"
    if kind == "turn_start":
        return f"— turn {event['turn']}: {who} throws"
    if kind == "dice":
        owner = "" if seat is None else f" ({who})"
        return f"  dice for {event['reason']}{owner}: {event['values']}"
    if kind == "combination":
        races = f", races: {', '.join(event['races'])}" if event["races"] else ""
        return f"  {who}: {event['dice']} = {event['combination']} ({event['value']}){races}"
    if kind == "score":
        detail = f" (of {event['points']:+d}, capped)" if event["delta"] != event["points"] else ""
        return f"  {who} {event['delta']:+d} for {event['reason']}{detail} → {event['score']}"
    if kind == "item":
        verb = "gains" if event["change"] > 0 else "spends"
        return f"  {who} {verb} a {event['item']} ({event['reason']})"
    if kind == "shout":
        return f"  {who} shouts {event['phrase']} at {event['onset_ms']:.0f} ms"
    if kind == "race":
        return f"  race {event['race']}: tied {event['tied']}" if len(event["tied"]) > 1 else \
            f"  race {event['race']} decided"
    if kind == "win":
        return f"*** {who} wins with {event['score']} ***"
    fields = ", ".join(f"{k}={v}" for k, v in event.items() if k not in ("type", "turn", "seat"))
    return f"  {who} {kind}" + (f": {fields}" if fields else "")
