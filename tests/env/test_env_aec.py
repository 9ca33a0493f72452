"""The PettingZoo AEC environment: PettingZoo's own checkers, rewards, truncation, races."""

from __future__ import annotations

import random
import warnings
from typing import Any

import numpy as np
import pytest

with warnings.catch_warnings():  # pettingzoo.test imports its classic games the deprecated way
    warnings.simplefilter("ignore", DeprecationWarning)
    from pettingzoo.test import api_test, seed_test

from env_helpers import RULESETS, players_for, random_decisions

from cdc_env.actions import IllegalActionError, Pass, Shout
from cdc_env.env import ScoreShaping, env, raw_env
from cdc_env.game import RACE_PHRASES
from cdc_env.reaction import reaction_model

# PettingZoo's api_test warns that a dict observation is not an array, as it does for its own
# classic games (their observation is the same {"observation", "action_mask"} dict).
pytestmark = pytest.mark.filterwarnings(
    "ignore:Observation space for each agent probably should be:UserWarning",
    "ignore:Observation is not a NumPy array:UserWarning",
)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pettingzoo_api_test(ruleset: str) -> None:
    api_test(env(ruleset=ruleset, players=players_for(ruleset)), num_cycles=300)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pettingzoo_api_test_through_truncation(ruleset: str) -> None:
    api_test(env(ruleset=ruleset, players=players_for(ruleset), max_turns=3), num_cycles=300)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_pettingzoo_seed_test(ruleset: str) -> None:
    seed_test(lambda: env(ruleset=ruleset, players=players_for(ruleset)), num_cycles=300)


def test_api_test_without_auto_forced_and_with_more_players() -> None:
    api_test(env(ruleset="classic", players=5, auto_forced=False), num_cycles=200)


def play_out(table: raw_env, seed: int) -> dict[str, float]:
    """Random legal play to the end of one game; each agent's total reward."""
    rng = random.Random(seed)
    table.reset(seed=seed)
    totals = dict.fromkeys(table.possible_agents, 0.0)
    for agent in table.agent_iter():
        observation, reward, terminated, truncated, _ = table.last()
        totals[agent] += reward
        if terminated or truncated:
            table.step(None)
        else:
            table.step(rng.choice(np.flatnonzero(observation["action_mask"]).tolist()))
    return totals


def test_the_winner_gets_plus_one_and_the_others_minus_one() -> None:
    table = raw_env("basic", 3, max_turns=1000)
    totals = play_out(table, seed=4)
    state = table.state
    assert state is not None and state.winner is not None and state.scores[state.winner] >= 343
    assert totals == {agent: (1.0 if agent == f"seat_{state.winner}" else -1.0) for agent in totals}
    assert table.agents == []


def test_shaping_adds_the_score_difference() -> None:
    table = raw_env("basic", 3, max_turns=1000, shaping=0.5)
    totals = play_out(table, seed=4)
    assert table.state is not None
    scores = table.state.scores
    for seat, agent in enumerate(table.possible_agents):
        others = (sum(scores) - scores[seat]) / 2
        win = 1.0 if seat == table.state.winner else -1.0
        assert totals[agent] == pytest.approx(win + 0.5 * (scores[seat] - others) / 343)


def test_turn_penalty_counts_the_turns_played() -> None:
    table = raw_env("basic", 2, max_turns=1000, reward="turns")
    totals = play_out(table, seed=8)
    assert table.state is not None
    assert all(total == -table.state.turn_number for total in totals.values())


def test_a_custom_reward_object() -> None:
    calls = []

    class Count:
        def reset(self, state: object) -> None:
            calls.append("reset")

        def __call__(self, state: object, truncated: bool) -> list[float]:
            calls.append("step")
            return [0.25, 0.0]

    table = raw_env("basic", 2, reward=Count())
    table.reset(seed=1)
    table.step(int(np.flatnonzero(table.action_mask())[0]))
    assert calls == ["reset", "step"]
    assert table.rewards == {"seat_0": 0.25, "seat_1": 0.0}


def test_truncation_after_max_turns() -> None:
    table = raw_env("classic", 3, max_turns=4)
    totals = play_out(table, seed=1)
    assert table.state is not None
    assert table.state.winner is None
    assert table.state.turn_number == 5  # the fifth turn was about to start
    # A game cut short is decided by the scores: the single leader +1, the others -1.
    scores = table.state.scores
    leader = scores.index(max(scores))
    if scores.count(max(scores)) == 1:
        assert totals == {agent: 1.0 if i == leader else -1.0 for i, agent in enumerate(table.possible_agents)}
    else:
        assert totals == dict.fromkeys(table.possible_agents, 0.0)


def test_truncation_flags_and_infos() -> None:
    table = raw_env("classic", 2, max_turns=2)
    rng = random.Random(0)
    table.reset(seed=3)
    while not any(table.truncations.values()):
        table.step(rng.choice(np.flatnonzero(table.action_mask()).tolist()))
    assert all(table.truncations.values()) and not any(table.terminations.values())
    info = table.infos["seat_0"]
    assert info["winner"] is None and info["turns"] == 2 and len(info["scores"]) == 2


