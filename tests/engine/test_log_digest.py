"""The full logs of 2100 seeded random games, kept as one digest per ruleset.

Written before the engine's rule families were moved into modules of their own: a move that
changes nothing but code leaves every digest as it is. A rule change alters the digests of the
rulesets it touches, and only those; the commit that changes a rule says which, and why.

To print the digests after a deliberate rule change:
    .venv/bin/python tests/engine/test_log_digest.py
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from cdc_env.actions import Shout
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rules import RULESET_NAMES, load_ruleset

GAMES_PER_TABLE = 60   # 4 rulesets × 7 table sizes (2..8) × 60 + 420 solo games = 2100 games
SOLO_GAMES = 420
# Random play seldom reaches 343; the digest needs every rule exercised, not whole games.
MAX_TURNS = 30


def random_game(ruleset: str, players: int, seed: int) -> GameState:
    """Uniformly random legal decisions, shouts at random onsets, seeded dice."""
    rules = load_ruleset(ruleset)
    state = GameState(rules, players, dice=SeededDice(seed))
    chooser = random.Random(f"{ruleset}:{players}:{seed}")
    while not state.is_over and state.turn_number <= MAX_TURNS:
        choice = chooser.choice(state.legal_actions())
        if isinstance(choice, Shout):
            choice = Shout(choice.phrase, round(chooser.uniform(0, 3500), 1))
        state.apply_action(choice)
    return state


def tables(ruleset: str) -> list[tuple[int, int]]:
    """(players, seed) of every game of a ruleset."""
    if ruleset == "solo":
        return [(1, seed) for seed in range(SOLO_GAMES)]
    return [(players, seed) for players in range(2, 9) for seed in range(GAMES_PER_TABLE)]


def log_digest(ruleset: str) -> str:
    digest = hashlib.sha256()
    for players, seed in tables(ruleset):
        state = random_game(ruleset, players, seed)
        digest.update(json.dumps(state.log, sort_keys=True, ensure_ascii=False).encode())
        digest.update(json.dumps(state.snapshot(), sort_keys=True).encode())
    return digest.hexdigest()


DIGESTS = {
    "basic": "7cb78688a8b5a27049c525aabc4dc5ca21470fbd084e69101c30d03bfb83f4ad",
    "classic": "9dd97e124b6a4e5e4576f392e2eb47abd3e26c238c3d3346600e2bfe2901b77c",
    "v004": "19c05d91797cdace9bb00bffd6499184a2f3974ef7c387bfecf48311f6c9a9a3",
    "complete": "5b707c7d49a03a53afb5d33bd248b6b7759ebed4f745338d1892ff102b4bb771",
    "solo": "0c78e1a190cedb93faafc24ec1aec2da58e44189621e86e1bfea02baea95e00f",
}


@pytest.mark.parametrize("ruleset", RULESET_NAMES)
def test_the_logs_of_seeded_random_games_are_unchanged(ruleset: str) -> None:
    assert log_digest(ruleset) == DIGESTS[ruleset], (
        f"the logs of {ruleset!r} games changed: a refactoring must not change them; a rule "
        f"change must update DIGESTS (run this file) and say why in its commit"
    )


if __name__ == "__main__":
    for name in RULESET_NAMES:
        print(f'    "{name}": "{log_digest(name)}",')
