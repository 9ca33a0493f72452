"""Ruleset files: names and paths, the exact fractions of the stake limits, the whole error
message a table gets for a bad file, and house rules chosen by name."""

from __future__ import annotations

import errno
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

import cdc_env.rules as rules_module
from cdc_env.flow import Flow
from cdc_env.rules import RULESET_NAMES, Ruleset, RulesetError, Solo, load_ruleset

CLASSIC = Path("configs/rules/classic.yaml")
FIX = "Fix the file, or start again from a copy of configs/rules/classic.yaml."


def classic_with(**changes: Any) -> dict[str, Any]:
    data = load_ruleset("classic").to_dict()
    for dotted, value in changes.items():
        *path, key = dotted.split("__")
        section = data
        for part in path:
            section = section[part]
        section[key] = value
    return data


# ------------------------------------------------------------------ names and paths


def test_the_five_names_are_the_shipped_rulesets_even_beside_a_file_of_that_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "classic").write_text("name: not a ruleset\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert load_ruleset("classic").name == "classic"


def test_a_ruleset_file_is_loaded_by_its_path_even_without_yaml_suffix(tmp_path: Path) -> None:
    path = tmp_path / "mine"
    path.write_text(CLASSIC.read_text(encoding="utf-8").replace("  cost: 30", "  cost: 12"), encoding="utf-8")
    assert load_ruleset(path).dice_buying.cost == 12
    assert load_ruleset(str(path)).dice_buying.cost == 12


def test_a_file_given_by_path_wins_over_a_shipped_ruleset_of_the_same_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # maison is shipped but is not one of the five texts' names: a table's own file called
    # `maison` in the working folder is theirs, and is what they get.
    text = (CLASSIC.parent / "maison.yaml").read_text(encoding="utf-8")
    (tmp_path / "maison").write_text(text.replace("  cost: 30", "  cost: 12"), encoding="utf-8")
    assert load_ruleset("maison").dice_buying.cost == 30
    monkeypatch.chdir(tmp_path)
    assert load_ruleset("maison").dice_buying.cost == 12


def test_maison_is_found_by_name_as_the_others_are(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Offered by name with the five, it lost to a folder of that name in the current folder.
    (tmp_path / "maison").mkdir()
    (tmp_path / "classic").mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_ruleset("maison").name == "maison" and load_ruleset("classic").name == "classic"


def test_a_missing_ruleset_says_which_names_there_are() -> None:
    with pytest.raises(RulesetError) as error:
        load_ruleset("missing")
    assert str(error.value) == ("no ruleset 'missing': give one of basic, classic, v004, complete, solo, maison "
                                "or the path of a YAML file")
    assert RULESET_NAMES == ("basic", "classic", "v004", "complete", "solo")


def test_a_directory_is_no_ruleset(tmp_path: Path) -> None:
    with pytest.raises(RulesetError) as error:
        load_ruleset(tmp_path)
    assert str(error.value) == (f"ruleset {str(tmp_path)!r} is a directory, not a YAML file: give one of basic, "
                                "classic, v004, complete, solo, maison or the path of a ruleset's .yaml file")


def test_an_unreadable_file_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("name: x\n", encoding="utf-8")

    def refused(_: Path) -> Any:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(rules_module, "read_yaml", refused)
    with pytest.raises(RulesetError) as error:
        load_ruleset(path)
    assert str(error.value) == f"ruleset {path} cannot be read: Permission denied"


# ------------------------------------------------------------------ stake limits, exactly


@pytest.mark.parametrize(("given", "limit"), [
    ("33%", Fraction(33, 100)), (" 8 % ", Fraction(8, 100)), ("1/3", Fraction(1, 3)),
    (0.25, Fraction(1, 4)), (1, Fraction(1)), ("0.16", Fraction(16, 100)),
])
def test_a_stake_limit_is_read_exactly(given: object, limit: Fraction) -> None:
    rules = Ruleset.from_dict(classic_with(grelottine__stake_limits={"chouette": given}))
    assert rules.grelottine.stake_limits == {"chouette": limit}


def test_classics_stake_limits_are_the_rules_percentages() -> None:
    # RULES.md: classic Chouette 33 %, Velute 25 %, Cul de Chouette 16 %, Chouette-Velute 8 %.
    assert load_ruleset("classic").grelottine.stake_limits == {
        "chouette": Fraction(33, 100), "velute": Fraction(25, 100),
        "cul_de_chouette": Fraction(16, 100), "chouette_velute": Fraction(8, 100)}


@pytest.mark.parametrize(("given", "shown"), [(True, "True"), ("lots", "'lots'"), ("1/0", "'1/0'"), ([1], "[1]")])
def test_a_stake_limit_that_is_no_fraction_is_refused_by_name(given: object, shown: str) -> None:
    with pytest.raises(RulesetError) as error:
        Ruleset.from_dict(classic_with(grelottine__stake_limits={"chouette": given}))
    message = str(error.value)
    assert "  - grelottine.stake_limits.chouette: Value error, expected a fraction such as '33%' or '1/3'" in message
    assert message.endswith(f" (got {shown})\n{FIX}")


# ------------------------------------------------------------------ the whole message


def test_a_bad_file_gets_every_problem_on_its_line_and_what_to_do(tmp_path: Path) -> None:
    text = CLASSIC.read_text(encoding="utf-8")
    path = tmp_path / "mine.yaml"
    path.write_text(text.replace("  tie_window_ms: 100", "  tie_windw_ms: 100").replace("  cost: 30", "  cost: -30"),
                    encoding="utf-8")
    with pytest.raises(RulesetError) as error:
        load_ruleset(path)
    assert str(error.value) == "\n".join([
        f"ruleset {path} is not valid:",
        "  - races.tie_windw_ms: unknown key (a typo? see docs/rules.md for every key)",
        "  - dice_buying.cost: Input should be greater than or equal to 0 (got -30)",
        FIX])


def test_a_check_of_the_whole_ruleset_is_said_without_pydantics_prefix() -> None:
    data = classic_with(cap_score=400, target_score=343)
    with pytest.raises(RulesetError) as error:
        Ruleset.from_dict(data, source="mine.yaml")
    assert str(error.value) == f"ruleset mine.yaml is not valid:\n  - cap_score must be below target_score\n{FIX}"


def test_a_neant_that_gives_a_grelottine_nothing_can_use_is_refused() -> None:
    data = classic_with(grelottine__enabled=False)
    with pytest.raises(RulesetError) as error:
        Ruleset.from_dict(data, source="mine.yaml")
    assert str(error.value) == (f"ruleset mine.yaml is not valid:\n  - neant_gives_grelottine needs "
                                f"grelottine.enabled: true (or set neant_gives_grelottine: false)\n{FIX}")
    Ruleset.from_dict({**data, "neant_gives_grelottine": False}, source="mine.yaml")


@pytest.mark.parametrize(("low", "high", "players", "refusal"), [
    (1, 1, 2, "ruleset 'mine' is played by exactly 1 player, not 2"),
    (3, 3, 2, "ruleset 'mine' is played by exactly 3 players, not 2"),
    (2, 2, 1, "ruleset 'mine' is played by exactly 2 players, not 1"),
    (3, 5, 6, "ruleset 'mine' is played by 3 to 5 players, not 6"),
])
def test_a_table_size_the_ruleset_does_not_play_is_said_in_words(low: int, high: int, players: int,
                                                                  refusal: str) -> None:
    # One player is "player", more are "players"; a single size is "exactly", a span "to".
    ruleset = Ruleset.from_dict(classic_with(name="mine", min_players=low, max_players=high))
    assert ruleset.players_refusal(players) == refusal
    assert ruleset.players_refusal(low) is None
    assert ruleset.players_refusal(high) is None


def test_a_ruleset_that_is_no_mapping_is_named_at_the_top_level() -> None:
    # A damaged save whose ruleset is a string, say.
    with pytest.raises(RulesetError) as error:
        Ruleset.from_dict("classic")  # type: ignore[arg-type]
    assert str(error.value) == ("ruleset <dict> is not valid:\n  - (top level): Input should be a valid "
                                f"dictionary or instance of Ruleset (got 'classic')\n{FIX}")


def test_a_solo_section_without_ranks_gets_the_ranks_of_s() -> None:
    # solo.yaml writes S's ranks out (test_solo pins them to S's grades); a table's own file
    # that leaves them out must get the same ones.
    assert Solo().ranks == load_ruleset("solo").solo.ranks
    assert [name for _, name in Solo().ranks] == ["Légende", "Maître", "Chevalier", "Écuyer", "Paysan", "Péquenaud"]


# ------------------------------------------------------------------ house rules by name


def test_house_rules_chosen_by_name_play_at_their_defaults_and_rename_the_ruleset() -> None:
    classic = load_ruleset("classic")
    assert classic.with_house_rules([]) is classic
    chosen = classic.with_house_rules(["verdier", "civet-double"])
    assert chosen.name == "classic+verdier+civet_double"
    assert chosen.house_rules == {"verdier": {"win": 25, "loss": 5}, "civet_double": {}}
    assert classic.house_rules == {} and classic.name == "classic"
    # Everything else is the same ruleset.
    assert {**chosen.to_dict(), "name": "classic", "house_rules": {}} == {**classic.to_dict(), "house_rules": {}}
    # A rule already played is not named twice; the new one is added.
    again = chosen.with_house_rules(["verdier", "doublette"])
    assert again.name == "classic+verdier+civet_double+doublette"
    assert list(again.house_rules) == ["verdier", "civet_double", "doublette"]
    assert again.house_rules["verdier"] == {"win": 25, "loss": 5}
    # A table's own parameters stay: `--house verdier` on a ruleset with a Verdier at 40/8 set
    # it back to 25/5, under the table's own name (its champion taken for this table's).
    mine = Ruleset.from_dict({**classic.to_dict(), "name": "mytable", "house_rules": {"verdier": {"win": 40,
                                                                                                  "loss": 8}}})
    named = mine.with_house_rules(["verdier", "doublette"])
    assert named.house_rules["verdier"] == {"win": 40, "loss": 8} and named.name == "mytable+doublette"


def test_a_house_rule_chosen_by_name_is_checked_like_one_in_a_file() -> None:
    with pytest.raises(RulesetError) as error:
        load_ruleset("basic").with_house_rules(["civet_double"])
    # (No file: its last line said to fix one.)
    assert str(error.value) == ("ruleset basic with --house civet_double is not valid:\n"
                                "  - house_rules.civet_double: needs the civet switched on\n"
                                "Give --house other house rules (docs/rules.md: each rule and what it needs).")
    # The message says what the table asked for, as it was typed.
    with pytest.raises(RulesetError) as error:
        load_ruleset("classic").with_house_rules(["verdier", "nope"], source="--web")
    assert str(error.value).startswith("ruleset classic with --web verdier nope is not valid:\n  - house_rules.nope: ")


@pytest.mark.parametrize(("house_rules", "line"), [
    ({"civet_double": {"x": 1}}, "house_rules.civet_double.x: unknown parameter (its parameters: none)"),
    ({"civet_double": 3}, "house_rules.civet_double: give true, or a mapping of its parameters (it has none), not 3"),
    ({"verdier": 3}, "house_rules.verdier: give true, or a mapping of its parameters (win, loss), not 3"),
    ({"verdier": {"foo": 1}}, "house_rules.verdier.foo: unknown parameter (its parameters: win, loss)"),
    ({"verdier": {"win": "a"}}, "house_rules.verdier.win: expected int like its default 25, got 'a'"),
    # A negative loss paid the losers, a negative win charged the winners.
    ({"verdier": {"loss": -5}}, "house_rules.verdier.loss: must be 0 or more, got -5"),
    ({"verdier": {"win": -25}}, "house_rules.verdier.win: must be 0 or more, got -25"),
    ({"nope": True}, "house_rules.nope: no such house rule (known: attrape_oiseau, chante_sloubi, civet_double, "
                     "contre_sirop, cul_de_chouette_contre, doublette, flan_use, tichette, verdier); "
                     "see docs/rules.md"),
])
def test_a_house_rule_given_wrongly_is_said_in_one_line(house_rules: dict[str, Any], line: str) -> None:
    with pytest.raises(RulesetError) as error:
        Ruleset.from_dict(classic_with(house_rules=house_rules))
    assert str(error.value).splitlines()[1] == f"  - {line}"


def test_a_house_rule_at_a_moment_the_game_has_not_is_refused_and_unregistering_twice_is_harmless() -> None:
    from cdc_env.rulebook.house.registry import MOMENTS, HouseRule, register, unregister

    def nothing(*_: Any) -> Flow:
        return None
        yield

    with pytest.raises(ValueError) as error:
        HouseRule("toy", "a test", moments={"lunch": nothing, "chouettes": nothing})
    assert str(error.value) == f"house rule 'toy': no moment ['lunch']; the moments are {', '.join(MOMENTS)}"
    assert "turn_started" in MOMENTS
    unregister("never_registered")
    register(HouseRule("toy", "a test", moments={}))
    try:
        assert load_ruleset("classic").with_house_rules(["toy"]).house_rules == {"toy": {}}
    finally:
        unregister("toy")
    with pytest.raises(RulesetError, match="house_rules.toy: no such house rule"):
        load_ruleset("classic").with_house_rules(["toy"])
    assert load_ruleset("classic").with_house_rules(["verdier"]).house_rules == {"verdier": {"win": 25, "loss": 5}}
