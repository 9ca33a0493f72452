"""The bot `searcher`: at each decision with a choice, it samples what every candidate leads to.

For each candidate action it plays the game on from a copy of the state (`GameState.clone`,
a few decisions' cost at any turn) with fresh dice, every seat playing a base bot (`bold`),
either to the end of the turn, where the position is scored by the table's fitted value
(agents/value.py: each seat's chance to win from scores, items and who plays next), or to the
end of the game where no value was fitted. All candidates meet the same samples of luck (the
same dice and the same bots' seeds: common random numbers), so their difference is measured
on paired samples. The first three dice of the samples are stratified over the rounds (in each
block of six rounds, every face once at each: `LatinDice`): most decisions hinge on the next
die or three (a bought cul, a sirop), and a few rounds then measure their expectation nearly
exactly. It leaves the base bot's own choice only for a candidate whose paired lead
is `margin` standard errors above zero (two rounds at least: one has no standard error): a
noisy pick costs more than it wins.

Samples go in rounds (one per candidate each) until the rounds are done, the decision is
settled (checked every 8 rounds: every alternative 3 standard errors behind the base choice,
or one 3 ahead), or the time budget is spent, whichever is first. `searcher` is 300 ms and
64 rounds; `searcher:MS`, `searcher:MS:ROUNDS`, `searcher:MS:ROUNDS:HORIZON` (turn, or game:
every sample to the end of the game) and `searcher:MS:ROUNDS:HORIZON:BASE` change them (BASE
`network`: the table's shipped network, agents/champions/, searched over);
`searcher:MS:ROUNDS:HORIZON:BASE:plain` is the searcher before session 36 (no stratified dice,
the value's scores unclipped).
Races are not searched: the bot shouts with its reaction model like every bot. Decisions with
one legal action are not searched either, nor any decision at one seat (`solo`): a game alone
is always won in the end, so every sample scores 1 and no candidate can lead. The base bot is
bold, or where a heuristic bot beats bold at the table, that one (`DEFAULT_BASE`); the other
seats of a sample play bold, the field the searcher was measured against.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents import heuristic
from agents.simple import Bot
from agents.value import ValueModel, load_value
from cdc_env.actions import Action, BirdBet, ChallengeGrelottine, DeclareCivet
from cdc_env.dice import SeededDice
from cdc_env.game import Decision, GameState, on_winning_side
from cdc_env.reaction import DEFAULT_REACTION, reaction_model
from cdc_env.rules import Ruleset

DEFAULT_BUDGET_MS = 300.0
DEFAULT_ROUNDS = 64
# How far a sample goes: to the next turn's start (scored by the fitted value), or to the game's end.
HORIZONS = ("turn", "game")
# Rounds are checked in batches this size: a decision settled by then stops sampling.
BATCH = 8
# Settled: every alternative this many standard errors behind the base choice, or one ahead.
SETTLED = 3.0
# A sample played to the end of the game stops here (a game of bold lasts under 100 turns).
MAX_TURNS = 1000
# The first dice a sample draws are stratified over the rounds: in each block of six rounds,
# every face comes once at each of the first LATIN_DICE places (a Latin hypercube). Most
# decisions hinge on the next die or three (a bought cul, a sirop, a roll).
LATIN_DICE = 3
FACES = 6


def candidates(decision: Decision, chosen: Action) -> list[Action]:
    """The actions worth sampling. A Grelottine or a Civet offers hundreds (every stake): keep
    the base bot's choice, passing (or rolling), and the smallest, middle and largest stake of
    each combination. A bird bet: passing, the base bot's bird and one other."""
    if decision.kind == "sirop_bet":
        # Every bird but the thrower's pays in the same rolls (when the sirop fails): one of
        # them stands for all.
        birds = [a for a in decision.legal_actions() if isinstance(a, BirdBet)]
        others = [a for a in decision.legal_actions() if not isinstance(a, BirdBet)]
        kept_birds = {repr(a): a for a in [chosen] if isinstance(a, BirdBet)}
        for bird in birds:
            if len(kept_birds) >= 2:
                break
            kept_birds.setdefault(repr(bird), bird)
        return [*others, *kept_birds.values()] if chosen in others else [chosen, *others, *[
            b for b in kept_birds.values() if b != chosen]]
    return staked_candidates(decision, chosen)


