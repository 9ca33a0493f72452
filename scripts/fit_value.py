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

--compare measures only (no file is written): beside the shipped form, a logistic with hinges in
the scores near the target (where the 332 cap and the 343 win bend the chances) and a small
network (two layers of 64) on the same features are fitted on the same games, and each one's
held-out log loss printed, over every position and over those with a seat at 80 % of the target
or more. It says whether a richer value would read positions better, before any search uses one.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import check_table, make_bot
from agents.search import BASES
from agents.value import FEATURES, VALUES_DIR, ValueModel, features, fit_logistic, value_path
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
from cdc_env.game import GameError, GameState, on_winning_side
from cdc_env.rules import Ruleset, RulesetError, load_ruleset

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
    return rows, [int(on_winning_side(state, seat)) for seat in seats]


def _job(args: tuple[str, int, int, int, tuple[str, ...]]) -> list[tuple[list[list[float]], list[int]]]:
    ruleset, players, start, stop, names = args
    return [game_rows(ruleset, players, seed, names) for seed in range(start, stop)]


def log_loss(model: ValueModel | None, rows: list[list[float]], outcomes: list[int], base: float) -> float:
    """The model's held-out log loss on `rows` (None: the base rate alone)."""
    chances = []
    for row in rows:
        if model is None:
            chances.append(base)
        else:
            z = sum(w * x for w, x in zip(model.weights, row, strict=True))
            chances.append(1 / (1 + math.exp(-max(-30.0, min(30.0, z)))))
    return mean_log_loss(chances, outcomes)


