"""The environment's refusals, word for word: each names what was wrong and what to give."""

from __future__ import annotations

import re

import pytest

from cdc_env.actions import IllegalActionError, Roll
from cdc_env.env import TurnPenalty, WinLoss, default_players, make_reward, raw_env
from cdc_env.rules import load_ruleset


@pytest.mark.parametrize("options, message", [
    ({"players": 9}, "ruleset 'classic' is for 2–8 players, not 9"),
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
    with pytest.raises(ValueError, match=r"^ruleset 'solo' is for 1–1 players, not 2$"):
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
