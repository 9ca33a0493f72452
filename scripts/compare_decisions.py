"""Where an agent's choices differ from another bot's, decision kind by decision kind.

    python scripts/compare_decisions.py runs/classic_2p/model.zip --reference bold --games 300

The agent plays the reference bot (seats alternating); at each of the agent's own decisions
that offer a choice (races left out: every bot shouts the right phrase), the reference is asked
the same question. The table gives, per decision kind, how often their answers differ, and how
often each buys the cul when the thrower's cul could end the game (the decision where a trained
agent parts most from bold, docs/agents.md).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.bots import make_bot
from agents.model_bot import ModelLoadError
from cdc_env.actions import BuyCul
from cdc_env.cli import positive_int, run_command
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rules import RulesetError, load_ruleset
from cdc_env.spaces import ActionCodec, ObservationEncoder


def compare(agent_name: str, reference_name: str, ruleset: str, games: int, seed: int,
            max_turns: int = 300) -> tuple[Counter[str], Counter[str], list[int]]:
    """(decisions per kind, differing answers per kind, [threatened buy_cul decisions, agent
    buys, reference buys])."""
    rules = load_ruleset(ruleset)
    agent = make_bot(agent_name, seed=seed)
    reference = make_bot(reference_name, seed=seed + 1)
    encoder = ObservationEncoder(rules, 2, max_turns)
    codec = ActionCodec(2)
    decisions: Counter[str] = Counter()
    differ: Counter[str] = Counter()
    threatened = [0, 0, 0]
    for game in range(games):
        mine = game % 2
        seats = [agent, reference] if mine == 0 else [reference, agent]
        state = GameState(rules, 2, dice=SeededDice(seed * 1_000_003 + game))
        while (decision := state.pending) is not None and state.turn_number <= max_turns:
            assert decision.seat is not None  # the seeded dice answer every chance moment
            action = seats[decision.seat].act(state, decision)
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
    return decisions, differ, threatened


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", help="a bot name or a model path")
    parser.add_argument("--reference", default="bold")
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--games", type=positive_int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    return run_command(lambda: report(args), (ModelLoadError, RulesetError, ValueError, FileNotFoundError))


def report(args: argparse.Namespace) -> int:
    console = Console()
    decisions, differ, threatened = compare(args.agent, args.reference, args.ruleset, args.games, args.seed)
    table = Table(title=f"{args.agent} against {args.reference}, {args.games} games of {args.ruleset}")
    for column in ("decision", "asked", f"answers unlike {args.reference}"):
        table.add_column(column, justify="left" if column == "decision" else "right")
    for kind in sorted(decisions):
        table.add_row(kind, str(decisions[kind]), f"{differ[kind] / decisions[kind]:.1%}")
    console.print(table)
    asked, agent_buys, reference_buys = threatened
    if asked:
        console.print(f"buying the cul when the thrower's cul could end the game ({asked} decisions): "
                      f"{args.agent} {agent_buys / asked:.1%}, {args.reference} {reference_buys / asked:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
