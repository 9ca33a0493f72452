"""How much is left to win against a field of one bot: paired rollouts of the bot's choices.

    python scripts/probe_rollouts.py --ruleset v004 --seats 3 --games 400 --rollouts 64

Every seat plays BOT. At a sample of the decisions that offer a choice (races and claims left
out: timed shouts, as the searcher leaves them), each candidate action is played out
`--rollouts` times to the end of the game, every seat playing BOT from there. The rollouts of
all candidates share their dice and the bots' seeds (common random numbers), so the differences
between candidates are measured on the same luck.

Two figures per decision kind, in win-rate points of the deciding seat:
- each fixed alternative against the bot's own choice (e.g. "Pass where bold sirops"): a rule
  change that could be written into a heuristic or taught to an agent;
- what a one-step rollout policy would gain per game: one half of the rollouts picks the action,
  the other half, independent of the pick, measures it (and the other way round). Picking on
  noisy estimates costs; `--switch` only leaves the bot's choice for a lead that large.

A kind where neither figure is above its noise has nothing left that one decision can win
(docs/agents.md, "`v004` at 3 and 4 seats: what rollouts say").
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import random
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cdc_env.ctrl_c_at_start  # noqa: F401, I001 - first: a Ctrl+C while the libraries load is one line

from agents.bots import make_bot
from agents.model_bot import ModelLoadError
from agents.search import UNSEARCHED_KINDS, staked_candidates
from cdc_env.actions import Action
from cdc_env.cli import (
    count_at_most,
    fraction,
    output_file,
    positive_int,
    refuse_existing,
    run_command,
    worker_pool,
    write_new,
)
from cdc_env.dice import SeededDice
from cdc_env.game import GameError, GameState, on_winning_side
from cdc_env.rules import Ruleset, RulesetError, load_ruleset

MAX_TURNS = 300

Record = dict[str, Any]  # one probed decision: kind, the bot's choice, each candidate's outcomes


_bots: dict[tuple[str, int], Any] = {}


def seated_bot(bot: str, seat: int, seed: str) -> Any:
    """`bot` for `seat`, built once and reseeded (a model loads slowly)."""
    if (bot, seat) not in _bots:
        _bots[(bot, seat)] = make_bot(bot, seed=seed)
    player = _bots[(bot, seat)]
    player.rng.seed(seed)
    return player


def rollout(state: GameState, action: Action, bot: str, key: int) -> int:
    """1 when the deciding seat wins after `action`, every seat playing `bot`; `key` fixes the
    dice and the bots' seeds, so two actions rolled out with one key meet the same luck."""
    seat = state.current_seat
    assert seat is not None  # a decision's seat
    game = state.clone(dice=SeededDice(key))  # the dice the action calls for come from here
    game.apply_action(action)
    bots = [seated_bot(bot, s, f"rollout {key}:{s}") for s in range(state.players)]
    while (decision := game.pending) is not None and game.turn_number <= MAX_TURNS:
        assert decision.seat is not None  # the seeded dice answer every chance moment
        game.apply_action(bots[decision.seat].act(game, decision))
    return int(on_winning_side(game, seat))


def probe(rules: Ruleset, seats: int, bot: str, games: range, rollouts: int, share: float,
          seed: int) -> list[Record]:
    """Play `games` with `bot` at every seat; roll out a `share` of the decisions with a choice."""
    sampler = random.Random(f"{seed}:{games.start}")
    records = []
    for game_index in games:
        players = [make_bot(bot, seed=f"{seed + game_index}:{s}") for s in range(seats)]  # not the rollouts' own
        state = GameState(rules, seats, dice=SeededDice(seed + game_index))
        while (decision := state.pending) is not None and state.turn_number <= MAX_TURNS:
            assert decision.seat is not None  # the seeded dice answer every chance moment
            chosen = players[decision.seat].act(state, decision)
            # A claim's options are shouts with no onset, which the game refuses (the probe
            # stopped on one after 44 s of maison, nothing written).
            if (decision.kind not in UNSEARCHED_KINDS and len(decision.legal_actions()) > 1
                    and sampler.random() < share):
                keys = [sampler.randrange(1 << 40) for _ in range(rollouts)]
                options = staked_candidates(decision, chosen)
                # Every figure is measured from the bot's own choice: it is rolled out whatever the
                # candidates are (a claim's shout, with its onset, was none of them: a KeyError).
                if chosen not in options:
                    options = [chosen, *options]
                records.append({
                    "game": game_index, "kind": decision.kind, "chosen": repr(chosen),
                    "outcomes": {repr(a): [rollout(state, a, bot, k) for k in keys] for a in options},
                })
            state.apply_action(chosen)
    return records


def _probe_job(args: tuple) -> list[Record]:
    ruleset, seats, bot, start, stop, rollouts, share, seed = args
    return probe(load_ruleset(ruleset), seats, bot, range(start, stop), rollouts, share, seed)


def _mean_se(values: list[float]) -> tuple[float, float]:
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, float("nan")
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return mean, math.sqrt(variance / len(values))


def alternative_name(action: str, chosen: str) -> str:
    """An alternative, named by its kind of change: 'Pass', 'Sirop', 'another BirdBet', …"""
    name, chosen_name = action.split("(")[0], chosen.split("(")[0]
    return f"another {name}" if name == chosen_name else name