def mean_log_loss(chances: list[float], outcomes: list[int]) -> float:
    """The mean log loss of chances to win against what happened, each chance kept off 0 and 1."""
    total = 0.0
    for p, won in zip(chances, outcomes, strict=True):
        p = min(max(p, 1e-9), 1 - 1e-9)
        total -= math.log(p) if won else math.log(1 - p)
    return total / max(1, len(outcomes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", nargs="+", required=True, help="RULESET_Np, e.g. v004_2p")
    # Every turn's rows are kept for the fit: 400,000 games held 7 GB (--games 10**14 filled the memory).
    parser.add_argument("--games", type=count_at_most(100_000, "every game's rows are kept in memory"), default=4000)
    parser.add_argument("--seed", type=int, default=90_000_000)
    parser.add_argument("--workers", type=processes, default=1)
    parser.add_argument("--bots", nargs="+", metavar="BOT",
                        help="the games' players, taking the seats in turn (default: bold against itself; "
                             "with --base B, B against bold)")
    parser.add_argument("--base", choices=BASES,
                        help="fit the value a searcher over this base reads (RULESET_Np_BASE.json)")
    # Checked (and made) before any game: a file there, or a folder that cannot be written, is a usage error.
    parser.add_argument("--out", type=output_dir, default=str(VALUES_DIR))
    parser.add_argument("--compare", action="store_true",
                        help="measure only: fit richer forms beside the shipped one and print their held-out "
                             "log loss; no file is written")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a value file already in --out (the shipped ones are what the champions "
                             "search with)")
    args = parser.parse_args(argv)
    tables = []
    for table in args.tables:
        ruleset, _, seats = table.rpartition("_")
        try:
            players = int(seats.removesuffix("p"))
            rules = load_ruleset(ruleset)
            GameState(rules, players)
        except (ValueError, RulesetError, GameError) as error:  # GameError: a seat count the ruleset refuses
            print(f"error: --tables {table!r}: give RULESET_Np (e.g. v004_2p) of a ruleset and seat count "
                  f"that exist ({error})", file=sys.stderr)
            return 2
        tables.append((ruleset, rules, players))
    if args.games < 10:
        print("error: --games must be 10 or more", file=sys.stderr)
        return 2
    if not args.compare and not args.overwrite:
        # Before any game: a fit replaced a shipped value (and with it how a champion searches)
        # without a word, a fit of 10 games as readily as one of 12,000.
        paths = [value_path(rules.name, players, args.out, args.base) for _, rules, players in tables]
        there = [path for path in paths if path.exists()]
        if there:
            print(f"error: {', '.join(map(str, there))} already there (read by the searcher): give --overwrite to "
                  "replace it, or --out another folder", file=sys.stderr)
            return 2
    for _, rules, players in tables:
        for name in dict.fromkeys(table_bots(args, players)):
            try:  # a bot that cannot sit there (a champion missing) is said now
                check_table(make_bot(name), rules, players)
            except ValueError as error:
                flag = "--bots" if args.bots else f"--base {args.base}"
                print(f"error: {flag}: {name}: {one_line(str(error))}", file=sys.stderr)
                return 2
    args.out.mkdir(parents=True, exist_ok=True)
    return run_command(lambda: fit(args, tables), ())


def table_bots(args: argparse.Namespace, players: int) -> tuple[str, ...]:
    """The games' players at a table of `players` seats, taking the seats in turn."""
    if args.bots:
        return tuple(args.bots)
    if args.base is not None:
        # The base, in every seat in turn, against bold (`network`: also where `champion` is the
        # searcher). `--base patient` alone fitted bold's games under patient's name.
        return (args.base, *["bold"] * (players - 1))
    return ("bold",)


def fit(args: argparse.Namespace, tables: list[tuple[str, Ruleset, int]]) -> int:
    """Each table's value file in turn; Ctrl+C says which were written and how to fit the rest.
    A table is (the ruleset as given, a name or a file: the workers load it; its rules, whose
    name names the value file the searcher looks for; seats)."""
    written: list[str] = []
    for table, (ruleset, rules, players) in zip(args.tables, tables, strict=True):
        try:
            fit_table(args, ruleset, rules.name, players)
        except KeyboardInterrupt:
            kept = f"the values of {', '.join(written)} were written" if written else "nothing was written"
            rest = " ".join(args.tables[len(written):])
            raise Stopped(f"stopped: {kept}; fit the rest with --tables {rest}") from None
        written.append(table)
    return 0


def fit_table(args: argparse.Namespace, ruleset: str, name: str, players: int) -> None:
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
    if args.compare:
        compare_forms(name, players, train, test)
        return
    weights = fit_logistic([r for r, _ in train], [o for _, o in train])
    meta = {"ruleset": name, "players": players, "games": args.games, "seed": args.seed,
            "fitted_on": ("self-play of bold" if names == ("bold",) else f"games of {' and '.join(names)}")
            + ", every turn's start"}
    model = ValueModel(weights, meta)
    base = sum(o for _, o in train) / len(train)
    test_rows, test_out = [r for r, _ in test], [o for _, o in test]
    fitted, plain = log_loss(model, test_rows, test_out, base), log_loss(None, test_rows, test_out, base)
    meta["held_out_log_loss"] = round(fitted, 4)
    meta["held_out_log_loss_base_rate"] = round(plain, 4)
    path = value_path(name, players, args.out, args.base)
    try:  # whole or not at all: a value file cut short stops the searcher that reads it
        write_atomic(path, json.dumps(model.to_json(), indent=1) + "\n")
    except OSError as error:
        raise OutputError(f"{path} cannot be written ({error.strerror or error}); the file there is as it was: "
                          "make room and fit again") from None
    print(f"{name} at {players} seats: {len(train)} rows, held-out log loss {fitted:.4f} "
          f"(base rate alone {plain:.4f}); {len(FEATURES)} features → {path}")


# Hinges in a seat's score, as shares of the target: the chances bend near the end (a gain off
# one's turn stops at 332, a win needs 343 on one's own), which a quadratic cannot follow.
HINGES = (0.5, 0.75, 0.85, 0.9, 0.95, 0.97)
NEAR_THE_END = 0.8
ME, BEST, PLAYS_NEXT = FEATURES.index("me"), FEATURES.index("best_other"), FEATURES.index("plays_next")


def with_hinges(row: list[float]) -> list[float]:
    """The shipped features, then hinges in one's own and the best rival's score, and the two
    nearest the end again for whoever plays next."""
    me, best, mine_next = row[ME], row[BEST], row[PLAYS_NEXT]
    hinges = [v for t in HINGES for v in (max(0.0, me - t), max(0.0, best - t))]
    nearest = [v for t in HINGES[-2:] for v in (max(0.0, me - t) * mine_next, max(0.0, best - t) * (1 - mine_next))]
    return [*row, *hinges, *nearest]


def compare_forms(ruleset: str, players: int, train: list[tuple[list[float], int]],
                  test: list[tuple[list[float], int]]) -> None:
    """Held-out log loss of the shipped form, the same with hinges, and a small network."""
    import numpy as np
    import torch
    from rich.console import Console
    from rich.table import Table

    y_train = np.array([o for _, o in train], dtype=float)
    outcomes = [o for _, o in test]
    x_test = np.array([r for r, _ in test], dtype=float)
    near = np.maximum(x_test[:, ME], x_test[:, BEST]) >= NEAR_THE_END
    outcomes_near = [o for o, n in zip(outcomes, near, strict=True) if n]

    def losses(chances: np.ndarray) -> tuple[float, float]:
        every = mean_log_loss(chances.tolist(), outcomes)
        return every, mean_log_loss(chances[near].tolist(), outcomes_near) if near.any() else float("nan")

    def logistic(rows: list[list[float]], test_rows: np.ndarray) -> np.ndarray:
        w = np.array(fit_logistic(rows, [o for _, o in train], iterations=40))
        return 1 / (1 + np.exp(-np.clip(test_rows @ w, -30, 30)))

    base = float(y_train.mean())
    results = [("the base rate alone", 1, losses(np.full(len(outcomes), base)))]
    results.append((f"shipped: logistic, {len(FEATURES)} features", len(FEATURES),
                    losses(logistic([r for r, _ in train], x_test))))
    hinged = [with_hinges(r) for r, _ in train]
    results.append(("logistic with hinges near the target", len(hinged[0]),
                    losses(logistic(hinged, np.array([with_hinges(list(r)) for r in x_test])))))
    torch.manual_seed(0)
    inputs = torch.tensor([r[1:] for r, _ in train], dtype=torch.float32)  # the bias is the network's own
    targets = torch.tensor(y_train, dtype=torch.float32)
    net = torch.nn.Sequential(torch.nn.Linear(inputs.shape[1], 64), torch.nn.Tanh(), torch.nn.Linear(64, 64),
                              torch.nn.Tanh(), torch.nn.Linear(64, 1))
    optimiser = torch.optim.Adam(net.parameters(), lr=3e-3)
    loss = torch.nn.BCEWithLogitsLoss()
    for _ in range(20):
        for batch in torch.randperm(len(inputs)).split(4096):
            optimiser.zero_grad()
            loss(net(inputs[batch]).squeeze(1), targets[batch]).backward()
            optimiser.step()
    with torch.no_grad():
        chances = torch.sigmoid(net(torch.tensor(x_test[:, 1:], dtype=torch.float32)).squeeze(1)).numpy()
    results.append(("network, 2 layers of 64 (tanh), the same features", sum(p.numel() for p in net.parameters()),
                    losses(chances.astype(float))))
    table = Table(title=f"{ruleset} at {players} seats: held-out log loss, {len(test)} positions "
                        f"({int(near.sum())} with a seat at {NEAR_THE_END:.0%} of the target or more); "
                        f"fitted on {len(train)}")
    for column in ("form", "weights", "every position", "near the end"):
        table.add_column(column)
    for name, weights, (every, end) in results:
        table.add_row(name, str(weights), f"{every:.4f}", f"{end:.4f}")
    Console(markup=False, emoji=False).print(table)


if __name__ == "__main__":
    raise SystemExit(main())