def test_illegal_actions_raise_and_change_nothing() -> None:
    table = env(ruleset="classic", players=2)
    table.reset(seed=1)
    raw = table.unwrapped
    legal = set(np.flatnonzero(raw.action_mask()))
    illegal = next(i for i in range(raw.codec.size) if i not in legal)
    before = raw.state.to_json()
    with pytest.raises(IllegalActionError, match=r"is not legal now: seat \d must .*legal: "):
        table.step(illegal)
    with pytest.raises(IllegalActionError, match="outside"):
        table.step(raw.codec.size)
    with pytest.raises(IllegalActionError, match="None is only for agents that are done"):
        table.step(None)
    assert raw.state.to_json() == before


def race_table(ruleset: str = "basic", **kwargs: Any) -> raw_env:
    """A table where the agent to act is in a race."""
    for seed in range(200):
        table = raw_env(ruleset, 2, **kwargs)
        for decision in random_decisions(table, 300, seed):
            if decision.kind == "race":
                return table
    raise AssertionError("no race found")


def test_a_front_end_gives_the_onset_of_a_shout() -> None:
    table = race_table()
    assert table.state is not None and table.state.pending is not None
    decision = table.state.pending
    assert decision.seat is not None  # a race decision is a seat's
    phrase = RACE_PHRASES[decision.reason]
    index = table.codec.encode(Shout(phrase), decision, decision.seat)
    table.step(index, onset_ms=123.5)
    finish_race(table)
    assert table.state is not None
    shout = next(e for e in table.state.log if e["type"] == "shout" and e["seat"] == decision.seat)
    assert shout["onset_ms"] == 123.5
    # The same through act(), with an engine action.
    table = race_table()
    assert table.state is not None and table.state.pending is not None
    decision = table.state.pending
    table.act(Shout(RACE_PHRASES[decision.reason], 42.0))
    finish_race(table)
    assert table.state is not None
    shout = next(e for e in table.state.log if e["type"] == "shout" and e["seat"] == decision.seat)
    assert shout["onset_ms"] == 42.0


def finish_race(table: raw_env) -> None:
    """The other seats stay silent: shouts are logged once every seat has decided."""
    assert table.state is not None and table.state.pending is not None
    while table.state.pending is not None and table.state.pending.kind == "race":
        table.act(Pass())


def test_bots_shout_with_their_seats_reaction_model() -> None:
    onsets: dict[int, list[float]] = {0: [], 1: []}
    table = raw_env("basic", 2, reaction=["expert", "slow"], max_turns=1000)
    for seed in range(6):
        play_out(table, seed)
        assert table.state is not None
        for event in table.state.log:
            if event["type"] == "shout":
                onsets[event["seat"]].append(event["onset_ms"])
    assert onsets[0] and onsets[1]
    assert min(onsets[0]) >= reaction_model("expert").floor_ms
    assert min(onsets[1]) >= reaction_model("slow").floor_ms
    assert np.median(onsets[0]) < np.median(onsets[1])


def test_auto_forced_plays_single_option_decisions() -> None:
    """With auto_forced, no agent is asked a decision with one legal option, except the first
    of a game (so that every game gives the agents a step)."""
    for auto_forced in (True, False):
        table = raw_env("classic", 3, auto_forced=auto_forced, max_turns=80)
        forced = 0
        state = None
        for _ in random_decisions(table, 1500, seed=2):
            first, state = table.state is not state, table.state
            if not first and table.action_mask().sum() == 1:
                forced += 1
        assert (forced == 0) == auto_forced


def test_render_text() -> None:
    table = raw_env("classic", 3, render_mode="ansi")
    table.reset(seed=2)
    text = table.render()
    assert text is not None and "seat_0" in text and "turn 1/" in text and "must" in text


def test_render_human_prints(capsys: pytest.CaptureFixture[str]) -> None:
    table = raw_env("basic", 2, render_mode="human")
    table.reset(seed=2)
    table.render()
    assert "Cul de Chouette" in capsys.readouterr().out


def test_same_seed_same_game_other_seed_other_game() -> None:
    def log(seed: int) -> list[dict]:
        table = raw_env("classic", 3, max_turns=30)
        play_out(table, seed)
        assert table.state is not None
        return table.state.log

    assert log(5) == log(5)
    assert log(5) != log(6)


def test_reset_with_a_seed_plays_the_dice_of_that_seed() -> None:
    from cdc_env.dice import SeededDice
    from cdc_env.game import GameState

    table = raw_env("classic", 3)
    table.reset(seed=9)
    same = GameState(table.rules, 3, dice=SeededDice(9))
    assert table.state is not None
    assert table.state.log == same.log


def test_score_shaping_is_zero_sum_between_seats() -> None:
    from cdc_env.dice import SeededDice
    from cdc_env.game import GameState

    state = GameState(raw_env("basic", 3).rules, 3, dice=SeededDice(0))
    shaping = ScoreShaping(1.0)
    shaping.reset(state)
    state.scores[:] = [30, 0, -6]
    rewards = shaping(state, False)
    assert rewards is not None
    assert sum(rewards) == pytest.approx(0.0)
    assert rewards[0] == pytest.approx((30 - (-6) / 2) / 343)


def test_bad_configuration_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="is played by 2 to 8 players, not 9"):
        raw_env("classic", 9)
    with pytest.raises(ValueError, match="one level per seat"):
        raw_env("classic", 3, reaction=["human"])
    with pytest.raises(ValueError, match="unknown reward"):
        raw_env("classic", 2, reward="points")
    with pytest.raises(ValueError, match="max_turns"):
        raw_env("classic", 2, max_turns=0)
    with pytest.raises(ValueError, match="stake_levels"):
        raw_env("classic", 2, stake_levels=(0.5, 1.0))
