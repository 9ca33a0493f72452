"""Tournaments by hand: a scripted runner fixes every game's result, and each figure of the
table (wins, points, seats, intervals, Elo) is checked against what those results give."""

from __future__ import annotations

import dataclasses
import json
import math
import random
from pathlib import Path

import numpy as np
import pytest
from matplotlib.container import ErrorbarContainer
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from PIL import Image

from agents import bots, evaluation
from agents.evaluation import (
    Z95,
    AgentResult,
    Tournament,
    elo_ratings,
    lineups,
    run_tournament,
    save_report,
    wilson_interval,
)
from cdc_env.actions import Action, Pass, Roll
from cdc_env.game import Decision
from cdc_env.rules import load_ruleset

CLASSIC = load_ruleset("classic")


def test_wilson_interval_by_hand() -> None:
    """5 wins in 10 at z = 1.96: centre (0.5 + z²/20) / (1 + z²/10) = 0.5, half-width
    z √(0.025 + z²/400) / (1 + z²/10) = 0.2634."""
    low, high = wilson_interval(5, 10)
    z = Z95
    half = z * math.sqrt(0.025 + z * z / 400) / (1 + z * z / 10)
    assert (low, high) == pytest.approx((0.5 - half, 0.5 + half), abs=1e-12)
    assert (low, high) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    # At 0 and 1 the bound is the rate itself, up to rounding, and never past it: 16 wins in 16
    # come to 1.0000000000000002 unclipped, 0 in 21 to −1.4e-17.
    assert wilson_interval(16, 16)[1] == 1.0 and wilson_interval(0, 21)[0] == 0.0
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(10, 10)[1] == pytest.approx(1.0, abs=1e-12)
    assert wilson_interval(10, 10)[0] == pytest.approx(1 - wilson_interval(0, 10)[1], abs=1e-12)
    low, high = wilson_interval(1, 4, z=1.0)  # p 1/4: centre (0.25 + 1/8) / 1.25 = 0.3
    assert (low + high) / 2 == pytest.approx(0.3, abs=1e-12)
    assert high - low == pytest.approx(2 * math.sqrt(0.25 * 0.75 / 4 + 1 / 64) / 1.25, abs=1e-12)


def strengths(ratings: dict[str, float]) -> dict[str, float]:
    return {name: 10 ** ((r - 1500) / 400) for name, r in ratings.items()}


def test_elo_is_the_fixed_point_of_its_equations() -> None:
    """Bradley–Terry by minorisation–maximisation with a virtual average player (strength 1, half
    a win and half a loss): each step sets s_i = (wins_i + 0.5) / (1 / (s_i + 1) + Σ_j n_ij /
    (s_i + s_j)), then rescales every strength so that their geometric mean is 1 (ratings centred
    on 1500). At the fit, the step gives the same strengths times one common factor."""
    results = [(["a", "b", "c"], "a"), (["a", "b"], "a"), (["b", "a"], "b"), (["c", "b"], "b"),
               (["a", "c"], "c"), (["a", "c"], None)]
    names = ["a", "b", "c"]
    s = strengths(elo_ratings(results, names))
    wins = {"a": 3, "b": 2, "c": 1}  # the three-seat game: a beat b and c
    games = {("a", "b"): 3, ("a", "c"): 2, ("b", "c"): 1}
    factors = []
    for name in names:
        denominator = 1 / (s[name] + 1)
        for (x, y), count in games.items():
            if name in (x, y):
                denominator += count / (s[name] + s[y if name == x else x])
        factors.append((wins[name] + 0.5) / denominator / s[name])
    assert factors == pytest.approx([factors[0]] * 3, rel=1e-6)
    assert math.prod(s.values()) == pytest.approx(1.0, rel=1e-9)
    assert s["a"] > s["b"] > s["c"]


