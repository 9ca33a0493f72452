"""The turn itself and the tools every rule uses (cdc_env/game.py), by hand: the log of a turn
event by event, the target reached exactly, what the cap does to a gain and says of it, items
given once and spent, and a starting position that is refused with its reason."""

from __future__ import annotations

from typing import Any

import pytest
from engine_helpers import PASS, ROLL, new_game, play, score_events

from cdc_env.actions import BuyCul, DeclareCivet, Dice
from cdc_env.game import GameError, GameState
from cdc_env.rules import load_ruleset


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
    ({"items": [{"civet": 2}, {}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'civet': 2}"),
    ({"items": [{}, {"jarret": 1}]},
     "setup items: each of grelottine, civet, boucliette, flan is held 0 or 1 times, got {'jarret': 1}"),
])
def test_a_starting_position_that_cannot_be_is_refused_with_its_reason(setup: object, message: str) -> None:
    with pytest.raises(GameError) as error:
        GameState(load_ruleset("classic"), 2, setup=setup)  # type: ignore[arg-type]
    assert str(error.value) == message


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
    from cdc_env.actions import BirdBet, IllegalActionError, Shout, Sirop

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
