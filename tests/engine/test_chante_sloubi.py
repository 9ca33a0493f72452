"""Chante-Sloubi (Kize's late joiner): a player joins a game under way, starting at
⌊(best − second best) × round / 10⌋, ⌈× 1.5⌉ with the Sloubi sung; the join is a step of the
game's history, so saves, replays and clones keep the newcomer."""

from __future__ import annotations

import json
import random

import pytest
from engine_helpers import new_game, ruleset, score_events

from cdc_env.actions import Join, Pass, Roll, Shout, action_from_json
from cdc_env.dice import SeededDice
from cdc_env.game import GameError, GameState, JoinRefused
from cdc_env.rulebook.house.chante_sloubi import start_points
from cdc_env.rules import Ruleset, load_ruleset

# ------------------------------------------------------------------ Kize's formula


@pytest.mark.parametrize("scores, round_number, sung, points", [
    ([120, 80], 7, False, 28),          # ⌊40 × 7 / 10⌋
    ([80, 10, 120], 7, False, 28),      # the two best, whatever the seats
    ([120, 80], 7, True, 42),           # ⌈28 × 1.5⌉
    ([55, 50], 5, False, 2),            # ⌊2.5⌋
    ([55, 50], 5, True, 3),             # ⌈2 × 1.5⌉
    ([100, 93], 3, True, 3),            # ⌊2.1⌋ = 2, ⌈3⌉
    ([60, 60, 0], 9, False, 0),         # a shared lead: no gap
    ([-20, -50, -90], 2, False, 6),     # negative scores: the gap is still 30
    ([120, 80], 1, False, 4),           # the first round
])
def test_the_start_is_kizes_formula(scores: list[int], round_number: int, sung: bool, points: int) -> None:
    assert start_points(scores, round_number, sung) == points


# ------------------------------------------------------------------ in a game


def sloubi_rules(**overrides: object) -> Ruleset:
    return ruleset("classic", house_rules={"chante_sloubi": True}, dice_buying={"enabled": False}, **overrides)


NEANT = [1, 3, 6]  # no combination: nobody scores, nobody is asked anything


def game_at_turn(turn: int, scores: list[int], **overrides: object) -> GameState:
    """Seat 0 starts; every throw a Néant; stopped as turn `turn` begins."""
    state = new_game(sloubi_rules(**overrides), players=len(scores), dice=NEANT * 60, scores=scores)
    while state.turn_number < turn or not state.at_turn_start:
        legal = state.legal_actions()
        state.apply_action(Pass() if Pass() in legal else Roll())
    return state


def test_kizes_numbers_best_120_second_80_round_7_start_at_28() -> None:
    state = game_at_turn(19, [120, 80, 10])  # 3 players: turn 19 is seat 0's 7th, round 7
    assert state.round_number == 7 and state.turn_seat == 0
    assert state.join("Zoé") == 3
    assert state.players == 3 + 1 and state.scores == [120, 80, 10, 28]
    join, score = state.log[-2:]
    assert join == {"type": "join", "turn": 19, "seat": 3, "name": "Zoé", "rule": "chante_sloubi"}
    assert (score["reason"], score["points"], score["score"], score["best"], score["second"], score["round"],
            score["sung"]) == ("chante_sloubi", 28, 28, 120, 80, 7, False)
    assert state.items[3] == state._fresh_items()


def test_a_sloubi_sung_to_its_end_starts_at_half_as_much_again() -> None:
    state = game_at_turn(19, [120, 80, 10])
    state.join("Zoé", sung=True)
    assert state.scores[3] == 42


def test_the_round_is_kizes_the_tour_de_table_in_play() -> None:
    """Turn 20 is seat 1's in round 7; turn 22 is seat 0's 8th: round 8."""
    assert game_at_turn(20, [120, 80, 10]).round_number == 7
    late = game_at_turn(22, [120, 80, 10])
    assert late.round_number == 8
    late.join("Zoé")
    assert late.scores[3] == 32  # ⌊40 × 8 / 10⌋