def test_elo_of_one_game_between_two() -> None:
    """One win of a over b: s_a = 1/s_b, a's rating as far over 1500 as b's is under."""
    ratings = elo_ratings([(["a", "b"], "a")], ["a", "b"])
    s = strengths(ratings)
    assert s["a"] * s["b"] == pytest.approx(1.0, rel=1e-9)
    step_a = 1.5 / (1 / (s["a"] + 1) + 1 / (s["a"] + s["b"])) / s["a"]
    step_b = 0.5 / (1 / (s["b"] + 1) + 1 / (s["a"] + s["b"])) / s["b"]
    assert step_a == pytest.approx(step_b, rel=1e-6)
    assert ratings["a"] + ratings["b"] == pytest.approx(3000.0)
    assert elo_ratings([], ["a", "b"]) == {"a": 1500.0, "b": 1500.0}
    assert elo_ratings([(["a", "b"], None)], ["a", "b"]) == {"a": 1500.0, "b": 1500.0}


def test_lineups_by_hand() -> None:
    assert lineups(["a", "b", "c"], 2) == [["a", "b"], ["b", "a"], ["a", "c"], ["c", "a"], ["b", "c"], ["c", "b"]]
    assert lineups(["a", "b"], 3) == [["a", "b", "a"], ["b", "a", "a"], ["a", "a", "b"]]
    assert lineups(["x", "y"], 3, field="bold") == [
        ["x", "bold", "bold"], ["bold", "bold", "x"], ["bold", "x", "bold"],
        ["y", "bold", "bold"], ["bold", "bold", "y"], ["bold", "y", "bold"]]


def test_a_scripted_tournament_adds_up() -> None:
    """Seat 0 always wins with 10 points to 5, except game 2 (seed 102), cut short. Seatings
    alternate (a, b) and (b, a): a wins games 0 (and would 2), b wins games 1 and 3."""
    played: list[tuple[list[str], int]] = []

    def runner(seating: list[str], seed: int) -> tuple[int | None, list[int]]:
        played.append((list(seating), seed))
        return (None if seed == 102 else 0), [10, 5]

    progress: list[int] = []
    tournament = run_tournament(["a", "b"], CLASSIC, seats=2, games=4, seed=100, runner=runner,
                                progress=progress.append)
    assert played == [(["a", "b"], 100), (["b", "a"], 101), (["a", "b"], 102), (["b", "a"], 103)]
    assert progress == [1, 2, 3, 4]
    assert tournament.unfinished == 1
    assert (tournament.ruleset, tournament.seats, tournament.games, tournament.seed) == ("classic", 2, 4, 100)
    b, a = tournament.agents  # ordered by Elo: b won twice, a once
    assert (a.name, a.games, a.wins, a.points, a.seats) == ("a", 4, 1, 30.0, {0: 2, 1: 2})
    assert (b.name, b.games, b.wins, b.points, b.seats) == ("b", 4, 2, 30.0, {1: 2, 0: 2})
    assert a.win_rate == 0.25 and b.win_rate == 0.5
    assert a.mean_points == 7.5 and b.mean_points == 7.5
    assert (a.ci_low, a.ci_high) == wilson_interval(1, 4)
    assert (b.ci_low, b.ci_high) == wilson_interval(2, 4)
    ratings = elo_ratings([(["a", "b"], "a"), (["b", "a"], "b"), (["a", "b"], None), (["b", "a"], "b")], ["a", "b"])
    assert (a.elo, b.elo) == (ratings["a"], ratings["b"])
    assert tournament.results[2] == {"game": 2, "seed": 102, "seating": ["a", "b"], "winner": None, "scores": [10, 5]}
    assert tournament.results[1]["winner"] == 0
    saved = tournament.to_json()
    assert saved["unfinished"] == 1 and [agent["name"] for agent in saved["agents"]] == ["b", "a"]
    assert saved["agents"][1]["seats"] == {0: 2, 1: 2}


