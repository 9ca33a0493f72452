"""The environment's refusals, word for word: each names what was wrong and what to give."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from gymnasium.spaces import Box

from cdc_env.actions import IllegalActionError, Roll, Shout
from cdc_env.env import TurnPenalty, WinLoss, default_players, env, make_reward, raw_env
from cdc_env.game import GameState, JoinRefused
from cdc_env.rules import load_ruleset


@pytest.mark.parametrize("options, message", [
    ({"players": 9}, "ruleset 'classic' is played by 2 to 8 players, not 9"),
    ({"players": 3, "max_turns": 0}, "max_turns must be at least 1, got 0"),
    ({"players": 3, "render_mode": "svg"}, "render_mode must be one of ['human', 'ansi'] or None, got 'svg'"),
    ({"players": 3, "reaction": ["human", "human"]}, "reaction needs one level per seat (3), got ['human', 'human']"),
    ({"players": 3, "reward": "points"},
     "unknown reward 'points'; choose auto, win_loss, turns, or give an object with reset(state) and "
     "__call__(state, truncated)"),
])
def test_bad_options_are_named(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        raw_env("classic", **options)  # type: ignore[arg-type]


def test_default_players() -> None:
    classic, solo = load_ruleset("classic"), load_ruleset("solo")
    assert default_players(classic, None) == 4 and default_players(classic, 3) == 3
    assert default_players(solo, None) == 1
    assert default_players(classic, None, preferred=12) == 8
    with pytest.raises(ValueError, match=r"^ruleset 'solo' is played by exactly 1 player, not 2$"):
        default_players(solo, 2)


def test_rewards_by_name() -> None:
    classic, solo = load_ruleset("classic"), load_ruleset("solo")
    assert isinstance(make_reward("auto", classic), WinLoss)
    assert isinstance(make_reward("auto", solo), TurnPenalty)
    assert isinstance(make_reward("win_loss", solo), WinLoss)
    assert isinstance(make_reward("turns", classic), TurnPenalty)
    mine = WinLoss()
    assert make_reward(mine, classic) is mine


def test_acting_when_it_is_not_allowed() -> None:
    table = raw_env("classic", 2)
    table.reset(seed=1)
    agent = table.agent_selection
    pending = table.state.pending if table.state is not None else None
    assert pending is not None
    with pytest.raises(IllegalActionError) as error:
        table.step(None)
    assert str(error.value) == (f"{agent} must act ({pending.describe()}); None is only for agents that are "
                                f"done. Legal: {table.codec.describe_legal(pending, pending.seat or 0)}")
    for other in table.agents:
        table.terminations[other] = True
    with pytest.raises(IllegalActionError, match=f"^the game is over for {agent}: step\\(None\\) to remove it$"):
        table.act(Roll())
    table.step(None)  # a done agent steps None: removed
    assert agent not in table.agents


def test_before_reset() -> None:
    table = raw_env("classic", 2)
    with pytest.raises(AssertionError, match=r"^call reset\(\) before observe\(\)$"):
        table.observe("seat_0")
    with pytest.raises(AssertionError, match=r"^call reset\(\) before action_mask\(\)$"):
        table.action_mask("seat_0")
    with pytest.raises(AttributeError, match=r"^last\(\) cannot be called before reset\(\)$"):
        env(ruleset="classic", players=2).last()
    # step() too: PettingZoo's own message (the table has no agents before reset).
    with pytest.raises(AssertionError, match=r"^reset\(\) needs to be called before step\.$"):
        env(ruleset="classic", players=2).step(0)


def test_render_without_a_mode_says_how_to_get_one() -> None:
    table = raw_env("classic", 2)
    table.reset(seed=1)
    with pytest.warns(UserWarning) as warned:
        table.render()
    assert "render() was called without a render_mode: make the env with render_mode='ansi' or 'human'" in str(
        warned[0].message)


def test_human_mode_prints_after_each_step(capsys: pytest.CaptureFixture[str]) -> None:
    for mode, prints in (("human", True), ("ansi", False)):
        table = raw_env("classic", 2, render_mode=mode)
        table.reset(seed=1)
        capsys.readouterr()
        table.step(int(table.action_mask().argmax()))
        assert ("Cul de Chouette — classic" in capsys.readouterr().out) is prints


def test_a_shout_out_of_place_is_a_false_shout_of_the_seat() -> None:
    """act(Shout) where no race is on: the engine's false shout, charged to the seat to act."""
    table = raw_env("classic", 2)
    table.reset(seed=1)
    state = table.state
    assert state is not None and state.pending is not None
    seat = state.pending.seat
    table.act(Shout("pas_mou_le_caillou", 300.0))
    assert [event["seat"] for event in state.log if event["type"] == "false_shout"] == [seat]


