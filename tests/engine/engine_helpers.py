"""Helpers to set up games with known dice."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pytest

from cdc_env.actions import Action, Pass, Roll, Shout
from cdc_env.dice import InjectedDice
from cdc_env.game import GameState
from cdc_env.rules import Ruleset, load_ruleset


def ruleset(name: str = "classic", **overrides: object) -> Ruleset:
    """A ruleset with some top-level sections changed, e.g. races={"chouette_velute_tie": "subtract"}."""
    data = load_ruleset(name).to_dict()
    for key, value in overrides.items():
        if isinstance(value, dict):
            data[key] = {**data.get(key, {}), **value}
        else:
            data[key] = value
    return Ruleset.from_dict(data)


def first_player_dice(players: int, first: int) -> list[int]:
    """Dice for the lowest-die draw that make `first` start."""
    return [1 if seat == first else 6 for seat in range(players)]


def new_game(rules: str | Ruleset = "classic", players: int = 2, dice: Iterable[int] = (),
             first: int = 0, scores: list[int] | None = None,
             items: list[dict[str, int]] | None = None) -> GameState:
    if isinstance(rules, str):
        rules = load_ruleset(rules)
    opening = first_player_dice(players, first) if rules.first_player == "lowest_die" and players > 1 else []
    if rules.first_player == "random" and players > 1:
        opening = [first + 1]
    setup = {k: v for k, v in (("scores", scores), ("items", items)) if v is not None}
    return GameState(rules, players, dice=InjectedDice([*opening, *dice]), setup=setup or None)


def play(state: GameState, *actions: Action) -> None:
    for action in actions:
        state.apply_action(action)


def nobody_buys(state: GameState) -> None:
    """Every player asked to buy the cul passes (without negative scores, one whose score is
    short of its cost is not asked)."""
    while state.pending is not None and state.pending.kind == "buy_cul":
        state.apply_action(Pass())


def passes(state: GameState, count: int) -> None:
    play(state, *[Pass()] * count)


def shout(phrase: str, onset_ms: float) -> Shout:
    return Shout(phrase, onset_ms)


def event(type_: str, **fields: Any) -> dict[str, Any]:
    """A log entry of the first turn as the engine writes it (the pinned tests compare logs)."""
    return {"type": type_, "turn": 1, **fields}


def score(seat: int, points: int, now: int, reason: str, capped: bool = False, **details: Any) -> dict[str, Any]:
    """A score event of the first turn: `points` gained (the same delta), the score `now` after
    (`details` may hold a rule's own `total`, as the Bleu-Rouge's)."""
    return event("score", seat=seat, points=points, delta=points, score=now, reason=reason, capped=capped,
                 **details)


def shout_event(seat: int, race: str, phrase: str, onset: float) -> dict[str, Any]:
    return event("shout", seat=seat, race=race, phrase=phrase, onset_ms=onset)


def score_events(state: GameState, reason: str | None = None) -> list[dict]:
    return [e for e in state.log if e["type"] == "score" and (reason is None or e["reason"] == reason)]


ROLL = Roll()
PASS = Pass()


@pytest.fixture
def classic() -> Ruleset:
    return load_ruleset("classic")


def one_turn_in_the_engine(rules: Ruleset, score: int, items: dict[str, int],
                           first: tuple[Action, ...] = (), dice: tuple[int, ...] = ()) -> float:
    """1 + E[optimum of the next state], playing `first` then the optimum's choices in the
    engine itself and following every chance outcome after `dice` (each path replayed from
    the start)."""
    from cdc_env.solo_optimum import optimal_action, solo_optimum  # numpy: only for the solo tests

    optimum = solo_optimum(rules)
    total = 0.0
    paths = [(dice, 1.0)]
    while paths:
        path, prob = paths.pop()
        state = GameState(rules, 1, dice=InjectedDice(path), setup={"scores": [score], "items": [items]})
        for action in first:
            state.apply_action(action)
        while True:
            if state.is_over:
                break
            if state.turn_number > 1:
                holding = state.items[0]
                total += prob * optimum.expected_turns(state.scores[0], bool(holding["civet"]),
                                                       bool(holding["grelottine"]))
                break
            decision = state.pending
            assert decision is not None  # not over: checked above
            if decision.is_chance:  # the given dice ran out: follow every outcome
                for outcome in itertools.product(range(1, decision.sides + 1), repeat=decision.count):
                    paths.append((path + outcome, prob / decision.sides ** decision.count))
                break
            state.apply_action(optimal_action(state, decision))
    return 1.0 + total
