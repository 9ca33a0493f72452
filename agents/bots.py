"""Every bot by name: `make_bot("prudent", seed=..., reaction="human")`.

A name that is a path to a saved model (`*.zip`) gives a bot that plays that model.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.heuristic import HeuristicBot
from agents.simple import Bot, RandomBot, SimpleBot
from cdc_env.reaction import DEFAULT_REACTION

BOT_FACTORIES: dict[str, Callable[..., Any]] = {
    "random": RandomBot,
    "simple": SimpleBot,
    "prudent": lambda seed=0, reaction=DEFAULT_REACTION: HeuristicBot("prudent", seed, reaction),
    "bold": lambda seed=0, reaction=DEFAULT_REACTION: HeuristicBot("bold", seed, reaction),
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
