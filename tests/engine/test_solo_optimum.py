"""The solo optimum: hand-computed small games, and one turn of the model against the engine."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from engine_helpers import new_game, one_turn_in_the_engine, ruleset

from cdc_env import solo_optimum as solo_module
from cdc_env.actions import BuyCul, DeclareCivet, Pass, Roll, Shout, UseGrelottine
from cdc_env.dice import SeededDice
from cdc_env.flow import Decision
from cdc_env.game import GameState
from cdc_env.rules import Ruleset
from cdc_env.solo_optimum import (
    SoloOptimum,
    _cache_file,
    expected_turns,
    grade,
    optimal_action,
    solo_optimum,
    solo_result,
)

NOTHING = [0] * 6


def tiny(target: int, chouette: list[int], cul_de_chouette: list[int], sirop: bool) -> Ruleset:
    """A solo game where only Chouettes and Culs de Chouette score, without items."""
    return ruleset("solo", target_score=target, cap_score=target - 1,
                   neant_gives_grelottine=False,
                   scores={"chouette": chouette, "velute": NOTHING, "cul_de_chouette": cul_de_chouette},
                   sirotage={"enabled": sirop, "self_bet": False, "civet_on_failed_six": False},
                   civet={"enabled": False}, grelottine={"enabled": False})


def test_only_a_cul_de_chouette_wins_36_turns() -> None:
    # 6 rolls of 216 win: a geometric number of turns with mean 216 / 6 = 36.
    optimum = SoloOptimum(tiny(100, NOTHING, [100] * 6, sirop=False))
    assert optimum.expected_turns(0) == pytest.approx(36, abs=1e-9)


def test_a_cul_de_chouette_thrown_or_siroted() -> None:
    # A Chouette is worth nothing kept and costs nothing siroted, so sirop every one: a turn
    # wins with 6/216 + 81/216 × 1/6 (81 Chouettes that are not Chouette-Velutes) = 19.5/216.
    optimum = SoloOptimum(tiny(100, NOTHING, [100] * 6, sirop=True))
    assert optimum.expected_turns(0) == pytest.approx(216 / 19.5, abs=1e-9)
    assert optimum.best_sirop(0, 4) == (True, None)


def test_two_steps_keep_the_chouette() -> None:
    # Target 2: a Chouette is 1, a Cul de Chouette 2. From 1, a Chouette kept or a Cul de
    # Chouette wins: V1 = 216 / 87. From 0, keeping the Chouette leads to 1:
    # V0 = (1 + 81/216 × V1) / (87/216) = 36288 / 7569. Siroting is worse (a failure goes to -1).
    optimum = SoloOptimum(tiny(2, [1] * 6, [2] * 6, sirop=True))
    assert optimum.expected_turns(1) == pytest.approx(float(Fraction(216, 87)), abs=1e-9)
    assert optimum.expected_turns(0) == pytest.approx(float(Fraction(36288, 7569)), abs=1e-9)
    assert optimum.best_sirop(0, 3) == (False, None) and optimum.best_sirop(1, 3) == (False, None)
    assert optimum.expected_turns(2) == 0.0


def test_the_solo_optimum_from_zero() -> None:
    optimum = solo_optimum("solo")
    best = optimum.expected_turns(0)
    assert best == pytest.approx(19.4002994929, abs=1e-8)
    assert expected_turns(0) == best
    # Holding a Civet is worth a little; a Grelottine at 0 cannot be used (no stake).
    assert optimum.expected_turns(0, civet=True) < best
    assert optimum.expected_turns(0, grelottine=True) == pytest.approx(best, abs=1e-9)
    # More points, fewer turns.
    assert all(optimum.expected_turns(s) > optimum.expected_turns(s + 10) for s in range(0, 330, 10))
    assert optimum.best_turn_start(0).action == Roll()


@pytest.mark.parametrize(("score", "items", "first"), [
    (0, {}, Roll()),
    (300, {"civet": 1}, DeclareCivet("chouette", 2)),
])
def test_one_turn_of_the_model_is_one_turn_of_the_engine(score, items, first) -> None:
    # The optimum's values satisfy its own equation, V = 1 + E[V(next)], with the engine
    # playing the turn: the model's turn is the engine's.
    optimum = solo_optimum("solo")
    civet, grelottine = bool(items.get("civet")), bool(items.get("grelottine"))
    best = optimum.best_turn_start(score, civet, grelottine)
    assert best.action == first
    expected = optimum.expected_turns(score, civet, grelottine)
    assert best.expected == pytest.approx(expected, abs=1e-9)
    assert one_turn_in_the_engine(optimum.rules, score, items) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("die", "name"), [
    (1, "chouette_velute"), (2, "cul_de_chouette"), (3, "cul_de_chouette_sirote"), (4, "velute"), (5, "chouette")])
def test_a_grelottine_roll_of_the_model_is_one_of_the_engine(die: int, name: str) -> None:
    # At 250 with a Grelottine, the game draws the combination (die 4: the 4th, Velute, 25 %:
    # stake 62); a Cul de Chouette is also made by a sirop, a Sirop-Grelot only by one.
    optimum = solo_optimum("solo")
    assert list(optimum.rules.grelottine.stake_limits)[die - 1] == name
    engine = one_turn_in_the_engine(optimum.rules, 250, {"grelottine": 1}, first=(UseGrelottine(),), dice=(die,))
    assert engine == pytest.approx(optimum.roll_expected(250, grelottine_bet=name), abs=1e-9)


@pytest.mark.parametrize("name", ["chouette", "velute", "chouette_velute", "suite", "cul_de_chouette",
                                  "cul_de_chouette_sirote"])
def test_a_civet_roll_of_the_model_is_one_of_the_engine(name: str) -> None:
    # At 100 a Civet of 40 on each combination S allows (a sirop makes only the Civet « Cul de
    # Chouette sirotée », not the plain one), the optimum's sirops and bets after it.
    optimum = solo_optimum("solo")
    engine = one_turn_in_the_engine(optimum.rules, 100, {"civet": 1}, first=(DeclareCivet(name, 40),))
    assert engine == pytest.approx(optimum.roll_expected(100, civet_bet=(name, 40)), abs=1e-9)


def test_a_grelottine_needs_a_stake_on_every_combination_it_may_draw() -> None:
    # As in the engine (test_solo.py): 8 % of 12 is 0, so not usable; of 13, 1. The last
    # combination drawn, the Chouette, would stake 3 of 12.
    optimum = solo_optimum("solo")
    assert optimum.may_use_grelottine(np.array([0, 12, 13, 300])).tolist() == [False, False, True, True]


def test_the_optimum_plays_whole_games() -> None:
    rules = solo_optimum("solo").rules
    for seed in range(2):
        state = GameState(rules, 1, dice=SeededDice(seed))
        while not state.is_over:
            assert state.pending is not None
            state.apply_action(optimal_action(state, state.pending))
        assert 1 <= state.turn_number < 100


def test_the_cache_file_is_named_by_the_ruleset_and_the_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDC_CACHE_DIR", "")
    assert _cache_file("{}") is None  # empty: no cache
    monkeypatch.delenv("CDC_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    default = _cache_file("{}")
    assert default is not None and default.parent == tmp_path / "home" / ".cache" / "cdc"
    assert re.fullmatch(r"solo-optimum-[0-9a-f]{24}\.npy", default.name)
    monkeypatch.setenv("CDC_CACHE_DIR", str(tmp_path / "cache"))
    assert _cache_file("{}") == tmp_path / "cache" / default.name
    assert _cache_file('{"target_score": 100}') != _cache_file("{}")
    # A rule family's module changed: another file; a file that is not a module: the same.
    book = tmp_path / "rulebook"
    book.mkdir()
    (book / "rule.py").write_text("A = 1\n", encoding="utf-8")
    monkeypatch.setattr(solo_module, "RULEBOOK", book)
    before = _cache_file("{}")
    (book / "notes.txt").write_text("notes\n", encoding="utf-8")
    assert _cache_file("{}") == before
    (book / "rule.py").write_text("A = 2\n", encoding="utf-8")
    assert _cache_file("{}") != before


def test_the_module_level_helpers_answer_as_the_optimum() -> None:
    optimum = solo_optimum()
    assert optimum is solo_optimum("solo") and expected_turns() == optimum.expected_turns(0)
    assert expected_turns(100, True) == optimum.expected_turns(100, True, False)
    assert expected_turns(100, grelottine=True) == optimum.expected_turns(100, False, True)
    assert expected_turns(100, True) != expected_turns(100)


def test_the_optimum_shouts_at_once_and_passes_what_it_does_not_play() -> None:
    state = GameState(ruleset("solo"), 1, dice=SeededDice(0))
    assert optimal_action(state, Decision(0, "race", (Pass(), Shout("sans_fin")), reason="suite",
                                          answers=("sans_fin",))) == Shout("sans_fin", 0.0)
    assert optimal_action(state, Decision(0, "claim", (Pass(), Shout("a_kadoc")), reason="a_kadoc")) == (
        Shout("a_kadoc", 0.0))
    assert optimal_action(state, Decision(0, "buy_cul", (Pass(), BuyCul()))) == Pass()
    assert optimal_action(state, Decision(0, "challenge_roll", (Roll(),))) == Roll()


def test_the_grade_divides_by_the_turns_to_one_decimal() -> None:
    assert grade(1, 1.5) == 15.0 and grade(0, 1.5) == 15.0  # no game of 0 turns: 1
    assert grade(3, 1.0) == 3.3


def test_a_result_is_for_a_finished_solo_game_only() -> None:
    two = new_game(ruleset("classic", dice_buying={"enabled": False}), 2, dice=[6, 6, 6], scores=[300, 0])
    two.apply_action(Roll())  # a Cul de Chouette of 6: 400
    assert two.is_over
    unfinished = GameState(ruleset("solo"), 1, dice=SeededDice(0))
    for state in (two, unfinished):
        with pytest.raises(ValueError, match="a rank and a grade are given at the end of a solo game"):
            solo_result(state)


def test_a_choice_before_the_roll_is_remembered_for_its_own_items_only() -> None:
    # A fresh optimum (its memo empty): at 280 a Civet holder stakes 2 on a Chouette, a player
    # without one rolls; asked again, each gets the same answer.
    solved = solo_optimum()
    fresh = SoloOptimum(solved.rules, values=solved.values)
    assert fresh.best_turn_start(280, True).action == DeclareCivet("chouette", 2)
    assert fresh.best_turn_start(280, False).action == Roll()
    assert fresh.best_turn_start(280, True).action == DeclareCivet("chouette", 2)


def test_a_ruleset_with_rows_outside_solo_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError) as error:
        SoloOptimum(ruleset("complete"))
    assert str(error.value) == "the solo optimum does not cover the combination 'suite_velutee'"
