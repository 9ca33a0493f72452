"""Reaction-time models by hand (cdc_env/reaction.py): a seat's onset is a seeded log-normal
draw, never under the level's floor, to a tenth of a millisecond; each level describes itself."""

from __future__ import annotations

import math
import random

import pytest

from cdc_env.reaction import DEFAULT_REACTION, REACTION_LEVELS, ReactionModel, reaction_model


def test_an_onset_is_the_seeded_log_normal_draw_to_a_tenth_of_a_ms() -> None:
    human = reaction_model()
    assert human.level == DEFAULT_REACTION == "human"
    draw = random.Random(0).lognormvariate(math.log(800), 0.30)
    assert human.sample(random.Random(0)) == round(draw, 1) == 757.1
    assert [human.sample(random.Random(seed)) for seed in (1, 2)] == [959.9, 1538.5]


def test_no_onset_is_under_the_floor() -> None:
    # Median 1000 ms, a wide spread and a floor of 900: seeds 3 and 4 draw 610.7 and 776.9 ms.
    model = ReactionModel("test", median_ms=1000, sigma=0.5, floor_ms=900)
    assert round(random.Random(3).lognormvariate(math.log(1000), 0.5), 1) == 610.7
    assert [model.sample(random.Random(seed)) for seed in range(5)] == [912.2, 1354.9, 2974.1, 900, 900]


def test_each_level_describes_its_median_and_90_percent_range() -> None:
    assert [reaction_model(level).describe() for level in REACTION_LEVELS] == [
        "slow: log-normal, median 1300 ms, 90% between 731 and 2312 ms",
        "human: log-normal, median 800 ms, 90% between 488 and 1310 ms",
        "fast: log-normal, median 550 ms, 90% between 365 and 830 ms",
        "expert: log-normal, median 380 ms, 90% between 273 and 528 ms",
    ]
    # The range's low end is the floor when the spread would go under it.
    assert ReactionModel("test", 1000, 0.5, 600).describe() == (
        "test: log-normal, median 1000 ms, 90% between 600 and 2276 ms")


def test_an_unknown_level_is_one_line_naming_the_levels() -> None:
    with pytest.raises(ValueError) as error:
        reaction_model("superhuman")
    assert str(error.value) == "unknown reaction level 'superhuman'; choose from slow, human, fast, expert"
