"""The searcher (agents/search.py) and the value of a position it scores samples with."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pytest

from agents.bots import check_table, make_bot
from agents.champion import SEARCH_CHAMPIONS, ChampionBot
from agents.search import FACES, LatinDice, SearchBot, _pick, candidates, searched_options
from agents.value import FEATURES, ValueModel, features, load_value
from cdc_env.actions import Action, BirdBet, Pass, Shout, Sirop
from cdc_env.dice import SeededDice
from cdc_env.flow import Decision
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset


def play(bot: SearchBot, ruleset: str, players: int, seed: int, max_turns: int = 8) -> GameState:
    """`bot` at seat 0 against bold, for a few turns."""
    rules = load_ruleset(ruleset)
    seats = [bot, *(make_bot("bold", seed=f"{seed}:{s}") for s in range(1, players))]
    state = GameState(rules, players, dice=SeededDice(seed))
    while (decision := state.pending) is not None and state.turn_number <= max_turns:
        assert decision.seat is not None
        state.apply_action(seats[decision.seat].act(state, decision))
    return state


@pytest.mark.parametrize(("ruleset", "players"), [("v004", 2), ("complete", 3), ("classic", 5)])
def test_the_searcher_plays_legal_moves_at_any_table_and_searches_only_choices(ruleset: str, players: int) -> None:
    bot = SearchBot(seed=1, rounds=4)
    state = play(bot, ruleset, players, seed=3)
    assert state.turn_number > 1 and bot.stats.searched > 0  # apply_action refused nothing
    assert bot.stats.samples >= 2 * 2 * bot.stats.searched  # two rounds at least, two candidates at least


def test_the_searcher_is_reproducible_from_its_seed() -> None:
    first = play(SearchBot(seed=5, rounds=4), "v004", 2, seed=11)
    second = play(SearchBot(seed=5, rounds=4), "v004", 2, seed=11)
    assert first.history == second.history


def test_a_table_without_a_fitted_value_plays_its_samples_to_the_end() -> None:
    assert load_value("classic", 5) is None
    bot = SearchBot(seed=2, rounds=2)
    play(bot, "classic", 5, seed=4, max_turns=3)
    assert bot.stats.searched > 0
    game_long = SearchBot(seed=2, rounds=2, horizon="game")  # also where a value was fitted
    play(game_long, "v004", 2, seed=3, max_turns=8)
    assert game_long.stats.searched > 0


def test_a_samples_first_dice_are_the_rounds_stratum_then_seeded_dice() -> None:
    dice = LatinDice([6, 2, 5], key=9)
    assert dice.roll(2) == (6, 2)
    rest = SeededDice(9)
    assert dice.roll(2) == (5, *rest.roll(1))  # the last given face, then the seeded dice
    assert dice.roll(3) == rest.roll(3)
    assert LatinDice([6, 5], key=1).roll(2, sides=4) == (2, 1)  # a four-sided die: modulo its sides


def test_every_face_comes_once_a_block_at_each_of_a_samples_first_dice() -> None:
    """The Latin hypercube over rounds: in each block of six rounds, the first three dice of
    the samples take every face once, so a decision that hinges on the next die (a bought cul)
    sees each of its outcomes equally often."""
    bot = SearchBot(seed=3, rounds=12, budget_ms=60_000)
    seen: list[list[int]] = []
    noise = random.Random(0)  # samples that never settle the decision: all twelve rounds run

    def record(state: GameState, seat: int, action: Action, key: int, value: ValueModel | None, first: list[int],
               deadline: float = math.inf) -> float | None:
        seen.append(list(first))
        return noise.random()

    bot._sample = record  # type: ignore[method-assign]
    state = GameState(load_ruleset("classic"), 2, dice=SeededDice(1))
    bot.search(state, 0, [Pass(), Sirop()], Pass())
    rounds = seen[::2]  # both candidates of a round meet the same dice
    assert seen[1::2] == rounds and len(rounds) == 12
    for block in (rounds[:FACES], rounds[FACES:]):
        for place in range(3):
            assert sorted(first[place] for first in block) == list(range(1, FACES + 1))
    assert rounds[:FACES] != rounds[FACES:]  # each block draws its own order


def test_the_base_choice_stays_unless_another_leads_by_the_margin() -> None:
    options = [Pass(), Sirop()]
    noisy = [[0.5, 0.5, 0.5, 0.5], [1.0, 0.0, 1.0, 0.2]]  # ahead on average, by less than its noise
    assert _pick(options, noisy, 0, margin=1.0) == Pass()
    clear = [[0.5, 0.5, 0.5, 0.5], [0.7, 0.8, 0.75, 0.7]]
    assert _pick(options, clear, 0, margin=1.0) == Sirop()


def test_bird_bets_are_sampled_as_pass_the_base_bird_and_one_other() -> None:
    decision = Decision(0, "sirop_bet", (Pass(), *(BirdBet(face) for face in range(1, 7))))
    kept = candidates(decision, BirdBet(4))
    assert kept[0] == BirdBet(4) and Pass() in kept and len(kept) == 3


def test_searcher_names_and_their_mistakes() -> None:
    bot = make_bot("searcher:150:8:game:hedger")
    assert isinstance(bot, SearchBot) and (bot.budget_ms, bot.rounds, bot.horizon, bot.base_name) == (
        150, 8, "game", "hedger")
    # Each mistake is named by its part: a typo in a long name is found at once.
    for wrong, says in (("searcher:fast", "the budget 'fast' is not a finite number of ms"),
                        ("searcher:nan", "the budget 'nan' is not a finite number of ms"),
                        ("searcher:inf", "the budget 'inf' is not a finite number of ms"),
                        ("searcher:100:1", "2 rounds or more"),
                        ("searcher:100:8.5", "the rounds '8.5' are not a whole number"),
                        ("searcher:100:²", "the rounds '²' are not a whole number"),
                        ("searcher::64", "a part is empty"),
                        ("searcher:100:8:forever", "the horizon 'forever' is not turn or game"),
                        ("searcher:300:32:turn:netwrk", "the base bot 'netwrk' is not one of bold, hedger"),
                        ("searcher:300:32:turn:network:fancy", "the last part 'fancy' is not plain"),
                        ("searcher:1:2:turn:bold:plain:x", "6 parts after searcher, at most 5")):
        with pytest.raises(ValueError, match=re.escape(says)):
            make_bot(wrong)
    plain = make_bot("searcher:300:32:turn:network:plain")
    assert isinstance(plain, SearchBot) and not plain.latin and not plain.clip


def test_fitted_values_sum_to_one_and_favour_the_leader() -> None:
    model = load_value("v004", 2)
    assert model is not None
    state = GameState(load_ruleset("v004"), 2, dice=SeededDice(0), setup={"scores": [300, 50]})
    chances = model.win_chances(state)
    assert sum(chances) == pytest.approx(1.0) and chances[0] > 0.8
    assert len(features(state, 0)) == len(FEATURES)
    with pytest.raises(ValueError, match="weights"):
        ValueModel([0.0])


@pytest.mark.parametrize("table", ["classic_2p", "v004_2p", "classic_4p", "v004_4p"])
def test_a_seat_deeper_under_zero_is_never_worth_more(table: str) -> None:
    """The fitted value is a quadratic in the scores, which turns back under about −target:
    unclipped, −2000 was worth more than −343 and the searcher dug for it (classic, 2 seats:
    games ended at −2600)."""
    ruleset, players = table.split("_")[0], int(table.split("_")[1][0])
    model = load_value(ruleset, players)
    assert model is not None

    def chance(score: int, clip: bool = True) -> float:
        state = GameState(load_ruleset(ruleset), players, dice=SeededDice(0),
                          setup={"scores": [score, *[100] * (players - 1)]})
        return model.win_chances(state, clip)[0]

    chances = [chance(score) for score in range(-3000, 301, 50)]
    assert all(deeper <= higher + 1e-12 for deeper, higher in zip(chances, chances[1:], strict=False))
    if table == "classic_2p":
        assert chance(-2000, clip=False) > chance(-343, clip=False)  # what the clip mends


def test_a_plain_searcher_is_the_one_before_stratified_dice_and_clipped_values() -> None:
    plain = make_bot("searcher:300:64:turn:patient:plain")
    assert isinstance(plain, SearchBot) and not plain.latin and not plain.clip
    assert make_bot("searcher:300:64").latin and make_bot("searcher:300:64").clip  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="plain"):
        make_bot("searcher:300:64:turn:patient:fancy")


def test_a_plain_searcher_reads_the_tables_value_never_its_bases_own(monkeypatch) -> None:
    """`:plain` is the searcher before session 36, so a value fitted later to its base's games
    (RULESET_Np_BASE.json) must not change how the v004 2-seat champion plays."""
    import agents.search as search

    asked: list[tuple[str, int, str | None]] = []

    def asking(ruleset: str, players: int, base: str | None = None) -> ValueModel | None:
        asked.append((ruleset, players, base))
        return load_value(ruleset, players)

    monkeypatch.setattr(search, "load_value", asking)
    rules = load_ruleset("v004")
    for name, base in (("searcher:300:4:turn:patient:plain", None), ("searcher:300:4:turn:patient", "patient")):
        bot = make_bot(name, seed=1)
        assert isinstance(bot, SearchBot)
        bot.check_seats(rules, 2)
        state = GameState(rules, 2, dice=SeededDice(3))
        while (decision := state.pending) is not None and state.turn_number <= 6:
            state.apply_action(bot.act(state, decision))
        assert asked and set(asked) == {("v004", 2, base)}, (name, set(asked))
        asked.clear()


@pytest.mark.parametrize("table", sorted(SEARCH_CHAMPIONS))
def test_the_champion_of_a_search_table_is_the_searcher(table: tuple[str, int]) -> None:
    champion = ChampionBot(seed=0)
    state = GameState(load_ruleset(table[0]), table[1], dice=SeededDice(1))
    decision = state.pending
    assert decision is not None
    champion.act(state, decision)
    searcher = champion._players[table]
    assert isinstance(searcher, SearchBot)
    spec = make_bot(SEARCH_CHAMPIONS[table])
    assert isinstance(spec, SearchBot)
    played = ("budget_ms", "rounds", "horizon", "base_name", "latin", "clip", "base_value")
    assert [getattr(searcher, key) for key in played] == [getattr(spec, key) for key in played]


def test_a_budget_spent_before_a_first_round_keeps_the_base_choice() -> None:
    # evaluate.py --budget-ms 2 on a loaded machine: the value's first read outlasted the budget,
    # no round was sampled, and _pick divided by zero (a worker's traceback). Now the base bot's
    # choice stands, as where no candidate leads.
    options = [Pass(), Sirop()]
    assert _pick(options, [[], []], 1, 1.0) == Sirop()
    bot = SearchBot(seed=1, budget_ms=1e-9)  # over before the first round begins
    play(bot, "classic", 2, seed=5, max_turns=3)
    assert bot.stats.searched > 0 and bot.stats.samples == 0


def test_a_commands_budget_is_each_searchers_where_its_name_gives_none() -> None:
    """--budget-ms (make_bot's budget_ms): the time of `searcher` and of a searching champion;
    a name's own budget stands, and bots that do not search are the same."""
    assert make_bot("searcher").budget_ms == 300  # type: ignore[attr-defined]
    assert make_bot("searcher", budget_ms=50).budget_ms == 50  # type: ignore[attr-defined]
    assert make_bot("searcher:120:16", budget_ms=50).budget_ms == 120  # type: ignore[attr-defined]
    classic = load_ruleset("classic")
    assert ("classic", 2) in SEARCH_CHAMPIONS
    for budget, thinks in ((None, 300), (50, 50)):
        champion = make_bot("champion", budget_ms=budget)
        check_table(champion, classic, 2)  # loads the table's player
        assert champion._players[("classic", 2)].budget_ms == thinks  # type: ignore[attr-defined]
    network = make_bot("network", budget_ms=50)
    check_table(network, classic, 2)
    assert not isinstance(network._players[("classic", 2)], SearchBot)  # type: ignore[attr-defined]
    assert type(make_bot("bold", budget_ms=50)) is type(make_bot("bold"))
    # No time at all is refused (it was taken for "none given": 300 ms, or a champion that never searched).
    for name in ("searcher", "champion"):
        with pytest.raises(ValueError, match="above 0 ms"):
            make_bot(name, budget_ms=0)


def test_a_searcher_with_a_tiny_budget_stops_sampling_early() -> None:
    # The budget ends a search before its first check at 8 rounds (a round is a sample of
    # every candidate, a fraction of a millisecond each); with 300 ms it is never reached first.
    rounds = {}
    for budget in (1, 300):
        bot = make_bot(f"searcher:{budget}", seed=1)
        assert isinstance(bot, SearchBot)
        play(bot, "classic", 2, seed=5, max_turns=4)
        assert bot.stats.searched > 0
        rounds[budget] = bot.stats.samples / bot.stats.searched / 2  # two candidates at least
    assert rounds[1] < 8 <= rounds[300]


@pytest.mark.parametrize("table", sorted(SEARCH_CHAMPIONS))
def test_the_network_bot_plays_the_tables_network_where_the_champion_is_the_searcher(table: tuple[str, int]) -> None:
    """`network`: the shipped network of the table, also at a table whose `champion` is the
    searcher (what fit_value.py --base network fits the searcher's value to)."""
    from agents.model_bot import ModelBot

    state = GameState(load_ruleset(table[0]), table[1], dice=SeededDice(1))
    decision = state.pending
    assert decision is not None
    for name, kind in (("network", ModelBot), ("champion", SearchBot)):
        bot = make_bot(name, seed=0)
        assert bot.name == name
        bot.act(state, decision)
        assert isinstance(bot._players[table], kind), name  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="no champion for classic at 5 seats"):
        check_table(make_bot("network"), load_ruleset("classic"), 5)