def test_the_newcomer_sits_after_the_last_seat_and_throws_when_the_rotation_reaches_them() -> None:
    state = game_at_turn(20, [120, 80, 10])  # seat 1's turn
    state.join("Zoé")
    throwers: list[int | None] = []
    while len(throwers) < 6:
        if state.at_turn_start and state.turn_seat not in throwers[-1:]:
            throwers.append(state.turn_seat)
        legal = state.legal_actions()
        state.apply_action(Pass() if Pass() in legal else Roll())
    assert throwers == [1, 2, 3, 0, 1, 2]


def test_the_start_is_a_gain_the_cap_holds() -> None:
    state = game_at_turn(39, [330, 0])  # round 20: ⌊330 × 20 / 10⌋ = 660, held at the cap
    state.join("Zoé")
    assert state.scores[2] == state.rules.cap_score and not state.is_over
    assert score_events(state, "chante_sloubi")[0]["points"] == 660


def test_a_second_newcomer_counts_the_first_ones_score() -> None:
    state = game_at_turn(19, [120, 80, 10])
    state.join("Zoé")
    state.join("Yann")  # still before the first decision of the turn
    assert state.scores == [120, 80, 10, 28, 28]


# ------------------------------------------------------------------ refused, with one clear line


def refused(state: GameState, name: str, says: str) -> None:
    before, log = json.dumps(state.to_json()), list(state.log)
    with pytest.raises(JoinRefused, match=says):
        state.join(name)
    assert json.dumps(state.to_json()) == before and state.log == log


def test_without_the_rule_nobody_joins() -> None:
    state = new_game("classic", players=3, dice=NEANT)
    refused(state, "Zoé", "no player can join a game under way in ruleset 'classic': that is the house "
                          "rule chante_sloubi")


def test_a_join_waits_for_the_next_turn() -> None:
    state = new_game(sloubi_rules(), players=3, dice=[1, 3])  # the cul has not fallen
    state.apply_action(Roll())
    refused(state, "Zoé", "a player joins as a turn begins, before its first decision: wait for the next turn")


def test_a_join_waits_for_the_first_turn() -> None:
    state = GameState(sloubi_rules(), 3)  # the first player is still being drawn
    refused(state, "Zoé", "wait for the next turn")


def test_the_table_is_full_at_the_rulesets_most_players() -> None:
    state = game_at_turn(4, [0, 0, 0], max_players=4)
    state.join("Zoé")
    refused(state, "Yann", "the table is full: ruleset 'classic' seats at most 4 players")


def test_a_name_already_joined_and_an_empty_name_are_refused() -> None:
    state = game_at_turn(4, [0, 0, 0])
    state.join("Zoé")
    refused(state, " zoé ", "Zoé has already joined \\(seat 3\\): give the newcomer another name")
    # The same name typed on another keyboard: é as e and a combining accent looks the same.
    refused(state, "Zoe\u0301", "Zoé has already joined \\(seat 3\\): give the newcomer another name")
    refused(state, "  ", "a newcomer needs a name")


def test_a_newcomer_takes_the_next_seat_only() -> None:
    state = game_at_turn(4, [0, 0, 0])
    with pytest.raises(JoinRefused, match="a newcomer takes the next seat, 3, not seat 1"):
        state.apply_action(Join("Zoé"), seat=1)


def test_a_join_is_refused_like_a_game_error_and_an_illegal_action() -> None:
    from cdc_env.actions import IllegalActionError

    assert issubclass(JoinRefused, GameError) and issubclass(JoinRefused, IllegalActionError)


