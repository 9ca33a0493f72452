"""House rules: chosen in a ruleset's `house_rules:`, checked as they load, registered in one
line (a test's own too), and each played from its source's own numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import new_game, ruleset, score_events
from test_properties import run

from cdc_env.actions import BetOnSuccess, DeclareCivet, IllegalActionError, Pass, Roll, Shout, Sirop, action_from_json
from cdc_env.dice import SeededDice
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.game import GameState
from cdc_env.rulebook.house import REGISTRY, HouseRule, register, unregister
from cdc_env.rulebook.house.verdier import expected_gain
from cdc_env.rulebook.table import Game
from cdc_env.rules import RulesetError, load_ruleset

# ------------------------------------------------------------------ a toy house rule, from here


def neighbour_toast(game: Game, parameters: Mapping[str, Any], made: Any) -> Flow:
    """A toy rule: after a Velute, the thrower's left neighbour may drink to it and gains
    `points`."""
    outcome, _ = made
    assert isinstance(outcome, RollOutcome)
    if outcome.combination.name != "velute":
        return
    neighbour = game.seats_from(outcome.scorer)[0]
    choice = yield Decision(neighbour, "toast", (BetOnSuccess(), Pass()))
    if isinstance(choice, BetOnSuccess):
        game.change_score(neighbour, parameters["points"], "toast")


@pytest.fixture
def toy() -> Iterator[None]:
    register(HouseRule("toast", "this test", {"roll_made": neighbour_toast}, {"points": 3}))  # the one line
    yield
    unregister("toast")


def test_a_house_rule_from_a_test_file_registers_in_one_line_and_plays(toy: None) -> None:
    rules = ruleset("classic", house_rules={"toast": {"points": 7}})
    assert rules.house_rules == {"toast": {"points": 7}}
    state = new_game(rules, players=3, dice=[1, 3, 4])  # 1, 3, 4: a Velute of 4
    state.apply_action(Roll())
    while state.pending is not None and state.pending.kind != "toast":
        state.apply_action(Pass())
    assert state.pending is not None and state.pending.seat == 1
    state.apply_action(BetOnSuccess())
    assert [(e["seat"], e["points"]) for e in score_events(state, "toast")] == [(1, 7)]
    # A game with the rule saves and loads like any other.
    assert GameState.from_json(state.to_json()).log == state.log


def test_without_the_switch_the_toy_rule_never_asks(toy: None) -> None:
    state = new_game("classic", players=3, dice=[1, 3, 4])
    state.apply_action(Roll())
    kinds = []
    while state.pending is not None and not state.pending.is_chance and state.turn_number == 1:
        kinds.append(state.pending.kind)
        state.apply_action(Pass())
    assert "toast" not in kinds


# ------------------------------------------------------------------ the switches are checked


def write_ruleset(tmp_path: Path, house: str) -> Path:
    path = tmp_path / "table.yaml"
    path.write_text(f"name: table\nhouse_rules:\n{house}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("house", "message"), [
    ("  verdir: true", "house_rules.verdir: no such house rule"),
    ("  verdier: {gain: 3}", "house_rules.verdier.gain: unknown parameter"),
    ("  verdier: {win: lots}", "house_rules.verdier.win: expected int"),
    ("  verdier: 3", "house_rules.verdier: give true, or a mapping"),
])
def test_a_bad_house_rule_is_an_error_naming_the_file_and_the_key(tmp_path: Path, house: str, message: str) -> None:
    path = write_ruleset(tmp_path, house)
    with pytest.raises(RulesetError) as error:
        load_ruleset(path)
    assert str(path) in str(error.value) and message in str(error.value)


def test_a_missing_dependency_is_an_error_naming_what_is_needed(toy: None) -> None:
    register(HouseRule("toast_civet", "this test", {"roll_made": neighbour_toast}, needs=("civet",)))
    try:
        with pytest.raises(RulesetError, match=r"house_rules.toast_civet: needs the civet switched on"):
            ruleset("basic", civet={"enabled": False}, house_rules={"toast_civet": True})
        register(HouseRule("toast_twice", "this test", {"roll_made": neighbour_toast}, needs=("toast",)))
        with pytest.raises(RulesetError, match=r"house_rules.toast_twice: needs the house rule 'toast'"):
            ruleset("classic", house_rules={"toast_twice": True})
        assert ruleset("classic", house_rules={"toast": True, "toast_twice": True}).house_rules
    finally:
        unregister("toast_civet")
        unregister("toast_twice")


def test_a_ruleset_without_house_rules_saves_as_before() -> None:
    assert "house_rules" not in load_ruleset("complete").to_dict()
    assert "verdier" in REGISTRY


# ------------------------------------------------------------------ Verdier (Kize, level 3)


def verdier_game(cul: int) -> GameState:
    """Kize's spec: Alban (seat 0) throws 2, 4; Alban and Delphin (seat 1) bet."""
    rules = ruleset("classic", house_rules={"verdier": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=[2, 4, cul])
    state.apply_action(Roll())
    for seat in (0, 1):
        assert state.pending is not None and state.pending.kind == "verdier_bet" and state.pending.seat == seat
        state.apply_action(BetOnSuccess())
    return state


def test_verdier_won_pays_each_bettor_25() -> None:
    state = verdier_game(cul=6)
    assert [(e["seat"], e["points"]) for e in score_events(state, "verdier_won")] == [(0, 25), (1, 25)]


def test_verdier_lost_costs_each_bettor_5() -> None:
    state = verdier_game(cul=5)
    assert [(e["seat"], e["points"]) for e in score_events(state, "verdier_lost")] == [(0, -5), (1, -5)]


def test_verdier_the_throw_scores_as_usual() -> None:
    """Kize: 2, 4 then a 4 is Alban's Chouette of 4, 16 points; the bets are lost."""
    state = verdier_game(cul=4)
    assert state.pending is not None and state.pending.kind == "sirop"
    state.apply_action(Pass())  # no sirop: the Chouette stands
    assert [(e["seat"], e["points"]) for e in score_events(state, "chouette")] == [(0, 16)]
    assert state.scores == [16 - 5, -5]


@pytest.mark.parametrize("chouettes", [(2, 2), (1, 4), (3, 5), (6, 5)])
def test_no_verdier_without_two_different_even_chouettes(chouettes: tuple[int, int]) -> None:
    rules = ruleset("classic", house_rules={"verdier": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=[*chouettes, 3])
    state.apply_action(Roll())
    assert state.pending is None or state.pending.kind != "verdier_bet"


def test_the_verdier_bet_is_fair_with_kizes_numbers() -> None:
    """One cul in six makes 2, 4, 6: 25/6 − 5·5/6 = 0."""
    assert expected_gain((2, 4), {"win": 25, "loss": 5}) == 0
    assert expected_gain((2, 4), {"win": 31, "loss": 5}) == 1
    assert expected_gain((2, 2), {"win": 31, "loss": 5}) == 0


# ------------------------------------------------------------------ maison: every house rule on


@pytest.mark.parametrize("players", range(2, 9))
def test_maison_games_end_save_load_and_refuse_illegal_actions(players: int) -> None:
    """The property tests' games (random choices part of the time, a sensible bot otherwise) on
    `maison` at every table size: they end with scores equal to their events, a save taken
    mid-game loads and plays on to the same end, and an action not offered is refused."""
    seed = 1000 + players
    full = run("maison", players, seed, 0.25)
    assert full.is_over
    totals = [0] * players
    for event in full.log:
        if event["type"] == "score":
            totals[event["seat"]] += event["delta"]
    assert totals == full.scores
    decisions = full.decisions()
    state = GameState(full.rules, players, dice=SeededDice(seed))
    refused = 0
    for index, entry in enumerate(decisions):
        if index == len(decisions) // 2:
            state = GameState.from_json(json.loads(json.dumps(state.to_json())))
        pending = state.pending
        assert pending is not None
        strays = [a for a in STRAYS if not pending.allows(a)] if index % 25 == 0 else []
        if strays:
            before = (state.snapshot(), len(state.history), len(state.log))
            with pytest.raises(IllegalActionError):
                state.apply_action(strays[0], seat=pending.seat)
            assert (state.snapshot(), len(state.history), len(state.log)) == before
            refused += 1
        state.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
    assert state.log == full.log and refused > 0


STRAYS = (BetOnSuccess(), Roll(), Pass())


def test_maison_plays_verdier_bets() -> None:
    """Across the table sizes, the Verdier is offered and settled (the sensible bots pass it,
    the random choices take it)."""
    reasons = {e["reason"] for players in (2, 5, 8) for e in run("maison", players, 7 + players, 0.25).log
               if e["type"] == "score"}
    assert {"verdier_won", "verdier_lost"} & reasons


# ------------------------------------------------------------------ Civet doublé (Kize, level 2)


def civet_game(dice: list[int], joiners: tuple[int, ...]) -> GameState:
    """Kize's spec: Alban (seat 0) declares a Civet of 102 on a Velute; Delphin (1) and Jules
    (2) hold a Civet each and may join."""
    rules = ruleset("classic", house_rules={"civet_double": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=3, dice=dice, scores=[102, 0, 0], items=[{"civet": 1}] * 3)
    state.apply_action(DeclareCivet("velute", 102))
    for seat in (1, 2):
        assert state.pending is not None and state.pending.kind == "civet_double" and state.pending.seat == seat
        state.apply_action(BetOnSuccess() if seat in joiners else Pass())
    assert [e["seat"] for e in state.log if e["type"] == "civet_doubled"] == list(joiners)
    return state  # the declared Civet's roll has fallen


def test_civet_doubled_by_one_joiner_wins_twice_the_stake() -> None:
    state = civet_game([2, 4, 6], joiners=(1,))  # 2, 4, 6: a Velute
    assert [(e["seat"], e["points"]) for e in score_events(state, "civet_made")] == [(0, 204)]
    assert [h["civet"] for h in state.items] == [0, 0, 1]  # the joiner spent their Civet


def test_civet_doubled_by_two_joiners_loses_four_times_the_stake() -> None:
    state = civet_game([2, 4, 4], joiners=(1, 2))  # 2, 4, 4: a Chouette, no Velute
    state.apply_action(Pass())  # no sirop
    assert [(e["seat"], e["points"]) for e in score_events(state, "civet_failed")] == [(0, -408)]
    assert [h["civet"] for h in state.items] == [0, 0, 0]
    assert not score_events(state) or {e["seat"] for e in score_events(state)} == {0}  # joiners: no points


def test_civet_double_needs_the_civet() -> None:
    with pytest.raises(RulesetError, match="house_rules.civet_double: needs the civet switched on"):
        ruleset("classic", civet={"enabled": False}, house_rules={"civet_double": True})


# ------------------------------------------------------------------ Tichette and Robobrol (Kize, level 5)


def tichette_game(dice: list[int], scores: list[int], claims: dict[int, str]) -> GameState:
    """Seat 0 throws `dice`; the seats in `claims` shout their phrase (in seat order, 100 ms
    apart), the others stay silent."""
    rules = ruleset("classic", house_rules={"tichette": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=len(scores), dice=dice, scores=scores)
    state.apply_action(Roll())
    for _ in scores:
        pending = state.pending
        assert pending is not None and pending.kind == "race" and pending.reason == "tichette"
        seat = pending.seat
        assert seat is not None
        state.apply_action(Shout(claims[seat], 100.0 * seat) if seat in claims else Pass())
    return state


def test_one_claimant_wins_the_sum_and_the_chouette() -> None:
    """Kize: 1, 1, 3 claimed by Alban alone: 5 + the Chouette of 1 = 6."""
    state = tichette_game([1, 1, 3], [1, 0], {0: "tichette"})
    assert [(e["seat"], e["points"]) for e in score_events(state, "tichette_won")] == [(0, 6)]


def test_several_claimants_the_best_score_loses_n_times_the_value() -> None:
    """Kize: 4, 2, 1 claimed by Alban (1), Delphin (100) and Anaïs (50): Delphin loses 3 × 7."""
    state = tichette_game([4, 2, 1], [1, 100, 50, 0], {0: "tichette", 1: "tichette", 2: "tichette"})
    assert [(e["seat"], e["points"]) for e in score_events(state, "tichette_lost")] == [(1, -21)]


def test_claimants_tied_for_the_best_score_each_lose() -> None:
    """Kize: 6, 6, 5 (17 + the Chouette of 6 = 53) claimed by four, three of them at 100: −212 each."""
    state = tichette_game([6, 6, 5], [100, 100, 100, 50, 0],
                          {0: "tichette", 1: "tichette", 2: "tichette", 3: "tichette"})
    assert [(e["seat"], e["points"]) for e in score_events(state, "tichette_lost")] == [
        (0, -212), (1, -212), (2, -212)]


def test_robobrol_claimed_alone_rethrows_for_the_claimant() -> None:
    """Kize: 1, 1, 1 claimed « Robobrol ! » by Jules alone: 3 + 50 = 53, then his rethrow 1, 4, 5
    scores his Velute of 5, 50."""
    state = tichette_game([1, 1, 1, 1, 4, 5], [0, 100], {1: "robobrol"})
    assert [(e["seat"], e["points"]) for e in score_events(state, "tichette_won")] == [(1, 53)]
    assert [(e["seat"], e["points"]) for e in score_events(state, "velute")] == [(1, 50)]
    assert [e["seat"] for e in state.log if e["type"] == "robobrol"] == [1]


def test_robobrol_claimed_by_two_is_a_lost_tichette_and_no_rethrow() -> None:
    """Kize: Jules (100) and Lou (10) claim 1, 1, 1: Jules loses 2 × 53."""
    state = tichette_game([1, 1, 1], [0, 100, 10], {1: "robobrol", 2: "tichette"})
    assert [(e["seat"], e["points"]) for e in score_events(state, "tichette_lost")] == [(1, -106)]
    assert not [e for e in state.log if e["type"] == "robobrol"]


def test_the_artichette_is_no_tichette() -> None:
    rules = ruleset("classic", house_rules={"tichette": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=[3, 4, 4])
    state.apply_action(Roll())
    assert state.pending is None or state.pending.reason != "tichette"


# ------------------------------------------------------------------ the environments' spaces


def test_house_rules_grow_the_spaces_of_their_tables_only() -> None:
    from cdc_env.env import raw_env
    from cdc_env.spaces import ActionCodec, ObservationEncoder

    plain, maison = raw_env(ruleset="complete", players=4), raw_env(ruleset="maison", players=4)
    assert plain.codec.size == ActionCodec(4).size
    assert plain.encoder.size == ObservationEncoder(load_ruleset("classic"), 4, 200).size
    # Tichette, Robobrol, Contre-Sirop and Cul de Chouette shouts; the verdier_bet,
    # civet_double, attrape_oiseau and flan_use decisions; the tichette, contre_sirop and
    # cul_de_chouette_contre races; then the Verdier's bettors, one value per seat.
    assert maison.codec.size == plain.codec.size + 4
    assert maison.encoder.size == plain.encoder.size + 7 + 4
    shout = maison.codec.blocks["shout"]
    assert {"tichette", "robobrol", "j_apprecie_les_fruits_au_sirop"} <= set(shout.choices)


# ------------------------------------------------------------------ Contre-Sirop (the 2010 PDF)


def contre_sirop_game(face: int, onsets: dict[int, float]) -> GameState:
    """Seat 0 throws a Chouette of `face`, sirops and fails; seats 1 and 2 shout « J'apprécie les
    fruits au sirop ! » at `onsets` (or stay silent)."""
    rules = ruleset("classic", house_rules={"contre_sirop": True}, dice_buying={"enabled": False})
    odd = 5 if face != 5 else 1  # no Velute, no Suite
    state = new_game(rules, players=3, dice=[face, face, odd, odd])  # the sirop die misses too
    state.apply_action(Roll())
    state.apply_action(Sirop())
    while state.pending is not None and state.pending.kind == "sirop_bet":
        state.apply_action(Pass())
    for seat in (1, 2):
        assert state.pending is not None and state.pending.reason == "contre_sirop" and state.pending.seat == seat
        phrase = "j_apprecie_les_fruits_au_sirop"
        state.apply_action(Shout(phrase, onsets[seat]) if seat in onsets else Pass())
    return state


@pytest.mark.parametrize(("face", "points"), [(1, 10), (2, 12), (3, 14), (4, 16), (5, 18), (6, 20)])
def test_the_first_to_shout_wins_a_fifth_of_the_cul_de_chouette_tried(face: int, points: int) -> None:
    state = contre_sirop_game(face, {1: 900.0, 2: 400.0})
    assert [(e["seat"], e["points"]) for e in score_events(state, "contre_sirop")] == [(2, points)]


def test_a_tied_contre_sirop_wins_nothing() -> None:
    state = contre_sirop_game(3, {1: 400.0, 2: 450.0})  # within the 100 ms tie window
    assert not score_events(state, "contre_sirop")


# ------------------------------------------------------------------ Attrape-oiseau (Kize, level 1)


def attrape_oiseau_game(sirop_die: int) -> GameState:
    """Kize's spec: Alban (seat 0) throws a Chouette of 3 and sirops; Delphin (seat 1) catches."""
    rules = ruleset("classic", house_rules={"attrape_oiseau": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=[3, 3, 5, sirop_die])
    state.apply_action(Roll())
    state.apply_action(Sirop())
    assert state.pending is not None and state.pending.kind == "attrape_oiseau" and state.pending.seat == 1
    state.apply_action(BetOnSuccess())
    while state.pending is not None and state.pending.kind == "sirop_bet":
        state.apply_action(Pass())
    return state


def test_a_caught_sirop_lost_is_the_catchers_and_the_thrower_keeps_the_chouette() -> None:
    state = attrape_oiseau_game(sirop_die=4)
    assert [(e["seat"], e["points"]) for e in score_events(state, "sirop_failure")] == [(1, -9)]
    assert [(e["seat"], e["points"]) for e in score_events(state, "chouette")] == [(0, 9)]


def test_a_caught_sirop_won_is_the_catchers() -> None:
    state = attrape_oiseau_game(sirop_die=3)
    assert [(e["seat"], e["points"]) for e in score_events(state, "sirop_success")] == [(1, 70)]
    assert [(e["seat"], e["points"]) for e in score_events(state, "chouette")] == [(0, 9)]


def test_attrape_oiseau_needs_the_sirop() -> None:
    with pytest.raises(RulesetError, match="house_rules.attrape_oiseau: needs the sirotage switched on"):
        ruleset("classic", sirotage={"enabled": False}, house_rules={"attrape_oiseau": True})


# ------------------------------------------------------------------ Cul de Chouette contré (Kize)


def contre_game(onsets: dict[int, float]) -> GameState:
    """Kize's spec: Alban (seat 0) throws a Cul de Chouette of 2 (60)."""
    rules = ruleset("classic", house_rules={"cul_de_chouette_contre": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=[2, 2, 2])
    state.apply_action(Roll())
    for seat in (0, 1):
        assert state.pending is not None and state.pending.reason == "cul_de_chouette_contre"
        state.apply_action(Shout("cul_de_chouette", onsets[seat]) if seat in onsets else Pass())
    return state


def test_a_cul_de_chouette_claimed_first_by_its_thrower_is_all_theirs() -> None:
    state = contre_game({0: 300.0, 1: 800.0})
    assert state.scores == [60, 0]


def test_a_cul_de_chouette_contre_splits_three_fifths_and_two_fifths() -> None:
    state = contre_game({0: 800.0, 1: 300.0})
    assert state.scores == [36, 24]
    assert [(e["seat"], e["points"]) for e in score_events(state, "cul_de_chouette_contre")] == [(0, -24), (1, 24)]


# ------------------------------------------------------------------ Doublette (Kize's team mode)


def test_doublette_seats_i_with_i_plus_half_and_the_team_sum_wins() -> None:
    """Seat 1 (200) and its partner seat 3 (100) make 300; seat 1's Cul de Chouette of 5 (90)
    lifts the team to 390 ≥ 343: seat 1 and seat 3 win, though seat 1 alone has 290."""
    rules = ruleset("classic", house_rules={"doublette": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=4, dice=[5, 5, 5], first=1, scores=[0, 200, 300, 100])
    assert state.teams == {0: (0, 2), 1: (1, 3), 2: (0, 2), 3: (1, 3)}
    state.apply_action(Roll())
    assert state.is_over and state.winner == 1
    win = state.log[-1]
    assert win["type"] == "win" and win["team"] == [1, 3] and win["team_score"] == 390
    from cdc_env.env import WinLoss
    assert list(WinLoss()(state, False) or []) == [-1.0, 1.0, -1.0, 1.0]


@pytest.mark.parametrize("players", [2, 3, 5, 7])
def test_doublette_needs_an_even_table_of_4_to_8(players: int) -> None:
    from cdc_env.game import GameError

    rules = ruleset("classic", house_rules={"doublette": True})
    with pytest.raises(GameError, match="even number of players, 4 to 8"):
        GameState(rules, players)


# ------------------------------------------------------------------ the Flan's use (aribautg)


def flanned_game(dice: list[int], scores: list[int] | None = None) -> GameState:
    """Seat 1 holds a Flan and flans seat 0's throw."""
    rules = ruleset("complete", house_rules={"flan_use": True}, dice_buying={"enabled": False})
    state = new_game(rules, players=2, dice=dice, scores=scores or [100, 100], items=[{}, {"flan": 1}])
    assert state.pending is not None and state.pending.kind == "flan_use" and state.pending.seat == 1
    state.apply_action(BetOnSuccess())  # « Tatan elle fait des Flans ! »
    state.apply_action(Roll())
    return state


def test_a_flanned_velute_costs_its_points() -> None:
    state = flanned_game([1, 3, 4])  # a Velute of 4: 32
    assert state.scores[0] == 100 - 32 and state.items[1]["flan"] == 0


def test_a_flanned_cul_de_chouette_never_wins() -> None:
    state = flanned_game([6, 6, 6], scores=[300, 0])  # 100 would win; flanned, it costs 100
    assert not state.is_over and state.scores[0] == 200


def test_a_flanned_neant_gives_the_flan_back() -> None:
    state = flanned_game([1, 3, 6])  # a Néant
    assert state.scores[0] == 100 and state.items[1]["flan"] == 1


def test_flan_use_needs_the_flan() -> None:
    with pytest.raises(RulesetError, match="house_rules.flan_use: needs the flan switched on"):
        ruleset("classic", house_rules={"flan_use": True})
