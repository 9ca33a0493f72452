"""Every bot by name: `make_bot("prudent", seed=..., reaction="human")`.

Besides the built-in names: `searcher` (sampled look-ahead over bold, agents/search.py;
`searcher:MS` with a time budget per decision, `searcher:MS:ROUNDS`); `champion` (the shipped
agent of the game's table, agents/champion.py); a path to a saved model (`*.zip`) or a weights file (`*.npz`); and
`package.module:Name`, a class or factory whose objects have `act(state, decision) -> action`,
the way a researcher brings their own agent (called with `seed` and `reaction` where it takes
them).
"""

from __future__ import annotations

import importlib
import inspect
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents import heuristic
from agents.simple import Bot, RandomBot, SimpleBot
from cdc_env.actions import Action, Shout
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION, reaction_model
from cdc_env.rules import Ruleset


class SoloOptimalBot:
    """The exact solo optimum (cdc_env/solo_optimum.py: policy iteration over score and items):
    the fewest expected turns to 343. It shouts with its reaction model like any bot; in solo
    every shout inside the 2-second window is in time."""

    name = "solo_optimal"

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction_model(reaction)

    def check_seats(self, rules: Ruleset, players: int) -> None:
        """Said before any game (`check_table`): fit_value.py met it only in its first game."""
        if rules.max_players != 1:
            raise ValueError("the solo optimum plays only one-player rulesets (solo)")
        from cdc_env.solo_optimum import uncovered

        if (why := uncovered(rules)) is not None:
            raise ValueError(f"the solo optimum does not cover {why}: play that table with another bot")

    def act(self, state: GameState, decision: Decision) -> Action:
        from cdc_env.solo_optimum import optimal_action

        self.check_seats(state.rules, state.players)
        action = optimal_action(state, decision)
        if isinstance(action, Shout) and decision.kind == "race":
            return Shout(action.phrase, self.reaction.sample(self.rng))
        return action

BOT_FACTORIES: dict[str, Callable[..., Any]] = {
    "random": RandomBot,
    "simple": SimpleBot,
    "prudent": heuristic.prudent,
    "bold": heuristic.bold,
    "patient": heuristic.patient,
    "hedger": heuristic.hedger,
    "solo_optimal": SoloOptimalBot,
}


BOT_NAMES = (*BOT_FACTORIES, "searcher", "champion", "network")


def import_agent(spec: str, seed: int | str, reaction: str) -> Any:
    """`package.module:Name` → an agent built by that class or factory."""
    module_name, _, attribute = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:  # noqa: BLE001 - any failure to import is the user's to fix
        raise ValueError(f"agent {spec!r}: module {module_name!r} cannot be imported "
                         f"({type(error).__name__}: {error}); is it on PYTHONPATH?") from None
    factory = getattr(module, attribute, None)
    if factory is None or not callable(factory):
        raise ValueError(f"agent {spec!r}: {module_name} has no class or factory {attribute!r}")
    parameters = inspect.signature(factory).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    kwargs = {key: value for key, value in (("seed", seed), ("reaction", reaction))
              if takes_any or key in parameters}
    try:
        agent = factory(**kwargs)
    except Exception as error:  # noqa: BLE001
        raise ValueError(f"agent {spec!r} could not be built ({type(error).__name__}: {error})") from None
    if not callable(getattr(agent, "act", None)):
        raise ValueError(f"agent {spec!r} has no act(state, decision) method")
    if not hasattr(agent, "rng"):
        agent.rng = random.Random(seed)  # tournaments reseed every bot between games
    return agent


def check_table(bot: object, rules: Ruleset, players: int) -> None:
    """Whether `bot` can play `players` seats of `rules`, before any game: a ValueError that
    says why where it cannot (no champion or network for that table, a model trained for
    another size). Bots with such a limit have `check_seats(rules, players)`; others play any
    table."""
    check = getattr(bot, "check_seats", None)
    if check is not None:
        check(rules, players)


def make_bot(name: str, seed: int | str = 0, reaction: str = DEFAULT_REACTION,
             budget_ms: float | None = None) -> Bot:
    """`budget_ms` (a command's --budget-ms): how long a searcher may think per decision, where
    its name gives no budget (`searcher`, and `champion` where the champion searches); other
    bots do not think in time and ignore it."""
    if not name.strip():  # (Path("") is the current folder: it was taken for a model, a pathlib error)
        raise ValueError(f"no bot given (an empty name): give one of {', '.join(BOT_NAMES)}, the path of a saved "
                         "model (.zip or .npz) or package.module:Name")
    if name in BOT_FACTORIES:
        bot = BOT_FACTORIES[name](seed=seed, reaction=reaction)
        return bot
    if name == "searcher" or name.startswith("searcher:"):
        from agents.search import searcher

        return searcher(seed=seed, reaction=reaction, spec=name.removeprefix("searcher"), budget_ms=budget_ms)
    if name in ("champion", "network"):  # network: the table's network, where `champion` searches too
        from agents.champion import ChampionBot

        return ChampionBot(seed=seed, reaction=reaction, network=name == "network",  # type: ignore[return-value]
                           budget_ms=budget_ms)
    if name.endswith((".zip", ".npz")) or Path(name).exists():
        from agents.model_bot import ModelBot  # torch is only loaded when a model is played

        return ModelBot.load(name, seed=seed, reaction=reaction)
    if ":" in name:
        return import_agent(name, seed, reaction)
    raise ValueError(
        f"unknown bot {name!r}: give one of {', '.join(BOT_NAMES)}, the path of a saved model (.zip or .npz) "
        "or package.module:Name"
    )
