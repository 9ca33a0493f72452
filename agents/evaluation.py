"""Tournaments between agents: seats rotated, win rates with 95 % intervals, Elo, mean points."""

from __future__ import annotations

import io
import itertools
import json
import math
import multiprocessing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cdc_env.actions import IllegalActionError
from cdc_env.cli import worker_pool, write_atomic
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rulebook.house import teams_of
from cdc_env.rules import Ruleset

Z95 = 1.959963984540054


class AgentError(ValueError):
    """An agent brought to a tournament (a model, `package.module:Name`) that fails or cheats;
    the message names it and the game."""


def wilson_interval(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """95 % Wilson score interval of a win rate (sound near 0 and 1, unlike the normal one)."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo_ratings(results: Sequence[tuple[list[str], str | None]], names: Sequence[str],
                iterations: int = 500) -> dict[str, float]:
    """Elo ratings fitted to the results (Bradley–Terry by minorisation–maximisation).

    Each game counts as the winner beating every other seat. Ratings are centred on 1500;
    a 400-point gap means 10-to-1 odds in a head-to-head game."""
    return elo_of_matches([([winner], [seat for seat in seats if seat != winner])
                           for seats, winner in results if winner is not None], names, iterations)


def elo_of_matches(matches: Sequence[tuple[list[str], list[str]]], names: Sequence[str],
                   iterations: int = 500) -> dict[str, float]:
    """Elo ratings from games given as (the winners, the losers): each winner beats each loser
    (a Doublette's winning pair both beat both losers, never each other). A name on both sides
    (a field's copies) does not beat itself."""
    wins = {n: 0.0 for n in names}
    pair_games: dict[tuple[str, str], float] = {}
    for winners, losers in matches:
        for winner in winners:
            for loser in losers:
                if loser == winner:
                    continue
                wins[winner] += 1
                key = (min(winner, loser), max(winner, loser))
                pair_games[key] = pair_games.get(key, 0) + 1
    # A half win and a half loss against a virtual average player keeps every rating finite.
    strength = {n: 1.0 for n in names}
    for _ in range(iterations):
        updated = {}
        for name in names:
            denominator = 1.0 / (strength[name] + 1.0)
            for (a, b), count in pair_games.items():
                if name in (a, b):
                    other = b if name == a else a
                    if other != name:
                        denominator += count / (strength[name] + strength[other])
            updated[name] = (wins[name] + 0.5) / denominator
        mean_log = sum(math.log(v) for v in updated.values()) / len(updated)
        strength = {n: v / math.exp(mean_log) for n, v in updated.items()}
    return {n: 1500 + 400 * math.log10(strength[n]) for n in names}


@dataclass
class AgentResult:
    name: str
    games: int = 0
    wins: int = 0
    points: float = 0.0
    win_rate: float = 0.0
    ci_low: float = 0.0
    ci_high: float = 1.0
    mean_points: float = 0.0
    elo: float = 1500.0
    seats: dict[int, int] = field(default_factory=dict)


@dataclass
class Tournament:
    ruleset: str
    seats: int
    games: int
    seed: int
    agents: list[AgentResult]
    unfinished: int
    results: list[dict[str, Any]]
    budget_ms: float | None = None  # --budget-ms: the searchers' time per decision (None: their own)
    team_size: int = 1  # 2 at a Doublette: a seat wins with its partner

    @property
    def fair_share(self) -> float:
        """A seat's win rate where every seat is as strong: 1/N, 2/N at a Doublette."""
        return self.team_size / self.seats

    def to_json(self) -> dict[str, Any]:
        return {
            "ruleset": self.ruleset, "seats": self.seats, "games": self.games, "seed": self.seed,
            "fair_share": self.fair_share, **({"team_size": self.team_size} if self.team_size > 1 else {}),
            **({"budget_ms": self.budget_ms} if self.budget_ms is not None else {}),
            "unfinished": self.unfinished, "agents": [asdict(a) for a in self.agents],
        }


def lineups(names: Sequence[str], seats: int, field: str | None = None) -> list[list[str]]:
    """The seatings a tournament cycles through: every group of `seats` agents (agents repeat
    when there are fewer agents than seats), each rotated through every seat. With a `field`,
    each agent sits alone against `seats` − 1 copies of the field's bot, at every seat in turn."""
    if field is not None:
        groups = [[name] + [field] * (seats - 1) for name in names]
    elif len(names) >= seats:
        groups = [list(g) for g in itertools.combinations(names, seats)]
    else:
        groups = [[names[i % len(names)] for i in range(seats)]]
    return [group[r:] + group[:r] for group in groups for r in range(seats)]


def games_for_everyone(names: Sequence[str], seats: int, field: str | None = None) -> int:
    """The fewest games in which every agent plays: a tournament cycles through `lineups` in
    order, so an agent of a later group first sits in game (its group's first seating) + 1."""
    seatings = lineups(names, seats, field)
    return max(next(i for i, seating in enumerate(seatings) if name in seating) + 1 for name in names)


GameRunner = Callable[[list[str], int], tuple[int | None, list[int]]]


def bot_game_runner(rules: Ruleset, reaction: str, max_turns: int, budget_ms: float | None = None) -> GameRunner:
    from agents.bots import make_bot

    cache: dict[tuple[str, int], Any] = {}

    def run(seating: list[str], seed: int) -> tuple[int | None, list[int]]:
        # Bots are built once per (name, seat) and reseeded per game: loading a model is slow.
        policies = []
        for seat, name in enumerate(seating):
            key = (name, seat)
            if key not in cache:
                cache[key] = make_bot(name, seed=f"{seed}:{seat}", reaction=reaction, budget_ms=budget_ms)
            bot = cache[key]
            bot.rng.seed(f"{seed}:{seat}:{name}")
            policies.append(bot)
        state = GameState(rules, len(policies), dice=SeededDice(seed))
        while (decision := state.pending) is not None and state.turn_number <= max_turns:
            assert decision.seat is not None
            name = seating[decision.seat]
            try:
                action = policies[decision.seat].act(state, decision)
            except Exception as error:
                if ":" not in name:
                    raise  # one of our bots: a bug of ours, with its traceback
                # A brought agent's failure is its author's to fix: named, in one line.
                raise AgentError(f"agent {name!r} failed in game {seed} (seat {decision.seat}, deciding "
                                 f"{decision.kind}): {type(error).__name__}: {error}") from None
            try:
                state.apply_action(action)
            except IllegalActionError as error:
                # A brought agent's mistake, named: which agent, at which decision, what it did.
                raise AgentError(f"agent {name!r} played an illegal move in game "
                                 f"{seed} (seat {decision.seat}): {error}") from None
        return state.winner, list(state.scores)

    return run


# A worker process of a tournament plays with its own bots (a model loads once per process).
_worker_runner: GameRunner | None = None


def _start_worker(rules: dict[str, Any], reaction: str, max_turns: int, budget_ms: float | None) -> None:
    global _worker_runner
    _worker_runner = bot_game_runner(Ruleset.from_dict(rules, source="tournament"), reaction, max_turns, budget_ms)


def _play_games(games: list[tuple[list[str], int]]) -> list[tuple[int | None, list[int]]]:
    assert _worker_runner is not None
    return [_worker_runner(seating, seed) for seating, seed in games]


def _outcomes(games: list[tuple[list[str], int]], run: GameRunner | None, workers: int,
              rules: Ruleset, reaction: str, max_turns: int,
              budget_ms: float | None = None) -> Iterator[tuple[int | None, list[int]]]:
    """Each game's (winner, scores), in order. Every game is fixed by its seating and seed (the
    bots are reseeded per game), so games played by several processes give the very results
    one process would."""
    if run is not None or workers <= 1 or len(games) < 2:
        run = run or bot_game_runner(rules, reaction, max_turns, budget_ms)
        for seating, seed in games:
            yield run(seating, seed)
        return
    size = max(1, min(50, len(games) // (workers * 8)))
    chunks = [games[start:start + size] for start in range(0, len(games), size)]
    # spawn, not fork: the caller may hold torch's threads, which a fork does not carry safely.
    context = multiprocessing.get_context("spawn")
    with worker_pool(context, workers, initializer=_start_worker,
                     initargs=(rules.to_dict(), reaction, max_turns, budget_ms)) as pool:
        for chunk in pool.imap(_play_games, chunks):
            yield from chunk


def run_tournament(names: Sequence[str], rules: Ruleset, seats: int, games: int, seed: int = 0,
                   reaction: str = "human", max_turns: int = 3000,
                   runner: GameRunner | None = None,
                   progress: Callable[[int], None] | None = None, workers: int = 1,
                   field: str | None = None, budget_ms: float | None = None) -> Tournament:
    """`workers` > 1 plays the games in that many processes, with the same results. With a
    `field` bot, every agent plays against `seats` − 1 copies of it (seats rotated); the
    copies' results are pooled under the field's name. `budget_ms`: every searcher's time per
    decision where its name gives none (make_bot)."""
    if games < 1:
        raise ValueError(f"a tournament needs at least one game (got {games}): give --games 1 or more")
    if len(set(names)) != len(names) or field in names:
        raise ValueError("each agent must appear once in a tournament (give distinct names, and a field "
                         "bot that is not one of the agents)")
    everyone = [*names, field] if field is not None else list(names)
    agents = {n: AgentResult(n) for n in everyone}
    seatings = lineups(names, seats, field)
    # At a Doublette a seat wins with its partner: both win, both beat the losing pair.
    teams = teams_of(rules.house_rules, seats)
    records: list[dict[str, Any]] = []
    matches: list[tuple[list[str], list[str]]] = []
    unfinished = 0
    # Per name, the games it sat in and those one of its seats won: a field's copies share a
    # game (at most one of them wins it: no independent trials), so their interval is one of
    # games, not of seats, shared among the copies.
    tables = {n: 0 for n in everyone}
    tables_won = {n: 0 for n in everyone}
    schedule = [(seatings[game % len(seatings)], seed + game) for game in range(games)]
    outcomes = _outcomes(schedule, runner, workers, rules, reaction, max_turns, budget_ms)
    for game, ((seating, _), (winner, scores)) in enumerate(zip(schedule, outcomes, strict=True)):
        winning = () if winner is None else teams[winner]
        unfinished += winner is None
        for seat, name in enumerate(seating):
            agent = agents[name]
            agent.games += 1
            agent.points += scores[seat]
            agent.seats[seat] = agent.seats.get(seat, 0) + 1
            agent.wins += seat in winning
        for name in set(seating):
            tables[name] += 1
            tables_won[name] += any(seating[seat] == name for seat in winning)
        if winning:
            matches.append(([seating[s] for s in winning], [n for s, n in enumerate(seating) if s not in winning]))
        records.append({"game": game, "seed": seed + game, "seating": seating, "winner": winner,
                        "scores": scores})
        if progress:
            progress(game + 1)
    ratings = elo_of_matches(matches, everyone)
    team_size = max(len(team) for team in teams.values())
    for agent in agents.values():
        agent.win_rate = agent.wins / agent.games if agent.games else 0.0
        copies = agent.games / tables[agent.name] if tables[agent.name] else 1.0
        if team_size > 1 and copies > 1:
            # Copies on both sides of a Doublette: a game may be won by two of them, or by one
            # and lost by another; their rate's interval counts the games they sat in.
            low, high = wilson_interval(round(agent.win_rate * tables[agent.name]), tables[agent.name])
        else:
            low, high = wilson_interval(tables_won[agent.name], tables[agent.name])
            low, high = low / copies, high / copies  # (one seat a game: the same as before)
        agent.ci_low, agent.ci_high = low, high
        agent.mean_points = agent.points / agent.games if agent.games else 0.0
        agent.elo = ratings[agent.name]
    ordered = sorted(agents.values(), key=lambda a: -a.elo)
    return Tournament(rules.name, seats, games, seed, ordered, unfinished, records, budget_ms, team_size)


def save_report(tournament: Tournament, out_dir: Path, name: str = "tournament") -> tuple[Path, Path]:
    """Writes `NAME.json` and `NAME.png` (win rates with intervals, and Elo)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    json_path = out_dir / f"{name}.json"
    write_atomic(json_path, json.dumps({**tournament.to_json(), "games_played": tournament.results}, indent=1))
    names = [a.name for a in tournament.agents]
    rates = [a.win_rate for a in tournament.agents]
    # Clipped at 0: at a win rate of 0 or 1 the interval's bound equals it up to rounding.
    errors = [[max(0.0, a.win_rate - a.ci_low) for a in tournament.agents],
              [max(0.0, a.ci_high - a.win_rate) for a in tournament.agents]]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.bar(names, rates, yerr=errors, capsize=6, color="#4c72b0")
    left.axhline(tournament.fair_share, color="grey", linestyle="--", label="even odds")
    left.set_ylabel("win rate (95 % interval)")
    left.set_title(f"{tournament.ruleset}, {tournament.seats} seats, {tournament.games} games")
    left.legend()
    right.bar(names, [a.elo for a in tournament.agents], color="#dd8452")
    right.set_ylabel("Elo")
    right.set_ylim(min(a.elo for a in tournament.agents) - 100, max(a.elo for a in tournament.agents) + 100)
    right.set_title("Elo ratings")
    figure.tight_layout()
    png_path = out_dir / f"{name}.png"
    image = io.BytesIO()
    figure.savefig(image, format="png", dpi=120)
    plt.close(figure)
    write_atomic(png_path, image.getvalue())
    return json_path, png_path
