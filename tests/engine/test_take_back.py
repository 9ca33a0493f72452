"""`GameState.without()`: a shout the table takes back (talk a microphone misheard), as if it
had never been said."""

from __future__ import annotations

import random

import pytest

from cdc_env.actions import IllegalActionError, Shout, action_from_json
from cdc_env.dice import SeededDice
from cdc_env.game import RACE_SHOUTS, GameState
from cdc_env.rules import Ruleset, load_ruleset


def with_bevues(name: str = "classic") -> Ruleset:
    rules = load_ruleset(name)
    return rules.model_copy(update={"bevue": rules.bevue.model_copy(update={"enabled": True})})


def outside_a_race(state: GameState) -> bool:
    return state.pending is not None and state.pending.kind != "race"


def random_step(state: GameState, chooser: random.Random) -> None:
    action = chooser.choice(state.legal_actions())
    if isinstance(action, Shout):  # a race's shout, with its onset
        action = Shout(action.phrase, round(chooser.uniform(0, 3000), 1))
    state.apply_action(action)


def played(rules: Ruleset, seed: int, steps: int, shout_at: int | None, seat: int = 1) -> tuple[GameState, int]:
    """A game of random legal choices (dice from `seed`), with a false shout from `seat` at the
    first step from `shout_at` where no race is on (a shout in a race is that race's), and that
    shout's history entry (-1: none)."""
    state = GameState(rules, 3, dice=SeededDice(seed))
    index = -1
    chooser = random.Random(seed)
    for step in range(steps):
        if state.is_over:
            break
        if shout_at is not None and step >= shout_at and outside_a_race(state):
            state.apply_action(Shout(RACE_SHOUTS[0], 1200.0), seat=seat)
            shout_at, index = None, len(state.history) - 1
        random_step(state, chooser)
    return state, index


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_false_shout_taken_back_leaves_the_game_as_if_never_said(seed: int) -> None:
    rules = with_bevues()
    shouted, index = played(rules, seed, 120, shout_at=30)
    assert shouted.history[index] == {"seat": 1, "action": Shout(RACE_SHOUTS[0], 1200.0).to_json()}
    assert "false_shout" in {e["type"] for e in shouted.log}
    before = shouted.to_json()
    taken_back = shouted.without(index)
    # The reference: the same players' choices at a game where it was never said, its dice
    # drawn live from the same seed (not a replay of the history).
    never = GameState(rules, 3, dice=SeededDice(seed))
    for entry in [e for i, e in enumerate(shouted.history) if i != index and e["seat"] is not None]:
        never.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    assert taken_back.snapshot() == never.snapshot()
    assert taken_back.history == never.history and taken_back.log == never.log
    assert taken_back.pending == never.pending
    assert "false_shout" not in {e["type"] for e in taken_back.log}
    assert shouted.to_json() == before  # the game it came from is left alone
    # The dice go on as they would have: the same choices from here give the same game.
    for state in (taken_back, never):
        chooser = random.Random(f"after {seed}")
        for _ in range(60):
            if state.is_over:
                break
            random_step(state, chooser)
    assert taken_back.snapshot() == never.snapshot() and taken_back.history == never.history


def test_the_bevue_is_undone_and_the_scores_are_as_before_it() -> None:
    rules = with_bevues()
    state, _ = played(rules, 5, 20, shout_at=None)
    while not outside_a_race(state):
        state.apply_action(state.legal_actions()[0])
    scores = list(state.scores)
    state.apply_action(Shout(RACE_SHOUTS[0], 800.0), seat=2)
    assert state.scores != scores  # the Bévue
    assert state.without(len(state.history) - 1).scores == scores


def test_what_no_longer_replays_without_it_is_refused() -> None:
    state, _ = played(with_bevues(), 4, 40, shout_at=None)
    roll = next(i for i, entry in enumerate(state.history) if entry["seat"] is None and i > 2)
    with pytest.raises(IllegalActionError):
        state.without(roll)  # a throw's dice left out: the next player's choice comes too soon
    for index in (len(state.history), -1):  # no such entry (not Python's from-the-end)
        with pytest.raises(IndexError):
            state.without(index)
    with pytest.raises(IllegalActionError):
        state.without(0)  # an entry, the first player's draw: what follows no longer replays
