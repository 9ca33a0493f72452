"""The turn itself and the tools every rule uses (cdc_env/game.py), by hand: the log of a turn
event by event, the target reached exactly, what the cap does to a gain and says of it, items
given once and spent, and a starting position that is refused with its reason."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import PASS, ROLL, new_game, play, ruleset, score_events

from cdc_env.actions import BetSum, BuyCul, DeclareCivet, Dice, IllegalActionError, Roll, Shout, UseGrelottine
from cdc_env.dice import InjectedDice
from cdc_env.game import GameError, GameLoadError, GameState, JoinRefused
from cdc_env.rules import Ruleset, load_ruleset


def test_a_turn_is_logged_die_by_die_with_who_threw_and_what_it_made() -> None:
    # classic, 2 seats: each draws a die for the first player (1 and 6: seat 0 starts), then
    # seat 0 throws 5,5 and the cul 2: a Chouette of 5, 25 points; no sirop.
    state = new_game("classic", 2, dice=[5, 5, 2])
    play(state, ROLL, PASS, PASS)
    assert state.log == [
        {"type": "dice", "turn": 0, "reason": "first_player", "seat": 0, "values": [1]},
        {"type": "dice", "turn": 0, "reason": "first_player", "seat": 1, "values": [6]},
        {"type": "first_player", "turn": 0, "seat": 0},
        {"type": "turn_start", "turn": 1, "seat": 0},
        {"type": "dice", "turn": 1, "reason": "chouettes", "seat": 0, "values": [5, 5]},
        {"type": "dice", "turn": 1, "reason": "cul", "seat": 0, "values": [2]},
        {"type": "combination", "turn": 1, "seat": 0, "dice": [5, 5, 2], "combination": "chouette",
         "value": 25, "races": []},
        {"type": "score", "turn": 1, "seat": 0, "points": 25, "delta": 25, "score": 25, "reason": "chouette",
         "capped": False},
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]
    assert state.snapshot() == {
        "scores": [25, 0], "items": [{"grelottine": 0, "civet": 0, "boucliette": 1, "flan": 0}] * 2,
        "turn_seat": 1, "turn_number": 2, "first_player": 0, "winner": None,
        "table": state.table.to_json(), "log_length": 9}
    assert state.table.thrower == 1 and state.current_seat == 1


def test_the_lowest_die_starts_and_the_tied_lowest_throw_again() -> None:
    # 3 seats throw 2, 2, 5: seats 0 and 1 tie lowest and throw again, 4 and 3: seat 1 starts.
    state = GameState(load_ruleset("classic"), 3)
    for die in (2, 2, 5, 4, 3):
        assert state.pending is not None and state.pending.is_chance
        assert (state.pending.count, state.pending.sides, state.pending.reason) == (1, 6, "first_player")
        state.apply_action(Dice((die,)))
    assert [(e["seat"], e["values"]) for e in state.log if e["type"] == "dice"] == [
        (0, [2]), (1, [2]), (2, [5]), (0, [4]), (1, [3])]
    assert state.log[-2:] == [{"type": "first_player", "turn": 0, "seat": 1},
                              {"type": "turn_start", "turn": 1, "seat": 1}]
    assert state.first_player == 1 and state.current_seat == 1


def test_a_bought_cul_is_thrown_and_scored_by_the_buyer() -> None:
    state = new_game("classic", 3, dice=[4, 4, 4])
    play(state, ROLL, PASS, BuyCul())
    dice = [(e["reason"], e["seat"]) for e in state.log if e["type"] == "dice" and e["turn"] == 1]
    assert dice == [("chouettes", 0), ("cul", 2)]
    shown = [e for e in state.log if e["type"] == "combination"]
    assert [(e["seat"], e["combination"], e["value"]) for e in shown] == [(2, "cul_de_chouette", 80)]


@pytest.mark.parametrize(("start", "wins"), [(243, True), (242, False)])
def test_reaching_343_exactly_on_ones_own_dice_wins(start: int, wins: bool) -> None:
    # RULES.md: "Reaching 343 or more on one's own turn ... wins at once". 243 + a Cul de
    # Chouette of 6 (100) is 343 exactly; one point short goes on.
    state = new_game("classic", 2, dice=[6, 6, 6], scores=[start, 0])
    play(state, ROLL, PASS)
    assert state.scores[0] == start + 100
    assert state.is_over is wins
    assert (state.winner == 0) is wins
    if wins:
        assert state.log[-1] == {"type": "win", "turn": 1, "seat": 0, "score": 343}
    else:
        assert state.current_seat == 1


def test_a_gain_held_by_the_cap_says_so_and_a_cost_is_not_capped() -> None:
    # Seat 1 at 320 buys the cul (30) and makes a Cul de Chouette of 6: 100 points from
    # bought dice stop at 332 (RULES.md: bought dice are capped).
    state = new_game("classic", 2, dice=[6, 6, 6], scores=[0, 320])
    play(state, ROLL, BuyCul())
    cost, gain = [e for e in score_events(state) if e["seat"] == 1]
    assert {k: cost[k] for k in ("seat", "points", "delta", "score", "capped")} == {
        "seat": 1, "points": -30, "delta": -30, "score": 290, "capped": False}
    assert {k: gain[k] for k in ("seat", "points", "delta", "score", "capped")} == {
        "seat": 1, "points": 100, "delta": 42, "score": 332, "capped": True}
    assert not state.is_over


def test_a_grelottine_is_held_once_and_a_civet_spent_is_logged() -> None:
    # A Néant gives the thrower the Grelottine; a second Néant gives no second one.
    state = new_game("classic", 2, dice=[1, 3, 6, 2, 2, 5, 1, 3, 6])
    play(state, ROLL, PASS, ROLL, PASS, PASS, ROLL, PASS)
    given = [e for e in state.log if e["type"] == "item"]
    assert given == [{"type": "item", "turn": 1, "seat": 0, "item": "grelottine", "change": 1, "reason": "neant"}]
    assert state.items[0]["grelottine"] == 1
    # The Civet declared is spent at once.
    state = new_game("classic", 2, dice=[2, 4, 6], items=[{"civet": 1}, {}], scores=[200, 0])
    play(state, DeclareCivet("velute", 80))
    spent = [e for e in state.log if e["type"] == "item"]
    assert spent[0] == {"type": "item", "turn": 1, "seat": 0, "item": "civet", "change": -1,
                        "reason": "civet_declared"}
    assert state.items[0]["civet"] == 0


@pytest.mark.parametrize(("setup", "message"), [
    ({"scores": [0, 0], "dice": 3}, "setup takes only 'scores' and 'items'"),
    ([("scores", [0, 0])], "setup takes only 'scores' and 'items'"),
    ({"scores": [0]}, "setup scores must be 2 whole numbers, got [0]"),
    ({"scores": [0, 1.5]}, "setup scores must be 2 whole numbers, got [0, 1.5]"),
    ({"items": [{}]}, "setup items must give one mapping per seat (2)"),
    # A list per seat was an AttributeError.
    ({"items": [[], []]}, "setup items must give one mapping per seat (2), such as {'civet': 1}, got []"),
    ({"items": [{"civet": 2}, {}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'civet': 2}"),
    ({"items": [{}, {"jarret": 1}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'jarret': 1}"),
    # True and 1.0 equal 1, and went into the saved game as they came.
    ({"items": [{"civet": True}, {}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'civet': True}"),
    ({"items": [{}, {"boucliette": 1.0}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'boucliette': 1.0}"),
    # classic has no Flan: an item nothing could use.
    ({"items": [{"flan": 1}, {}]}, "setup items: this ruleset (classic) does not play flan, so nobody can hold one; "
                                   "leave it out"),
    # Each was a TypeError from len() or from the game's own reading of them.
    ({"scores": None}, "setup scores must be 2 whole numbers, got None"),
    ({"scores": 5}, "setup scores must be 2 whole numbers, got 5"),
    ({"items": None}, "setup items must give one mapping per seat (2)"),
])
def test_a_starting_position_that_cannot_be_is_refused_with_its_reason(setup: object, message: str) -> None:
    with pytest.raises(GameError) as error:
        GameState(load_ruleset("classic"), 2, setup=setup)  # type: ignore[arg-type]
    assert str(error.value) == message


def test_items_of_rules_a_ruleset_does_not_play_are_refused_and_held_at_none_allowed() -> None:
    with pytest.raises(GameError, match=r"this ruleset \(basic\) does not play civet or grelottine"):
        GameState(load_ruleset("basic"), 2, setup={"items": [{"grelottine": 1, "civet": 1}, {}]})
    # Held at 0, an item the ruleset does not play says nothing that could be wrong.
    assert GameState(load_ruleset("basic"), 2, setup={"items": [{"civet": 0}, {}]}).items[0]["civet"] == 0
    assert GameState(load_ruleset("complete"), 2, setup={"items": [{"flan": 1}, {}]}).items[0]["flan"] == 1


def test_a_starting_position_is_the_games_own_copy() -> None:
    setup: dict[str, Any] = {"scores": [100, 7], "items": [{"civet": 1}, {"grelottine": 1, "civet": 0}]}
    state = GameState(load_ruleset("classic"), 2, setup=setup)
    assert state.scores == [100, 7]
    assert state.items == [{"grelottine": 0, "civet": 1, "boucliette": 1, "flan": 0},
                           {"grelottine": 1, "civet": 0, "boucliette": 1, "flan": 0}]
    setup["scores"][0] = 0
    setup["items"][0]["civet"] = 0
    assert state.setup == {"scores": [100, 7], "items": [{"civet": 1}, {"grelottine": 1, "civet": 0}]}


def test_a_game_from_a_starting_position_saves_loads_and_clones_from_it() -> None:
    # Before the first turn (the first player still being drawn) a copy starts from the
    # position too, and a saved game replays from it.
    state = new_game("classic", 2, dice=[5, 5, 2], scores=[100, 7], items=[{"civet": 1}, {}])
    early = GameState(load_ruleset("classic"), 2, setup={"scores": [100, 7], "items": [{"civet": 1}, {}]})
    twin = early.clone()
    assert twin.scores == [100, 7] and twin.items == early.items and twin.turn_number == 0
    assert twin.log == [] and twin.history == [] and twin.pending == early.pending
    for die in (1, 6):
        twin.apply_action(Dice((die,)))
    assert twin.first_player == 0 and twin.current_seat == 0 and early.log == []
    play(state, ROLL, PASS, PASS)
    loaded = GameState.from_json(state.to_json())
    assert loaded == state
    assert loaded.scores == [125, 7] and loaded.items[0]["civet"] == 1


def test_a_bought_cul_is_logged_and_the_seller_keeps_the_chouette_of_their_own_dice() -> None:
    # RULES.md, Achat de dé: the buyer pays 30 and throws the cul; "the original thrower scores
    # only a Chouette of the first two dice if they are a pair".
    state = new_game("classic", 3, dice=[3, 3, 5])
    play(state, ROLL, PASS, BuyCul())
    assert state.table.buyer == 2 and state.current_seat == 2  # the buyer's Chouette: their sirop
    assert state.log[5:] == [
        {"type": "dice", "turn": 1, "reason": "chouettes", "seat": 0, "values": [3, 3]},
        {"type": "buy_cul", "turn": 1, "seat": 2, "from_seat": 0},
        {"type": "score", "turn": 1, "seat": 2, "points": -30, "delta": -30, "score": -30,
         "reason": "achat_du_cul", "capped": False},
        {"type": "dice", "turn": 1, "reason": "cul", "seat": 2, "values": [5]},
        {"type": "combination", "turn": 1, "seat": 2, "dice": [3, 3, 5], "combination": "chouette",
         "value": 9, "races": []},
        {"type": "score", "turn": 1, "seat": 0, "points": 9, "delta": 9, "score": 9, "reason": "chouette",
         "capped": False, "bought_cul": True},
    ]


def test_a_sellers_chouette_is_their_own_dice_on_their_own_turn_and_may_win() -> None:
    # 320 + a Chouette of 6 (36) from the seller's own two dice: 356, past 343 on their own
    # turn through their own dice, so it wins at once (the cap holds only other gains).
    state = new_game("classic", 2, dice=[6, 6, 1], scores=[320, 0])
    play(state, ROLL, BuyCul())
    assert state.winner == 0 and state.scores == [356, -30]
    assert state.log[-1] == {"type": "win", "turn": 1, "seat": 0, "score": 356}


def test_a_civet_won_on_ones_own_turn_is_capped_in_classic_and_may_win_in_v004() -> None:
    # RULES.md: C caps every gain but one's own dice; "in v004 a Civet won ... on one's own turn
    # may pass 332 and win". 200 + a Velute of 6 (72, own dice) + the Civet's 80.
    classic = new_game("classic", 2, dice=[2, 4, 6], items=[{"civet": 1}, {}], scores=[200, 0])
    play(classic, DeclareCivet("velute", 80))
    assert classic.scores == [332, 0] and not classic.is_over
    assert [(e["reason"], e["delta"], e["capped"]) for e in score_events(classic)] == [
        ("velute", 72, False), ("civet_made", 60, True)]
    v004 = new_game("v004", 2, dice=[2, 4, 6], items=[{"civet": 1}, {}], scores=[200, 0])
    play(v004, DeclareCivet("velute", 80), PASS)  # seat 1 does not bet on the Civet
    assert v004.scores == [352, 0] and v004.winner == 0
    assert v004.log[-1] == {"type": "win", "turn": 1, "seat": 0, "score": 352}


def test_an_illegal_action_is_refused_with_what_is_asked_and_what_is_legal() -> None:
    from cdc_env.actions import BirdBet, Sirop

    state = new_game("classic", 2, dice=[2, 2, 5])
    play(state, ROLL, PASS, Sirop())
    with pytest.raises(IllegalActionError) as error:
        state.apply_action(BuyCul())
    assert str(error.value) == (
        "buy_cul is not legal now: seat 1 must bet a bird on the sirop die, or pass; legal: pass, "
        + ", ".join(f"bird_bet(face={face})" for face in range(1, 7)))
    state.apply_action(BirdBet(2), seat=1)  # still legal after the refusal
    dice = new_game("classic", 2, dice=[])
    play(dice, ROLL)
    with pytest.raises(IllegalActionError) as error:
        dice.apply_action(Dice((7, 7)))
    assert str(error.value) == "dice(values=(7, 7)) is not a legal outcome: the dice fall: 2 die(s) of 6 for chouettes"
    with pytest.raises(IllegalActionError) as error:
        dice.apply_action(Dice((3, 3)), seat=1)
    assert str(error.value) == ("seat 1 acted out of turn: it is the dice's decision "
                                "(the dice fall: 2 die(s) of 6 for chouettes)")
    with pytest.raises(IllegalActionError) as error:
        dice.apply_action(Shout("pas mou le caillou", float("nan")))
    assert str(error.value) == "a shout needs its onset in ms (a finite number ≥ 0), got nan"


# ------------------------------------------------------------------ the cap and the target at one point


def test_a_gain_of_one_point_that_reaches_343_wins() -> None:
    # 342 + a Chouette of 1 (1 point, own dice, the sirop declined): 343 exactly, a win.
    state = new_game("classic", 2, dice=[1, 1, 3], scores=[342, 0])
    play(state, ROLL, PASS, PASS)  # no buyer; the Chouette kept
    assert state.winner == 0 and state.scores == [343, 0]
    assert state.log[-1] == {"type": "win", "turn": 1, "seat": 0, "score": 343}
    assert state.legal_actions() == []


def test_a_civet_of_one_point_at_the_cap_is_held_and_says_so() -> None:
    # 332 with a Civet on a Chouette for 1: the Chouette of 1 is own dice (333), the Civet's
    # point is a stake, which the cap holds (C): the score stays 333, the event says capped.
    state = new_game("classic", 2, dice=[1, 1, 3], items=[{"civet": 1}, {}], scores=[332, 0])
    play(state, DeclareCivet("chouette", 1), PASS)  # the Chouette kept (a Civet's roll is not sold)
    assert state.scores == [333, 0] and not state.is_over
    assert [(e["reason"], e["points"], e["delta"], e["capped"]) for e in score_events(state)] == [
        ("chouette", 1, 1, False), ("civet_made", 1, 0, True)]


def test_a_change_of_no_points_on_ones_own_turn_wins_nothing() -> None:
    # v004 lets every own-turn change pass the cap; a score at the target's edge does not win
    # by a Bévue that costs nothing (a table's penalty of 0): only a gain wins.
    rules = ruleset("v004", bevue={"penalty": 0})
    state = new_game(rules, 2, dice=[], scores=[342, 0])
    state.apply_action(Shout("pas_mou_le_caillou", 100.0), seat=0)
    assert state.winner is None and not state.is_over
    assert score_events(state)[-1] == {"type": "score", "turn": 1, "seat": 0, "points": 0, "delta": 0, "score": 342,
                                       "reason": "bevue", "capped": False,
                                       "why": "shouted 'pas_mou_le_caillou' when no race was on"}


def _table(name: str) -> Ruleset:
    if name == "doublette":
        return load_ruleset("classic").with_house_rules(["doublette"])
    if name == "no_negative":
        return load_ruleset("complete").model_copy(update={"negative_scores": False})
    return load_ruleset(name)


@pytest.mark.parametrize(("rules", "players", "scores", "says", "starts"), [
    ("classic", 2, [343, 0], "seat 0 has 343, at or past the target (343)", [342, 0]),
    ("v004", 3, [0, 0, 500], "seat 2 has 500, at or past the target (343)", [0, -500, 0]),
    ("doublette", 4, [200, 0, 143, 0], "the team of seats 0, 2 has 343, at or past the target (343)",
     [200, 300, 142, 0]),
    ("no_negative", 2, [10, -1], "keeps scores at 0 or more (negative_scores: false), got [10, -1]", [10, 0]),
])
def test_a_setup_where_the_game_is_already_over_or_a_score_cannot_be_is_refused(
        rules: str, players: int, scores: list[int], says: str, starts: list[int]) -> None:
    # A seat (or a team) already at the target would have won: a game from there would crown
    # whoever the flow reached first. Just below it, the game starts.
    with pytest.raises(GameError) as error:
        GameState(_table(rules), players, setup={"scores": scores})
    assert says in str(error.value)
    assert GameState(_table(rules), players, setup={"scores": starts}).scores == starts


# ------------------------------------------------------------------ what a refusal says


def test_a_refusal_lists_twelve_options_then_counts_them_all() -> None:
    # complete, 5 seats: a Bleu-Rouge (3,3,4); the first bettor has the 16 sums, the fourth 13,
    # the fifth the 12 nobody took, all shown.
    state = new_game("complete", 5, dice=[3, 3, 4])
    play(state, ROLL, PASS, PASS, PASS, PASS)  # nobody buys the cul
    asks = "seat 0 must bet on the sum of the Bleu-Rouge relaunch (a sum nobody took)"
    with pytest.raises(IllegalActionError) as error:
        state.apply_action(BuyCul())
    assert str(error.value) == (f"buy_cul is not legal now: {asks}; legal: "
                                + ", ".join(f"bet_sum(total={t})" for t in range(3, 15)) + ", … (16 in all)")
    play(state, BetSum(3), BetSum(4), BetSum(5))
    with pytest.raises(IllegalActionError) as error:
        state.apply_action(BuyCul())
    assert str(error.value).endswith(", ".join(f"bet_sum(total={t})" for t in range(6, 18)) + ", … (13 in all)")
    play(state, BetSum(6))
    with pytest.raises(IllegalActionError) as error:
        state.apply_action(BuyCul())
    assert str(error.value) == ("buy_cul is not legal now: seat 4 must bet on the sum of the Bleu-Rouge relaunch "
                                "(a sum nobody took); legal: "
                                + ", ".join(f"bet_sum(total={t})" for t in range(7, 19)))


def test_a_refusal_names_every_staked_choice_with_its_stakes() -> None:
    # A Civet held with 50 points: each of its six bets, stakes 1 to 50 (C: of one's own points).
    state = new_game("classic", 2, dice=[], items=[{"civet": 1}, {}], scores=[50, 0])
    civets = ", ".join(f"civet({name}, stake 1..50)" for name in (
        "chouette", "velute", "chouette_velute", "suite", "cul_de_chouette", "cul_de_chouette_sirote"))
    asks = "seat 0 must roll the dice (or first declare a Civet, or use a Grelottine in solo)"
    with pytest.raises(IllegalActionError) as error:
        state.apply_action(BuyCul())
    assert str(error.value) == f"buy_cul is not legal now: {asks}; legal: roll, {civets}"
    # A shout no moment takes is refused the same way, from nobody in particular or from the
    # seat whose decision it is (not charged as a false shout).
    for seat in (None, 0):
        with pytest.raises(IllegalActionError) as error:
            state.apply_action(Shout("vive_le_roi", 100.0), seat=seat)
        assert str(error.value) == (f"shout(phrase='vive_le_roi', onset_ms=100.0) is not legal now: {asks}; "
                                    f"legal: roll, {civets}")
    assert state.log[-1]["type"] == "turn_start" and state.scores == [50, 0]


def test_in_solo_a_grelottine_is_offered_beside_the_roll() -> None:
    state = new_game("solo", 1, dice=[], items=[{"grelottine": 1}], scores=[200])
    assert state.legal_actions() == [Roll(), UseGrelottine()]


# ------------------------------------------------------------------ the table and the dice moments


def test_the_table_shows_the_combination_while_it_is_decided_on() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2])
    play(state, ROLL, PASS)
    assert state.pending is not None and state.pending.kind == "sirop"
    assert (state.table.dice, state.table.combination) == ((5, 5, 2), "chouette")


def test_a_random_first_player_is_one_die_of_as_many_sides_as_seats() -> None:
    state = GameState(load_ruleset("v004"), 3)
    assert state.pending is not None
    assert (state.pending.kind, state.pending.count, state.pending.sides, state.pending.reason) == (
        "chance", 1, 3, "first_player")
    assert state.snapshot()["turn_seat"] is None and state.snapshot()["first_player"] is None
    state.apply_action(Dice((2,)))
    assert state.log == [{"type": "dice", "turn": 0, "reason": "first_player", "seat": None, "values": [2]},
                         {"type": "first_player", "turn": 0, "seat": 1},
                         {"type": "turn_start", "turn": 1, "seat": 1}]


def test_an_item_is_given_once_and_the_rules_are_told_so() -> None:
    state = GameState(load_ruleset("complete"), 2)
    assert state.give_item(1, "flan", "a_kadoc") is True
    assert state.give_item(1, "flan", "a_kadoc") is False
    assert state.items[1]["flan"] == 1 and [e["type"] for e in state.log] == ["item"]


# ------------------------------------------------------------------ dice thrown again inside a rule


@pytest.mark.parametrize(("bets", "winner"), [((3, 7), 1), ((7, 3), 0)])
def test_a_bleu_rouge_relaunch_is_the_winners_and_off_their_turn_a_soufflette_does_nothing(
        bets: tuple[int, int], winner: int) -> None:
    # complete: 3,3,4, the thrower scores the Chouette of 3 (9); the relaunch 1,2,4 (sum 7)
    # wins 36 + 2 × 7 = 50 for whoever bet 7, and its Soufflette is theirs: on another's turn
    # it counts like a bought cul (nothing), on the thrower's own it is a challenge to make.
    state = new_game("complete", 2, dice=[3, 3, 4, 1, 2, 4])
    play(state, ROLL, PASS, BetSum(bets[0]), BetSum(bets[1]))
    shown = [e for e in state.log if e["type"] == "combination"]
    assert [(e["seat"], e["combination"]) for e in shown] == [(0, "bleu_rouge"), (winner, "soufflette")]
    assert score_events(state)[-1]["seat"] == winner and score_events(state)[-1]["points"] == 50
    assert state.pending is not None
    if winner == 1:
        assert (state.pending.kind, state.pending.seat) == ("turn_start", 1)
    else:
        assert (state.pending.kind, state.pending.seat) == ("soufflette", 0)


# ------------------------------------------------------------------ a late friend (the Chante-Sloubi)


def sloubi(**overrides: object) -> Any:
    return ruleset("classic", house_rules={"chante_sloubi": True}, dice_buying={"enabled": False}, **overrides)


NEANTS = [1, 3, 6] * 20  # no combination: nobody scores, nobody is asked anything


def play_to_turn(state: GameState, turn: int) -> None:
    while state.turn_number < turn or not state.at_turn_start:
        state.apply_action(PASS if PASS in state.legal_actions() else ROLL)


def test_a_join_refused_says_why_in_full() -> None:
    def refusal(state: GameState, name: str = "Zoé") -> str:
        with pytest.raises(JoinRefused) as error:
            state.join(name)
        return str(error.value)

    waiting = new_game(sloubi(), 3, dice=[1, 3])
    waiting.apply_action(ROLL)  # the cul has not fallen
    assert refusal(waiting) == ("a player joins as a turn begins, before its first decision: wait for the next "
                                "turn (now the dice fall: 1 die(s) of 6 for cul)")
    assert refusal(new_game(sloubi(), 3, dice=NEANTS), "  ") == "a newcomer needs a name"
    over = new_game(sloubi(), 2, dice=[6, 6, 6], scores=[243, 0])
    play(over, ROLL)
    assert over.is_over and refusal(over) == "the game is over: nobody can join it"
    teams = ruleset("classic", house_rules={"chante_sloubi": True, "doublette": True}, dice_buying={"enabled": False})
    assert refusal(new_game(teams, 4, dice=NEANTS)) == (
        "nobody can join a game played in teams (the Doublette): its teams are pairs seated from the start, "
        "and a newcomer would have no partner")
    alone = new_game(sloubi(min_players=1), 1, dice=NEANTS)
    assert refusal(alone) == ("the Chante-Sloubi needs two players at the table: the newcomer's start is the gap "
                              "between the two best scores")
    with pytest.raises(IllegalActionError) as error:
        new_game(sloubi(), 3, dice=NEANTS).join(None)  # type: ignore[arg-type]
    assert str(error.value) == "Join.name must be a string, got None (NoneType); build the action with the right type"


def test_a_newcomers_name_is_stripped_and_a_start_of_nothing_is_not_capped() -> None:
    state = new_game(sloubi(), 3, dice=NEANTS)
    assert state.join("  Zoé ") == 3
    assert state.log[-2:] == [
        {"type": "join", "turn": 1, "seat": 3, "name": "Zoé", "rule": "chante_sloubi"},
        {"type": "score", "turn": 1, "seat": 3, "points": 0, "delta": 0, "score": 0, "reason": "chante_sloubi",
         "capped": False, "best": 0, "second": 0, "round": 1, "sung": False}]


def test_a_copy_made_before_the_first_turn_counts_the_first_round() -> None:
    # 100 ahead of 0 in round 1: a newcomer starts at ⌊100 × 1 / 10⌋ = 10, in the copy too.
    early = GameState(sloubi(), 3, setup={"scores": [100, 0, 0]})
    twin = early.clone()
    for die in (1, 6, 6):
        twin.apply_action(Dice((die,)))
    assert twin.round_number == 1 and twin.at_turn_start
    assert twin.join("Zoé") == 3 and twin.scores == [100, 0, 0, 10]


def test_a_copy_made_turns_after_a_join_keeps_the_newcomer() -> None:
    state = new_game(sloubi(), 3, dice=NEANTS)
    state.join("Zoé")
    play_to_turn(state, 3)
    twin = state.clone()
    assert twin.players == 4 and twin.snapshot() == state.snapshot()
    for game in (state, twin):
        play_to_turn(game, 6)
    assert twin.log == state.log and [e["seat"] for e in state.log if e["type"] == "turn_start"] == [0, 1, 2, 3, 0, 1]


# ------------------------------------------------------------------ copies


def test_a_copy_before_the_first_turn_of_a_plain_game_is_the_same_game() -> None:
    early = GameState(load_ruleset("classic"), 2)
    twin = early.clone()
    assert twin.snapshot() == early.snapshot() and twin.scores == [0, 0]
    assert not twin.at_turn_start
    assert twin.clone().snapshot() == early.snapshot()


def test_a_copy_keeps_a_false_shout_as_one_that_moved_nothing() -> None:
    # At the turn's start seat 1 shouts "Pas mou le caillou !" (a Bévue, −10): the turn has
    # not moved, so a newcomer could still sit down, in the copy and in the copy's copy.
    state = new_game("classic", 2, dice=[5, 5, 2])
    state.apply_action(Shout("pas_mou_le_caillou", 50.0), seat=1)
    twin = state.clone()
    assert state.at_turn_start and twin.at_turn_start
    again = twin.clone()
    assert again.at_turn_start and again.log == state.log and again.scores == [0, -10]
    for game in (state, again):
        play(game, ROLL, PASS, PASS)
    assert again.log == state.log


# ------------------------------------------------------------------ saves


def test_a_save_shares_nothing_nested_with_the_live_game() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2], scores=[100, 7])
    play(state, ROLL, PASS, PASS)
    saved = state.to_json()
    saved["setup"]["scores"][0] = 0
    saved["history"][-1]["action"]["kind"] = "changed"
    assert state.setup == {"scores": [100, 7]}
    assert state.history[-1] == {"seat": 0, "action": {"kind": "pass"}}


def test_a_save_that_cannot_load_says_what_is_wrong() -> None:
    state = new_game("classic", 2, dice=[5, 5, 2])
    play(state, ROLL, PASS, PASS)

    def load_error(change: Any) -> str:
        saved = state.to_json()
        change(saved)
        with pytest.raises(GameLoadError) as error:
            GameState.from_json(saved)
        return str(error.value)

    assert load_error(lambda s: s["ruleset"].update(target_score="x")) == (
        "saved game has a bad ruleset or player count: ruleset (saved game) is not valid:\n"
        "  - target_score: Input should be a valid integer, unable to parse string as an integer (got 'x')\n"
        "Fix the file, or start again from a copy of configs/rules/classic.yaml.")
    assert load_error(lambda s: s["snapshot"]["scores"].__setitem__(0, 26)) == (
        "saved game is corrupt: replaying its history does not give the saved scores and items (the file was "
        "edited or damaged)")
    assert load_error(lambda s: s.update(dice={"kind": "nope"})) == (
        "saved game has a bad dice source: unknown dice source {'kind': 'nope'}")


def test_games_equal_only_in_their_saves_and_logs() -> None:
    plain = GameState(load_ruleset("classic"), 2)
    with_dice = GameState(load_ruleset("classic"), 2, dice=InjectedDice([]))
    assert plain.log == with_dice.log == [] and plain != with_dice  # the saves differ (the dice)
    assert plain == GameState(load_ruleset("classic"), 2)
    assert plain != "a game"


def test_a_save_kept_in_memory_stays_as_taken_and_a_shout_of_no_possible_time_is_refused() -> None:
    # to_json() shared the Soufflette's live dict: the game's next throw changed the save kept,
    # which then no longer loaded. A shout timed 10**400 ms was an OverflowError (a damaged save's
    # --resume: a traceback), not the engine's refusal.
    from agents.bots import make_bot
    from cdc_env.actions import IllegalActionError, Shout
    from cdc_env.dice import SeededDice

    state = GameState(load_ruleset("classic"), 3, dice=SeededDice(1))
    bots = [make_bot("simple", seed=i) for i in range(3)]
    while not (state.table.soufflette and state.table.soufflette.get("throw") == 1):
        assert state.pending is not None and state.pending.seat is not None
        state.apply_action(bots[state.pending.seat].act(state, state.pending))
    saved = state.to_json()
    assert state.pending is not None and state.pending.seat is not None
    state.apply_action(bots[state.pending.seat].act(state, state.pending))
    assert saved["snapshot"]["table"]["soufflette"]["throw"] == 1
    loaded = GameState.from_json(saved).table.soufflette
    assert loaded is not None and loaded["throw"] == 1
    fresh = GameState(load_ruleset("classic"), 2)
    with pytest.raises(IllegalActionError, match="a shout needs its onset in ms"):
        fresh.apply_action(Shout("grelotte_ca_picote", 10**400), seat=1)
