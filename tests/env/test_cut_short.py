"""A game cut short after `max_turns` is decided by the scores (`decided_winner`, the WinLoss
reward): the single leader wins, two leaders give no winner."""

from __future__ import annotations

import pytest

from cdc_env.actions import BuyCul, Pass
from cdc_env.env import ScoreShaping, WinLoss, decided_winner, raw_env
from cdc_env.flow import Table
from cdc_env.game import Decision, GameState, on_winning_side
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


def test_a_doublette_cut_short_is_won_by_the_team_with_the_higher_sum() -> None:
    # Teams {0, 2} (200 + 0) and {1, 3} (150 + 149): the best single score is seat 0's, and the
    # team of that seat was paid +1 while the team ahead by 99 points got −1.
    doublette = CLASSIC.with_house_rules(["doublette"])
    state = GameState(doublette, 4, setup={"scores": [200, 150, 0, 149]})
    assert decided_winner(state) in (1, 3)
    assert WinLoss()(state, truncated=True) == [-1.0, 1.0, -1.0, 1.0]
    assert [on_winning_side(state, seat) for seat in range(4)] == [False, True, False, True]
    tied = GameState(doublette, 4, setup={"scores": [200, 150, 0, 50]})  # 200 each: no winner
    assert decided_winner(tied) is None and WinLoss()(tied, truncated=True) is None


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


def test_the_table_in_words() -> None:
    """render() in "ansi": the header, one line per seat (who decides, score, items, role, bird
    bet), the dice, what is staked, and the question."""
    table = raw_env("classic", 3, max_turns=50, render_mode="ansi")
    table.reset(seed=1, options={"setup": {"scores": [12, -40, 300],
                                           "items": [{"boucliette": 0}, {"civet": 1, "grelottine": 1},
                                                     {"boucliette": 0}]}})
    state = table.state
    assert state is not None
    state.table = Table(dice=(3, 3, 5), combination="chouette_velute", thrower=1, buyer=2,
                        civet={"seat": 1, "combination": "velute", "stake": 40},
                        challenge={"challenger": 2, "challenged": 1, "combination": "chouette", "stake": 9},
                        soufflette={"challenger": 0, "target": 2, "throw": 2}, sirop_bets={0: 4})
    state.turn_number = 7
    state.pending = Decision(2, "buy_cul", (BuyCul(), Pass()))
    assert table.render() == "\n".join([
        "Cul de Chouette — classic, turn 7/50",
        "  seat_0    12   bet 4",
        "  seat_1   -40  grelottine civet boucliette throws",
        "▶ seat_2   300   bought the cul",
        "  dice: 3 3 5  chouette velute",
        "  civet: seat 1, combination velute, stake 40",
        "  grelottine: challenger 2, challenged 1, combination chouette, stake 9",
        "  soufflette: challenger 0, target 2, throw 2",
        "  seat 2 must buy the cul (the third die), or pass",
    ])
    state.turn_number = 50  # the last turn is played
    assert str(table.render()).splitlines()[-1] == "  seat 2 must buy the cul (the third die), or pass"
    state.turn_number = 51
    assert str(table.render()).splitlines()[-1] == "  stopped after 50 turns"
    state.pending, state.winner = None, 2
    assert str(table.render()).splitlines()[-1] == "  seat_2 wins"
    state.table = Table()
    assert len(str(table.render()).splitlines()) == 5  # header, seats, the end: no dice, nothing staked


def test_render_modes() -> None:
    silent = raw_env("classic", 2)
    silent.reset(seed=1)
    with pytest.warns(UserWarning, match="without a render_mode"):
        assert silent.render() is None  # nothing drawn
    assert raw_env("classic", 2, render_mode="ansi").render() == "(no game: call reset())"
    from agents.single import CulDeChouetteEnv

    with pytest.raises(ValueError, match="render_mode must be one of"):  # it drew a str for "rgb_array"
        CulDeChouetteEnv("classic", 2, render_mode="rgb_array")


def test_a_game_cut_short_says_the_turns_it_played() -> None:
    # Cut after 3 turns, turn 4 has begun: the info said 4 turns and the table "turn 4/3".
    table = raw_env("classic", 2, max_turns=3, render_mode="ansi")
    table.reset(seed=3)
    while not any(table.truncations.values()) and not any(table.terminations.values()):
        table.step(int(table.action_mask().argmax()))
    assert all(table.truncations.values())
    assert table.infos["seat_0"]["turns"] == 3
    assert str(table.render()).splitlines()[0].endswith("turn 3/3")


def test_a_game_cut_short_masks_every_action_and_names_its_leader() -> None:
    # The engine still holds turn 4's first decision: the masks showed its legal options to
    # agents that were done, and the info had no word of who the reward called the winner.
    table = raw_env("classic", 2, max_turns=3)
    table.reset(seed=3, options={"setup": {"scores": [40, 10]}})
    while not any(table.truncations.values()):
        table.step(int(table.action_mask().argmax()))
    assert table.state is not None and table.state.pending is not None
    for agent in table.agents:
        assert not table.observe(agent)["action_mask"].any() and not table.action_mask(agent).any()
    scores = table.infos["seat_0"]["scores"]
    assert scores[0] != scores[1]
    leader = 0 if scores[0] > scores[1] else 1
    assert table.infos["seat_1"]["winner"] is None and table.infos["seat_1"]["leader"] == leader
    assert table.rewards[f"seat_{leader}"] == 1.0


def test_score_shaping_alone_at_the_table() -> None:
    """In a one-player game the shaping is the own score's change × weight / target."""
    solo = load_ruleset("solo")
    state = GameState(solo, 1, setup={"scores": [10]})
    shaping = ScoreShaping(2.0)
    shaping.reset(state)
    assert shaping(state, truncated=False) is None
    state.scores[0] = 60
    assert shaping(state, truncated=False) == [pytest.approx(50 * 2.0 / solo.target_score)]
    assert shaping(state, truncated=False) is None  # no change since


def test_score_shaping_against_the_others() -> None:
    """Seat 0 gains 30 while seat 1 loses 10 and seat 2 gains 4: seat 0's shaping is
    (30 − (−10 + 4) / 2) × 0.5 / 343 = 33 × 0.5 / 343."""
    state = game([0, 0, 0])
    shaping = ScoreShaping(0.5)
    shaping.reset(state)
    state.scores[:] = [30, -10, 4]
    assert shaping(state, truncated=False) == pytest.approx(
        [33 * 0.5 / 343, (-10 - 17) * 0.5 / 343, (4 - 10) * 0.5 / 343])
