"""The house rules' registry: what a house rule is, and how a ruleset's `house_rules:` is checked.

House rules: rules a table chooses to play, each switched on in a ruleset's `house_rules:`.

A house rule is a module that builds a `HouseRule` and one line in `REGISTRY` below (or one
call to `register` from anywhere, a test included): nothing in `cdc_env/game.py` names it. The
game runs each switched-on rule at its moments (`MOMENTS`), in the order the rules were
registered. A rule sees the game through `cdc_env.rulebook.table.Game` and its own parameters:
the ruleset's values over the rule's defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from cdc_env.flow import Flow
from cdc_env.rulebook.table import Game

# The moments a house rule may act at, each with what it is given besides the game and the
# rule's parameters:
#   turn_started  a turn begins, before its thrower's first decision: the thrower's seat
#   chouettes   after the two chouettes fall, before the cul: the chouettes (tuple[int, ...]);
#               what it returns is given back to the same rule at `roll_made` (a pending bet)
#   combination_shown  as the three dice show their combination, before its rules: the
#               RollOutcome (what it returns, if not None, goes on to `roll_made`)
#   roll_made   after a roll's combination and its rules: (RollOutcome, what the same rule
#               returned at `chouettes` or `combination_shown`)
#   sirop_declared  a Chouette is siroted, before the bird bets: (the thrower, the face); what
#               it returns, if not None, is the seat that takes the sirop over
#   sirop_failed  after a failed sirop's loss: (the siroter, the chouette's face)
#   civet_declared  once a Civet is declared, before the roll: the declaration (a dict; its
#               "multiplier", 1 unless a rule sets it, multiplies the stake won or lost)
MOMENTS = ("turn_started", "chouettes", "combination_shown", "roll_made", "sirop_declared", "sirop_failed",
           "civet_declared")

MomentRule = Callable[[Game, Mapping[str, Any], Any], Flow]

# A rule that lets a player join a game under way (Chante-Sloubi): given the game before the
# newcomer sits down, the rule's parameters and whether the newcomer's Sloubi was sung, it
# returns the newcomer's start (points, and the details the score event keeps). It raises
# ValueError, saying why, to refuse the join. The game seats the newcomer (GameState.join).
LateJoin = Callable[[Game, Mapping[str, Any], bool], tuple[int, dict[str, Any]]]

# Parts of the ruleset a house rule may need switched on (`needs`); another house rule's name
# may be needed too. Each item's rule is one (a setup may give an item only where it is played).
RULESET_PARTS: dict[str, Callable[[Any], bool]] = {
    "civet": lambda rules: rules.civet.enabled,
    "sirotage": lambda rules: rules.sirotage.enabled,
    "grelottine": lambda rules: rules.grelottine.enabled,
    "boucliette": lambda rules: rules.boucliette.enabled,
    "flan": lambda rules: rules.combinations.flan,
}


@dataclass(frozen=True)
class HouseRule:
    """One house rule: its name in `house_rules:`, where it is defined, its moments, its
    parameters with their defaults (a parameter takes its default's type), what it needs, and
    the decision kinds and phrases it adds (for the environments' spaces and the voice)."""

    name: str
    source: str
    moments: Mapping[str, MomentRule]
    parameters: Mapping[str, Any] = field(default_factory=dict)
    # The least value of a number parameter, where it has one (points won or lost are given as
    # amounts, as the rulesets' bet_win/bet_loss: a negative loss would pay the losers).
    minimums: Mapping[str, int] = field(default_factory=dict)
    needs: tuple[str, ...] = ()
    decisions: Mapping[str, str] = field(default_factory=dict)  # kind -> what it asks
    phrases: tuple[str, ...] = ()  # shouts it adds (voice intents), answered by `Shout`
    races: tuple[str, ...] = ()  # races it starts (a race decision's reason)
    # Keys of `table.house` that hold a list of seats (the Verdier's bettors): the observation
    # gets a section per key, for such a table only, marking those seats seat-relative.
    shown_seats: tuple[str, ...] = ()
    # A team mode: the teams for a table of N players (raises ValueError for a count it cannot
    # seat). A team's score is its players' sum, and the team wins together.
    teams: Callable[[int], list[tuple[int, ...]]] | None = None
    # Lets a player join a game under way, and gives their start (see LateJoin).
    late_join: LateJoin | None = None

    def __post_init__(self) -> None:
        unknown = set(self.moments) - set(MOMENTS)
        if unknown:
            raise ValueError(f"house rule {self.name!r}: no moment {sorted(unknown)}; "
                             f"the moments are {', '.join(MOMENTS)}")


REGISTRY: dict[str, HouseRule] = {}


def register(rule: HouseRule) -> HouseRule:
    """Make `rule` choosable in a ruleset's `house_rules:` (a later one of the same name replaces it)."""
    REGISTRY[rule.name] = rule
    return rule


def unregister(name: str) -> None:
    REGISTRY.pop(name, None)


def parameters_of(name: str, given: Any, rules: Any) -> dict[str, Any]:
    """The parameters of house rule `name` as a ruleset gives them (`true` or a mapping),
    over the rule's defaults. Raises ValueError naming what is wrong: an unknown rule, an
    unknown or mistyped parameter, a missing dependency."""
    rule = REGISTRY.get(name)
    if rule is None:
        known = ", ".join(sorted(REGISTRY)) or "none"
        raise ValueError(f"house_rules.{name}: no such house rule (known: {known}); see docs/rules.md")
    if given is True:
        given = {}
    if not isinstance(given, dict):
        raise ValueError(f"house_rules.{name}: give true, or a mapping of its parameters "
                         f"({', '.join(rule.parameters) or 'it has none'}), not {given!r}")
    values = dict(rule.parameters)
    for key, value in given.items():
        if key not in rule.parameters:
            raise ValueError(f"house_rules.{name}.{key}: unknown parameter (its parameters: "
                             f"{', '.join(rule.parameters) or 'none'})")
        default = rule.parameters[key]
        if type(value) is not type(default):
            raise ValueError(f"house_rules.{name}.{key}: expected {type(default).__name__} "
                             f"like its default {default!r}, got {value!r}")
        least = rule.minimums.get(key)
        if least is not None and value < least:
            raise ValueError(f"house_rules.{name}.{key}: must be {least} or more, got {value!r}")
        values[key] = value
    for need in rule.needs:
        part = RULESET_PARTS.get(need)
        met = part(rules) if part is not None else need in rules.house_rules
        if not met:
            what = f"the {need} switched on" if part is not None else f"the house rule {need!r}"
            raise ValueError(f"house_rules.{name}: needs {what}")
    return values


def chosen(house_rules: Mapping[str, Any]) -> list[HouseRule]:
    """The switched-on rules, in registry order."""
    return [rule for rule in REGISTRY.values() if rule.name in house_rules]


def added_names(house_rules: Mapping[str, Any], what: str) -> tuple[str, ...]:
    """The decision kinds (`decisions`), phrases, races or shown seats the switched-on rules add, in order:
    what the environments append to their spaces for such a table (and only for it)."""
    names: list[str] = []
    for rule in chosen(house_rules):
        names += list(getattr(rule, what))
    return tuple(dict.fromkeys(names))


def plays_teams(house_rules: Mapping[str, Any]) -> bool:
    """Whether a switched-on rule is a team mode (the Doublette)."""
    return any(rule.teams is not None for rule in chosen(house_rules))


def teams_of(house_rules: Mapping[str, Any], players: int) -> dict[int, tuple[int, ...]]:
    """Each seat's team (itself alone without a team mode). Raises ValueError for a player
    count the team mode cannot seat."""
    for rule in chosen(house_rules):
        if rule.teams is not None:
            return {seat: team for team in rule.teams(players) for seat in team}
    return {seat: (seat,) for seat in range(players)}


def late_join_rule(house_rules: Mapping[str, Any]) -> tuple[HouseRule, Mapping[str, Any]] | None:
    """The switched-on rule that lets a player join a game under way, with its parameters."""
    for rule in chosen(house_rules):
        if rule.late_join is not None:
            return rule, house_rules[rule.name]
    return None


def moment_rules(house_rules: Mapping[str, Any], moment: str) -> list[tuple[HouseRule, Mapping[str, Any]]]:
    """The switched-on rules that act at `moment`, with their parameters, in registry order."""
    return [(rule, house_rules[rule.name]) for rule in REGISTRY.values()
            if rule.name in house_rules and moment in rule.moments]

