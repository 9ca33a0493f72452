"""Every shipped champion against a field of each heuristic bot: docs/figures.md's champion table.

    python scripts/evaluate_champions.py                     # every champion, docs/figures.md's game counts
    python scripts/evaluate_champions.py --tables classic_4p v004_2p --others 500

Against bold (the strongest bot) each champion plays --bold-games games at 2 seats (default
4000) or --bold-games-more at more (default 3000); against prudent, simple and random --others
each. Seats are rotated; the field is seats − 1 copies of the bot. Writes runs/champions.json (a
table's entry per seed range: TABLE for the default --seed, TABLE_seedS for another) and
prints a Markdown table (win rate, 95 % interval, the fair share 1/N, and whether the interval's
lower bound is above it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.champion import champion_tables
from agents.evaluation import run_tournament
from cdc_env.cli import (
    OutputError,
    Stopped,
    UsageError,
    game_count,
    in_use_by_one,
    lock_path,
    output_file,
    parse_json,
    processes,
    run_command,
    write_atomic,
)
from cdc_env.rules import load_ruleset

DEFAULT_SEED = 30_000_000

FIELD = ("bold", "prudent", "simple", "random")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="*", default=None, help="RULESET_Np names (default: every champion)")
    # (game_count: at most MAX_GAMES, as evaluate.py's: every game's result is held in memory)
    parser.add_argument("--bold-games", type=game_count, default=4000)
    parser.add_argument("--bold-games-more", type=game_count, default=3000)
    parser.add_argument("--others", type=game_count, default=1000)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help="apart from the training runs' evaluation seed; another seed's figures are kept "
                             "beside the default's (TABLE_seedS)")
    parser.add_argument("--agent", choices=("champion", "network"), default="champion",
                        help="champion (the default), or network: the shipped network, where the champion is the "
                             "searcher over it (its figures kept as TABLE_network)")
    parser.add_argument("--workers", type=processes, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=output_file, default="runs/champions.json",
                        help="the JSON report; the tables played are merged into it (default: runs/champions.json)")
    args = parser.parse_args(argv)
    return run_command(lambda: evaluate(args), ())


def chosen_tables(names: list[str] | None) -> list[tuple[str, int]]:
    """The champions' tables named by --tables (all of them when none is named)."""
    tables = champion_tables()
    known = {f"{ruleset}_{players}p": (ruleset, players) for ruleset, players in tables}
    if not names:
        return tables
    unknown = [name for name in names if name not in known]
    if unknown:
        raise UsageError(f"--tables: no champion {', '.join(map(repr, unknown))}; give some of {', '.join(known)}")
    return [known[name] for name in dict.fromkeys(names)]


def read_results(path: Path) -> dict[str, Any]:
    """The report the run adds to: an earlier one at `path`, or nothing."""
    if not path.exists():
        return {}
    try:
        results = parse_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"--out {path}: not a champions report that can be added to ({error}); "
                         "give another --out, or move the file away") from None
    if not isinstance(results, dict):
        raise UsageError(f"--out {path}: not a champions report (not a JSON object); give another --out")
    for name, result in results.items():
        # Checked before any game: the file is rewritten after each table, and shown at the end.
        if not is_table_result(result):
            raise UsageError(f"--out {path}: not a champions report ({name!r} is not a table's results); "
                             "give another --out, or move the file away")
    return results


def is_table_result(result: Any) -> bool:
    """`result` reads as one table's entry of the report, as `play_tables` writes it."""
    if not isinstance(result, dict) or not {"ruleset", "players", "fair_share", "field"} <= set(result):
        return False
    field = result["field"]
    return (isinstance(field, dict) and isinstance(result["fair_share"], int | float)
            and all(isinstance(field.get(bot), dict) and isinstance(field[bot].get("win_rate"), int | float)
                    and isinstance(field[bot].get("games"), int) and isinstance(field[bot].get("ci95"), list)
                    and len(field[bot]["ci95"]) == 2
                    # (its bounds are printed and compared at the end: a null was a traceback then)
                    and all(isinstance(bound, int | float) and not isinstance(bound, bool)
                            for bound in field[bot]["ci95"])
                    for bot in FIELD))


def evaluate(args: argparse.Namespace) -> int:
    tables = chosen_tables(args.tables)
    # The report is read, then rewritten after each table: a second run on it would drop the
    # first one's tables. One at a time, from before its reading.
    with in_use_by_one(lock_path(args.out), args.out, "evaluate_champions.py"):
        return evaluate_into(args, tables)


def evaluate_into(args: argparse.Namespace, tables: list[tuple[str, int]]) -> int:
    results = read_results(args.out)
    try:
        play_tables(tables, args, results)
    except KeyboardInterrupt:
        done = f"the tables finished so far are kept in {args.out}" if results else "no table was finished"
        raise Stopped(f"stopped: {done}; go on with --tables for the others") from None
    print("\n| table | vs bold (95 % interval) | games | fair share | above it | vs prudent | vs simple | vs random |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results.values():
        field, fair = result["field"], result["fair_share"]
        bold = field["bold"]
        cells = [f"{field[b]['win_rate']:.1%}" for b in FIELD[1:]]
        seeds = f" (seeds from {result['seed']:,})" if isinstance(result.get("seed"), int) else ""
        seeds += ", the network" if result.get("agent") == "network" else ""
        print(f"| {result['ruleset']}, {result['players']} seats{seeds} | {bold['win_rate']:.1%} "
              f"({bold['ci95'][0]:.1%} – {bold['ci95'][1]:.1%}) | {bold['games']} | {fair:.1%} | "
              f"{'yes' if bold['ci95'][0] > fair else 'no'} | "
              + " | ".join(cells) + " |")
    return 0


def play_tables(tables: list[tuple[str, int]], args: argparse.Namespace, results: dict[str, Any]) -> None:
    """Each table's field of bots; the report is written after each table, whole."""
    for ruleset, players in tables:
        rules = load_ruleset(ruleset)
        rows = {}
        for bot in FIELD:
            games = args.others if bot != "bold" else (args.bold_games if players == 2 else args.bold_games_more)
            tournament = run_tournament([args.agent], rules, players, games, seed=args.seed, workers=args.workers,
                                        field=bot)
            agent = next(a for a in tournament.agents if a.name == args.agent)
            rows[bot] = {"games": games, "win_rate": agent.win_rate, "ci95": [agent.ci_low, agent.ci_high]}
            print(f"{ruleset} {players}p vs {bot}: {agent.win_rate:.1%} ({agent.ci_low:.1%} – {agent.ci_high:.1%}) "
                  f"over {games} games", flush=True)
        # One entry per table and seed range: a run from another --seed (the README's figures are
        # on two) replaced the table's first figures, and the report could not say which it held.
        key = (f"{ruleset}_{players}p" + ("_network" if args.agent == "network" else "")
               + (f"_seed{args.seed}" if args.seed != DEFAULT_SEED else ""))
        results[key] = {"ruleset": ruleset, "players": players, "seed": args.seed, "agent": args.agent,
                        "fair_share": 1 / players, "field": rows}
        try:
            write_atomic(args.out, json.dumps(results, indent=1))
        except OSError as error:  # a full disk is the user's to fix; the file keeps the tables before
            raise OutputError(f"--out {args.out} cannot be written ({error.strerror}); it keeps the tables written "
                              f"before, and {ruleset}_{players}p's figures are printed above: make room and go on "
                              "with --tables for the others") from None


if __name__ == "__main__":
    sys.exit(main())