def test_the_network_base_plays_the_tables_network_where_the_search_finds_no_lead(monkeypatch) -> None:
    # An infinite margin never leaves the base choice: every searched decision must then be
    # the shipped network's own, so the base really is the table's network (not bold). Its
    # samples are scored by the value for that base (agents/values/RULESET_Np_network.json
    # where there is one).
    import agents.search as search
    from agents.model_bot import ModelBot

    asked: list[str | None] = []

    def asking(ruleset: str, players: int, base: str | None = None) -> ValueModel | None:
        asked.append(base)
        return load_value(ruleset, players, base=base)

    monkeypatch.setattr(search, "load_value", asking)
    searcher = SearchBot(seed=1, rounds=2, base="network", margin=float("inf"))
    rules = load_ruleset("classic")
    network = ModelBot.load("agents/champions/classic_4p.npz", rules=rules)
    others = [make_bot("bold", seed=s) for s in range(4)]
    state = GameState(rules, 4, dice=SeededDice(7))
    compared = 0
    while (decision := state.pending) is not None and state.turn_number <= 10:
        if decision.seat == 0 and decision.kind != "race":
            action = searcher.act(state, decision)
            assert action == network.act(state, decision)
            compared += 1
        else:
            assert decision.seat is not None
            action = others[decision.seat].act(state, decision)
        state.apply_action(action)
    assert compared > 5 and searcher.stats.searched > 0
    assert asked and set(asked) == {"network"}


