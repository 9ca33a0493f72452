"""The single-agent Gymnasium environment: Gymnasium's and stable-baselines3's checkers,
opponents, masks, seeding."""

from __future__ import annotations

import random

import gymnasium
import numpy as np
import pytest
from env_helpers import RULESETS, players_for
from gymnasium.utils.env_checker import check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

from agents.simple import make_bot
from agents.single import ENV_ID, CulDeChouetteEnv, ModelPolicy
from cdc_env.actions import IllegalActionError, Pass
from cdc_env.rules import load_ruleset

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("ruleset", RULESETS)
def test_gymnasium_check_env(ruleset: str) -> None:
    check_env(CulDeChouetteEnv(ruleset, players_for(ruleset), learner_seat="random"))


@pytest.mark.parametrize("ruleset", RULESETS)
def test_stable_baselines3_check_env(ruleset: str) -> None:
    sb3_check_env(CulDeChouetteEnv(ruleset, players_for(ruleset)))


def test_registered_with_gymnasium() -> None:
    table = gymnasium.make(ENV_ID, ruleset="basic", players=3)
    observation, info = table.reset(seed=1)
    assert observation.shape == table.observation_space.shape and info["seat"] == 0
    lazy = gymnasium.make("agents.single:" + ENV_ID, ruleset="basic")
    assert isinstance(lazy.unwrapped, CulDeChouetteEnv) and lazy.unwrapped.players == 2


def random_episode(table: CulDeChouetteEnv, seed: int, steps: int = 400) -> list[tuple]:
    rng = random.Random(seed)
    observation, info = table.reset(seed=seed)
    trace: list[tuple] = [(observation.tobytes(), info["seat"])]
    for _ in range(steps):
        action = rng.choice(np.flatnonzero(table.action_masks()).tolist())
        observation, reward, terminated, truncated, info = table.step(action)
        trace.append((observation.tobytes(), reward, terminated, truncated))
        if terminated or truncated:
            observation, info = table.reset()
            trace.append((observation.tobytes(), info["seat"]))
    return trace


def test_seeding_replays_dice_opponents_seats_and_onsets() -> None:
    def make() -> CulDeChouetteEnv:
        return CulDeChouetteEnv("classic", 3, opponents=["random", "simple"],
                                learner_seat="random", max_turns=25)

    first = random_episode(make(), seed=3)
    assert first == random_episode(make(), seed=3)
    assert first != random_episode(make(), seed=4)


def test_the_learning_seat_is_drawn_at_random() -> None:
    table = CulDeChouetteEnv("basic", 3, learner_seat="random")
    seats = {table.reset(seed=seed)[1]["seat"] for seed in range(30)}
    assert seats == {0, 1, 2}


def test_action_masks_are_the_learners_legal_actions() -> None:
    table = CulDeChouetteEnv("classic", 2, max_turns=40)
    rng = random.Random(0)
    table.reset(seed=0)
    for _ in range(300):
        assert table.game.state is not None and table.game.state.pending is not None
        decision = table.game.state.pending
        assert decision.seat == table.learner
        mask = table.action_masks()
        assert mask.dtype == bool
        np.testing.assert_array_equal(mask, table.game.codec.mask(decision, table.learner) == 1)
        _, _, terminated, truncated, _ = table.step(rng.choice(np.flatnonzero(mask).tolist()))
        if terminated or truncated:
            table.reset()


def test_illegal_action_falls_back_with_a_penalty_or_raises() -> None:
    table = CulDeChouetteEnv("classic", 2, illegal_penalty=0.5)
    table.reset(seed=2)
    illegal = int(np.flatnonzero(~table.action_masks())[0])
    _, reward, _, _, info = table.step(illegal)
    assert info["illegal_action"] is True and reward == -0.5
    strict = CulDeChouetteEnv("classic", 2, illegal_action="raise")
    strict.reset(seed=2)
    illegal = int(np.flatnonzero(~strict.action_masks())[0])
    with pytest.raises(IllegalActionError, match="is not legal now"):
        strict.step(illegal)


def test_an_episode_ends_with_the_win_or_loss() -> None:
    table = CulDeChouetteEnv("basic", 2, opponents="simple", max_turns=1000)
    rng = random.Random(1)
    table.reset(seed=1)
    rewards = []
    while True:
        _, reward, terminated, truncated, info = table.step(
            rng.choice(np.flatnonzero(table.action_masks()).tolist()))
        rewards.append(reward)
        if terminated or truncated:
            break
    assert terminated and rewards[-1] in (1.0, -1.0) and sum(rewards[:-1]) == 0.0
    assert (rewards[-1] == 1.0) == (info["winner"] == table.learner)


def test_opponents_as_objects_callables_and_models() -> None:
    asked: list[str] = []
    predicted: list[int] = []

    def passer(state, decision):  # a plain callable: pass when possible, else the first option
        asked.append(decision.kind)
        return Pass() if decision.allows(Pass()) else decision.options[0]

    class FirstLegal:
        """Stands in for a MaskablePPO model: `predict` with masks."""

        def predict(self, observation, action_masks=None, deterministic=True):
            predicted.append(len(observation))
            return int(np.flatnonzero(action_masks)[0]), None

    table = CulDeChouetteEnv("classic", 4, max_turns=20,
                             opponents=[passer, make_bot("simple", seed=1), "random"])
    table.opponents[2] = ModelPolicy(FirstLegal(), table)
    random_episode(table, seed=5, steps=200)
    assert "turn_start" in asked
    assert table.observation_space.shape is not None
    assert predicted and set(predicted) == {table.observation_space.shape[0]}


