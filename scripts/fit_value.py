"""Fit the value of a position between turns (agents/value.py) to self-play games of bold.

    python scripts/fit_value.py --tables v004_2p classic_4p --games 4000
    python scripts/fit_value.py --tables classic_2p --bots champion bold   # the positions the searcher meets

At every turn's start of every game, each seat's features and whether that seat went on to win
make one row; a logistic model per table is fitted on four fifths of the games and its log loss
printed on the other fifth, next to a model that knows only the bias (the seat's base rate).
Seeds from 90,000,000: apart from the evaluations (0 and 30,000,000) and the probes (60,000,000).
--bots: the games' players instead (seat s of the game of seed g plays the ((s + g) mod k)-th of the k
names, so each sits in every seat): the searcher over a network meets the network's positions
against the field, not bold's. Writes agents/values/RULESET_Np.json (or --out).
--base BASE: the value a searcher over that base reads (agents/search.py), RULESET_Np_BASE.json;
`--base network` alone plays the table's network in one seat (each in turn) against bold:

    python scripts/fit_value.py --tables classic_2p --base network --games 12000 --seed 91000000
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.bots import check_table, make_bot
from agents.search import BASES, NETWORK
from agents.value import FEATURES, VALUES_DIR, ValueModel, decided_winner, features, fit_logistic, value_path
from cdc_env.cli import (
    OutputError,
    Stopped,
    count_at_most,
    one_line,
    output_dir,
    processes,
    run_command,
    worker_pool,
    write_atomic,
)
from cdc_env.dice import SeededDice
from cdc_env.game import GameError, GameState
from cdc_env.rules import RulesetError, load_ruleset

MAX_TURNS = 1000


def game_rows(ruleset: str, players: int, seed: int,
              names: tuple[str, ...] = ("bold",)) -> tuple[list[list[float]], list[int]]:
    rules = load_ruleset(ruleset)
    bots = [make_bot(names[(s + seed) % len(names)], seed=f"{seed}:{s}") for s in range(players)]
    state = GameState(rules, players, dice=SeededDice(seed))
    rows: list[list[float]] = []
    seats: list[int] = []
    while (decision := state.pending) is not None and state.turn_number <= MAX_TURNS:
        assert decision.seat is not None
        if decision.kind == "turn_start":
            for seat in range(players):
                rows.append(features(state, seat))
                seats.append(seat)
        state.apply_action(bots[decision.seat].act(state, decision))
    winner = decided_winner(state)
    return rows, [int(seat == winner) for seat in seats]


def _job(args: tuple[str, int, int, int, tuple[str, ...]]) -> list[tuple[list[list[float]], list[int]]]:
    ruleset, players, start, stop, names = args
    return [game_rows(ruleset, players, seed, names) for seed in range(start, stop)]


def log_loss(model: ValueModel | None, rows: list[list[float]], outcomes: list[int], base: float) -> float:
    total = 0.0
    for row, won in zip(rows, outcomes, strict=True):
        if model is None:
            p = base
        else:
            z = sum(w * x for w, x in zip(model.weights, row, strict=True))
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
        p = min(max(p, 1e-9), 1 - 1e-9)
        total -= math.log(p) if won else math.log(1 - p)
    return total / max(1, len(rows))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", required=True, help="RULESET_Np, e.g. v004_2p")
    # Every turn's rows are kept for the fit: 400,000 games held 7 GB (--games 10**14 filled the memory).
    parser.add_argument("--games", type=count_at_most(100_000, "every game's rows are kept in memory"), default=4000)
    parser.add_argument("--seed", type=int, default=90_000_000)
    parser.add_argument("--workers", type=processes, default=1)
    parser.add_argument("--bots", nargs="+", metavar="BOT",
                        help="the games' players, taking the seats in turn (default: bold against itself; "
                             "with --base network, the network against bold)")
    parser.add_argument("--base", choices=BASES,
                        help="fit the value a searcher over this base reads (RULESET_Np_BASE.json)")
    # Checked (and made) before any game: a file there, or a folder that cannot be written, is a usage error.
    parser.add_argument("--out", type=output_dir, default=str(VALUES_DIR))
    args = parser.parse_args(argv)
    tables = []
    for table in args.tables:
        ruleset, _, seats = table.rpartition("_")
        try:
            players = int(seats.removesuffix("p"))
            GameState(load_ruleset(ruleset), players)
        except (ValueError, RulesetError, GameError) as error:  # GameError: a seat count the ruleset refuses
            print(f"error: --tables {table!r}: give RULESET_Np (e.g. v004_2p) of a ruleset and seat count "
                  f"that exist ({error})", file=sys.stderr)
            return 2
        tables.append((ruleset, players))
    if args.games < 10:
        print("error: --games must be 10 or more", file=sys.stderr)
        return 2
    for ruleset, players in tables:
        for name in dict.fromkeys(table_bots(args, players)):
            try:  # a bot that cannot sit there (a champion missing) is said now
                check_table(make_bot(name), load_ruleset(ruleset), players)
            except (ValueError, RulesetError) as error:
                flag = "--bots" if args.bots else "--base network"
                print(f"error: {flag}: {name}: {one_line(str(error))}", file=sys.stderr)
                return 2
    args.out.mkdir(parents=True, exist_ok=True)
    return run_command(lambda: fit(args, tables), ())


def table_bots(args: argparse.Namespace, players: int) -> tuple[str, ...]:
    """The games' players at a table of `players` seats, taking the seats in turn."""
    if args.bots:
        return tuple(args.bots)
    if args.base == NETWORK:
        # One network, in every seat in turn (`network`: also where `champion` is the searcher).
        return ("network", *["bold"] * (players - 1))
    return ("bold",)


