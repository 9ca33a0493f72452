"""Shared helpers of the environment tests (not a conftest: tests/engine has its own)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

from cdc_env.actions import Pass
from cdc_env.env import raw_env
from cdc_env.game import Decision
from cdc_env.rules import RULES_DIR, Ruleset, RulesetError, load_ruleset


def loadable_rulesets() -> list[str]:
    """Every ruleset file of configs/rules/ that loads (complete and solo join when they do)."""
    names = []
    for path in sorted(RULES_DIR.glob("*.yaml")):
        try:
            load_ruleset(path)
        except RulesetError:
            continue
        names.append(path.stem)
    return names


RULESETS = loadable_rulesets()


def players_for(rules: Ruleset | str) -> int:
    """Two players, or the only count the ruleset allows (solo: one)."""
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    return min(max(2, rules.min_players), rules.max_players)


def random_decisions(table: raw_env, steps: int, seed: int,
                     passes: frozenset[str] = frozenset()) -> Iterator[Decision]:
    """Plays random legal indices on `table` (reset with `seed`, and again when a game ends),
    yielding each pending decision before it is answered. Decisions of the kinds in `passes`
    are passed (random play that buys every cul sinks every score below zero, where nobody
    can stake a Grelottine)."""
    rng = random.Random(seed)
    table.reset(seed=seed)
    games = 0
    for _ in range(steps):
        agent = table.agent_selection
        if table.terminations[agent] or table.truncations[agent]:
            games += 1
            table.reset(seed=seed + games)
            continue
        assert table.state is not None and table.state.pending is not None
        decision = table.state.pending
        assert decision.seat is not None  # the table's seeded dice answer chance moments
        yield decision
        legal = np.flatnonzero(table.codec.mask(decision, decision.seat))
        if decision.kind in passes and decision.allows(Pass()):
            legal = np.array([table.codec.blocks["pass"].start])
        table.step(int(rng.choice(legal)))
