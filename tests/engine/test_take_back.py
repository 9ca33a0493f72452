"""`GameState.without()`: a shout the table takes back (talk a microphone misheard), as if it
had never been said; `GameState.before()`: an answer it takes back, its decision asked again
with the dice that had followed it."""

from __future__ import annotations

import random

import pytest

from cdc_env.actions import BuyCul, IllegalActionError, Pass, Roll, Shout, action_from_json
from cdc_env.dice import DiceAgain, InjectedDice, SeededDice, dice_from_json
from cdc_env.game import RACE_SHOUTS, GameLoadError, GameState
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


def play_on(games: tuple[GameState, ...], seed: int, steps: int = 60) -> None:
    """The same random choices in each game, for `steps` decisions or to its end."""
    for game in games:
        chooser = random.Random(f"after {seed}")
        for _ in range(steps):
            if game.is_over:
                break
            random_step(game, chooser)


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
    play_on((taken_back, never), seed)  # the dice go on as they would have: the same game
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


def answers(state: GameState) -> list[int]:
    """The history entries that answered a decision outside a race (not dice, not a shout)."""
    return [i for i, entry in enumerate(state.history)
            if entry["seat"] is not None and entry["action"]["kind"] not in ("dice", "shout")]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_answer_taken_back_asks_its_decision_again_with_the_dice_that_followed(seed: int) -> None:
    rules = with_bevues()
    state, _ = played(rules, seed, 120, shout_at=None)
    before = state.to_json()
    index = answers(state)[len(answers(state)) // 2]
    asked = GameState(rules, 3)  # the reference: the history up to the answer, replayed
    for entry in state.history[:index]:
        asked.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    back = state.before(index)
    assert back.snapshot() == asked.snapshot() and back.history == asked.history and back.log == asked.log
    assert back.pending == asked.pending and back.pending is not None and not back.pending.is_chance
    assert state.to_json() == before  # the game it came from is left alone
    # The same answers again give the very game: every die thrown after the answer comes again.
    for entry in state.history[index:]:
        if entry["seat"] is not None:
            back.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    assert back.history == state.history and back.log == state.log
    play_on((back, state), seed)  # ... and the dice then go on as they would have
    assert back.history == state.history and back.snapshot() == state.snapshot()


def test_another_answer_meets_the_dice_that_had_come_and_the_save_keeps_them() -> None:
    # Seat 0 starts (1 against 6) and throws 2, 3; seat 1 is asked whether it buys the cul and
    # "buys" it (« oui », misheard); the cul falls, a 4. Taken back, seat 1 is asked again, and
    # passing, meets the same 4.
    state = GameState(load_ruleset("classic"), 2, dice=InjectedDice([1, 6, 2, 3, 4, 5, 5, 1, 6, 6, 6]))
    state.apply_action(Roll())
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("buy_cul", 1)
    index = len(state.history)
    state.apply_action(BuyCul())
    assert state.history[index + 1]["action"] == {"kind": "dice", "values": [4]}
    back = state.before(index)
    assert back.pending is not None and (back.pending.kind, back.pending.seat) == ("buy_cul", 1)
    assert isinstance(back.dice_source, DiceAgain) and list(back.dice_source.values) == [4]
    saved = back.to_json()
    assert saved["dice"] == {"kind": "again", "values": [4],
                             "then": {"kind": "injected", "values": [5, 5, 1, 6, 6, 6]}}
    resumed = GameState.from_json(saved)
    resumed.apply_action(Pass(), seat=1)
    assert [e["values"] for e in resumed.log if e["type"] == "dice"][-1] == [4]
    assert "buy_cul" in [e["type"] for e in state.log]
    assert "buy_cul" not in [e["type"] for e in resumed.log] and resumed.scores == [0, 0]  # not bought: no -30
    # Taken back again: one list of dice, never a source inside a source.
    again = DiceAgain([1], DiceAgain([2, 3], InjectedDice([4])))
    assert list(again.values) == [1, 2, 3] and again.roll(4) == (1, 2, 3, 4)


@pytest.mark.parametrize(("dice", "says"), [
    ({"kind": "again", "values": [2, 7], "then": None}, "given again die 2 is 7: each must be a whole number"),
    ({"kind": "again", "values": [], "then": {"kind": "again", "values": [], "then": None}}, "never nested"),
    ({"kind": "again", "values": "123", "then": None}, "'values' must be a list of dice"),
])
def test_a_bad_list_of_dice_given_again_is_refused_as_the_save_loads(dice: dict, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        dice_from_json(dice)
    saved = GameState(load_ruleset("classic"), 2, dice=SeededDice(1)).to_json()
    with pytest.raises(GameLoadError, match="bad dice source"):
        GameState.from_json({**saved, "dice": dice})


def test_dice_given_again_that_do_not_fit_a_roll_give_way_to_the_source() -> None:
    dice = DiceAgain([6, 2], InjectedDice([1, 3]))
    assert dice.roll(1, sides=4) == (1,)  # a 6 is no face of a four-sided draw: the rest is the source's
    assert dice.roll(1) == (3,) and not dice.values
    with pytest.raises(IndexError):
        GameState(load_ruleset("classic"), 2, dice=SeededDice(1)).before(5)
