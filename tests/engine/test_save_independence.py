"""A saved game is data of its own: neither the save nor a game loaded from it moves with the
live game (no history, setup or score list shared)."""

from __future__ import annotations

import copy
import json

from cdc_env.actions import Dice, Pass, Roll
from cdc_env.dice import SeededDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

CLASSIC = load_ruleset("classic")


def played(moves: int, seed: int = 4) -> GameState:
    state = GameState(CLASSIC, 3, dice=SeededDice(seed))
    for _ in range(moves):
        decision = state.pending
        assert decision is not None
        state.apply_action(Roll() if decision.allows(Roll()) else Pass() if decision.allows(Pass())
                           else decision.legal_actions()[0], seat=decision.seat)
    return state


def move(state: GameState) -> None:
    decision = state.pending
    assert decision is not None
    action = Roll() if decision.allows(Roll()) else Pass() if decision.allows(Pass()) else decision.legal_actions()[0]
    state.apply_action(action, seat=decision.seat)


def test_a_save_does_not_move_with_the_live_game() -> None:
    live = played(12)
    saved = live.to_json()
    frozen = json.dumps(saved, sort_keys=True)
    for _ in range(6):
        move(live)
    assert json.dumps(saved, sort_keys=True) == frozen
    assert len(saved["history"]) < len(live.history)
    assert saved["history"] is not live.history and saved["setup"] is not live.setup


def test_a_loaded_game_and_the_live_game_move_apart() -> None:
    live = played(12)
    loaded = GameState.from_json(copy.deepcopy(live.to_json()))
    assert loaded == live
    assert loaded.history is not live.history
    before = list(live.history)
    move(loaded)
    assert live.history == before and len(loaded.history) > len(before)
    after_loaded_move = copy.deepcopy(loaded.history)
    move(live)
    move(live)
    assert loaded.history == after_loaded_move


def test_loading_twice_gives_two_games() -> None:
    saved = played(12).to_json()
    one, two = GameState.from_json(saved), GameState.from_json(saved)
    move(one)
    assert two.to_json() == saved and one.to_json() != saved
    assert one.scores is not two.scores and one.items[0] is not two.items[0]


def test_a_chance_moment_saved_and_loaded_without_dice() -> None:
    state = GameState(CLASSIC, 2)  # no dice source: the caller gives the dice
    state.apply_action(Dice((1,)))
    saved = state.to_json()
    loaded = GameState.from_json(saved)
    loaded.apply_action(Dice((6,)))
    assert state.pending is not None and state.pending.is_chance
    assert len(state.history) == 1 and len(loaded.history) == 2
