"""Command line: `python -m cdc_env rules-table --ruleset NAME`, `python -m cdc_env play ...`."""

from __future__ import annotations

import argparse
import itertools
import json
import sys

from cdc_env.combinations import classify
from cdc_env.play import describe_event, play_game
from cdc_env.reaction import REACTION_LEVELS
from cdc_env.rules import RulesetError, load_ruleset


def rules_table(args: argparse.Namespace) -> int:
    rules = load_ruleset(args.ruleset)
    table = [
        {"dice": list(dice), **classify(dice, rules).to_json()}
        for dice in itertools.product(range(1, 7), repeat=3)
    ]
    print(json.dumps(table, ensure_ascii=False))
    return 0


def play(args: argparse.Namespace) -> int:
    from agents.bots import make_bot  # the CLI is a client of the bots, the engine is not

    rules = load_ruleset(args.ruleset)
    players = 1 if rules.max_players == 1 else args.players
    bots = [make_bot(args.bot, seed=f"{args.seed}:{seat}", reaction=args.reaction)
            for seat in range(players)]
    state = play_game(rules, bots, seed=args.seed, max_turns=args.max_turns or None)
    solo = None
    if players == 1 and state.is_over:
        from cdc_env.solo_optimum import solo_result  # the optimum is computed only for solo
        solo = solo_result(state)
    if args.json:
        print(json.dumps({
            "ruleset": rules.name, "players": players, "seed": args.seed,
            "winner": state.winner, "scores": state.scores, "turns": state.turn_number,
            "log": state.log, "decisions": state.decisions(),
            **({"solo": solo.__dict__} if solo else {}),
        }, ensure_ascii=False))
        return 0
    who = "1 player" if players == 1 else f"{players} players"
    print(f"Cul de Chouette — ruleset {rules.name}, {who} ({args.bot} bots), seed {args.seed}")
    for event in state.log:
        print(describe_event(event))
    if state.winner is None:
        print(f"No winner: stopped after {args.max_turns} turns; scores {state.scores}")
    else:
        print(f"Final scores: {state.scores} after {state.turn_number} turns; winner: seat {state.winner}")
    if solo:
        print(f"Solo: {solo.describe()}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m cdc_env", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    table = sub.add_parser("rules-table", help="classify the 216 ordered rolls as JSON")
    table.add_argument("--ruleset", default="classic", help="a ruleset name or YAML path")
    table.set_defaults(run=rules_table)
    game = sub.add_parser("play", help="play a whole game between built-in bots")
    game.add_argument("--ruleset", default="classic")
    game.add_argument("--players", type=int, default=4)
    game.add_argument("--seed", type=int, default=0)
    game.add_argument("--bot", default="simple",
                      help="every seat's bot: random, simple, prudent, bold, champion (the shipped agent of the table), or a model path")
    game.add_argument("--reaction", default="human", choices=sorted(REACTION_LEVELS))
    game.add_argument("--max-turns", type=int, default=2000,
                      help="stop a game that has no winner after this many turns (0: never)")
    game.add_argument("--json", action="store_true", help="print the whole game as JSON")
    game.set_defaults(run=play)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (RulesetError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
