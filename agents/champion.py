"""The shipped champions: the best trained agent of each table, as numpy weights inside the
package (`agents/champions/RULESET_Np.npz` + `.json`), played without torch.

The bot name `champion` means the champion of the game's ruleset and seat count; it is looked up
when the bot first plays (or at once, where the caller knows the table), and a table without one
is refused with the list of those that have one. `scripts/train.py --publish RUN` writes a run's
model as the champion of its table, replacing the shipped one.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from cdc_env.actions import Action
from cdc_env.game import Decision, GameState
from cdc_env.reaction import DEFAULT_REACTION
from cdc_env.rules import SHIPPED_RULESETS, Ruleset, load_ruleset

CHAMPIONS_DIR = Path(__file__).resolve().parent / "champions"

# Tables where the searcher is the champion: where the network does not clear the bar on both
# seed ranges and the searcher does, or where the searcher beats the network by issue 24's margin
# (2 points on the same games, 6000 or more a range). There the bot name `champion` plays the
# searcher (agents/search.py; docs/agents.md, "The searcher"); the network stays shipped beside
# it, the bot `network`, and `scripts/train.py --publish` replaces that network.
# v004 at 2 seats: the searcher as it was measured over 4000 games on both seed ranges (patient
# as its base; `plain`: before session 36's stratified dice and clipped value, not yet measured
# there over as many games).
# classic at 2 seats: the searcher over the network with the value fitted to the network's games
# (agents/values/classic_2p_network.json), 6000 games a range (session 40).
# v004 at 4 seats: the searcher over round 2's network with the table's value, 6000 games a range
# (session 40): +1.8 points over that network on the same games on both ranges.
SEARCH_CHAMPIONS: dict[tuple[str, int], str] = {
    ("v004", 2): "searcher:300:64:turn:patient:plain",
    ("classic", 2): "searcher:300:32:turn:network",
    ("v004", 4): "searcher:300:32:turn:network",
}


def champion_file(ruleset: str, players: int, directory: Path = CHAMPIONS_DIR) -> Path:
    return directory / f"{ruleset}_{players}p.npz"


def champion_tables(directory: Path = CHAMPIONS_DIR) -> list[tuple[str, int]]:
    """(ruleset, seats) of every shipped champion, in order."""
    tables = []
    for path in sorted(directory.glob("*_*p.npz")):
        # The file's name, as `champion_file` makes it, is what `champion_path` looks up: a
        # damaged metadata file beside it is said when that champion is loaded, not here.
        ruleset, seats = path.stem.rsplit("_", 1)
        if seats[:-1].isdigit():
            tables.append((ruleset, int(seats[:-1])))
    return sorted(tables)


def describe_tables(tables: list[tuple[str, int]]) -> str:
    return ", ".join(f"{ruleset} at {players} seats" for ruleset, players in tables) or "none"


def champion_path(ruleset: str, players: int, directory: Path = CHAMPIONS_DIR) -> Path:
    """The champion of a table, or a ValueError naming the tables that have one."""
    path = champion_file(ruleset, players, directory)
    if not path.exists():
        raise ValueError(f"no champion for {ruleset} at {players} seats; champions exist for "
                         f"{describe_tables(champion_tables(directory))} (train one with scripts/train.py "
                         "and install it with --publish)")
    return path


class ChampionBot:
    """The bot `champion`: plays the champion of whatever table it sits at. With `network`, the
    bot `network`: the table's shipped network, also where the champion is the searcher."""

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION, network: bool = False,
                 budget_ms: float | None = None) -> None:
        self.rng = random.Random(seed)
        self.reaction = reaction
        self.network = network
        # Where the champion searches: its time per decision instead of the 300 ms it was
        # measured with (a slower machine's live table, or a longer think).
        if budget_ms is not None and not budget_ms > 0:  # (0 made a searching champion never search)
            raise ValueError(f"a champion's budget is a time above 0 ms, not {budget_ms}")
        self.budget_ms = budget_ms
        self.name = "network" if network else "champion"
        self._players: dict[tuple[str, int], Any] = {}

    def _searches(self, table: tuple[str, int]) -> bool:
        return not self.network and table in SEARCH_CHAMPIONS

    def check_seats(self, rules: Ruleset, players: int) -> None:
        """Whether a champion plays a table grown to `players` (a late friend joining):
        ValueError naming the tables that have one. Loaded here, so that a damaged champion
        file (or, where the champion is the searcher, its value or network) is said before the
        game, not at the champion's first move; the game then plays the one loaded."""
        player = self._player(rules, players)
        if self._searches((rules.name, players)):
            player.check_seats(rules, players)

    def _player(self, rules: Ruleset, players: int) -> Any:
        table = (rules.name, players)
        if table not in self._players:
            # Found by its ruleset's name: a copy of classic.yaml with another target, its name
            # kept, was played by classic's champion without a word (the same weights given as
            # a file are refused).
            changed = differs_from_shipped(rules)
            if changed:
                raise ValueError(f"the {self.name} of {rules.name} plays the shipped {rules.name}; these rules "
                                 f"bear its name and are not its ({', '.join(changed)} differ): give your ruleset "
                                 "a name of its own, and play it with a bot or a model trained on it")
        if table not in self._players and self._searches(table):
            from agents.bots import make_bot

            self._players[table] = make_bot(SEARCH_CHAMPIONS[table], reaction=self.reaction)
            if self.budget_ms is not None:
                self._players[table].budget_ms = self.budget_ms
        if table not in self._players:
            from agents.model_bot import ModelBot

            self._players[table] = ModelBot.load(champion_path(*table), reaction=self.reaction, rules=rules)
        return self._players[table]

    def act(self, state: GameState, decision: Decision) -> Action:
        bot = self._player(state.rules, state.players)
        bot.rng = self.rng  # the caller reseeds this bot's generator between games
        return bot.act(state, decision)


def publish(model_path: str | Path, directory: Path = CHAMPIONS_DIR,
            extra: dict[str, Any] | None = None) -> Path:
    """Writes a trained model (a run's model.zip) as the champion of its table."""
    from agents.model_bot import load_model, save_weights

    _, meta = load_model(model_path)
    check_shipped_rules(Ruleset.from_dict(meta["ruleset"], source=f"(the rules {model_path} was trained on)",
                                          fix="The model's metadata is damaged: train it again, or take it back "
                                              "from where it came."))
    out = champion_file(meta["ruleset"]["name"], int(meta["players"]), directory)
    return save_weights(model_path, out, extra)


def differs_from_shipped(rules: Ruleset) -> list[str]:
    """The top-level keys in which rules bearing a shipped ruleset's name are not its (none:
    they are, or the name is no shipped ruleset's)."""
    if rules.name not in SHIPPED_RULESETS:
        return []
    shipped = load_ruleset(rules.name)
    if rules == shipped:
        return []
    theirs = shipped.to_dict()
    return sorted(key for key, value in rules.to_dict().items() if theirs.get(key) != value)


class NotShippedRules(ValueError):
    """Rules that bear a shipped ruleset's name and are not its."""


def check_shipped_rules(rules: Ruleset) -> None:
    """A model trained on rules that bear a shipped ruleset's name but are not its (a copy of
    classic.yaml with another target, its name kept) would be taken for that table's champion:
    NotShippedRules. A champion is found by its ruleset's name."""
    changed = differs_from_shipped(rules)
    if not changed:
        return
    raise NotShippedRules(f"the model was trained on rules named {rules.name} that are not the shipped {rules.name}'s "
                          f"({', '.join(changed)} differ): give your ruleset a name of its own, train again, and "
                          "publish that")
