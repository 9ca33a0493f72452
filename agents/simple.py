"""Two simple built-in bots: a random legal player, and a plain rule-of-thumb player.

Both play any ruleset through the engine's public interface only (`state.pending`, the public
scores and items), and shout with onsets from their reaction-time model.
"""

from __future__ import annotations

import random
from typing import Protocol

from cdc_env.actions import (
    Action,
    ChallengeGrelottine,
    ChallengeSoufflette,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
)
from cdc_env.game import RACE_PHRASES, Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, ReactionModel, reaction_model


class Bot(Protocol):
    name: str
    reaction: ReactionModel

    def act(self, state: GameState, decision: Decision) -> Action: ...


class RandomBot:
    """Any legal option, uniformly; shouts come with a sampled onset."""

    name = "random"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def act(self, state: GameState, decision: Decision) -> Action:
        choice = self.rng.choice(decision.legal_actions())
        if isinstance(choice, Shout):
            return Shout(choice.phrase, self.reaction.sample(self.rng))
        return choice


class SimpleBot:
    """Rules of thumb a beginner is taught: sirop only small Chouettes, always shout the right
    phrase, challenge a Velute at the maximum stake, keep the Boucliette for oneself."""

    name = "simple"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def act(self, state: GameState, decision: Decision) -> Action:
        seat = decision.seat
        options = decision.options
        kind = decision.kind
        if kind == "race":
            return Shout(RACE_PHRASES[decision.reason], self.reaction.sample(self.rng))
        if kind == "sirop":
            # Siroting a Chouette of a wins (40 + 10a)/6 on average and loses 5a²/6: worth it
            # for 1 and 2 only.
            face = max(set(state.table.dice), key=state.table.dice.count)
            return Sirop() if face <= 2 else Pass()
        if kind == "soufflette":
            leader = max((o for o in options if isinstance(o, ChallengeSoufflette)),
                         key=lambda o: state.scores[o.target])
            return leader
        if kind == "soufflette_keep":
            wanted = [KeepDice(k) for k in (o.keep for o in options if isinstance(o, KeepDice))
                      if len(set(k)) == len(k) and set(k) <= {1, 2, 4}]
            return max(wanted, key=lambda o: len(o.keep))
        if kind == "grelottine":
            stakes = dict(decision.stakes).get("velute")
            return ChallengeGrelottine("velute", stakes[-1]) if stakes else Pass()
        if kind == "boucliette":
            challenge = state.table.challenge or {}
            return UseBoucliette() if challenge.get("challenged") == seat else Pass()
        if Roll() in options:
            return Roll()
        return Pass() if Pass() in options else options[0]


BOTS = {"random": RandomBot, "simple": SimpleBot}


def make_bot(name: str, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> Bot:
    try:
        return BOTS[name](seed=seed, reaction=reaction)
    except KeyError:
        raise ValueError(f"unknown bot {name!r}; choose from {', '.join(BOTS)}") from None