def fixed_alternatives(records: list[Record]) -> dict[tuple[str, str, str], tuple[int, float, float]]:
    """(kind, the bot's choice, alternative) → (states, mean gain, its standard error): each
    state's paired difference, alternatives of one name averaged within the state first."""
    per_state: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for record in records:
        outcomes, chosen = record["outcomes"], record["chosen"]
        base = sum(outcomes[chosen]) / len(outcomes[chosen])
        grouped: dict[str, list[float]] = defaultdict(list)
        for action, wins in outcomes.items():
            if action != chosen:
                grouped[alternative_name(action, chosen)].append(sum(wins) / len(wins) - base)
        for name, gains in grouped.items():
            per_state[(record["kind"], chosen.split("(")[0], name)].append(sum(gains) / len(gains))
    return {key: (len(v), *_mean_se(v)) for key, v in per_state.items()}


def rollout_policy_gain(records: list[Record], switch: float) -> dict[str, tuple[int, float, float]]:
    """kind → (states, mean gain per state, its standard error) of the one-step rollout policy:
    each half of a state's rollouts picks (leaving the bot's choice only for a lead above
    `switch`), the other half measures the pick against the bot's choice; both ways averaged."""
    gains: dict[str, list[float]] = defaultdict(list)
    for record in records:
        outcomes, chosen = record["outcomes"], record["chosen"]
        half = len(outcomes[chosen]) // 2
        if half == 0:
            continue
        state_gain = 0.0
        for pick, measure in ((slice(0, half), slice(half, 2 * half)), (slice(half, 2 * half), slice(0, half))):
            estimate = {a: sum(w[pick]) / half for a, w in outcomes.items()}
            best = max(estimate, key=estimate.__getitem__)
            action = best if estimate[best] - estimate[chosen] > switch else chosen
            state_gain += (sum(outcomes[action][measure]) - sum(outcomes[chosen][measure])) / half / 2
        gains[record["kind"]].append(state_gain)
    return {kind: (len(v), *_mean_se(v)) for kind, v in gains.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ruleset", default="v004")
    parser.add_argument("--seats", type=positive_int, default=3)
    parser.add_argument("--bot", default="bold", help="the bot at every seat (default: bold)")
    parser.add_argument("--games", type=count_at_most(100_000, "every probed decision is kept in memory"), default=400)
    parser.add_argument("--rollouts", type=even_count, default=64, help="per candidate action (even)")
    parser.add_argument("--share", type=probed_share, default=0.5, help="share of decisions probed")
    parser.add_argument("--switch", type=fraction, default=0.1,
                        help="the rollout policy leaves the bot's choice only for a lead this large")
    parser.add_argument("--seed", type=int, default=60_000_000)
    parser.add_argument("--workers", type=int, default=1, choices=(1, 2))
    parser.add_argument("--json", type=output_file,
                        help="also write every probed decision here (a new file: not overwritten)")
    args = parser.parse_args(argv)
    refuse_existing(parser, args.json, "--json")
    return run_command(lambda: run_probe(args), (RulesetError, GameError, ModelLoadError, ValueError),
                       stopped="stopped: nothing was written (the probe reports at its end); run it again, "
                               "with fewer --games for a quicker one")


def even_count(text: str) -> int:
    value = count_at_most(10_000, "per candidate action, at every probed decision")(text)
    if value < 2 or value % 2:
        raise argparse.ArgumentTypeError(f"{value}: give an even number, 2 or more (one half picks, the other "
                                         "measures)")
    return value


def probed_share(text: str) -> float:
    value = fraction(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0: give a share above 0, up to 1")
    return value


def run_probe(args: argparse.Namespace) -> int:
    console = Console(markup=False, emoji=False)  # names and paths are printed as typed ([..] no markup)
    rules = load_ruleset(args.ruleset)
    GameState(rules, args.seats)  # the engine's own check of the seat count
    make_bot(args.bot)
    cut = args.games // args.workers
    jobs = [(args.ruleset, args.seats, args.bot, w * cut, args.games if w == args.workers - 1 else (w + 1) * cut,
             args.rollouts, args.share, args.seed) for w in range(args.workers)]
    with console.status(f"rolling out {args.games} games of {args.bot} …"):
        if args.workers == 1:
            parts = [_probe_job(jobs[0])]
        else:
            with worker_pool(multiprocessing.get_context("spawn"), args.workers) as pool:
                parts = pool.map(_probe_job, jobs)
    records = [record for part in parts for record in part]
    if args.json:
        write_new(args.json, json.dumps(records))
    # A decision probed stands for 1/share decisions; one seat's share of a game is 1/seats.
    per_seat_game = 1 / (args.share * args.games * args.seats)

    table = Table(title=f"{args.ruleset}, {args.seats} seats of {args.bot}: fixed alternatives "
                        f"(win-rate points per decision, ± one standard error)")
    for column in ("decision", "bot chose", "alternative", "states", "gain per decision"):
        table.add_column(column)
    for (kind, chosen, name), (n, mean, se) in sorted(fixed_alternatives(records).items()):
        table.add_row(kind, chosen, name, str(n), f"{100 * mean:+.2f} ± {100 * se:.2f}")
    console.print(table)

    policy = Table(title=f"one-step rollout policy (switch at {args.switch}): win-rate points per seat and game")
    for column in ("decision", "states", "per decision", "per game"):
        policy.add_column(column)
    total = variance = 0.0
    for kind, (n, mean, se) in sorted(rollout_policy_gain(records, args.switch).items()):
        per_game = n * per_seat_game
        total += mean * per_game
        variance += (se * per_game) ** 2 if not math.isnan(se) else 0.0
        policy.add_row(kind, str(n), f"{100 * mean:+.2f} ± {100 * se:.2f}", f"{100 * mean * per_game:+.2f}")
    policy.add_row("all", str(len(records)), "", f"{100 * total:+.2f} ± {100 * math.sqrt(variance):.2f}")
    console.print(policy)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