def test_a_done_agent_may_only_step_none() -> None:
    table = raw_env("classic", 2)
    table.reset(seed=1)
    for agent in table.agents:
        table.terminations[agent] = True
    with pytest.raises(ValueError, match="only valid action is None"):
        table.step(0)


def test_the_turn_penalty_is_silent_between_turns() -> None:
    table = raw_env("solo", 1)
    table.reset(seed=1)
    assert table.state is not None
    penalty = TurnPenalty()
    penalty.reset(table.state)
    assert penalty(table.state, truncated=False) is None


def test_defaults_and_spaces() -> None:
    table = raw_env()
    assert table.rules.name == "classic" and table.players == 4 and table.auto_forced is True
    assert table.game_seed is None
    space = table.observation_spaces["seat_0"]
    observation, mask = space["observation"], space["action_mask"]
    assert isinstance(observation, Box) and isinstance(mask, Box)
    assert observation.dtype == np.float32 and (observation.low.min(), observation.high.max()) == (-1.0, 1.0)
    assert mask.dtype == np.int8 and (mask.low.min(), mask.high.max()) == (0, 1)
    table.reset()  # no seed: one is drawn
    assert isinstance(table.game_seed, int)


def test_resets_without_a_seed_go_on_from_the_last_seed() -> None:
    """reset(seed=s) starts a generator at s; each later reset() takes its next 63 bits."""
    one, two = raw_env("classic", 2), raw_env("classic", 2)
    one.reset(seed=1)
    one.reset(seed=3)  # a new seed starts over
    one.reset()
    two.reset(seed=3)
    two.reset()
    draws = random.Random(3)
    assert one.game_seed == two.game_seed == draws.getrandbits(63)
    two.reset()
    assert two.game_seed == draws.getrandbits(63)


def test_a_late_friend_is_refused_with_the_agents_named() -> None:
    """maison plays the Chante-Sloubi, but an environment's agents are fixed: its own `join`
    and the game it holds (a join at the very start of a turn, which maison would allow) both
    say so, naming the last seat of this table of four."""
    says = ("nobody can join this game: the environment's agents are fixed (seat_0..seat_3); a late "
            "friend (chante_sloubi) joins at the live table, scripts/play.py")
    table = raw_env("maison", 4)
    table.reset(seed=4)
    assert table.state is not None and table.state.at_turn_start
    with pytest.raises(JoinRefused) as error:
        table.join("Zoé", sung=True)
    assert str(error.value) == says
    assert table.state.join_refusal("Zoé") == says
    with pytest.raises(JoinRefused, match=f"^{re.escape(says)}$"):
        table.state.join("Zoé")
    assert table.state.players == 4


class OneValueTooFew:
    """A reward that gives one number fewer than there are seats (a bug in a caller's reward)."""

    def reset(self, state: GameState) -> None:
        pass

    def __call__(self, state: GameState, truncated: bool) -> list[float]:
        return [1.0] * (state.players - 1)


def test_a_reward_with_a_number_missing_is_refused_not_cut_short() -> None:
    # zip(strict=True): the last seat's reward is not silently left at 0.
    table = raw_env("classic", 3, reward=OneValueTooFew())
    table.reset(seed=1)
    with pytest.raises(ValueError, match="zip"):
        table.step(int(table.action_mask().argmax()))
