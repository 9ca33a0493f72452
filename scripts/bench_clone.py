"""What a copy of a game costs, in decisions' `apply_action`, as the game goes on.

    python scripts/bench_clone.py [--ruleset classic] [--repeat 200]

Games of `bold` at 2 and 4 seats are stopped at a decision of turns 1, 25 and 50. At each,
one copy is timed three ways, each as a ratio to the mean `apply_action` of one decision
(a player's choice and the dice it calls for) measured in the same run:
- `clone()`, which starts a fresh flow at the turn in play and replays that turn only;
- the replay copy that was the only way before it, `GameState.from_json(state.to_json())`
  (the whole history replayed, plus the save's checks);
- the bare replay of the history (`scripts/probe_rollouts.py`'s copy before `clone()`).
The target is a clone within about ten decisions whatever the turn.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import make_bot
from cdc_env.actions import action_from_json
from cdc_env.cli import count_at_most, run_command
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rules import RulesetError, load_ruleset

TURNS = (1, 25, 50)


def replay(state: GameState) -> GameState:
    copy = GameState(state.rules, state.players, setup=state.setup)
    for entry in state.history:
        copy.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    return copy


def stopped_at(rules_name: str, players: int, turn: int, seed: int) -> GameState | None:
    """A game of bold stopped at the first decision of `turn` that has a choice (None: over)."""
    rules = load_ruleset(rules_name)
    bots = [make_bot("bold", seed=f"{seed}:{s}") for s in range(players)]
    state = GameState(rules, players, dice=SeededDice(seed))
    while (decision := state.pending) is not None:
        assert decision.seat is not None
        if state.turn_number >= turn and decision.kind != "race" and len(decision.legal_actions()) > 1:
            return state
        state.apply_action(bots[decision.seat].act(state, decision))
    return None


def seconds_per_call(call: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(3):  # the best of three rounds: the least disturbed by other work
        start = time.perf_counter()
        for _ in range(repeat):
            call()
        best = min(best, (time.perf_counter() - start) / repeat)
    return best


def decision_cost(rules_name: str, players: int, games: int) -> float:
    """Mean seconds of one decision's apply_action (the dice it calls for included), bots' time out."""
    rules = load_ruleset(rules_name)
    spent, decisions = 0.0, 0
    for seed in range(games):
        bots = [make_bot("bold", seed=f"{seed}:{s}") for s in range(players)]
        state = GameState(rules, players, dice=SeededDice(10_000 + seed))
        while (decision := state.pending) is not None and state.turn_number <= 300:
            assert decision.seat is not None
            action = bots[decision.seat].act(state, decision)
            start = time.perf_counter()
            state.apply_action(action)
            spent += time.perf_counter() - start
            decisions += 1
    return spent / decisions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ruleset", default="classic")
    parser.add_argument("--repeat", type=count_at_most(100_000, "copies timed per position and way"), default=200,
                        help="copies timed per position and way")
    args = parser.parse_args(argv)
    return run_command(lambda: bench(args), ())  # Ctrl+C: one line, not a traceback


def bench(args: argparse.Namespace) -> int:
    try:
        rules = load_ruleset(args.ruleset)
    except RulesetError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    # The bench's tables are 2 and 4 seats: those the ruleset plays (none was a traceback).
    tables = [players for players in (2, 4) if rules.players_refusal(players) is None]
    if not tables:
        print(f"error: {rules.players_refusal(2)}: this bench sets tables of 2 and 4 seats; give another --ruleset",
              file=sys.stderr)
        return 2
    print(f"{args.ruleset}: a copy's cost in decisions' apply_action (the best of 3 rounds of {args.repeat})")
    print(f"{'seats':>5} {'turn':>4} {'history':>7} {'decision µs':>11} {'clone()':>8} "
          f"{'from_json(to_json())':>21} {'replay':>7}")
    for players in tables:
        unit = decision_cost(args.ruleset, players, games=20)
        for turn in TURNS:
            state = next((s for seed in range(100) if (s := stopped_at(args.ruleset, players, turn, seed))), None)
            if state is None:  # a short ruleset's games may all be over by then
                print(f"{players:>5} {turn:>4}  (none of 100 games had a choice to make at this turn or after)")
                continue
            ways: dict[str, Callable[[], object]] = {
                "clone": state.clone,
                "json": lambda state=state: GameState.from_json(state.to_json()),  # type: ignore[misc]
                "replay": lambda state=state: replay(state),  # type: ignore[misc]
            }
            ratios = {name: seconds_per_call(call, args.repeat) / unit for name, call in ways.items()}
            print(f"{players:>5} {state.turn_number:>4} {len(state.history):>7} {unit * 1e6:>11.1f} "
                  f"{ratios['clone']:>8.1f} {ratios['json']:>21.1f} {ratios['replay']:>7.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