def fit(args: argparse.Namespace, tables: list[tuple[str, int]]) -> int:
    """Each table's value file in turn; Ctrl+C says which were written and how to fit the rest."""
    written: list[str] = []
    for table, (ruleset, players) in zip(args.tables, tables, strict=True):
        try:
            fit_table(args, ruleset, players)
        except KeyboardInterrupt:
            kept = f"the values of {', '.join(written)} were written" if written else "nothing was written"
            rest = " ".join(args.tables[len(written):])
            raise Stopped(f"stopped: {kept}; fit the rest with --tables {rest}") from None
        written.append(table)
    return 0


def fit_table(args: argparse.Namespace, ruleset: str, players: int) -> None:
    cut = max(1, args.games // (args.workers * 4))
    names = table_bots(args, players)
    jobs = [(ruleset, players, args.seed + start, args.seed + min(args.games, start + cut), names)
            for start in range(0, args.games, cut)]
    if args.workers > 1:
        with worker_pool(multiprocessing.get_context("spawn"), args.workers) as pool:
            games = [game for part in pool.map(_job, jobs) for game in part]
    else:
        games = [game for job in jobs for game in _job(job)]
    split = len(games) * 4 // 5
    train = [(r, o) for rows, outs in games[:split] for r, o in zip(rows, outs, strict=True)]
    test = [(r, o) for rows, outs in games[split:] for r, o in zip(rows, outs, strict=True)]
    weights = fit_logistic([r for r, _ in train], [o for _, o in train])
    meta = {"ruleset": ruleset, "players": players, "games": args.games, "seed": args.seed,
            "fitted_on": ("self-play of bold" if names == ("bold",) else f"games of {' and '.join(names)}")
            + ", every turn's start"}
    model = ValueModel(weights, meta)
    base = sum(o for _, o in train) / len(train)
    test_rows, test_out = [r for r, _ in test], [o for _, o in test]
    fitted, plain = log_loss(model, test_rows, test_out, base), log_loss(None, test_rows, test_out, base)
    meta["held_out_log_loss"] = round(fitted, 4)
    meta["held_out_log_loss_base_rate"] = round(plain, 4)
    path = value_path(ruleset, players, args.out, args.base)
    try:  # whole or not at all: a value file cut short stops the searcher that reads it
        write_atomic(path, json.dumps(model.to_json(), indent=1) + "\n")
    except OSError as error:
        raise OutputError(f"{path} cannot be written ({error.strerror or error}); the file there is as it was: "
                          "make room and fit again") from None
    print(f"{ruleset} at {players} seats: {len(train)} rows, held-out log loss {fitted:.4f} "
          f"(base rate alone {plain:.4f}); {len(FEATURES)} features → {path}")


if __name__ == "__main__":
    raise SystemExit(main())
