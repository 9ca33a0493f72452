"""How well the searcher picks, decision by decision: its picks against a long search's.

    python scripts/probe_search.py --ruleset classic --seats 2 --base network --games 4

The searcher's base bot plays seat 0 against bold for `--games` games (dice seeds from
`--seed`; the default is a tuning range: tune there, report on another). At every decision it would
search, a long search (`--truth` rounds, stratified) estimates each candidate's value; then
each variant of the searcher decides that same position `--repeats` times with its own luck.
A variant's regret is what its pick is worth less than the best candidate, by the long search,
in win-chance points per decision (the searcher's own measure: the fitted chance to win at
the next turn's start). The base bot's regret is what searching can win at most, and noise
lifts it (the best of several noisy means); so the probe also says what a search on half the
long search's rounds wins over the base, measured on the other half (`cross_checked_gain`):
a figure the noise does not lift, one search can reach.

Variants, for each of `--rounds` R: `plain` (every die of a sample drawn at random) and
`latin` (the first dice stratified over the rounds, the searcher's default), each leaving the
base choice only for a lead of one standard error, and `latin, no margin` (the best mean,
whatever its lead). Decisions of a game are not independent, so say a regret's noise from two
runs with other `--seed`s, not from one.

A regret here is measured by the searcher's own yardstick, the fitted value: a variant that
follows it more closely is not always stronger. `latin, no margin` had the lowest regret at
2 seats of `classic` and lost games (docs/agents.md): picking on small leads finds where the
fitted value is wrong. Strength is measured in games (scripts/evaluate.py).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import make_bot
from agents.model_bot import ModelLoadError
from agents.search import BASES, SearchBot, searched_options
from cdc_env.cli import count_at_most, non_negative_int, positive_int, run_command
from cdc_env.dice import SeededDice
from cdc_env.game import GameError, GameState
from cdc_env.rules import RulesetError, load_ruleset

rounds_count = count_at_most(4096, "samples per candidate at one decision", least=1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--seats", type=positive_int, default=2)
    parser.add_argument("--base", choices=BASES, help="the searcher's base bot (default: the table's)")
    parser.add_argument("--games", type=count_at_most(10_000, "every decision of a game is searched at length"),
                        default=4, help="games whose decisions are probed")
    parser.add_argument("--seed", type=non_negative_int, default=95_600_000, help="the games' first dice seed")
    parser.add_argument("--truth", type=rounds_count, default=400, help="rounds of the long search")
    parser.add_argument("--rounds", type=rounds_count, nargs="+", default=[32, 64], help="the variants' rounds")
    parser.add_argument("--repeats", type=count_at_most(100, "searches of each position"), default=3)
    args = parser.parse_args(argv)
    for rounds in args.rounds:
        if rounds < 2:
            parser.error(f"argument --rounds: {rounds}: a searcher needs 2 rounds or more")
    args.rounds = list(dict.fromkeys(args.rounds))  # a count given twice is one variant, searched once
    if len(args.rounds) > 8:  # three variants each, searched --repeats times at every decision
        parser.error(f"argument --rounds: {len(args.rounds)} counts; give at most 8")
    if args.truth <= max(args.rounds):
        # The long search is the yardstick: one no longer than a variant's measures nothing.
        parser.error(f"argument --truth: {args.truth}: the long search needs more rounds than the variants' "
                     f"(--rounds {max(args.rounds)}); give more --truth or fewer --rounds")
    return run_command(lambda: probe(args), (RulesetError, GameError, ModelLoadError, ValueError),
                       stopped="stopped: nothing was written (the probe reports at its end); run it again "
                               "with fewer --games")


def probe(args: argparse.Namespace) -> int:
    console = Console(markup=False, emoji=False)
    rules = load_ruleset(args.ruleset)
    GameState(rules, args.seats)  # the engine's own check of the seat count
    # Unbounded time: the rounds alone end a search, so the probe does not depend on the machine.
    long_search = SearchBot(seed=1, rounds=args.truth, budget_ms=1e9, base=args.base, settle=False)
    long_search.check_seats(rules, args.seats)
    variants = [(f"{kind} {rounds}", SearchBot(seed=2, rounds=rounds, budget_ms=1e9, base=args.base,
                                               latin=latin, margin=margin))
                for rounds in args.rounds
                for kind, latin, margin in (("plain", False, 1.0), ("latin", True, 1.0),
                                            ("latin, no margin", True, 0.0))]
    regrets: dict[str, list[float]] = defaultdict(list)
    gains: list[float] = []
    changed: dict[str, int] = defaultdict(int)
    by_kind: dict[tuple[str, str], list[float]] = defaultdict(list)
    others = [make_bot("bold", seed=f"probe:{seat}") for seat in range(args.seats)]
    positions = 0
    with console.status(f"probing the searcher's decisions in {args.games} games …"):
        for game in range(args.games):
            state = GameState(rules, args.seats, dice=SeededDice(args.seed + game))
            while (decision := state.pending) is not None:
                assert decision.seat is not None
                if decision.seat != 0:
                    state.apply_action(others[decision.seat].act(state, decision))
                    continue
                base_bot = long_search._bot(long_search.base_for(state), -1, state.rules, state.players)
                chosen = base_bot.act(state, decision)
                options = searched_options(decision, chosen)
                if len(options) > 1:
                    positions += 1
                    base = options.index(chosen)
                    truth = long_search.outcomes(state, 0, options, base)
                    means = [sum(samples) / len(samples) for samples in truth]
                    best = max(means)
                    regrets["base bot (no search)"].append(best - means[base])
                    gains.append(cross_checked_gain(truth, base))
                    for name, bot in variants:
                        for _ in range(args.repeats):
                            pick = options.index(bot.search(state, 0, options, chosen))
                            regrets[name].append(best - means[pick])
                            by_kind[(name, decision.kind)].append(best - means[pick])
                            changed[name] += pick != base
                state.apply_action(chosen)
    per_game = positions / args.games
    table = Table(title=f"{args.ruleset}, {args.seats} seats, base {long_search.base_for(state)}: {positions} "
                        f"positions in {args.games} games (dice seeds from {args.seed}), regret against "
                        f"{args.truth} stratified rounds, win-chance points")
    for column in ("searcher", "regret per decision", "per game", "base choice left"):
        table.add_column(column)
    for name, values in regrets.items():
        mean = sum(values) / len(values)
        left = f"{100 * changed[name] / len(values):.1f} %" if name in changed else ""
        table.add_row(name, f"{100 * mean:.3f}", f"{100 * mean * per_game:.2f}", left)
    console.print(table)
    kinds = sorted({kind for _, kind in by_kind})
    detail = Table(title="regret per decision by kind (win-chance points; positions)")
    detail.add_column("searcher")
    for kind in kinds:
        detail.add_column(f"{kind} ({len(by_kind[(variants[0][0], kind)]) // args.repeats})")
    for name, _ in variants:
        detail.add_row(name, *(f"{100 * sum(v) / len(v):.3f}" for kind in kinds for v in [by_kind[(name, kind)]]))
    console.print(detail)
    if positions:
        at_most, checked = sum(regrets["base bot (no search)"]) / positions, sum(gains) / positions
        console.print(f"what searching wins over the base bot, win-chance points per game: at most "
                      f"{100 * at_most * per_game:.2f} (the long search's best; noise lifts it), "
                      f"{100 * checked * per_game:.2f} cross-checked (the best on half of its rounds, measured on "
                      f"the other half)")
    return 0


def cross_checked_gain(outcomes: list[list[float]], base: int) -> float:
    """What picking the best candidate on half of the rounds wins over the base choice, measured
    on the other half (and the other way round, averaged): the best of several noisy means is
    lifted by their noise, a pick scored on rounds it did not see is not. Rounds are the long
    search's, each candidate's samples paired by round."""
    rounds = len(outcomes[base])
    if rounds < 2:
        raise ValueError(f"cross-checking a pick needs 2 rounds or more, got {rounds}")
    half = rounds // 2
    gain = 0.0
    for pick_on, score_on in ((slice(0, half), slice(half, rounds)), (slice(half, rounds), slice(0, half))):
        pick = max(range(len(outcomes)), key=lambda i: _mean(outcomes[i][pick_on]))
        gain += _mean(outcomes[pick][score_on]) - _mean(outcomes[base][score_on])
    return gain / 2


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


if __name__ == "__main__":
    raise SystemExit(main())
