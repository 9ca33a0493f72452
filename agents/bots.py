"""Every bot by name: `make_bot("prudent", seed=..., reaction="human")`.

A name that is a path to a saved model (`*.zip`) gives a bot that plays that model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import random

from agents.heuristic import HeuristicBot
from agents.simple import Bot, RandomBot, SimpleBot
from cdc_env.actions import Action, Shout
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, reaction_model


class SoloOptimalBot:
    """The exact solo optimum (cdc_env/solo_optimum.py: policy iteration over score and items):
    the fewest expected turns to 343. It shouts with its reaction model like any bot; in solo
    every shout inside the 2-second window is in time."""

    name = "solo_optimal"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def act(self, state: GameState, decision: Decision) -> Action:
        from cdc_env.solo_optimum import optimal_action

        if state.rules.max_players != 1:
            raise ValueError("the solo optimum plays only one-player rulesets (solo)")
        action = optimal_action(state, decision)
        if isinstance(action, Shout) and decision.kind == "race":
            return Shout(action.phrase, self.reaction.sample(self.rng))
        return action

BOT_FACTORIES: dict[str, Callable[..., Any]] = {
    "random": RandomBot,
    "simple": SimpleBot,
    "prudent": lambda seed=0, reaction=DEFAULT_REACTION: HeuristicBot("prudent", seed, reaction),
    "bold": lambda seed=0, reaction=DEFAULT_REACTION: HeuristicBot("bold", seed, reaction),
    "solo_optimal": SoloOptimalBot,
}


def make_bot(name: str, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> Bot:
    if name in BOT_FACTORIES:
        bot = BOT_FACTORIES[name](seed=seed, reaction=reaction)
        return bot
    if name.endswith(".zip") or Path(name).exists():
        from agents.model_bot import ModelBot  # torch is only loaded when a model is played

        return ModelBot.load(name, seed=seed, reaction=reaction)
    raise ValueError(
        f"unknown bot {name!r}: give one of {', '.join(BOT_FACTORIES)} or the path of a saved model (.zip)"
    )
