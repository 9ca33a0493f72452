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


class FirstLegalAgent:
    """A researcher's agent brought as `doubles:FirstLegalAgent`: the first legal action, built
    with no arguments (the tournament gives it an `rng` of its own)."""

    def act(self, state: GameState, decision: Decision) -> Action:
        return decision.legal_actions()[0]


class OutOfTurnAgent:
    """A brought agent that does not play legal moves: it always passes, where passing is not
    allowed too."""

    def __init__(self, seed: int | str = 0) -> None:
        self.seed = seed

    def act(self, state: GameState, decision: Decision) -> Action:
        return Pass()
