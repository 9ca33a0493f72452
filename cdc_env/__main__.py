"""Command line: `python -m cdc_env rules-table --ruleset NAME`.

(A whole game between bots is `python -m agents play ...`: the engine imports no bots.)
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys

from cdc_env.cli import run_command, standard_output
from cdc_env.combinations import classify
from cdc_env.rules import RulesetError, load_ruleset


def rules_table(args: argparse.Namespace) -> int:
    rules = load_ruleset(args.ruleset)
    table = [
        {"dice": list(dice), **classify(dice, rules).to_json()}
        for dice in itertools.product(range(1, 7), repeat=3)
    ]
    with standard_output("the table"):
        print(json.dumps(table, ensure_ascii=False))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["play"]:  # the command it used to have
        print(f"error: a whole game between bots is now `{' '.join(['python -m agents', *argv])}` "
              "(the engine imports no bots)", file=sys.stderr)
        return 2
    parser = argparse.ArgumentParser(prog="python -m cdc_env", description=__doc__.split("\n\n")[0],
                                     epilog="A whole game between bots: python -m agents play ...")
    sub = parser.add_subparsers(dest="command", required=True)
    table = sub.add_parser("rules-table", help="classify the 216 ordered rolls as JSON")
    table.add_argument("--ruleset", default="classic", help="a ruleset name or YAML path")
    table.set_defaults(run=rules_table)
    args = parser.parse_args(argv)
    return run_command(lambda: args.run(args), (RulesetError,))


if __name__ == "__main__":
    sys.exit(main())