def test_a_network_base_at_a_table_without_a_network_is_refused() -> None:
    bot = make_bot("searcher:300:16:turn:network")
    assert isinstance(bot, SearchBot) and bot.base_name == "network"
    bot.check_seats(load_ruleset("classic"), 4)  # shipped: nothing to say
    with pytest.raises(ValueError, match="no champion for classic at 5 seats.*classic at 4 seats"):
        bot.check_seats(load_ruleset("classic"), 5)
    SearchBot().check_seats(load_ruleset("classic"), 5)  # bold as base plays any table


def test_a_value_is_fitted_to_the_games_of_the_bots_given(tmp_path) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "scripts" / "fit_value.py"), "--tables", "classic_2p",
                             "--bots", "network", "bold", "--games", "12", "--out", str(tmp_path)],
                            cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    fitted = json.loads((tmp_path / "classic_2p.json").read_text(encoding="utf-8"))
    assert fitted["fitted_on"] == "games of network and bold, every turn's start"
    assert len(fitted["weights"]) == len(FEATURES)
    assert load_value("classic", 2, tmp_path) is not None
    # Again into the same folder: refused before any game (a fit replaced a shipped value, and
    # with it how a champion searches, without a word), unless --overwrite.
    before = (tmp_path / "classic_2p.json").read_bytes()
    again = subprocess.run([sys.executable, str(root / "scripts" / "fit_value.py"), "--tables", "classic_2p",
                            "--games", "12", "--out", str(tmp_path)], cwd=root, capture_output=True, text=True)
    assert again.returncode == 2
    assert "classic_2p.json already there (read by the searcher): give --overwrite" in again.stderr
    assert (tmp_path / "classic_2p.json").read_bytes() == before


