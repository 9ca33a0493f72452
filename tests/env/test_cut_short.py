"""A game cut short after `max_turns` is decided by the scores (`decided_winner`, the WinLoss
reward): the single leader wins, two leaders give no winner."""

from __future__ import annotations

from cdc_env.env import WinLoss, decided_winner, raw_env
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

CLASSIC = load_ruleset("classic")


def game(scores: list[int]) -> GameState:
    return GameState(CLASSIC, len(scores), setup={"scores": scores})


def test_the_single_leader_wins_a_game_cut_short() -> None:
    assert decided_winner(game([10, 40, 30])) == 1
    assert decided_winner(game([-5, -20])) == 0  # the lead, even below zero
    assert decided_winner(game([0, 0, 7])) == 2


def test_two_leaders_give_no_winner() -> None:
    assert decided_winner(game([40, 10, 40])) is None
    assert decided_winner(game([25, 25])) is None
    assert decided_winner(game([0, 0, 0, 0])) is None


def test_the_game_s_own_winner_comes_before_the_scores() -> None:
    state = game([300, 10])
    state.winner = 1  # the engine's verdict (reached the target on their own turn)
    assert decided_winner(state) == 1


def test_win_loss_rewards_a_game_cut_short() -> None:
    reward = WinLoss()
    assert reward(game([10, 40, 30]), truncated=False) is None  # not over, not cut: nothing yet
    assert reward(game([10, 40, 30]), truncated=True) == [-1.0, 1.0, -1.0]
    assert reward(game([40, 40, 30]), truncated=True) is None  # shared lead: 0 to all


def test_a_truncated_env_game_pays_the_leader() -> None:
    table = raw_env("classic", 3, max_turns=1)
    table.reset(seed=3, options={"setup": {"scores": [0, 30, 20]}})
    while not any(table.truncations.values()) and not any(table.terminations.values()):
        mask = table.action_mask()
        pass_index = table.codec.blocks["pass"].start
        table.step(pass_index if mask[pass_index] else int(mask.argmax()))
    assert all(table.truncations.values()) and not any(table.terminations.values())
    assert table.state is not None
    # Seat 0's one turn (seed 3) scored 50: it leads 50 to 30 and 20 when the game is cut.
    assert table.state.scores == [50, 30, 20]
    assert table._cumulative_rewards == {"seat_0": 1.0, "seat_1": -1.0, "seat_2": -1.0}