def test_a_game_without_a_learner_decision_is_skipped() -> None:
    """In basic the learner only decides in races (and the first roll): a game without any
    is replaced by the seed's next game rather than handed over finished."""
    table = CulDeChouetteEnv("basic", 2, learner_seat=1, max_turns=3)
    for seed in range(20):
        table.reset(seed=seed)
        assert table.game.agent_selection == "seat_1"


def test_bad_configuration_says_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="one policy per other seat"):
        CulDeChouetteEnv("classic", 3, opponents=["simple"])
    with pytest.raises(ValueError, match="learner_seat"):
        CulDeChouetteEnv("classic", 2, learner_seat=2)
    with pytest.raises(ValueError, match="illegal_action"):
        CulDeChouetteEnv("classic", 2, illegal_action="ignore")  # type: ignore[arg-type]


def test_random_starts_begin_games_part_way_and_only_as_often_as_asked() -> None:
    from agents.single import random_position

    rules = load_ruleset("classic")
    rng = np.random.default_rng(3)
    positions = [random_position(rng, rules, 2) for _ in range(500)]
    flat = [s for p in positions for s in p]
    assert all(-40 <= s <= rules.cap_score for s in flat)  # nobody has won yet
    assert max(flat) > 300 and np.mean(flat) > 100  # endgames are reached

    table = CulDeChouetteEnv("classic", 2, opponents="simple", random_starts=1.0)
    table.reset(seed=5)
    assert table.game.state is not None
    assert any(table.game.state.scores)  # started part-way (the chance of 0, 0 is nil)
    whole = CulDeChouetteEnv("classic", 2, opponents="simple", random_starts=0.0)
    starts = []
    for episode in range(20):
        whole.reset(seed=episode)
        assert whole.game.state is not None
        starts.append(whole.game.state.setup)
    assert starts == [{}] * 20
    with pytest.raises(ValueError, match="random_starts"):
        CulDeChouetteEnv("classic", 2, opponents="simple", random_starts=1.5)


def test_reset_takes_a_starting_position_as_the_raw_environment_does() -> None:
    # `options={"setup": ...}` was dropped without a word by the Gymnasium environment (a
    # curriculum from chosen positions trained on ordinary starts, random ones here).
    env = CulDeChouetteEnv("classic", 2, random_starts=1.0)
    env.reset(seed=0, options={"setup": {"scores": [300, 250]}})
    state = env.game.state
    assert state is not None and state.scores == [300, 250]


@pytest.mark.parametrize("given", [1.5, "1", None, np.array([1.5]), True])
def test_an_index_that_is_no_whole_number_is_illegal_not_read_by_int(given: object) -> None:
    # int() read 1.5 and "1" as index 1 (played, with no penalty), and None was a TypeError.
    env = CulDeChouetteEnv("classic", illegal_action="raise")
    env.reset(seed=1)
    with pytest.raises(IllegalActionError):
        env.step(given)
    fallback = CulDeChouetteEnv("classic")
    fallback.reset(seed=1)
    _, _, _, _, info = fallback.step(given)
    assert info.get("illegal_action") is True
    # A policy's own kinds of index are played: a numpy integer, a one-element integer array.
    import torch

    # (index 1: roll the dice; a policy's argmax may be a torch tensor, a whole float)
    for index in (np.int64(1), np.array([1]), np.int32(1), np.array(1), torch.tensor(1), torch.tensor([1]), 1.0,
                  np.float32(1)):
        played = CulDeChouetteEnv("classic", illegal_action="raise")
        played.reset(seed=1)
        assert "illegal_action" not in played.step(index)[4]


def test_a_doublette_table_seats_four_by_default_and_starts_no_team_past_the_target() -> None:
    from agents.single import random_position

    rules = load_ruleset("classic").with_house_rules(["doublette"])
    assert CulDeChouetteEnv(rules).players == 4  # (it asked for 2: an error the user never made)
    rng = np.random.default_rng(0)
    for _ in range(300):
        scores = random_position(rng, rules, 4)
        assert all(scores[seat] + scores[seat + 2] < rules.target_score for seat in (0, 1))


def test_score_shaping_at_a_doublette_counts_a_partners_gain_as_ones_own() -> None:
    from cdc_env.env import ScoreShaping
    from cdc_env.game import GameState

    state = GameState(load_ruleset("classic").with_house_rules(["doublette"]), 4)
    shaping = ScoreShaping(1.0)
    shaping.reset(state)
    state.scores[2] += 100  # seat 0's partner
    hints = shaping(state, False)
    assert hints is not None and hints[0] == hints[2] > 0 and hints[1] == hints[3] < 0
    assert sum(hints) == pytest.approx(0.0)
    alone = GameState(load_ruleset("classic"), 4)  # no teams: as before
    shaping.reset(alone)
    alone.scores[2] += 90
    assert shaping(alone, False) == pytest.approx([-30 / 343, -30 / 343, 90 / 343, -30 / 343])


def test_a_numpy_integer_seed_is_a_seed_and_anything_else_one_error() -> None:
    # raw_env's reset(seed=np.int64(3)) was a TypeError from `random`, the single env's
    # gymnasium's own Error: a researcher's seeds often come from numpy.
    from cdc_env.env import raw_env

    table = raw_env("classic", 2)
    table.reset(seed=np.int64(3))
    drawn = table.game_seed
    table.reset(seed=3)
    assert table.game_seed == drawn
    single = CulDeChouetteEnv("classic")
    assert np.array_equal(single.reset(seed=np.int64(5))[0], single.reset(seed=5)[0])
    for bad in (1.5, "3", True):
        with pytest.raises(ValueError, match="a seed is a whole number"):
            table.reset(seed=bad)  # type: ignore[arg-type]
