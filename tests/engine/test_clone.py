"""`GameState.clone()`: a copy rebuilt from the turn in play, exact and independent."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from cdc_env.actions import Action, Dice, Shout
from cdc_env.dice import InjectedDice, SeededDice
from cdc_env.game import GRELOTTINE_SHOUT, RACE_SHOUTS, GameState
from cdc_env.rules import RULESET_NAMES, load_ruleset


def random_choice(state: GameState, chooser: random.Random) -> Action:
    """A random legal decision; now and then a false shout from a random seat (it changes the
    state without moving the flow, and the history keeps it)."""
    choice = chooser.choice(state.legal_actions())
    if isinstance(choice, Shout):
        return Shout(choice.phrase, round(chooser.uniform(0, 3500), 1))
    return choice


def play(state: GameState, chooser: random.Random, steps: int, max_turns: int = 60) -> None:
    for _ in range(steps):
        if state.is_over or state.turn_number > max_turns:
            return
        if state.pending is not None and state.pending.kind not in ("chance", "race") and chooser.random() < 0.05:
            seat = chooser.randrange(state.players)
            phrase = chooser.choice([GRELOTTINE_SHOUT, RACE_SHOUTS[0]])
            if state.false_shout_allowed(seat, phrase):
                state.apply_action(Shout(phrase, 10.0), seat=seat)
                continue
        state.apply_action(random_choice(state, chooser))


def same(a: GameState, b: GameState) -> bool:
    return (a.snapshot() == b.snapshot() and a.log == b.log and a.history == b.history
            and a.pending == b.pending)


@settings(max_examples=60, deadline=None)
@given(ruleset=st.sampled_from(sorted(RULESET_NAMES)), players=st.integers(1, 6),
       seed=st.integers(0, 10**6), cut=st.integers(0, 400), after=st.integers(1, 200))
def test_a_clone_plays_on_as_the_original_and_leaves_it_alone(ruleset: str, players: int, seed: int,
                                                              cut: int, after: int) -> None:
    rules = load_ruleset(ruleset)
    players = min(max(players, rules.min_players), rules.max_players)
    original = GameState(rules, players, dice=SeededDice(seed))
    play(original, random.Random(seed), cut)
    before = original.to_json(), list(original.log)

    twin = original.clone()  # the same dice stream, copied
    assert same(twin, original)
    assert twin.to_json() == original.to_json()

    # Moving the clone never changes the original...
    play(twin, random.Random(f"twin {seed}"), after)
    assert (original.to_json(), original.log) == before

    # ...and the same actions from the same point give the same game, dice included.
    again = original.clone()
    play(again, random.Random(f"twin {seed}"), after)
    assert same(again, twin)
    play(original, random.Random(f"twin {seed}"), after)
    assert same(original, twin)


def test_a_clone_can_take_other_dice_or_none() -> None:
    rules = load_ruleset("classic")
    state = GameState(rules, 3, dice=SeededDice(7))
    play(state, random.Random(7), 40)
    other = state.clone(dice=SeededDice(99))
    assert other.snapshot() == state.snapshot()
    assert isinstance(other.dice_source, SeededDice) and other.dice_source.seed == 99
    by_hand = state.clone(dice=None)
    while by_hand.pending is not None and not by_hand.pending.is_chance:
        by_hand.apply_action(by_hand.legal_actions()[0])
    if by_hand.pending is not None:  # without a source, the caller gives the dice
        by_hand.apply_action(Dice((1,) * by_hand.pending.count))


def test_injected_dice_are_copied_not_shared() -> None:
    rules = load_ruleset("classic")
    state = GameState(rules, 2, dice=InjectedDice([1, 6] + [3, 4, 5] * 50))
    twin = state.clone()
    assert isinstance(twin.dice_source, InjectedDice) and isinstance(state.dice_source, InjectedDice)
    play(twin, random.Random(1), 30)
    assert twin.dice_source.remaining < state.dice_source.remaining


def test_a_finished_game_clones_finished() -> None:
    rules = load_ruleset("classic")
    state = GameState(rules, 2, dice=SeededDice(3), setup={"scores": [340, 340]})
    play(state, random.Random(3), 10_000, max_turns=10_000)
    assert state.is_over
    twin = state.clone()
    assert twin.is_over and twin.winner == state.winner and same(twin, state)