def test_a_field_pools_its_copies() -> None:
    def runner(seating: list[str], seed: int) -> tuple[int | None, list[int]]:
        return seating.index("x"), [1, 2, 3]  # x always wins

    tournament = run_tournament(["x"], CLASSIC, seats=3, games=3, runner=runner, field="bold")
    by_name = {agent.name: agent for agent in tournament.agents}
    assert (by_name["x"].games, by_name["x"].wins, by_name["x"].points) == (3, 3, 6.0)
    assert (by_name["bold"].games, by_name["bold"].wins, by_name["bold"].points) == (6, 0, 12.0)
    assert by_name["x"].seats == {0: 1, 1: 1, 2: 1}


@pytest.mark.parametrize("names, games, field, message", [
    (["a", "b"], 0, None, r"^a tournament needs at least one game \(got 0\): give --games 1 or more$"),
    (["a", "a"], 1, None, r"^each agent must appear once in a tournament \(give distinct names, and a field bot "
                          r"that is not one of the agents\)$"),
    (["a", "bold"], 1, "bold", r"^each agent must appear once in a tournament"),
])
def test_a_bad_tournament_is_refused(names: list[str], games: int, field: str | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_tournament(names, CLASSIC, seats=2, games=games, runner=lambda s, n: (0, [0, 0]), field=field)


def test_a_tournaments_budget_reaches_every_bot_it_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    """--budget-ms: the bots of a one-process tournament and of a worker process are made with
    it, and the report says it (only where it was given)."""
    recorder = Recorder()
    monkeypatch.setattr(bots, "make_bot", recorder)
    tournament = run_tournament(["a", "b"], CLASSIC, seats=2, games=1, budget_ms=7.0, max_turns=2)
    assert tournament.to_json()["budget_ms"] == 7.0
    assert "budget_ms" not in run_tournament(["a", "b"], CLASSIC, seats=2, games=1, max_turns=2).to_json()
    evaluation._start_worker(CLASSIC.to_dict(), "human", 2, 9.0)
    try:
        evaluation._play_games([(["a", "b"], 3)])
    finally:
        evaluation._worker_runner = None
    assert recorder.budgets == [7.0, 7.0, None, None, 9.0, 9.0]  # a bot a name and seat


def test_a_worker_process_plays_the_games_one_process_would() -> None:
    """What each process of a tournament runs (`_start_worker`, then `_play_games`), here in
    this process: the same (winner, scores) as the runner of a one-process tournament."""
    games = [(["simple", "random"], 3), (["random", "simple"], 4)]
    evaluation._start_worker(CLASSIC.to_dict(), "human", 40, None)
    try:
        played = evaluation._play_games(games)
    finally:
        evaluation._worker_runner = None
    runner = evaluation.bot_game_runner(CLASSIC, "human", 40)
    assert played == [runner(seating, seed) for seating, seed in games]
    assert len(played) == 2 and all(len(scores) == 2 for _, scores in played)


def test_the_report_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tournament.png: win rates with their intervals (clipped at the rate) beside a line at
    even odds, and Elo ratings in a range 100 wider each way; 10 × 4 inches at 120 dpi."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_rgba

    kept: list[Figure] = []
    monkeypatch.setattr(plt, "close", kept.append)  # keep the figure to look at it
    # Bounds a rounding away from the rate, on the wrong side of it: no negative error bar.
    a = AgentResult("a", games=10, wins=10, win_rate=1.0, ci_low=0.7, ci_high=1.0 - 1e-12, elo=1600.0)
    b = AgentResult("b", games=10, wins=0, win_rate=0.0, ci_low=1e-12, ci_high=0.3, elo=1400.0)
    tournament = Tournament("classic", 2, 10, 0, [a, b], 0, [{"game": 0}])
    out = tmp_path / "runs" / "out"  # folders made as needed, and again without complaint
    save_report(tournament, out)
    kept.clear()
    json_path, png_path = save_report(tournament, out)
    assert (json_path, png_path) == (out / "tournament.json", out / "tournament.png")
    assert json_path.read_text(encoding="utf-8").startswith('{\n "ruleset": "classic",\n "seats": 2,')
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert saved["games_played"] == [{"game": 0}] and saved["agents"][0]["name"] == "a"
    with Image.open(png_path) as image:
        assert image.size == (1200, 480)
    [figure] = kept
    left, right = figure.axes
    assert left.get_position().y0 == right.get_position().y0 < 0.5  # side by side, one row
    assert left.get_position().x1 < right.get_position().x0
    bars = [patch for patch in left.patches if isinstance(patch, Rectangle)]
    assert [bar.get_height() for bar in bars] == [1.0, 0.0]
    assert all(bar.get_facecolor() == to_rgba("#4c72b0") for bar in bars)
    [errorbars] = [c for c in left.containers if isinstance(c, ErrorbarContainer)]
    segments = errorbars.lines[2][0].get_segments()
    assert [cap.get_markersize() for cap in errorbars.lines[1]] == [12.0, 12.0]  # capsize 6, both ends
    ends = [y for segment in segments for y in (segment[0][1], segment[1][1])]
    assert ends == pytest.approx([0.7, 1.0, 0.0, 0.3])
    [even] = [line for line in left.lines if line.get_label() == "even odds"]
    assert np.asarray(even.get_ydata(), dtype=float).tolist() == [0.5, 0.5]
    assert even.get_linestyle() == "--"
    assert even.get_color() == "grey"
    assert even.get_label() == "even odds" and left.get_legend() is not None
    assert left.get_ylabel() == "win rate (95 % interval)"
    assert left.get_title() == "classic, 2 seats, 10 games"
    elo_bars = [patch for patch in right.patches if isinstance(patch, Rectangle)]
    assert [bar.get_height() for bar in elo_bars] == [1600.0, 1400.0]
    assert all(bar.get_facecolor() == to_rgba("#dd8452") for bar in elo_bars)
    assert right.get_ylim() == (1300.0, 1700.0)
    assert right.get_ylabel() == "Elo" and right.get_title() == "Elo ratings"
    assert [tick.get_text() for tick in left.get_xticklabels()] == ["a", "b"]


class Recorder:
    """Stands in for agents.bots.make_bot: notes how each bot was made; the bots pass."""

    def __init__(self) -> None:
        self.made: list[tuple[str, object, str]] = []
        self.budgets: list[float | None] = []

    def __call__(self, name: str, seed: object = 0, reaction: str = "human", budget_ms: float | None = None) -> object:
        self.made.append((name, seed, reaction))
        self.budgets.append(budget_ms)
        return PassingBot()


class PassingBot:
    def __init__(self) -> None:
        self.rng = random.Random(0)

    def act(self, state: object, decision: Decision) -> Action:
        return Roll() if decision.allows(Roll()) else Pass()


def test_the_runner_makes_each_bot_once_per_seat_with_the_reaction(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    monkeypatch.setattr(bots, "make_bot", recorder)
    run = evaluation.bot_game_runner(CLASSIC, "expert", 1)
    run(["a", "b"], 7)
    run(["a", "b"], 8)  # the same bots, reseeded
    run(["b", "a"], 9)  # a new (name, seat): made
    assert recorder.made == [("a", "7:0", "expert"), ("b", "7:1", "expert"), ("b", "9:0", "expert"),
                             ("a", "9:1", "expert")]


def test_max_turns_is_the_last_turn_played() -> None:
    """Seed 3: the first thrower scores 50 in turn 1; with max_turns 1 that turn is played."""
    run = evaluation.bot_game_runner(CLASSIC, "human", 1)
    assert run(["simple", "simple"], 3) == (None, [50, 0])


def test_an_illegal_move_names_the_agent_the_game_and_the_seat(monkeypatch: pytest.MonkeyPatch) -> None:
    class Stubborn(PassingBot):
        def act(self, state: object, decision: Decision) -> Action:
            return Pass()  # where only a roll is allowed

    monkeypatch.setattr(bots, "make_bot", lambda name, seed=0, reaction="human", budget_ms=None: Stubborn())
    run = evaluation.bot_game_runner(CLASSIC, "human", 10)
    with pytest.raises(ValueError, match=r"^agent 'mine' played an illegal move in game 5 \(seat [01]\): "
                                         r"pass is not legal now"):
        run(["mine", "mine"], 5)


def test_a_given_runner_is_used_whatever_the_workers() -> None:
    seen: list[int] = []

    def runner(seating: list[str], seed: int) -> tuple[int | None, list[int]]:
        seen.append(seed)
        return 0, [1, 0]

    run_tournament(["a", "b"], CLASSIC, seats=2, games=3, runner=runner, workers=2)
    assert seen == [0, 1, 2]


def test_the_saved_summary() -> None:
    tournament = run_tournament(["a", "b"], CLASSIC, seats=2, games=2, seed=9, runner=lambda s, n: (1, [3, 4]))
    saved = tournament.to_json()
    assert saved == {"ruleset": "classic", "seats": 2, "games": 2, "seed": 9, "unfinished": 0, "fair_share": 0.5,
                     "agents": [dataclasses.asdict(agent) for agent in tournament.agents]}


def test_at_a_doublette_both_partners_win_and_the_fair_share_is_two_seats_in_n() -> None:
    # Seat i plays with seat i + 2. The seat that made the winning roll alone was counted: a
    # team's win was half the figure it is, the winner "beat" its own partner in the Elo, and
    # the fair share drawn was 1/4. x sits alone against three bolds; seat 0 always wins.
    doublette = CLASSIC.with_house_rules(["doublette"])
    tournament = run_tournament(["x"], doublette, seats=4, games=4, runner=lambda s, n: (0, [9, 1, 9, 1]),
                                field="bold")
    by_name = {agent.name: agent for agent in tournament.agents}
    x, bold = by_name["x"], by_name["bold"]
    # x's seats: 0 (wins), then 3, 2 (wins, partner of 0), 1.
    assert (x.games, x.wins, x.win_rate) == (4, 2, 0.5)
    assert (x.ci_low, x.ci_high) == wilson_interval(2, 4)
    assert (bold.games, bold.wins) == (12, 6)  # every game one winning pair: 8 winners, 2 of them x
    assert tournament.team_size == 2 and tournament.fair_share == 0.5
    assert tournament.to_json()["fair_share"] == 0.5 and tournament.to_json()["team_size"] == 2
    # Two agents against each other (a, b, a, b: a's pair against b's): a pair's win is two.
    pairs = run_tournament(["a", "b"], doublette, seats=4, games=2, runner=lambda s, n: (0, [9, 1, 9, 1]))
    wins = {agent.name: agent.wins for agent in pairs.agents}
    assert wins == {"a": 2, "b": 2} and sum(wins.values()) == 2 * 2
    # Elo: each winner beats each loser, never its partner.
    ratings = evaluation.elo_of_matches([(["a", "b"], ["c", "d"])] * 3, ["a", "b", "c", "d"])
    assert ratings["a"] == pytest.approx(ratings["b"]) and ratings["a"] > ratings["c"]


def test_an_agent_left_without_a_game() -> None:
    """Three agents, two seats, one game: c never plays; its figures are zeros, not a division."""
    tournament = run_tournament(["a", "b", "c"], CLASSIC, seats=2, games=1, runner=lambda s, n: (0, [5, 1]))
    c = next(agent for agent in tournament.agents if agent.name == "c")
    assert (c.games, c.win_rate, c.mean_points, c.ci_low, c.ci_high) == (0, 0.0, 0.0, 0.0, 1.0)


def test_a_tournament_cuts_games_at_3000_turns_unless_told(monkeypatch: pytest.MonkeyPatch) -> None:
    """The default game length a tournament allows (a game still running at turn 3000 counts
    as unfinished), handed to the bots' runner with the default reaction level."""
    made: list[tuple[str, int, float | None]] = []

    def runner(rules: object, reaction: str, max_turns: int, budget_ms: float | None) -> evaluation.GameRunner:
        made.append((reaction, max_turns, budget_ms))
        return lambda seating, seed: (0, [343, 0])

    monkeypatch.setattr(evaluation, "bot_game_runner", runner)
    evaluation.run_tournament(["bold", "prudent"], CLASSIC, 2, 1)
    evaluation.run_tournament(["bold", "prudent"], CLASSIC, 2, 1, max_turns=7)
    evaluation.run_tournament(["bold", "prudent"], CLASSIC, 2, 1, budget_ms=5.0)  # --budget-ms
    assert made == [("human", 3000, None), ("human", 7, None), ("human", 3000, 5.0)]


def test_several_processes_are_spawned_not_forked(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork does not carry torch's threads safely (a tournament run from training): the
    worker processes are spawned."""
    asked: list[str | None] = []

    class Stop(Exception):
        pass

    def get_context(method: str | None = None) -> object:
        asked.append(method)
        raise Stop

    monkeypatch.setattr(evaluation.multiprocessing, "get_context", get_context)
    with pytest.raises(Stop):
        list(evaluation._outcomes([(["bold", "prudent"], 0), (["prudent", "bold"], 1)], None, 2,
                                  CLASSIC, "human", 10))
    assert asked == ["spawn"]


def test_the_chart_is_a_png_whatever_the_users_matplotlib_saves_by_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A matplotlibrc with `savefig.format: svg` must not put an SVG in tournament.png.
    import matplotlib

    monkeypatch.setitem(matplotlib.rcParams, "savefig.format", "svg")
    a = AgentResult("a", games=1, wins=1, win_rate=1.0, ci_low=0.2, ci_high=1.0, elo=1510.0)
    b = AgentResult("b", games=1, wins=0, win_rate=0.0, ci_low=0.0, ci_high=0.8, elo=1490.0)
    _, png_path = save_report(Tournament("classic", 2, 1, 0, [a, b], 0, []), tmp_path)
    assert png_path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


class Failing(PassingBot):
    def act(self, state: object, decision: Decision) -> Action:
        raise RuntimeError("no model here")


def test_a_brought_agent_that_fails_is_named_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """An agent brought as `module:Name` that raises: its name, the game, the seat and moment,
    and its error. Seed 5 draws seat 1 to throw first (its log: seat 0 a 5, seat 1 a 3), so the
    first decision is seat 1's turn start."""
    monkeypatch.setattr(bots, "make_bot", lambda name, seed=0, reaction="human", budget_ms=None: Failing())
    run = evaluation.bot_game_runner(CLASSIC, "human", 10)
    with pytest.raises(evaluation.AgentError) as error:
        run(["mine:Bot", "mine:Bot"], 5)
    assert str(error.value) == ("agent 'mine:Bot' failed in game 5 (seat 1, deciding turn_start): "
                                "RuntimeError: no model here")


def test_one_of_our_bots_that_fails_keeps_its_own_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # A bot of ours (no ':' in its name) failing is a bug of ours: its traceback, not an AgentError.
    monkeypatch.setattr(bots, "make_bot", lambda name, seed=0, reaction="human", budget_ms=None: Failing())
    run = evaluation.bot_game_runner(CLASSIC, "human", 10)
    with pytest.raises(RuntimeError, match="^no model here$"):
        run(["bold", "bold"], 5)


@pytest.mark.parametrize("workers", [None, 1])
def test_one_worker_plays_in_this_process(monkeypatch: pytest.MonkeyPatch, workers: int | None) -> None:
    """By default, and with workers=1, every game is played here: no process is started, even
    for several games."""
    def no_processes(method: str | None = None) -> object:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(evaluation.multiprocessing, "get_context", no_processes)
    monkeypatch.setattr(evaluation, "bot_game_runner",
                        lambda rules, reaction, max_turns, budget_ms: lambda s, n: (0, [343, 0]))
    options = {} if workers is None else {"workers": workers}
    tournament = run_tournament(["bold", "prudent"], CLASSIC, 2, 3, **options)  # type: ignore[arg-type]
    assert tournament.games == 3 and sum(agent.wins for agent in tournament.agents) == 3
