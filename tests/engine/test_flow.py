"""The moments of a game by hand (cdc_env/flow.py): what a decision allows and lists, how it
describes itself, and the table's saved form field by field."""

from __future__ import annotations

import itertools

from cdc_env.actions import ChallengeGrelottine, DeclareCivet, Dice, Pass, Roll, Shout
from cdc_env.flow import Decision, Table


def test_the_dice_list_every_face_of_every_die() -> None:
    two = Decision(None, "chance", count=2, sides=6, reason="chouettes")
    assert two.legal_actions() == [Dice((a, b)) for a, b in itertools.product(range(1, 7), repeat=2)]
    assert Decision(None, "chance", count=1, sides=3).legal_actions() == [Dice((1,)), Dice((2,)), Dice((3,))]
    assert two.allows(Dice((6, 1))) and not two.allows(Dice((7, 1))) and not two.allows(Dice((1,)))
    assert two.describe() == "the dice fall: 2 die(s) of 6 for chouettes"


def civet_decision() -> Decision:
    return Decision(0, "turn_start", (Roll(),), staked=DeclareCivet,
                    stakes=(("velute", range(1, 3)), ("chouette", range(5, 6))))


def test_a_staked_choice_lists_each_stake_after_the_options() -> None:
    assert civet_decision().legal_actions() == [
        Roll(), DeclareCivet("velute", 1), DeclareCivet("velute", 2), DeclareCivet("chouette", 5)]
    assert Decision(0, "turn_start", (Roll(),)).legal_actions() == [Roll()]


def test_a_staked_choice_allows_a_stake_of_its_own_combination_and_type_only() -> None:
    civet = civet_decision()
    assert civet.allows(DeclareCivet("velute", 2)) and civet.allows(DeclareCivet("chouette", 5))
    assert not civet.allows(DeclareCivet("velute", 3))  # not a stake of the Velute
    assert not civet.allows(DeclareCivet("chouette", 1))  # the Velute's stake, not the Chouette's
    assert not civet.allows(ChallengeGrelottine("velute", 1))  # a staked action of another type
    assert civet.allows(Roll()) and not civet.allows(Pass())


def test_a_shout_is_allowed_by_its_phrase_with_a_valid_onset() -> None:
    race = Decision(1, "race", (Pass(), Shout("tichette")), reason="tichette", answers=("tichette",))
    assert race.allows(Shout("tichette", 0.0)) and race.allows(Shout("tichette", 250))
    assert not race.allows(Shout("tichette", -1.0)) and not race.allows(Shout("robobrol", 250))


def test_a_decision_describes_itself_in_its_own_words() -> None:
    assert Decision(2, "race", reason="tichette").describe() == "seat 2 must shout, or stay silent [tichette]"
    assert Decision(0, "sirop").describe() == "seat 0 must sirop the odd die, or keep the Chouette"
    # A house rule's decision, in the rule's words; a kind nobody knows, by its name.
    assert Decision(1, "flan_use").describe() == (
        "seat 1 must flan the thrower (« Tatan elle fait des Flans ! »): their points are inverted")
    assert Decision(1, "mystery").describe() == "seat 1 must mystery"


def test_the_table_saves_every_field_and_the_house_only_when_used() -> None:
    table = Table(dice=(2, 4), combination="neant", thrower=1, buyer=0, civet={"seat": 1},
                  challenge={"by": 0}, soufflette={"throw": 2}, sirop_bets={1: 3}, success_bets=[0, 2],
                  race="tichette", race_shouts={2: 300.0}, race_answers={2: ("tichette", "robobrol")},
                  sum_bets={0: 12}, house={"verdier_bets": [1]})
    assert table.to_json() == {
        "dice": [2, 4], "combination": "neant", "thrower": 1, "buyer": 0, "civet": {"seat": 1},
        "challenge": {"by": 0}, "soufflette": {"throw": 2}, "sirop_bets": {"1": 3}, "success_bets": [0, 2],
        "race": "tichette", "race_shouts": {"2": 300.0}, "race_answers": {"2": ["tichette", "robobrol"]},
        "sum_bets": {"0": 12}, "house": {"verdier_bets": [1]}}
    assert Table().to_json() == {
        "dice": [], "combination": "", "thrower": None, "buyer": None, "civet": None, "challenge": None,
        "soufflette": None, "sirop_bets": {}, "success_bets": [], "race": "", "race_shouts": {},
        "race_answers": {}, "sum_bets": {}}
