"""Test doubles shared by the play and voice tests."""

from __future__ import annotations

from cdc_env.actions import Action, Pass, Roll, Shout
from cdc_env.game import RACE_PHRASES, Decision, GameState


class FixedBot:
    """Rolls, passes, and shouts the right phrase at a fixed onset."""

    def __init__(self, onset_ms: float) -> None:
        self.onset_ms = onset_ms

    def act(self, state: GameState, decision: Decision) -> Action:
        if decision.kind == "race":
            return Shout(RACE_PHRASES[decision.reason], self.onset_ms)
        return Roll() if decision.allows(Roll()) else Pass()