def test_nobody_joins_a_doublette_table_though_both_rules_are_on() -> None:
    """`maison --house doublette` is a table in teams with every house rule: the Chante-Sloubi
    stays on, and a join is refused (a newcomer would have no partner)."""
    rules = ruleset("classic", house_rules={"chante_sloubi": True, "doublette": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=4, dice=NEANT * 8, scores=[30, 10, 20, 0])
    state.apply_action(Roll())
    while not state.at_turn_start:
        state.apply_action(Pass() if Pass() in state.legal_actions() else Roll())
    refused(state, "Zoé", r"nobody can join a game played in teams \(the Doublette\)")


# ------------------------------------------------------------------ saves, replays, clones


def random_step(state: GameState, chooser: random.Random) -> None:
    choice = chooser.choice(state.legal_actions())
    if isinstance(choice, Shout):
        choice = Shout(choice.phrase, round(chooser.uniform(0, 3500), 1))
    state.apply_action(choice)


@pytest.mark.parametrize("players", range(2, 8))
def test_a_joined_player_survives_save_resume_replay_and_clone(players: int) -> None:
    """maison, random play, a friend joining at a random turn start: the save loads byte for
    byte; its decisions with the seed replay it; a clone taken in the join's turn plays on like
    the original; after a save mid-game the game goes on to the same end."""
    seed = 500 + players
    rules = load_ruleset("maison")
    assert "chante_sloubi" in rules.house_rules
    state = GameState(rules, players, dice=SeededDice(seed))
    chooser = random.Random(seed)
    join_at = chooser.randint(2, 12)
    while not (state.turn_number >= join_at and state.at_turn_start):
        random_step(state, chooser)
    seat = state.join(f"Friend {players}")
    assert seat == players and state.players == players + 1
    twin = state.clone()
    saved = json.dumps(state.to_json())
    assert json.dumps(GameState.from_json(json.loads(saved)).to_json()) == saved
    assert json.loads(saved)["players"] == players  # the seats at the start: the join is in the history
    copy_chooser = random.Random(seed + 1)
    follow = random.Random(seed + 1)
    for _ in range(400):
        if state.is_over:
            break
        random_step(state, copy_chooser)
        random_step(twin, follow)
    assert state.log == twin.log and state.scores == twin.scores
    reloaded = GameState.from_json(json.loads(json.dumps(state.to_json())))
    assert reloaded == state and reloaded.players == players + 1
    replay = GameState(rules, players, dice=SeededDice(seed))
    for entry in state.decisions():
        replay.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    assert replay.log == state.log


def test_a_join_saved_is_a_step_of_the_history() -> None:
    state = game_at_turn(19, [120, 80, 10])
    state.join("Zoé", sung=True)
    assert state.history[-1] == {"seat": 3, "action": {"kind": "join", "name": "Zoé", "sung": True}}
    assert state.decisions()[-1] == state.history[-1]


# ------------------------------------------------------------------ the environments: fixed agents


def test_the_environments_refuse_a_join_with_one_clear_error() -> None:
    """PettingZoo and Gymnasium tables have a fixed list of agents: a join is refused whichever
    way it comes (the env's `join`, an engine `Join` through `act`, the game itself), and
    changes nothing."""
    from agents.single import CulDeChouetteEnv
    from cdc_env.env import raw_env

    table = raw_env("maison", 3)
    table.reset(seed=4)
    assert table.state is not None
    before = json.dumps(table.state.to_json())
    says = r"nobody can join this game: the environment's agents are fixed \(seat_0..seat_2\)"
    with pytest.raises(JoinRefused, match=says):
        table.join("Zoé")
    with pytest.raises(JoinRefused, match=says):
        table.act(Join("Zoé"))
    while not table.state.at_turn_start:
        table.step(int(table.action_mask().argmax()))
    before = json.dumps(table.state.to_json())
    with pytest.raises(JoinRefused, match=says):
        table.state.join("Zoé")
    with pytest.raises(JoinRefused, match=says):
        table.state.clone().join("Zoé")
    assert json.dumps(table.state.to_json()) == before and table.possible_agents == ["seat_0", "seat_1", "seat_2"]
    single = CulDeChouetteEnv("maison", 2)
    single.reset(seed=1)
    with pytest.raises(JoinRefused, match="nobody can join this game"):
        single.join("Zoé")
