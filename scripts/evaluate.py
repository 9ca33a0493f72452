"""A tournament between agents: bot names or saved models, any ruleset, any number of seats.

    python scripts/evaluate.py --agents prudent bold simple --ruleset classic --seats 2 --games 2000
    python scripts/evaluate.py --agents champion --field bold --ruleset v004 --seats 4 --games 3000
    python scripts/evaluate.py --agents mypackage.agent:MyAgent --field bold --seats 3

An agent is a bot name (random, simple, prudent, bold, champion: the shipped agent of the
table), a saved model (.zip, or .npz weights), or `package.module:Name`, a class or factory whose
objects have `act(state, decision) -> action`. With --field BOT each agent plays against
seats − 1 copies of BOT (the copies pooled under BOT's name; their interval counts games, as
they share each one). Seats are rotated; prints win rates
with 95 % intervals, Elo ratings and mean points, and
writes tournament.json and tournament.png to --out (tournament-2.json… when the folder holds
an earlier report: none is replaced).

Game N of a run has the dice of seed --seed + N. With --field, several agents in one run take
the games in turn (agent A seeds 0, 1, agent B 2, 3, …): to compare agents on the same games,
give each its own run with the same --seed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import check_table, make_bot
from agents.evaluation import Tournament, games_for_everyone, lineups, run_tournament, save_report
from agents.model_bot import ModelLoadError
from cdc_env.cli import BUDGET_HELP, Stopped, budget_ms, game_count, output_dir, positive_int, processes, run_command
from cdc_env.reaction import REACTION_LEVELS
from cdc_env.rules import Ruleset, RulesetError, load_ruleset


def check_agent(name: str, rules: Ruleset, seats: int) -> None:
    """Builds each agent once before any game, so a bad name, or a bot that cannot play this
    table (no champion or network for it, a model of another size), fails at once with its error."""
    check_table(make_bot(name), rules, seats)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", nargs="+", required=True,
                        help="bot names, model paths or package.module:Name")
    parser.add_argument("--field", default=None, help="play each agent against seats − 1 copies of this bot")
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--seats", type=positive_int, default=2)
    parser.add_argument("--games", type=game_count, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reaction", default="human", choices=sorted(REACTION_LEVELS),
                        help="every bot's reaction-time level, so races are fair")
    parser.add_argument("--budget-ms", type=budget_ms, default=None, metavar="MS", help=BUDGET_HELP)
    # Checked (and made) before any game: results are never played for a folder that cannot hold them.
    parser.add_argument("--out", type=output_dir, default="runs/evaluate",
                        help="folder for tournament.json and tournament.png (default: runs/evaluate)")
    parser.add_argument("--workers", type=processes, default=os.cpu_count() or 1,
                        help="processes playing games side by side (default: one per CPU core); "
                             "the results do not depend on it")
    args = parser.parse_args(argv)
    # FileNotFoundError: a model path that is not there.
    return run_command(lambda: evaluate(args), (RulesetError, ModelLoadError, ValueError, FileNotFoundError))


def evaluate(args: argparse.Namespace) -> int:
    console = Console()
    rules = load_ruleset(args.ruleset)
    if (refusal := rules.players_refusal(args.seats)) is not None:
        raise ValueError(f"--seats {args.seats}: {refusal}")
    for name in [*args.agents, *([args.field] if args.field else [])]:
        check_agent(name, rules, args.seats)
    # An agent that sits in no game would be shown with no result beside the others (at the
    # prior's Elo, as if rated): too few games for the agents is the user's to change.
    if args.games < (needed := games_for_everyone(args.agents, args.seats, args.field)):
        seatings = len(lineups(args.agents, args.seats, args.field))
        raise ValueError(f"--games {args.games}: too few for every agent to play ({len(args.agents)} agents at "
                         f"{args.seats} seats sit in {seatings} seatings, taken in turn); give --games {needed} "
                         f"or more ({seatings} for every agent at every seat)")
    try:
        with Progress(console=console, transient=True) as progress:
            task = progress.add_task("playing", total=args.games)
            tournament = run_tournament(args.agents, rules, args.seats, args.games, seed=args.seed,
                                        reaction=args.reaction, workers=args.workers, field=args.field,
                                        budget_ms=args.budget_ms,
                                        progress=lambda done: progress.update(task, completed=done))
    except KeyboardInterrupt:
        raise Stopped("stopped: no game's result was written (a tournament is reported whole); "
                      "run it again, with fewer --games for a quicker one") from None
    thinking = "" if args.budget_ms is None else f", searchers {args.budget_ms:g} ms a decision"
    table = Table(title=f"{rules.name}, {args.seats} seats, {args.games} games (seed {args.seed}{thinking})")
    for column in ("agent", "games", "win rate", "95 % interval", "Elo", "mean points"):
        table.add_column(column, justify="left" if column == "agent" else "right")
    for agent in tournament.agents:
        table.add_row(agent.name, str(agent.games), f"{agent.win_rate:.1%}",
                      f"{agent.ci_low:.1%} – {agent.ci_high:.1%}", f"{agent.elo:.0f}",
                      f"{agent.mean_points:.1f}")
    console.print(table)
    if tournament.team_size > 1:
        console.print(f"In teams of {tournament.team_size}: a seat wins with its partner, so a seat's fair share is "
                      f"{tournament.fair_share:.0%}, not 1/{tournament.seats}")
    if tournament.unfinished:
        console.print(f"{tournament.unfinished} games had no winner within the turn limit")
    return write_report(tournament, args.out, console)


def report_name(out: Path) -> str:
    """`tournament`, or `tournament-2`, `-3`…: an earlier report in the folder is never replaced."""
    name, number = "tournament", 1
    # (lexists: a dangling link there is taken too, or claiming its name failed for ever)
    while os.path.lexists(out / f"{name}.json") or os.path.lexists(out / f"{name}.png"):
        number += 1
        name = f"tournament-{number}"
    return name


def claim_report_name(out: Path) -> Path:
    """The report's JSON path, claimed by making it empty (exclusively): two evaluations into one
    folder, ending together, both took `tournament` and one report replaced the other."""
    out.mkdir(parents=True, exist_ok=True)
    while True:
        path = out / f"{report_name(out)}.json"
        try:
            path.open("x").close()
        except FileExistsError:
            continue  # another run claimed it between the look and the claim
        return path


def write_report(tournament: Tournament, out: Path, console: Console) -> int:
    """The report in `out`; if that fails now (a full disk, a folder gone), in a new temporary
    folder, said where: the games played are never lost."""
    claimed: Path | None = None
    try:
        claimed = claim_report_name(out)
        json_path, png_path = save_report(tournament, out, claimed.stem)
    except OSError as error:
        if claimed is not None:
            claimed.unlink(missing_ok=True)  # our empty claim, not a report
        elsewhere = Path(tempfile.mkdtemp(prefix="cdc-evaluate-"))
        json_path, png_path = save_report(tournament, elsewhere)
        console.print(f"[red]error:[/red] {out} cannot be written ({error.strerror}); the results are kept in "
                      f"{json_path} and {png_path}", highlight=False, soft_wrap=True)
        return 1
    console.print(f"wrote {json_path} and {png_path}", soft_wrap=True, highlight=False)  # paths whole, to copy
    return 0


if __name__ == "__main__":
    sys.exit(main())
