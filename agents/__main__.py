"""Command line: `python -m agents play ...`, a whole game between built-in bots, printed.

It lives here rather than in the engine's `python -m cdc_env` because it is a client of both
the engine and the bots, and the engine imports nothing from `agents/`.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from agents.bots import check_table, make_bot
from cdc_env.cli import BUDGET_HELP, budget_ms, run_command, standard_output
from cdc_env.game import GameError, turns_played
from cdc_env.play import describe_event, play_game
from cdc_env.reaction import REACTION_LEVELS
from cdc_env.rules import Ruleset, RulesetError, load_ruleset

if TYPE_CHECKING:
    from cdc_env.game import GameState
    from cdc_env.solo_optimum import SoloResult


class UsageError(ValueError):
    """A command-line value that cannot be played; the message says what to give instead."""


def seat_count(rules: Ruleset, asked: int | None) -> int:
    """The number of seats: as asked, else 1 for a solo ruleset and 4 otherwise; checked
    against the ruleset before any game is played."""
    if asked is None:
        return 1 if rules.max_players == 1 else max(rules.min_players, min(4, rules.max_players))
    if (refusal := rules.players_refusal(asked)) is not None:
        raise UsageError(f"--players {asked}: {refusal}; give --players within that range")
    return asked


def play(args: argparse.Namespace) -> int:
    if args.max_turns < 0:
        raise UsageError(f"--max-turns {args.max_turns}: give a number of turns ≥ 1, or 0 for no limit")
    rules = load_ruleset(args.ruleset).with_house_rules(args.house)
    players = seat_count(rules, args.players)
    bots = [make_bot(args.bot, seed=f"{args.seed}:{seat}", reaction=args.reaction, budget_ms=args.budget_ms)
            for seat in range(players)]
    check_table(bots[0], rules, players)  # a table the bot cannot play: said before the game, in one line
    try:
        state = play_game(rules, bots, seed=args.seed, max_turns=args.max_turns or None)
    except Exception as error:
        if ":" not in args.bot:
            raise  # one of our bots: a bug of ours, with its traceback
        # A brought agent's failure is its author's to fix: named, in one line.
        raise UsageError(f"--bot {args.bot}: the agent failed ({type(error).__name__}: {error})") from None
    solo: SoloResult | None = None
    if players == 1 and state.is_over:
        from cdc_env.solo_optimum import solo_result  # the optimum is computed only for solo
        solo = solo_result(state)
    with standard_output("the game"):
        show_game(args, rules, players, state, solo)
    return 0


def show_game(args: argparse.Namespace, rules: Ruleset, players: int, state: GameState,
              solo: SoloResult | None) -> None:
    if args.json:
        print(json.dumps({
            "ruleset": rules.name, "players": players, "seed": args.seed,
            "winner": state.winner, "scores": state.scores, "turns": turns_played(state),
            "log": state.log, "decisions": state.decisions(),
            **({"solo": solo.__dict__} if solo else {}),
            **({"solo": {"turns": turns_played(state), "grade": None, "not_graded": solo_not_graded(rules)}}
               if solo is None and players == 1 and state.is_over else {}),
        }, ensure_ascii=False))
        return
    who = "1 player" if players == 1 else f"{players} players"
    print(f"Cul de Chouette — ruleset {rules.name}, {who} ({args.bot} bots), seed {args.seed}")
    log = state.log
    if not state.is_over and log and log[-1]["type"] == "turn_start":
        log = log[:-1]  # cut short as turn max_turns + 1 began: a turn nobody played
    for event in log:
        print(describe_event(event))
    if state.winner is None:
        print(f"No winner: stopped after {args.max_turns} turns; scores {state.scores}")
    else:
        team = state.teams[state.winner]
        who = f"seats {' and '.join(map(str, team))} as a team" if len(team) > 1 else f"seat {state.winner}"
        print(f"Final scores: {state.scores} after {state.turn_number} turns; winner: {who}")
    if solo:
        print(f"Solo: {solo.describe()}")
    elif players == 1 and state.is_over:
        print(f"Solo: {turns_played(state)} turns (no grade: {solo_not_graded(rules)})")


def solo_not_graded(rules: Ruleset) -> str:
    from cdc_env.solo_optimum import uncovered

    return f"the solo optimum it is measured against does not cover {uncovered(rules)}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agents", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    game = sub.add_parser("play", help="play a whole game between built-in bots")
    game.add_argument("--ruleset", default="classic", help="a ruleset name or YAML path")
    game.add_argument("--house", nargs="*", default=[], metavar="RULE",
                      help="house rules on top of the ruleset, by name (docs/rules.md): --house verdier")
    game.add_argument("--players", type=int, default=None,
                      help="number of seats (default: 1 for solo, else 4)")
    game.add_argument("--seed", type=int, default=0)
    game.add_argument("--bot", default="simple",
                      help="every seat's bot: random, simple, prudent, bold, or a model path")
    game.add_argument("--reaction", default="human", choices=sorted(REACTION_LEVELS))
    game.add_argument("--budget-ms", type=budget_ms, default=None, metavar="MS", help=BUDGET_HELP)
    game.add_argument("--max-turns", type=int, default=2000,
                      help="stop a game that has no winner after this many turns (0: never)")
    game.add_argument("--json", action="store_true", help="print the whole game as JSON")
    game.set_defaults(run=play)
    args = parser.parse_args(argv)
    return run_command(lambda: args.run(args), (RulesetError, GameError, ValueError))


if __name__ == "__main__":
    sys.exit(main())
