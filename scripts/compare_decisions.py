"""Where an agent's choices differ from another bot's, decision kind by decision kind.

    python scripts/compare_decisions.py runs/classic_2p/model.zip --reference bold --games 300
    python scripts/compare_decisions.py champion --ruleset maison --seats 4 --games 1000

The agent plays the reference bot (with --seats N, N − 1 copies of it; the agent's seat
rotates); at each of the agent's own decisions that offer a choice (races left out: every bot
shouts the right phrase), the reference is asked the same question. The table gives, per
decision kind, how often their answers differ, and how often each buys the cul when the
thrower's cul could end the game (the decision where a trained agent parts most from bold,
docs/agents.md). Then where the points come from: per score reason, the agent's points per
game against one seat of the reference's; and, where the table plays the Tichette (a race,
so not in the first table), how often each claims it by its place at the table (claimed by
several, the best score among the claimants pays).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import make_bot
from agents.model_bot import ModelLoadError
from cdc_env.actions import BuyCul
from cdc_env.cli import game_count, positive_int, run_command
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rulebook.house import added_names
from cdc_env.rulebook.house.tichette import TICHETTE
from cdc_env.rules import RulesetError, load_ruleset
from cdc_env.spaces import ActionCodec, ObservationEncoder

PLACES = ("last", "tied for last", "above the last")


class Tally:
    """What the games showed besides the decisions: the agent's wins, the points per score
    reason (the reference's summed over its seats), and the Tichette claims by place.
    (A plain class: the tests load this script without registering it, which a dataclass needs.)"""

    def __init__(self) -> None:
        self.games = 0
        self.wins = 0
        self.team_size = 1  # the agent's side: itself, or its team (the fair share's numerator)
        self.agent_points: Counter[str] = Counter()
        self.reference_points: Counter[str] = Counter()
        self.offered: dict[str, Counter[str]] = {"agent": Counter(), "reference": Counter()}
        self.claimed: dict[str, Counter[str]] = {"agent": Counter(), "reference": Counter()}

    def add(self, state: GameState, mine: int) -> None:
        self.games += 1
        # At a table in teams (the Doublette) the partner's win is the agent's too.
        self.wins += state.winner is not None and mine in state.teams[state.winner]
        self.team_size = len(state.teams[mine])
        # Each seat's score as the log goes (a Tichette is claimed as the dice fall).
        scores = list(state.setup.get("scores", [0] * state.players))
        for event in state.log:
            if event["type"] == "score":
                scores[event["seat"]] = event["score"]
                points = self.agent_points if event["seat"] == mine else self.reference_points
                points[event["reason"]] += event["delta"]
            elif event["type"] == "race" and event["race"] == TICHETTE:
                for seat in range(state.players):
                    who = "agent" if seat == mine else "reference"
                    place = place_of(scores, seat)
                    self.offered[who][place] += 1
                    self.claimed[who][place] += str(seat) in event["shouts"]


def place_of(scores: list[int], seat: int) -> str:
    """Where a seat stands for the Tichette: strictly last, tied for last, or above the last."""
    lowest = min(scores)
    if scores[seat] > lowest:
        return "above the last"
    return "last" if scores.count(lowest) == 1 else "tied for last"


def compare(agent_name: str, reference_name: str, ruleset: str, games: int, seed: int,
            max_turns: int = 300, seats: int = 2,
            tally: Tally | None = None) -> tuple[Counter[str], Counter[str], list[int]]:
    """(decisions per kind, differing answers per kind, [threatened buy_cul decisions, agent
    buys, reference buys]); `tally`, if given, gathers the points and the Tichette claims."""
    rules = load_ruleset(ruleset)
    if (refusal := rules.players_refusal(seats)) is not None:
        raise ValueError(f"--seats {seats}: {refusal}")
    agent = make_bot(agent_name, seed=seed)
    reference = make_bot(reference_name, seed=seed + 1)
    # The field: the reference (which also answers the agent's questions) and its copies.
    field_bots = [reference] + [make_bot(reference_name, seed=seed + 1 + k) for k in range(1, seats - 1)]
    encoder = ObservationEncoder(rules, seats, max_turns)
    codec = ActionCodec(seats, house_phrases=added_names(rules.house_rules, "phrases"))
    decisions: Counter[str] = Counter()
    differ: Counter[str] = Counter()
    threatened = [0, 0, 0]
    for game in range(games):
        mine = game % seats
        players = field_bots[:mine] + [agent] + field_bots[mine:]
        state = GameState(rules, seats, dice=SeededDice(seed * 1_000_003 + game))
        while (decision := state.pending) is not None and state.turn_number <= max_turns:
            assert decision.seat is not None  # the seeded dice answer every chance moment
            action = players[decision.seat].act(state, decision)
            if decision.seat == mine and decision.kind != "race" and int(codec.mask(decision, mine).sum()) > 1:
                other = reference.act(state, decision)
                decisions[decision.kind] += 1
                differ[decision.kind] += codec.encode(action, decision, mine) != codec.encode(other, decision, mine)
                table = state.table
                if decision.kind == "buy_cul" and table.thrower is not None and encoder.throw_reach(
                        table.dice[:2], rules.target_score - state.scores[table.thrower]) > 0:
                    threatened[0] += 1
                    threatened[1] += isinstance(action, BuyCul)
                    threatened[2] += isinstance(other, BuyCul)
            state.apply_action(action)
        if tally is not None:
            tally.add(state, mine)
    return decisions, differ, threatened


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", help="a bot name or a model path")
    parser.add_argument("--reference", default="bold")
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--games", type=game_count, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seats", type=positive_int, default=2,
                        help="players at the table: the agent and seats − 1 copies of the reference")
    args = parser.parse_args(argv)
    if args.seats < 2:  # the points are compared per seat of the reference: alone, it has none (was / 0 at the end)
        parser.error(f"--seats {args.seats}: the agent plays the reference, so give 2 seats or more")
    return run_command(lambda: report(args), (ModelLoadError, RulesetError, ValueError, FileNotFoundError))


def report(args: argparse.Namespace) -> int:
    console = Console(markup=False, emoji=False)  # names and paths are printed as typed ([..] no markup)
    tally = Tally()
    decisions, differ, threatened = compare(args.agent, args.reference, args.ruleset, args.games, args.seed,
                                            seats=args.seats, tally=tally)
    field_name = args.reference if args.seats == 2 else f"{args.seats - 1} × {args.reference}"
    table = Table(title=f"{args.agent} against {field_name}, {args.games} games of {args.ruleset}")
    for column in ("decision", "asked", f"answers unlike {args.reference}"):
        table.add_column(column, justify="left" if column == "decision" else "right")
    for kind in sorted(decisions):
        table.add_row(kind, str(decisions[kind]), f"{differ[kind] / decisions[kind]:.1%}")
    console.print(table)
    asked, agent_buys, reference_buys = threatened
    if asked:
        console.print(f"buying the cul when the thrower's cul could end the game ({asked} decisions): "
                      f"{args.agent} {agent_buys / asked:.1%}, {args.reference} {reference_buys / asked:.1%}")
    console.print(f"{args.agent} won {tally.wins} of {tally.games} games ({tally.wins / tally.games:.1%}; "
                  f"fair share {tally.team_size / args.seats:.1%})")
    games, copies = tally.games, args.seats - 1
    points = Table(title="points per game by score reason (the reference: one seat's)")
    for column in ("reason", args.agent, args.reference, "difference"):
        points.add_column(column, justify="left" if column == "reason" else "right")
    rows = [(reason, tally.agent_points[reason] / games, tally.reference_points[reason] / games / copies)
            for reason in set(tally.agent_points) | set(tally.reference_points)]
    for reason, mine, theirs in sorted(rows, key=lambda row: -abs(row[1] - row[2])):
        if abs(mine - theirs) >= 0.5:
            points.add_row(reason, f"{mine:.1f}", f"{theirs:.1f}", f"{mine - theirs:+.1f}")
    console.print(points)
    if sum(tally.offered["agent"].values()):
        claims = Table(title="Tichette claims by place (claimed / offered)")
        for column in ("place", args.agent, args.reference):
            claims.add_column(column, justify="left" if column == "place" else "right")
        for place in PLACES:
            claims.add_row(place, *(f"{tally.claimed[who][place] / max(1, tally.offered[who][place]):.1%} "
                                    f"of {tally.offered[who][place]}" for who in ("agent", "reference")))
        console.print(claims)
    return 0


if __name__ == "__main__":
    sys.exit(main())
