"""The combination table, checked against the rules' own numbers."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from fractions import Fraction

import pytest

from cdc_env.__main__ import main
from cdc_env.combinations import classify
from cdc_env.rules import load_ruleset

ALL_ROLLS = list(itertools.product(range(1, 7), repeat=3))


@pytest.mark.parametrize("name", ["basic", "classic", "v004"])
def test_every_roll_is_classified_and_order_never_matters(name: str) -> None:
    rules = load_ruleset(name)
    for dice in ALL_ROLLS:
        combination = classify(dice, rules)
        for permutation in itertools.permutations(dice):
            assert classify(permutation, rules) == combination


@pytest.mark.parametrize(
    ("dice", "name", "value"),
    [
        ((1, 1, 1), "cul_de_chouette", 50),
        ((4, 4, 4), "cul_de_chouette", 80),
        ((6, 6, 6), "cul_de_chouette", 100),
        ((1, 1, 2), "chouette_velute", 8),
        ((2, 4, 2), "chouette_velute", 32),
        ((6, 3, 3), "chouette_velute", 72),
        ((1, 3, 4), "velute", 32),
        ((2, 3, 5), "velute", 50),
        ((6, 2, 4), "velute", 72),
        ((1, 5, 6), "velute", 72),
        ((1, 4, 5), "velute", 50),
        ((5, 5, 2), "chouette", 25),
        ((1, 1, 3), "chouette", 1),
        ((6, 6, 1), "chouette", 36),
        ((2, 3, 4), "suite", 0),
        ((4, 6, 5), "suite", 0),
        ((4, 2, 1), "soufflette", 0),
        ((1, 3, 6), "neant", 0),
        ((2, 5, 6), "neant", 0),
        ((1, 4, 6), "neant", 0),
    ],
)
def test_classic_combinations(dice: tuple[int, int, int], name: str, value: int) -> None:
    combination = classify(dice, load_ruleset("classic"))
    assert (combination.name, combination.value) == (name, value)


def test_one_two_three_is_a_velute_and_the_suite_race_in_classic() -> None:
    combination = classify((3, 1, 2), load_ruleset("classic"))
    assert combination.name == "velute"
    assert combination.value == 18
    assert combination.races == ("suite",)


def test_basic_has_no_suite_nor_soufflette() -> None:
    rules = load_ruleset("basic")
    assert classify((1, 2, 3), rules).races == ()
    assert classify((1, 2, 3), rules).name == "velute"
    assert classify((3, 4, 5), rules).name == "neant"
    assert classify((1, 2, 4), rules).name == "neant"


def test_chouette_velute_is_neither_chouette_nor_velute_and_races() -> None:
    combination = classify((1, 1, 2), load_ruleset("classic"))
    assert combination.races == ("chouette_velute",)


@pytest.mark.parametrize("name", ["basic", "classic"])
def test_expected_points_per_roll_is_1291_over_72(name: str) -> None:
    rules = load_ruleset(name)
    total = sum(classify(dice, rules).value for dice in ALL_ROLLS)
    assert Fraction(total, 216) == Fraction(1291, 72)


@pytest.mark.parametrize("dice", [(0, 1, 2), (1, 2, 7), (7, 7, 7), (1, 2), (1, 2, 3, 4)])
def test_bad_dice_are_refused(dice: tuple[int, ...]) -> None:
    # Three dice of six faces: a 0, a 7, two dice or four are no throw.
    with pytest.raises(ValueError, match="three dice"):
        classify(dice, load_ruleset("classic"))


@pytest.mark.parametrize(
    ("dice", "name", "face"),
    [
        ((5, 5, 5), "cul_de_chouette", 5),
        ((2, 2, 4), "chouette_velute", 2),
        ((1, 1, 2), "chouette_velute", 1),
        ((3, 2, 5), "velute", 5),
        ((4, 4, 1), "chouette", 4),
        ((1, 6, 6), "chouette", 6),
        ((3, 4, 5), "suite", 5),
        ((1, 3, 6), "neant", 0),
    ],
)
def test_each_combination_names_its_face(dice: tuple[int, int, int], name: str, face: int) -> None:
    # The face that names a combination: the triple's (Cul de Chouette de 5), the pair's
    # (Chouette de 4, whichever end of the throw the pair is), the largest die (Velute de 5);
    # a Néant names none.
    combination = classify(dice, load_ruleset("classic"))
    assert (combination.name, combination.face) == (name, face)


def test_rules_table_cli_prints_216_rolls(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules-table", "--ruleset", "classic"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert len(table) == 216
    by_dice = {tuple(row["dice"]): row for row in table}
    assert by_dice[(1, 2, 3)] == {"dice": [1, 2, 3], "combination": "velute", "value": 18, "races": ["suite"]}
    assert by_dice[(2, 2, 4)]["races"] == ["chouette_velute"]
    assert {row["combination"] for row in table} == {
        "cul_de_chouette", "chouette_velute", "velute", "chouette", "suite", "soufflette", "neant"}
    assert [row["dice"] for row in table] == [list(d) for d in ALL_ROLLS]


def test_rules_table_cli_names_a_bad_ruleset() -> None:
    result = subprocess.run([sys.executable, "-m", "cdc_env", "rules-table", "--ruleset", "nope"],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "no ruleset 'nope'" in result.stderr
