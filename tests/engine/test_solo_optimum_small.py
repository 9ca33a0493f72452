"""The solo optimum solved here, on small games (target 40), never read from a cache: its values
and choices checked turn by turn against the engine, F's refusals without negative scores, and
the solver's own paths (the dense solve, a solve that never settles, the refusals)."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest
from engine_helpers import one_turn_in_the_engine, ruleset

from cdc_env import solo_optimum as solo_module
from cdc_env.actions import Action, DeclareCivet, Pass, Roll, Sirop, UseGrelottine
from cdc_env.dice import InjectedDice, SeededDice
from cdc_env.flow import Decision
from cdc_env.game import GameState
from cdc_env.rules import Ruleset, load_ruleset
from cdc_env.solo_optimum import SoloOptimum, optimal_action, solo_optimum, solo_result

FLOOR = -60
# S cut down: 40 to win, bets capped at 39, Civet stakes 1 to 6, a Grelottine that draws a
# Chouette (stake: the whole score) or a Velute (half of it), par grade 12. Here the Grelottine is
# worth using (at 2 and 3), as it never is in S.
SMALL = ruleset("solo", target_score=40, cap_score=39, civet={"max_stake": 6},
                grelottine={"stake_limits": {"chouette": "100%", "velute": "50%"}}, solo={"par_grade": 12})
# The same without negative scores, with F's minimums: a sirop must cover the Chouette's points,
# a bet on the sirop die needs 5, a Néant gives a Grelottine from 30.
NO_NEGATIVE = ruleset("solo", target_score=40, cap_score=39, negative_scores=False, civet={"max_stake": 6},
                      minimum_scores={"sirop_bet": 5, "sirotage_covers_chouette": True, "grelottine": 30})
# Only a Cul de Chouette scores (and wins): no sirop, no Civet, no Grelottine.
CULS_ONLY = ruleset("solo", target_score=100, cap_score=99, neant_gives_grelottine=False,
                    scores={"chouette": [0] * 6, "velute": [0] * 6, "cul_de_chouette": [100] * 6},
                    sirotage={"enabled": False}, civet={"enabled": False}, grelottine={"enabled": False})

# What no shipped ruleset has but the rules allow: a bet on the sirop die that costs 3 when
# wrong, a Chouette of 6 worth 3 (so a 6 is siroted, and a failed one gives a Civet) and a
# Velute of 2 worth -8 (one's own dice that lose points).
ODD = ruleset("solo", target_score=40, cap_score=39, civet={"max_stake": 6},
              grelottine={"stake_limits": {"chouette": "100%", "velute": "50%"}},
              scores={"chouette": [1, 4, 9, 16, 25, 3], "velute": [2, -8, 18, 32, 50, 72]},
              sirotage={"bet_loss": 3})
# The small game with a sirop but no bet on its die, and with a Chouette-Velute siroted scored
# again (shouted in time).
NO_BET = ruleset("solo", target_score=40, cap_score=39, civet={"max_stake": 6},
                 grelottine=SMALL.grelottine.model_dump(), sirotage={"self_bet": False})
RESCORED = ruleset("solo", target_score=40, cap_score=39, civet={"max_stake": 6},
                   grelottine=SMALL.grelottine.model_dump(), sirotage={"rescore_after": ["chouette_velute"]})
# The small game with Culs de Chouette of 20 (they no longer win at once).
LOW_CULS = ruleset("solo", target_score=40, cap_score=39, civet={"max_stake": 6},
                   grelottine=SMALL.grelottine.model_dump(), scores={"cul_de_chouette": [20] * 6})

@pytest.fixture(scope="module")
def solved() -> Iterator[Callable[[Ruleset], SoloOptimum]]:
    """The optimum of a small ruleset, solved in this process when first asked (the disk cache
    and the process's own are set aside, so that what is checked is the solver, not values
    solved before), with the floor at -60 (half the states of the module's FLOOR): the turns
    checked here start at -5 or more and lose at most 42 points (a failed sirop of 36, a Civet
    of 6), so none of their scores reaches it."""
    solutions: dict[str, SoloOptimum] = {}

    def optimum_of(rules_json: str) -> SoloOptimum:
        if rules_json not in solutions:
            solutions[rules_json] = SoloOptimum(Ruleset.from_dict(json.loads(rules_json)), floor=FLOOR)
        return solutions[rules_json]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solo_module, "_optimum_of", optimum_of)
        patch.setattr(solo_module, "_last", [None, None])
        yield solo_optimum


def held(items: dict[str, int]) -> tuple[bool, bool]:
    return bool(items.get("civet")), bool(items.get("grelottine"))


@pytest.mark.parametrize(("rules", "score", "items", "best", "expected"), [
    (SMALL, 0, {}, Roll(), 3.4698142665613),
    (SMALL, 2, {"grelottine": 1}, UseGrelottine(), 3.4471957220991),
    (SMALL, 2, {"civet": 1}, DeclareCivet("chouette", 2), 3.4363699192662),
    (SMALL, 1, {"civet": 1}, Roll(), None),
    (SMALL, 5, {"civet": 1}, DeclareCivet("chouette", 1), 3.1681619824740),
    (SMALL, 34, {"civet": 1}, DeclareCivet("suite", 2), 1.9305630264734),
    (SMALL, 35, {}, Roll(), 1.9295300542909),
    (SMALL, -5, {"civet": 1, "grelottine": 1}, DeclareCivet("chouette", 5), 3.6433043358477),
    (NO_NEGATIVE, 0, {}, Roll(), 3.5816672012306),
    (NO_NEGATIVE, 0, {"civet": 1}, DeclareCivet("chouette", 6), 3.5131498428950),
    (NO_NEGATIVE, 2, {"grelottine": 1}, Roll(), 3.5056166223336),
    (NO_NEGATIVE, 3, {}, Roll(), 3.4787569334980),
    (NO_NEGATIVE, 5, {"civet": 1}, Roll(), 3.1886619993079),
    (NO_NEGATIVE, 35, {}, Roll(), 1.9295300542933),
], ids=lambda value: str(value) if not isinstance(value, Ruleset) else value.name)
def test_a_turn_of_a_small_game_is_a_turn_of_the_engine(solved: Callable[[Ruleset], SoloOptimum], rules: Ruleset,
                                                         score: int, items: dict[str, int], best: Action,
                                                         expected: float | None) -> None:
    # The optimum's choice before the roll, its expected turns (pinned where given), and the
    # same turn played in the engine with the optimum's answers: 1 + E[V(next)] = V.
    optimum = solved(rules)
    civet, grelottine = held(items)
    value = optimum.expected_turns(score, civet, grelottine)
    if expected is not None:
        assert value == pytest.approx(expected, abs=1e-9)
    choice = optimum.best_turn_start(score, civet, grelottine)
    assert choice.action == best and choice.expected == pytest.approx(value, abs=1e-9)
    assert one_turn_in_the_engine(rules, score, items) == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize(("score", "items", "first", "dice", "civet_bet", "grelottine_bet"), [
    (2, {"grelottine": 1}, Roll(), (), None, None),
    (2, {"grelottine": 1}, UseGrelottine(), (1,), None, "chouette"),
    (2, {"grelottine": 1}, UseGrelottine(), (2,), None, "velute"),
    (20, {"grelottine": 1}, UseGrelottine(), (1,), None, "chouette"),
    (35, {"grelottine": 1}, UseGrelottine(), (2,), None, "velute"),
    (0, {"civet": 1}, DeclareCivet("velute", 6), (), ("velute", 6), None),
    (1, {"civet": 1}, DeclareCivet("chouette", 3), (), ("chouette", 3), None),
    (3, {"civet": 1}, DeclareCivet("suite", 2), (), ("suite", 2), None),
    (35, {"civet": 1, "grelottine": 1}, DeclareCivet("chouette", 3), (), ("chouette", 3), None),
])
def test_each_bet_of_a_small_game_is_the_engines(solved: Callable[[Ruleset], SoloOptimum], score: int,
                                                 items: dict[str, int], first: Action, dice: tuple[int, ...],
                                                 civet_bet: tuple[str, int] | None, grelottine_bet: str | None) -> None:
    # A choice before the roll, optimal or not, then the optimum's answers (its sirops and bets
    # change with the bet made: these are scores where they do): the model's expected turns of
    # rolling with that bet are the engine's. A Grelottine used draws its combination first
    # (1: Chouette, 2: Velute).
    optimum = solved(SMALL)
    civet, grelottine = held(items)
    civet = civet and civet_bet is None
    grelottine = grelottine and grelottine_bet is None and first == Roll()
    model = optimum.roll_expected(score, civet, grelottine, civet_bet, grelottine_bet)
    assert one_turn_in_the_engine(SMALL, score, items, first=(first,), dice=dice) == pytest.approx(model, abs=1e-9)


def test_where_the_small_game_bets(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    optimum = solved(SMALL)
    # The Grelottine is used at 2 and 3 only: at 1 its Velute would stake 0 (not usable), and
    # from 4 rolling is better; it is worth the mean of its two draws.
    used = [s for s in range(-10, 40) if optimum.best_turn_start(s, grelottine=True).action == UseGrelottine()]
    assert used == [2, 3]
    assert optimum.may_use_grelottine(np.array([-3, 0, 1, 2, 3])).tolist() == [False, False, False, True, True]
    mean = (optimum.roll_expected(2, grelottine_bet="chouette") + optimum.roll_expected(2, grelottine_bet="velute")) / 2
    assert optimum.expected_turns(2, grelottine=True) == pytest.approx(mean, abs=1e-12)
    assert optimum.roll_expected(2, grelottine=True) > mean + 1e-3
    # A Civet is staked at these scores (and on a Suite at 34 and 38), the stake by score.
    civets = {s: optimum.best_turn_start(s, civet=True).action for s in range(-10, 40)}
    assert {s: (a.combination, a.stake) for s, a in civets.items() if isinstance(a, DeclareCivet)} == {
        -7: ("chouette", 1), -6: ("chouette", 2), -5: ("chouette", 5), -4: ("chouette", 4), -3: ("chouette", 3),
        -2: ("chouette", 2), 2: ("chouette", 2), 3: ("chouette", 3), 5: ("chouette", 1), 10: ("chouette", 2),
        11: ("chouette", 3), 12: ("chouette", 4), 13: ("chouette", 3), 14: ("chouette", 2), 18: ("chouette", 2),
        19: ("chouette", 4), 20: ("chouette", 4), 21: ("chouette", 2), 25: ("chouette", 1), 26: ("chouette", 2),
        27: ("chouette", 3), 29: ("chouette", 1), 30: ("chouette", 2), 33: ("chouette", 1), 34: ("suite", 2),
        35: ("chouette", 2), 38: ("suite", 1)}
    assert all(a == Roll() for a in civets.values() if not isinstance(a, DeclareCivet))


def test_the_sirop_and_its_bet_follow_the_items_and_the_bet_of_the_turn(solved: Callable[[Ruleset], SoloOptimum]
                                                                        ) -> None:
    optimum = solved(SMALL)
    # At 1, by face: sirop a Chouette of 1 to 3 (betting on 2, 1, 1), keep the others.
    assert [optimum.best_sirop(1, face) for face in range(1, 7)] == [
        (True, 2), (True, 1), (True, 1), (False, None), (False, None), (False, None)]
    # Holding a Civet (after the choice before the roll) changes a Chouette of 3's answer.
    assert optimum.best_sirop(1, 3, civet=True) == (False, None)
    assert optimum.best_sirop(5, 3) == (False, None)
    assert optimum.best_sirop(5, 3, civet=True) == optimum.best_sirop(5, 3, True, True) == (True, 1)
    # So does the turn's bet: a Civet on a Chouette or a Velute, a Grelottine on a Chouette or
    # a Velute.
    assert optimum.best_sirop(1, 3, civet_bet=("chouette", 3)) == (False, None)
    assert optimum.best_sirop(0, 3) == (False, None) and optimum.best_sirop(0, 3, civet_bet=("velute", 6)) == (True, 1)
    assert optimum.best_sirop(20, 1) == (True, 2)
    assert optimum.best_sirop(20, 1, grelottine_bet="chouette") == (True, None)
    assert optimum.best_sirop(35, 2) == (False, None)
    assert optimum.best_sirop(35, 2, grelottine_bet="velute") == (True, 1)
    # And a Chouette of 2's at 4 without negative scores (a sirop covered, no bet below 5).
    no_negative = solved(NO_NEGATIVE)
    assert no_negative.best_sirop(4, 2) == (False, None)
    assert no_negative.best_sirop(4, 2, civet=True) == no_negative.best_sirop(4, 2, True, True) == (True, None)


def test_without_negative_scores_the_minimums_hold(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    optimum, plain = solved(NO_NEGATIVE), solved(SMALL)
    # A sirop must cover the Chouette's points (4 for a Chouette of 2), a bet needs 5.
    assert optimum.best_sirop(3, 2) == (False, None) and plain.best_sirop(3, 2) == (True, 1)
    assert optimum.best_sirop(0, 1) == (False, None) and optimum.best_sirop(1, 1) == (True, None)
    assert optimum.best_sirop(4, 1) == (True, None) and optimum.best_sirop(5, 1) == (True, 2)
    # Scores stay at 0 or more: a lost Civet of 6 at 0 keeps 0.
    assert optimum.lose(np.array([0, 3, 10]), 6).tolist() == [0, 0, 4]
    assert plain.lose(np.array([0, 3, 10]), 6).tolist() == [-6, -3, 4]
    # The optimum plays whole games that the engine accepts, move by move.
    for seed in range(3):
        state = GameState(NO_NEGATIVE, 1, dice=SeededDice(seed))
        while not state.is_over:
            assert state.pending is not None
            state.apply_action(optimal_action(state, state.pending))
        assert min(score for step in [state.scores] for score in step) >= 0


def test_a_small_games_grade_uses_its_own_optimum_and_par(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    best = solved(SMALL).expected_turns(0)
    state = GameState(SMALL, 1, dice=SeededDice(0))
    while not state.is_over:
        assert state.pending is not None
        state.apply_action(optimal_action(state, state.pending))
    result = solo_result(state)
    assert result is not None
    assert result.turns == state.turn_number == 4
    assert result.expected == best and result.grade == round(12 * best / 4, 1) == 10.4
    assert result.rank == "Écuyer"
    with pytest.raises(ValueError) as error:
        solo_result(GameState(SMALL, 1, dice=SeededDice(0)))
    assert str(error.value) == "a rank and a grade are given at the end of a solo game"


def test_the_optimum_asked_for_is_the_rulesets(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    small = solved(SMALL)
    no_negative = solved(NO_NEGATIVE)
    assert small.rules.negative_scores and not no_negative.rules.negative_scores
    assert solved(SMALL) is small and solved(NO_NEGATIVE) is no_negative


def test_a_choice_is_remembered_for_its_own_items_and_bet(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    # A fresh optimum (its memo empty), asked in an order where a memo keyed too loosely would
    # answer from the question before.
    fresh = SoloOptimum(SMALL, floor=FLOOR, values=solved(SMALL).values)
    assert fresh.best_turn_start(2, False, True).action == UseGrelottine()
    assert fresh.best_turn_start(2).action == Roll()
    assert fresh.best_turn_start(2, True).action == DeclareCivet("chouette", 2)
    assert fresh.best_turn_start(2, grelottine=True).action == UseGrelottine()
    assert fresh.best_sirop(5, 3, True) == (True, 1)
    assert fresh.best_sirop(5, 3) == (False, None)
    assert fresh.best_sirop(0, 3, civet_bet=("velute", 6)) == (True, 1)
    assert fresh.best_sirop(0, 3) == (False, None)
    assert fresh.best_sirop(20, 1, grelottine_bet="chouette") == (True, None)
    assert fresh.best_sirop(20, 1) == (True, 2)
    no_negative = SoloOptimum(NO_NEGATIVE, floor=FLOOR, values=solved(NO_NEGATIVE).values)
    assert no_negative.best_sirop(4, 2, True) == (True, None)
    assert no_negative.best_sirop(4, 2) == (False, None)
    # Rolling at 2 while holding the Grelottine (kept for later) is worth a little.
    assert fresh.roll_expected(2, grelottine=True) < fresh.roll_expected(2) - 1e-4


def test_a_ruleset_without_items_values_them_at_nothing() -> None:
    # No Civet, no Grelottine in the rules: holding one changes nothing, and 6 rolls of 216 win.
    optimum = SoloOptimum(CULS_ONLY)
    assert optimum.expected_turns(0) == pytest.approx(36, abs=1e-9)
    for civet, grelottine in ((True, False), (False, True), (True, True)):
        assert optimum.expected_turns(0, civet, grelottine) == pytest.approx(36, abs=1e-9)
        assert optimum.best_turn_start(0, civet, grelottine).action == Roll()
    assert not optimum.may_use_grelottine(np.array([0, 50])).any()
    # A Grelottine used when challenged (not before a roll) is no choice before the roll either.
    challenge = ruleset("solo", target_score=40, cap_score=39, civet={"enabled": False},
                        grelottine={"use": "challenge"})
    assert SoloOptimum(challenge, values=np.zeros((4, 190))).grelottine_names == []


def test_without_scipy_the_dense_solve_gives_the_same_optimum(solved: Callable[[Ruleset], SoloOptimum],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Without scipy the policy's equations are solved as a dense system: the same values.
    sparse = solved(SMALL)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)  # its import now fails
    dense = SoloOptimum(SMALL, floor=FLOOR)
    assert np.abs(dense.values - sparse.values).max() < 1e-9


def test_a_solve_that_never_settles_stops_after_100_rounds_and_says_so() -> None:
    rounds = []

    class Restless(SoloOptimum):
        def _evaluate(self, row: np.ndarray, col: np.ndarray, prob: np.ndarray) -> np.ndarray:
            rounds.append(1)
            return super()._evaluate(row, col, prob) + 1.0  # never the policy's own values

    with pytest.raises(RuntimeError) as error:
        Restless(CULS_ONLY)
    assert str(error.value) == "policy iteration did not converge"
    assert len(rounds) == 100


def test_what_the_optimum_refuses_it_says_in_one_line() -> None:
    for floor in (0, 1):
        with pytest.raises(ValueError) as error:
            SoloOptimum(CULS_ONLY, floor=floor)
        assert str(error.value) == "the floor must be below 0"
    zeros = np.zeros((4, 250))
    rescored = ruleset("solo", sirotage={"rescore_after": ["chouette_velute", "artichette"]})
    with pytest.raises(ValueError) as error:
        SoloOptimum(rescored, values=np.zeros((4, 493)))
    assert str(error.value) == "the solo optimum covers only a Chouette-Velute after a sirop"
    SoloOptimum(ruleset("solo", sirotage={"rescore_after": ["chouette_velute"]}), values=np.zeros((4, 493)))
    # What the optimum does not model: solved anyway, its values were those of the ruleset
    # without it (a "best play" Tichette beat by 4 turns; a Civet staked beyond one's score).
    solo = load_ruleset("solo")
    for rules, says in ((solo.with_house_rules(["tichette"]), "house rules (tichette)"),
                        (ruleset("solo", cap_holds="off_own_turn"), "cap_holds: off_own_turn"),
                        (ruleset("solo", civet={"stake_within_score": True}), "civet.stake_within_score")):
        with pytest.raises(ValueError) as error:
            SoloOptimum(rules, values=np.zeros((4, 493)))
        assert str(error.value).startswith(f"the solo optimum does not cover {says}"), error.value
    with pytest.raises(ValueError) as error:
        SoloOptimum(CULS_ONLY, values=zeros[:3])
    assert str(error.value) == "solved values of shape (3, 250), expected (4, 250)"


def test_a_chance_decision_is_not_the_optimums() -> None:
    state = GameState(SMALL, 1, dice=SeededDice(0))
    with pytest.raises(AssertionError) as error:
        optimal_action(state, Decision(None, "roll", (), sides=6, count=3))
    assert str(error.value) == "chance decisions are the dice's"


@pytest.mark.parametrize("rules", [SMALL, LOW_CULS], ids=["small", "low_culs"])
def test_the_civet_table_gives_each_bets_expected_turns(solved: Callable[[Ruleset], SoloOptimum],
                                                        rules: Ruleset) -> None:
    # Before a roll, a Civet's expected turns come from a table over the scores after it is
    # settled (fast); they must be those of rolling with that bet, computed outcome by outcome,
    # for every combination and stake, with or without a Grelottine held (a Néant then gives
    # none), up to the cap (39 here: a Civet won at 35 stops there). With Culs of 20 a Cul does
    # not win at once, so a Civet on a Cul de Chouette is settled after a sirop that makes one
    # (not made: the sirop does not count for a Civet's Cul, only for a Grelottine's).
    optimum = solved(rules)
    scores = np.array([-10, -5, 0, 2, 20, 35, 38, 39])
    table = optimum._civet_table(optimum.values)
    for grelottine in (0, 1):
        turn = solo_module._Turn(optimum, optimum.values, scores, 0, grelottine, civet=optimum.civet_names[0],
                                 stakes=optimum.civet_stakes[None, :], civet_table=table)
        by_name = turn.civet_expected(optimum.civet_names)
        assert sorted(by_name) == sorted(optimum.civet_names)
        for name, expected in by_name.items():
            assert expected.shape == (len(scores), 6)
            for column, stake in enumerate(optimum.civet_stakes):
                plain = solo_module._Turn(optimum, optimum.values, scores, 0, grelottine, civet=name,
                                          stakes=stake).expected()[:, 0]  # roll_expected, every score at once
                assert np.abs(expected[:, column] - plain).max() < 1e-12, (name, stake)
    assert by_name["chouette"][3, 1] == pytest.approx(optimum.roll_expected(2, False, True, ("chouette", 2)), abs=1e-12)


def test_the_civets_the_rules_allow_and_the_values_given(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    # The choices read the rules: with the small game's values, no Civet when the rules have
    # none, no stake below the minimum or above the maximum. Values given are taken as they are.
    values = solved(SMALL).values
    assert solved(SMALL).best_turn_start(2, civet=True).action == DeclareCivet("chouette", 2)
    without = SoloOptimum(ruleset("solo", target_score=40, cap_score=39, civet={"enabled": False},
                                  grelottine=SMALL.grelottine.model_dump()), floor=FLOOR, values=values)
    assert {without.best_turn_start(s, civet=True).action for s in range(-10, 40)} == {Roll()}
    from_three = SoloOptimum(ruleset("solo", target_score=40, cap_score=39, civet={"min_stake": 3, "max_stake": 6},
                                     grelottine=SMALL.grelottine.model_dump()), floor=FLOOR, values=values)
    stakes = {a.stake for s in range(-10, 40) if isinstance(a := from_three.best_turn_start(s, civet=True).action,
                                                            DeclareCivet)}
    assert stakes and min(stakes) == 3
    up_to_five = SoloOptimum(ruleset("solo", target_score=40, cap_score=39, negative_scores=False,
                                     civet={"max_stake": 5}, minimum_scores=NO_NEGATIVE.minimum_scores.model_dump()),
                             floor=FLOOR, values=solved(NO_NEGATIVE).values)
    assert up_to_five.best_turn_start(0, civet=True).action == DeclareCivet("chouette", 5)
    given = SoloOptimum(CULS_ONLY, values=np.full((4, 250), 7.0))
    assert given.expected_turns(0) == 7.0 and given.expected_turns(99, True, True) == 7.0


def test_a_grelottines_stake_is_its_share_of_a_positive_score(solved: Callable[[Ruleset], SoloOptimum]) -> None:
    optimum = solved(SMALL)
    scores = np.array([-5, 0, 1, 2, 3, 7])
    assert optimum.stake(scores, "chouette").tolist() == [0, 0, 1, 2, 3, 7]  # 100 %
    assert optimum.stake(scores, "velute").tolist() == [0, 0, 0, 1, 1, 3]  # 50 %, rounded down


@pytest.mark.parametrize(("score", "items", "sirops", "expected"), [
    (0, {}, [(True, 2), (True, 1), (False, None), (False, None), (False, None), (True, 1)], 3.9658960056050),
    (-5, {}, [(True, 2), (True, None), (True, 1), (False, None), (False, None), (True, None)], 4.1962408461826),
    (25, {}, [(True, None), (True, 1), (False, None), (False, None), (False, None), (True, 1)], 2.5936598339552),
    (2, {"civet": 1}, [(True, 2), (True, 1), (True, 1), (False, None), (False, None), (True, 1)], 3.9018236582301),
    (-4, {"grelottine": 1}, [(True, 2), (True, None), (True, 1), (False, None), (False, None), (True, 1)],
     4.1525304483107),
])
def test_a_costly_bet_a_siroted_six_and_a_negative_velute_are_the_engines(
        solved: Callable[[Ruleset], SoloOptimum], score: int, items: dict[str, int],
        sirops: list[tuple[bool, int | None]], expected: float) -> None:
    # The sirops (and bets) by face, a 6 included, and the expected turns are pinned; the turn
    # played in the engine with those answers (a wrong bet costing 3, a failed sirop of a 6
    # giving a Civet unless one is held, a Velute of 2 losing 8) gives the model's value.
    optimum = solved(ODD)
    civet, grelottine = held(items)
    assert [optimum.best_sirop(score, face, civet, grelottine) for face in range(1, 7)] == sirops
    value = optimum.expected_turns(score, civet, grelottine)
    assert value == pytest.approx(expected, abs=1e-9)
    assert one_turn_in_the_engine(ODD, score, items) == pytest.approx(value, abs=1e-9)


def test_a_grelottine_held_changes_the_sirop_when_the_values_say_so() -> None:
    # No ruleset solved here has a sirop whose answer changes with a Grelottine held, so the
    # values are given: 5 turns everywhere but 0.1 at 1 with the Grelottine alone. At 0, a
    # Chouette of 1 kept (1 point) is then worth keeping with the Grelottine, and worth a sirop
    # (a sixth of Culs that win, a bet) without it.
    values = np.full((4, 40 - FLOOR), 5.0)
    values[1, 1 - FLOOR] = 0.1
    given = SoloOptimum(SMALL, floor=FLOOR, values=values)
    assert given.best_sirop(0, 1, grelottine=True) == (False, None)  # asked first: the memo is keyed by it
    assert given.best_sirop(0, 1) == given.best_sirop(0, 1, False, False) == (True, None)
    # The engine's sirop decision reads the Grelottine held from the game.
    state = GameState(SMALL, 1, dice=InjectedDice([1, 1, 3]),
                      setup={"scores": [0], "items": [{"grelottine": 1}]})
    plain = GameState(SMALL, 1, dice=InjectedDice([1, 1, 3]), setup={"scores": [0]})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solo_module, "_optimum_of", lambda rules_json: given)
        patch.setattr(solo_module, "_last", [None, None])
        answers = []
        for game in (state, plain):
            game.apply_action(Roll())
            assert game.pending is not None and game.pending.kind == "sirop"
            answers.append(optimal_action(game, game.pending))
    assert answers == [Pass(), Sirop()]


@pytest.mark.parametrize(("rules", "score", "items", "best", "expected"), [
    (NO_BET, 0, {}, Roll(), 3.5298734271076),
    (NO_BET, 2, {"civet": 1}, DeclareCivet("chouette", 2), 3.495844726224),
    (RESCORED, 0, {}, Roll(), 3.2870824849926),
    (RESCORED, 2, {"civet": 1}, DeclareCivet("chouette", 1), 3.2601689667755),
], ids=lambda value: str(value) if not isinstance(value, Ruleset) else value.name)
def test_a_sirop_without_a_bet_or_rescored_is_the_engines(solved: Callable[[Ruleset], SoloOptimum], rules: Ruleset,
                                                           score: int, items: dict[str, int], best: Action,
                                                           expected: float) -> None:
    # Without a bet the sirop has two options (keep, sirop); a Chouette-Velute siroted scores
    # its Velute again. The choice, the expected turns and the engine's turn agree.
    optimum = solved(rules)
    civet, grelottine = held(items)
    value = optimum.expected_turns(score, civet, grelottine)
    assert value == pytest.approx(expected, abs=1e-9)
    assert optimum.best_turn_start(score, civet, grelottine).action == best
    assert one_turn_in_the_engine(rules, score, items) == pytest.approx(value, abs=1e-9)


def test_a_failed_sirop_of_a_six_adds_a_civet_to_the_grelottine_held() -> None:
    # Given values: 0.1 turn with both items, 5 elsewhere but 0.5 at 36 with the Grelottine
    # alone. At 0 holding the Grelottine, a Chouette of 6 kept (36) is worth 0.5; siroted, it
    # wins a sixth of the time and otherwise gives a Civet on top of the Grelottine (0.1): sirop
    # (were the Grelottine lost with it, 5: keep).
    values = np.full((4, 40 - FLOOR), 5.0)
    values[3] = 0.1
    values[1, 36 - FLOOR] = 0.5
    given = SoloOptimum(SMALL, floor=FLOOR, values=values)
    assert given.best_sirop(0, 6, grelottine=True)[0] is True


def test_without_negative_scores_a_neant_gives_the_grelottine_from_its_minimum() -> None:
    # Given values where the Grelottine is worth much (0.1 turn against 5): rolling at 30 (F's
    # minimum here) may bring it with a Néant, at 29 it may not.
    flat = np.full((4, 40 - FLOOR), 5.0)
    low = flat.copy()
    low[1] = 0.1
    with_flat, with_low = (SoloOptimum(NO_NEGATIVE, floor=FLOOR, values=v) for v in (flat, low))
    assert with_low.roll_expected(29) == with_flat.roll_expected(29)
    assert with_low.roll_expected(30) < with_flat.roll_expected(30) - 0.5