def test_a_value_fitted_for_the_network_is_what_the_searcher_over_it_reads(tmp_path) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    from agents.value import value_path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "scripts" / "fit_value.py"), "--tables", "classic_4p",
                             "--base", "network", "--games", "12", "--out", str(tmp_path)],
                            cwd=root, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["classic_4p_network.json"]
    fitted = json.loads((tmp_path / "classic_4p_network.json").read_text(encoding="utf-8"))
    assert fitted["fitted_on"] == "games of network and bold and bold and bold, every turn's start"
    network = load_value("classic", 4, tmp_path, base="network")
    assert network is not None and network.meta["fitted_on"] == fitted["fitted_on"]
    assert load_value("classic", 4, tmp_path, base="bold") is None  # no value of the table's own here
    # Where a base has no file of its own, the table's is read.
    plain = tmp_path / "plain"
    plain.mkdir()
    value_path("classic", 4, plain).write_text(json.dumps({**fitted, "fitted_on": "self-play of bold"}),
                                               encoding="utf-8")
    read = load_value("classic", 4, plain, base="network")
    assert read is not None and read.meta["fitted_on"] == "self-play of bold"


def test_evaluate_takes_a_budget_for_its_searchers_and_reports_it(tmp_path) -> None:
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "scripts" / "evaluate.py"), "--agents", "searcher", "--field",
                             "bold", "--games", "2", "--budget-ms", "2", "--workers", "2", "--out", str(tmp_path)],
                            cwd=root, capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "classic, 2 seats, 2 games (seed 0, searchers 2 ms a decision)" in result.stdout
    report = json.loads((tmp_path / "tournament.json").read_text(encoding="utf-8"))
    assert report["budget_ms"] == 2 and [a["games"] for a in report["agents"]] == [2, 2]