# Decisions answered with a timed shout, never searched nor rolled out (scripts/probe_rollouts.py):
# a race is the reaction model's, and claiming a gain is always right. Their options are shouts
# with no onset, which the game refuses as actions.
UNSEARCHED_KINDS = ("race", "claim")


def searched_options(decision: Decision, chosen: Action) -> list[Action]:
    """The candidates a searcher samples at `decision`, the base bot having chosen `chosen`;
    one option (`chosen`) where nothing is searched (`UNSEARCHED_KINDS`)."""
    if decision.kind in UNSEARCHED_KINDS or decision.seat is None:
        return [chosen]
    return candidates(decision, chosen)


def staked_candidates(decision: Decision, chosen: Action) -> list[Action]:
    """A decision's legal actions, but for a Grelottine or a Civet, which offer hundreds (every
    stake): the base choice, passing (or rolling), and the smallest, middle and largest stake
    of each combination (also what scripts/probe_rollouts.py plays out)."""
    if decision.kind not in ("grelottine", "turn_start"):
        return decision.legal_actions()
    kept = {repr(chosen): chosen}
    for action in decision.legal_actions():
        if not isinstance(action, (ChallengeGrelottine, DeclareCivet)):
            kept[repr(action)] = action
    build = ChallengeGrelottine if decision.kind == "grelottine" else DeclareCivet
    for combination, stakes in decision.stakes or ():
        for stake in (stakes[0], stakes[len(stakes) // 2], stakes[-1]):
            action = build(combination, stake)
            if decision.allows(action):
                kept[repr(action)] = action
    return list(kept.values())


@dataclass
class SearchStats:
    """What the searches of one bot cost and changed (for the budget table)."""

    searched: int = 0
    samples: int = 0
    seconds: float = 0.0
    changed: int = 0


class SearchBot:
    """Sampled look-ahead over the base bot (see the module's doc)."""

    def __init__(self, seed: int | str = 0, reaction: str = DEFAULT_REACTION,
                 budget_ms: float = DEFAULT_BUDGET_MS, rounds: int = DEFAULT_ROUNDS,
                 base: str | None = None, horizon: str = "turn", margin: float = 1.0,
                 opponents: str = "bold", latin: bool = True, clip: bool = True, base_value: bool = True,
                 settle: bool = True) -> None:
        if budget_ms <= 0 or rounds < 2:
            raise ValueError(f"a searcher needs a budget above 0 ms and 2 rounds or more "
                             f"(got {budget_ms} ms, {rounds} rounds)")
        if horizon not in HORIZONS:
            raise ValueError(f"a search horizon is {' or '.join(map(repr, HORIZONS))}, not {horizon!r}")
        if base is not None and base not in BASES:
            raise ValueError(f"a searcher's base bot is one of {', '.join(BASES)}, not {base!r}")
        if opponents not in BASE_BOTS:
            raise ValueError(f"a searcher's opponents are one of {', '.join(BASE_BOTS)}, not {opponents!r}")
        self.name = "searcher"
        self.rng = random.Random(seed)
        self.budget_ms, self.rounds, self.horizon, self.margin = budget_ms, rounds, horizon, margin
        self.base_name, self.opponents = base, opponents
        self.latin = latin  # the first dice of the samples stratified over rounds (False: all drawn)
        self.clip = clip  # the fitted value reads scores within ± the target (agents/value.py)
        # The value fitted to the base's own games where there is one (False: the table's, fitted
        # to bold's games, as before session 38).
        self.base_value = base_value
        # Stop a search once its decision is settled (False: every round played, as a reference
        # search that others are judged against must: scripts/probe_search.py's --truth).
        self.settle = settle
        self.reaction = reaction_model(reaction)
        self.stats = SearchStats()
        # Built when the table is known: the base bot (its own choices, and its seat in the
        # samples), and the model of the other seats in the samples.
        self._bots: dict[tuple[str, int, str, int], Bot] = {}
        self._checked_rules: Ruleset | None = None  # the rules last found to be the ones its files are for

    def base_for(self, state: GameState) -> str:
        return self._base(state.rules.name, state.players)

    def _base(self, ruleset: str, players: int) -> str:
        return self.base_name or DEFAULT_BASE.get((ruleset, players), "bold")

    def value(self, ruleset: str, players: int) -> ValueModel | None:
        """The fitted value its samples are scored by (agents/value.py)."""
        return load_value(ruleset, players, base=self._base(ruleset, players) if self.base_value else None)

    def _check_rules(self, rules: Ruleset, players: int) -> None:
        """The table's network and fitted value are found by the ruleset's name: rules that bear
        a shipped ruleset's name and are not its would be played with another game's (a copy of
        classic.yaml with another target, its name kept, as `champion` and `network` refuse)."""
        if self._checked_rules is rules:
            return
        from agents.champion import differs_from_shipped  # (the champion module builds searchers)

        uses = [what for what, used in (("network", self._base(rules.name, players) == NETWORK),
                                        ("fitted value", self.horizon == "turn")) if used]
        changed = differs_from_shipped(rules) if uses else []
        if changed:
            raise ValueError(f"the searcher plays {rules.name}'s {' and '.join(uses)} for the shipped {rules.name}; "
                             f"these rules bear its name and are not its ({', '.join(changed)} differ): give your "
                             "ruleset a name of its own")
        self._checked_rules = rules

    def check_seats(self, rules: Ruleset, players: int) -> None:
        """Whether this searcher can play a table, said before any game: a ValueError where its
        base is the table's network and the table has none (naming the tables that have one) or
        its file is damaged, or where the value file is damaged."""
        self._check_rules(rules, players)
        self._bot(self._base(rules.name, players), -1, rules, players)  # the network loaded now, once
        if self.horizon == "turn":
            self.value(rules.name, players)

    def _bot(self, name: str, slot: int, rules: Ruleset, players: int) -> Bot:
        key = (name, slot, rules.name, players)
        if key not in self._bots:
            if name == NETWORK:
                from agents.champion import champion_path
                from agents.model_bot import ModelBot

                self._bots[key] = ModelBot.load(champion_path(rules.name, players), reaction=self.reaction.level,
                                                rules=rules)
            else:
                self._bots[key] = BASE_BOTS[name](seed=0, reaction=self.reaction.level)
        return self._bots[key]

    def act(self, state: GameState, decision: Decision) -> Action:
        self._check_rules(state.rules, state.players)
        base = self._bot(self.base_for(state), -1, state.rules, state.players)
        base.rng = self.rng  # the caller reseeds this bot's generator between games
        chosen = base.act(state, decision)
        options = searched_options(decision, chosen)
        # Alone at the table every sample is a win (a solo game always ends at the target): no
        # candidate can lead, and a search would only spend the whole budget to keep the base's.
        if len(options) < 2 or state.players == 1:
            return chosen
        assert decision.seat is not None  # searched_options keeps seatless decisions to one option
        best = self.search(state, decision.seat, options, chosen)
        self.stats.changed += best != chosen
        return best

    def search(self, state: GameState, seat: int, options: list[Action], chosen: Action) -> Action:
        base = options.index(chosen)
        return _pick(options, self.outcomes(state, seat, options, base), base, self.margin)

    def outcomes(self, state: GameState, seat: int, options: list[Action], base: int) -> list[list[float]]:
        """Each candidate's samples, round by round (a round: one sample of each, on the same
        luck), until the rounds are done, the budget spent or the decision settled."""
        started = time.perf_counter()
        deadline = started + self.budget_ms / 1000
        value = None
        if self.horizon == "turn":
            value = self.value(state.rules.name, state.players)
        outcomes: list[list[float]] = [[] for _ in options]
        rounds = 0
        faces: list[list[int]] = []
        while rounds < self.rounds and time.perf_counter() < deadline:
            key = self.rng.getrandbits(48)
            if self.latin and rounds % FACES == 0:
                faces = [self.rng.sample(range(1, FACES + 1), FACES) for _ in range(LATIN_DICE)]
            first = [order[rounds % FACES] for order in faces]
            results = []
            for action in options:
                result = self._sample(state, seat, action, key, value, first, deadline)
                if result is None:
                    break
                results.append(result)
            if len(results) < len(options):
                break  # the budget ended inside this round: left out, so that the candidates stay paired
            for index, result in enumerate(results):
                outcomes[index].append(result)
            rounds += 1
            # Most decisions are settled early: stop once every alternative is clearly behind
            # the base choice, or one clearly ahead of it.
            if self.settle and rounds % BATCH == 0 and rounds < self.rounds and _settled(outcomes, base):
                break
        self.stats.searched += 1
        self.stats.samples += rounds * len(options)
        self.stats.seconds += time.perf_counter() - started
        return outcomes

    def _sample(self, state: GameState, seat: int, action: Action, key: int, value: ValueModel | None,
                first: list[int], deadline: float = math.inf) -> float | None:
        """Seat's result after `action` with the luck fixed by `key` and the `first` dice: a
        win (1/0) at the end of the game, or the fitted chance to win at the start of the next
        turn. None when `deadline` (perf_counter's) passes first: a sample to the end of a game
        of 8 took the searcher half a second past a 50 ms budget."""
        game = state.clone(dice=LatinDice(first, key))
        game.apply_action(action, seat=seat)
        base = self.base_for(state)
        players = [self._bot(base if s == seat else self.opponents, s, state.rules, state.players)
                   for s in range(state.players)]
        for index, player in enumerate(players):
            player.rng.seed(key * 16 + index)
        turn = state.turn_number
        while (decision := game.pending) is not None and game.turn_number <= MAX_TURNS:
            if value is not None and game.turn_number > turn:
                break  # the next turn's start: the value takes over
            if time.perf_counter() > deadline:
                return None
            assert decision.seat is not None
            game.apply_action(players[decision.seat].act(game, decision))
        if game.pending is None or value is None:
            return float(on_winning_side(game, seat))  # a partner's win is the team's (the Doublette)
        return value.win_chances(game, self.clip)[seat]


class LatinDice:
    """A sample's dice: the `first` faces given (the round's stratum), then seeded dice. A face
    given for a die of other than six sides is taken modulo its sides."""

    def __init__(self, first: list[int], key: int) -> None:
        self._first = list(first)
        self._rest = SeededDice(key)

    def roll(self, count: int, sides: int = 6) -> tuple[int, ...]:
        given = [(face - 1) % sides + 1 for face in self._first[:count]]
        del self._first[:count]
        return (*given, *self._rest.roll(count - len(given), sides))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "latin", "first": list(self._first), "rest": self._rest.to_json()}


BASE_BOTS: dict[str, Callable[..., heuristic.HeuristicBot]] = {
    "bold": heuristic.bold, "hedger": heuristic.hedger, "patient": heuristic.patient,
    "prudent": heuristic.prudent,
}
# The base `network` is the table's shipped network (agents/champions/), searched over: the
# search then improves on the trained agent rather than on a heuristic.
NETWORK = "network"
BASES = (*BASE_BOTS, NETWORK)
# The base bot by table where one beats bold against a field of bold (docs/agents.md):
# patient in v004 at 2 seats, hedger at 3 and 4.
DEFAULT_BASE: dict[tuple[str, int], str] = {("v004", 2): "patient", ("v004", 3): "hedger", ("v004", 4): "hedger"}


def _paired(a: list[float], b: list[float]) -> tuple[float, float]:
    """The mean of a − b over paired samples, and its standard error (infinite below two
    samples: one sample measures no spread, and an error of 0 let any lead pass the margin)."""
    n = len(a)
    differences = [x - y for x, y in zip(a, b, strict=True)]
    lead = sum(differences) / n
    if n < 2:
        return lead, math.inf
    variance = sum((d - lead) ** 2 for d in differences) / (n - 1)
    return lead, (variance / n) ** 0.5


def _settled(outcomes: list[list[float]], base: int) -> bool:
    behind = True
    for index, results in enumerate(outcomes):
        if index == base:
            continue
        lead, error = _paired(results, outcomes[base])
        if lead > SETTLED * error and lead > 0:
            return True
        behind = behind and (lead < -SETTLED * error or lead == 0 == error)
    return behind


def _pick(options: list[Action], outcomes: list[list[float]], chosen: int, margin: float) -> Action:
    """The best candidate by mean, where its paired lead over the base choice is `margin`
    standard errors above zero; else the base choice (also where the budget ended before a
    second round: one sample has no standard error, nothing measured, nothing to lead)."""
    n = len(outcomes[chosen])
    if n < 2:
        return options[chosen]
    best, best_mean = chosen, sum(outcomes[chosen]) / n
    for index, results in enumerate(outcomes):
        mean = sum(results) / n
        if index != chosen and mean > best_mean:
            best, best_mean = index, mean
    if best == chosen:
        return options[chosen]
    lead, standard_error = _paired(outcomes[best], outcomes[chosen])
    return options[best] if lead > margin * standard_error and lead > 0 else options[chosen]


def searcher(seed: int | str = 0, reaction: str = DEFAULT_REACTION, spec: str = "",
             budget_ms: float | None = None) -> SearchBot:
    """`searcher`, `searcher:MS`, `searcher:MS:ROUNDS` or `searcher:MS:ROUNDS:HORIZON:BASE[:plain]`
    (see the module's doc); a wrong name is refused with its first wrong part named. `budget_ms`
    (a command's --budget-ms) is the budget of a name that gives none."""
    parts = spec.split(":")[1:] if spec else []  # spec is "" or ":…", after the name
    usage = ("give searcher, searcher:MS, searcher:MS:ROUNDS or searcher:MS:ROUNDS:HORIZON:BASE[:plain] (a time "
             "budget in ms per decision, the most samples per candidate, turn or game: how far a sample goes, the "
             f"base bot: {', '.join(BASES)}; plain: the searcher before session 36)")
    # The first part that is wrong is named, so that a typo in a long name is found at once.
    wrong = ""
    if len(parts) > 5:
        wrong = f"{len(parts)} parts after searcher, at most 5"
    elif "" in parts:
        wrong = "a part is empty (two ':' in a row, or one at the end)"
    elif parts and not _is_number(parts[0]):
        wrong = f"the budget {parts[0]!r} is not a finite number of ms"
    elif len(parts) > 1 and not (parts[1].isascii() and parts[1].isdigit()):
        wrong = f"the rounds {parts[1]!r} are not a whole number"
    elif len(parts) > 2 and parts[2] not in HORIZONS:
        wrong = f"the horizon {parts[2]!r} is not {' or '.join(HORIZONS)}"
    elif len(parts) > 3 and parts[3] not in BASES:
        wrong = f"the base bot {parts[3]!r} is not one of {', '.join(BASES)}"
    elif len(parts) > 4 and parts[4] != PLAIN:
        wrong = f"the last part {parts[4]!r} is not {PLAIN}"
    if wrong:
        raise ValueError(f"searcher{spec}: {wrong}; {usage}")
    # (`budget_ms or …` took 0 for "none given": a searcher asked for 0 ms thought 300)
    budget = float(parts[0]) if parts else DEFAULT_BUDGET_MS if budget_ms is None else budget_ms
    rounds = int(parts[1]) if len(parts) > 1 else DEFAULT_ROUNDS
    horizon = parts[2] if len(parts) > 2 else "turn"
    base = parts[3] if len(parts) > 3 else None
    plain = len(parts) > 4
    return SearchBot(seed=seed, reaction=reaction, budget_ms=budget, rounds=rounds, horizon=horizon, base=base,
                     latin=not plain, clip=not plain, base_value=not plain)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


# `…:plain`: every die of a sample drawn at random and the scores read unclipped by the table's
# fitted value (never a base's own), as the searcher was before session 36 (the `v004` 2-seat
# champion was measured so).
PLAIN = "plain"
