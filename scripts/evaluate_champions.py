"""Every shipped champion against a field of each heuristic bot: the figures of the README.

    python scripts/evaluate_champions.py                     # every champion, the README's game counts
    python scripts/evaluate_champions.py --tables classic_4p v004_2p --others 500

Against bold (the strongest bot) each champion plays --bold-games games at 2 seats (default
4000) or --bold-games-more at more (default 3000); against prudent, simple and random --others
each. Seats are rotated; the field is seats − 1 copies of the bot. Writes runs/champions.json and
prints a Markdown table (win rate, 95 % interval, the fair share 1/N, and whether the interval's
lower bound is above it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.champion import champion_path, champion_tables
from agents.evaluation import run_tournament
from cdc_env.rules import load_ruleset

FIELD = ("bold", "prudent", "simple", "random")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", nargs="*", default=None, help="RULESET_Np names (default: every champion)")
    parser.add_argument("--bold-games", type=int, default=4000)
    parser.add_argument("--bold-games-more", type=int, default=3000)
    parser.add_argument("--others", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=30_000_000, help="apart from the training runs' evaluation seed")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--out", type=Path, default=Path("runs/champions.json"))
    args = parser.parse_args(argv)
    tables = champion_tables()
    if args.tables:
        wanted = {(name.rsplit("_", 1)[0], int(name.rsplit("_", 1)[1].rstrip("p"))) for name in args.tables}
        tables = [table for table in tables if table in wanted]
    results = json.loads(args.out.read_text(encoding="utf-8")) if args.out.exists() else {}
    for ruleset, players in tables:
        champion_path(ruleset, players)
        rules = load_ruleset(ruleset)
        rows = {}
        for bot in FIELD:
            games = args.others if bot != "bold" else (args.bold_games if players == 2 else args.bold_games_more)
            tournament = run_tournament(["champion"], rules, players, games, seed=args.seed, workers=args.workers,
                                        field=bot)
            agent = next(a for a in tournament.agents if a.name == "champion")
            rows[bot] = {"games": games, "win_rate": agent.win_rate, "ci95": [agent.ci_low, agent.ci_high]}
            print(f"{ruleset} {players}p vs {bot}: {agent.win_rate:.1%} ({agent.ci_low:.1%} – {agent.ci_high:.1%}) "
                  f"over {games} games", flush=True)
        results[f"{ruleset}_{players}p"] = {"ruleset": ruleset, "players": players, "fair_share": 1 / players,
                                            "field": rows}
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print("\n| table | vs bold (95 % interval) | games | fair share | above it | vs prudent | vs simple | vs random |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results.values():
        field, fair = result["field"], result["fair_share"]
        bold = field["bold"]
        cells = [f"{field[b]['win_rate']:.1%}" for b in FIELD[1:]]
        print(f"| {result['ruleset']}, {result['players']} seats | {bold['win_rate']:.1%} ({bold['ci95'][0]:.1%} – "
              f"{bold['ci95'][1]:.1%}) | {bold['games']} | {fair:.1%} | {'yes' if bold['ci95'][0] > fair else 'no'} | "
              + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