def test_play_seats_a_searching_champion_with_the_budget_given() -> None:
    import argparse

    from doubles import script

    play_script = script("play")
    args = argparse.Namespace(humans=["Ana"], bots=None, reaction="human", budget_ms=150.0)
    champion = play_script.lineup(args, 1, None)[1].bot  # the default bot: the table's champion
    check_table(champion, load_ruleset("v004"), 2)
    assert champion._players[("v004", 2)].budget_ms == 150.0


def test_at_a_doublette_table_a_sample_won_by_the_partner_is_a_win(monkeypatch: pytest.MonkeyPatch) -> None:
    # No value is fitted for a table in teams: samples play to the end of the game, and one won
    # by the searcher's partner (seat 2) was scored 0, as a rival's win.
    rules = load_ruleset("classic").with_house_rules(["doublette"])
    state = GameState(rules, 4, dice=SeededDice(5), setup={"scores": [100, 150, 200, 150]})
    bold, bot = make_bot("bold"), SearchBot(seed=1, rounds=16, budget_ms=10**6)
    while True:
        decision = state.pending
        assert decision is not None and decision.seat is not None
        chosen = bot._bot(bot.base_for(state), -1, state.rules, state.players).act(state, decision)
        if decision.seat == 0 and len(options := searched_options(decision, chosen)) > 1:
            break
        state.apply_action(bold.act(state, decision))
    samples: list[GameState] = []
    clone = GameState.clone

    def kept(self: GameState, *args: object, **kwargs: object) -> GameState:
        samples.append(clone(self, *args, **kwargs))  # type: ignore[arg-type]
        return samples[-1]

    monkeypatch.setattr(GameState, "clone", kept)
    outcomes = bot.outcomes(state, 0, options, options.index(chosen))
    scored = [outcomes[o][r] for r in range(len(outcomes[0])) for o in range(len(options))]
    winners = [game.winner for game in samples]
    assert len(scored) == len(samples) and 2 in winners  # the partner won some samples
    assert scored == [float(w in (0, 2)) for w in winners]


def test_the_budget_ends_a_sample_played_to_the_end_of_the_game(monkeypatch: pytest.MonkeyPatch) -> None:
    # At a table with no fitted value a sample plays to the end of the game, and the budget was
    # looked at only between rounds: at 8 seats a decision of `searcher:50` took up to 0.5 s.
    # On a clock that moves 1 ms with each move played, the search ends within a move of its
    # budget, and a round cut short is left out (the candidates stay paired).
    import types

    import agents.search as search

    bot = SearchBot(seed=1, rounds=64, budget_ms=50)
    state = GameState(load_ruleset("classic"), 8, dice=SeededDice(4))
    assert bot.value("classic", 8) is None
    bold = make_bot("bold")
    while True:
        decision = state.pending
        assert decision is not None and decision.seat is not None
        chosen = bold.act(state, decision)
        if decision.seat == 0 and len(options := searched_options(decision, chosen)) > 1:
            break
        state.apply_action(chosen)
    moves = [0]
    apply = GameState.apply_action

    def timed(self: GameState, *args: Any, **kwargs: Any) -> None:
        moves[0] += 1
        apply(self, *args, **kwargs)

    monkeypatch.setattr(GameState, "apply_action", timed)
    monkeypatch.setattr(search, "time", types.SimpleNamespace(perf_counter=lambda: moves[0] / 1000))
    outcomes = bot.outcomes(state, 0, options, options.index(chosen))
    assert len({len(samples) for samples in outcomes}) == 1
    assert moves[0] <= 51, moves
    assert bot.act(state, decision) in options


def test_a_reference_search_plays_every_round_where_a_searcher_stops_once_settled() -> None:
    # scripts/probe_search.py judges searches of 16 rounds against one of --truth rounds; that one
    # stopped once its decision looked settled, after 8 rounds at times: the truth rested on 8.
    state = GameState(load_ruleset("v004"), 2, dice=SeededDice(3))
    bold = make_bot("bold")
    counted: dict[bool, list[int]] = {True: [], False: []}
    for _ in range(40):
        decision = state.pending
        if decision is None:
            break
        assert decision.seat is not None
        chosen = bold.act(state, decision)
        options = searched_options(decision, chosen) if decision.seat == 0 else []
        if len(options) > 1:
            base = options.index(chosen)
            for settle in (True, False):
                bot = SearchBot(seed=1, rounds=64, budget_ms=10**9, settle=settle)
                counted[settle].append(len(bot.outcomes(state, 0, options, base)[0]))
        state.apply_action(chosen)
    assert counted[False] and set(counted[False]) == {64}
    assert min(counted[True]) < 64  # (the decisions played here settle early)


def test_one_paired_sample_measures_no_lead_and_the_base_choice_stays() -> None:
    # One sample has no spread: its standard error came out 0, and any lead passed the margin, so
    # a budget that ended after one round left the base choice on a single roll of the dice.
    from agents.search import _paired

    options = [Pass(), Sirop()]
    assert _paired([1.0], [0.0]) == (1.0, math.inf)
    assert _pick(options, [[0.0], [1.0]], 0, 1.0) == Pass()
    assert _pick(options, [[0.0] * 8, [1.0, 0.9, 1.0, 0.8, 1.0, 0.9, 1.0, 1.0]], 0, 1.0) == Sirop()
    # A search the budget ends after one round (its second not sampled) keeps the base choice.
    bot = SearchBot(seed=1, rounds=16, budget_ms=60_000)
    sampled: list[Action] = []

    def once(state: GameState, seat: int, action: Action, key: int, value: ValueModel | None, first: list[int],
             deadline: float = math.inf) -> float | None:
        sampled.append(action)
        return None if len(sampled) > 2 else float(action == Sirop())

    bot._sample = once  # type: ignore[method-assign]
    state = GameState(load_ruleset("classic"), 2, dice=SeededDice(1))
    assert bot.search(state, 0, options, Pass()) == Pass() and len(sampled) == 3


def test_a_searcher_alone_at_the_table_plays_its_base_without_searching() -> None:
    # In `solo` every sample is a win (the game always ends at the target): no candidate can
    # lead, and the searcher spent its whole budget at each decision to play its base anyway.
    bot = SearchBot(seed=1, rounds=4, budget_ms=20)
    base = make_bot("bold", seed=1)
    state = GameState(load_ruleset("solo"), 1, dice=SeededDice(3))
    choices = 0
    while (decision := state.pending) is not None and state.turn_number <= 10:
        action = bot.act(state, decision)
        assert bot.stats.searched == bot.stats.samples == 0
        if not isinstance(action, Shout):  # (a shout's onset is the reaction model's draw)
            assert action == base.act(state, decision)
        choices += len(searched_options(decision, action)) > 1
        state.apply_action(action)
    assert choices > 5
