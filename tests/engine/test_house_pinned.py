"""House rules by hand, event by event (cdc_env/rulebook/house/): the Civet doublé joined by
three holders, the Verdier's bets as they are shown and settled, the Attrape-oiseau, the
Contre-Sirop, the Cul de Chouette contré, the Flan's use, the Tichette and the Robobrol (their
events field by field), the Chante-Sloubi's start and the Doublette's tables of 8."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, event, new_game, play, ruleset

from cdc_env.actions import BetOnSuccess, BuyCul, CoucheSirop, DeclareCivet, Dice, Shout, Sirop
from cdc_env.rulebook.house.chante_sloubi import start_points
from cdc_env.rulebook.house.doublette import teams


def test_three_holders_double_a_civet_three_times() -> None:
    # 5 seats: seats 1, 3 and 4 hold a Civet (seat 2 none, so it is not asked); each joins:
    # the stake of 10 is doubled three times, 80, won on a Velute.
    rules = ruleset("classic", house_rules={"civet_double": True}, dice_buying={"enabled": False})
    state = new_game(rules, 5, items=[{"civet": 1}, {"civet": 1}, {}, {"civet": 1}, {"civet": 1}],
                     scores=[100, 0, 0, 0, 0])
    play(state, DeclareCivet("velute", 10))
    start = len(state.log)
    assert state.pending is not None and [state.pending.seat, state.pending.kind] == [1, "civet_double"]
    play(state, BetOnSuccess(), BetOnSuccess(), BetOnSuccess())
    assert state.table.civet == {"seat": 0, "combination": "velute", "stake": 10, "joined": [1, 3, 4],
                                 "multiplier": 8}
    play(state, Dice((2, 4)), Dice((6,)))
    joins = [e for seat, multiplier in ((1, 2), (3, 4), (4, 8)) for e in (
        event("item", seat=seat, item="civet", change=-1, reason="civet_doubled"),
        event("civet_doubled", seat=seat, declarer=0, multiplier=multiplier))]
    assert state.log[start:start + 6] == joins
    assert state.log[-2] == event("score", seat=0, points=80, delta=80, score=252, reason="civet_made",
                                  capped=True, combination="velute")
    # A holder who passes leaves the Civet on the table as it was declared.
    alone = new_game(rules, 2, items=[{"civet": 1}, {"civet": 1}], scores=[100, 0])
    play(alone, DeclareCivet("velute", 10), PASS)
    assert alone.pending is not None and alone.pending.reason == "chouettes"
    assert alone.table.civet == {"seat": 0, "combination": "velute", "stake": 10}


def test_verdier_bets_are_shown_as_they_are_made_and_cleared_when_settled() -> None:
    # Chouettes 2,4 open the Verdier: seat 0 bets, its bet is on the table at once; seat 1
    # passes; the cul 5 makes a Néant: the bet is lost and gone from the table when seat 1,
    # holding a Grelottine, is asked to challenge.
    rules = ruleset("classic", house_rules={"verdier": True}, dice_buying={"enabled": False})
    state = new_game(rules, 2, items=[{}, {"grelottine": 1}], scores=[100, 100])
    play(state, ROLL, Dice((2, 4)))
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("verdier_bet", 0)
    start = len(state.log)
    play(state, BetOnSuccess())
    assert state.table.house == {"verdier_bets": [0]} and state.pending.seat == 1
    play(state, PASS, Dice((5,)))
    assert state.log[start] == event("verdier_bet", seat=0)
    assert (state.pending.kind, state.pending.seat) == ("grelottine", 1) and state.table.house == {}
    # Nobody bets: the table shows an empty list of bets while the cul is awaited.
    quiet = new_game(rules, 2)
    play(quiet, ROLL, Dice((2, 4)), PASS, PASS)
    assert quiet.pending is not None and quiet.pending.reason == "cul" and quiet.table.house == {"verdier_bets": []}


def test_the_second_player_asked_catches_the_bird() -> None:
    # 3 seats: seat 0 sirops its Chouette of 3; seat 1 lets the bird go, seat 2 catches it.
    rules = ruleset("classic", house_rules={"attrape_oiseau": True}, dice_buying={"enabled": False})
    state = new_game(rules, 3, dice=[3, 3, 5, 4])
    play(state, ROLL, Sirop())
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("attrape_oiseau", 1)
    start = len(state.log)
    play(state, PASS, BetOnSuccess())
    assert state.log[start] == event("attrape_oiseau", seat=2, thrower=0, face=3)


def test_without_negative_scores_only_a_player_the_sirop_would_cover_catches_the_bird() -> None:
    # F: a sirop the score does not cover is not offered. A catcher at 0 took the sirop of a
    # Chouette of 5 (25) all the same: +70 to win, nothing to lose.
    rules = ruleset("complete", house_rules={"attrape_oiseau": True}, dice_buying={"enabled": False},
                    negative_scores=False,
                    minimum_scores={"sirotage_covers_chouette": True})
    state = new_game(rules, 3, dice=[5, 5, 2], scores=[100, 0, 30])
    while state.pending is not None and state.pending.kind != "sirop":
        play(state, ROLL if state.pending.allows(ROLL) else PASS)
    play(state, Sirop())
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("attrape_oiseau", 2)


def test_contre_sirop_events() -> None:
    # Seat 0 fails a sirop on its Chouette of 3; seat 2 shouts first: a fifth of 70, and why.
    rules = ruleset("classic", house_rules={"contre_sirop": True}, dice_buying={"enabled": False})
    state = new_game(rules, 3, dice=[3, 3, 5, 5])
    play(state, ROLL, Sirop())
    while state.pending is not None and state.pending.kind == "sirop_bet":
        play(state, PASS)
    start = len(state.log)
    play(state, Shout("j_apprecie_les_fruits_au_sirop", 900.0), Shout("j_apprecie_les_fruits_au_sirop", 400.0))
    assert state.log[start + 2:start + 4] == [
        event("race", race="contre_sirop", shouts={"1": 900.0, "2": 400.0}, tied=[2]),
        event("score", seat=2, points=14, delta=14, score=14, reason="contre_sirop", capped=True, face=3)]


def test_cul_de_chouette_contre_events() -> None:
    # Kize's Cul de Chouette of 2 (60) claimed first by seat 1: the race, then 24 moved to seat 1.
    rules = ruleset("classic", house_rules={"cul_de_chouette_contre": True}, dice_buying={"enabled": False})
    state = new_game(rules, 2, dice=[2, 2, 2])
    play(state, ROLL)
    start = len(state.log)
    play(state, Shout("cul_de_chouette", 800.0), Shout("cul_de_chouette", 300.0))
    assert state.log[start + 2:start + 6] == [
        event("race", race="cul_de_chouette_contre", shouts={"0": 800.0, "1": 300.0}, tied=[1]),
        event("score", seat=0, points=-24, delta=-24, score=-24, reason="cul_de_chouette_contre", capped=False,
              by=1),
        event("score", seat=1, points=24, delta=24, score=24, reason="cul_de_chouette_contre", capped=True,
              against=0),
        event("score", seat=0, points=60, delta=60, score=36, reason="cul_de_chouette", capped=False)]


def flan_rules() -> Any:
    return ruleset("complete", house_rules={"flan_use": True}, dice_buying={"enabled": False})


def test_a_later_holder_flans_and_the_events_say_who() -> None:
    # 3 seats: seat 1 holds no Flan and is not asked; seat 2 flans seat 0's Velute of 4 (32):
    # the Flan spent, the flan, then −64 charged ahead and the Velute's 32.
    state = new_game(flan_rules(), 3, dice=[1, 3, 4], items=[{}, {}, {"flan": 1}], scores=[100, 100, 100])
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("flan_use", 2)
    start = len(state.log)
    play(state, BetOnSuccess(), ROLL)
    assert state.log[start:start + 2] == [
        event("item", seat=2, item="flan", change=-1, reason="flan_used"),
        event("flan_used", seat=2, thrower=0)]
    assert state.log[start + 5:start + 7] == [
        event("score", seat=0, points=-64, delta=-64, score=36, reason="flan", capped=False, by=2),
        event("score", seat=0, points=32, delta=32, score=68, reason="velute", capped=False)]


def test_without_negative_scores_a_flanned_throw_still_costs_its_points_and_never_gains() -> None:
    # negative_scores: false (F's option): the −2 × 36 charged ahead stopped at 0, then the
    # Velute of 6 gave its 72, so a thrower at 50 ended at 72, flanned. The charge the floor
    # held back is taken once the points are given: 50 → 0 → 72 → 0 (at 100: 100 − 72 = 28).
    rules = ruleset("complete", house_rules={"flan_use": True}, dice_buying={"enabled": False},
                    negative_scores=False)
    for start, end in ((50, 0), (0, 0), (100, 28), (150, 78)):
        state = new_game(rules, 2, dice=[2, 4, 6], items=[{}, {"flan": 1}], scores=[start, 100])
        play(state, BetOnSuccess(), ROLL)
        assert state.scores[0] == end, (start, state.scores)
        charged = [e["delta"] for e in state.log if e.get("reason") in ("flan", "velute")]
        assert sum(charged) == end - start and all(e.get("score", 0) >= 0 for e in state.log)


def test_a_siroted_flanned_chouette_is_judged_by_its_sirop_alone_even_at_the_floor() -> None:
    # Without negative scores, a thrower at 6 flanned on a Chouette of 2 (4) who sirops and fails:
    # the −8 charge stopped at 0, the failure's −4 too, then the 6 taken was given back: 6, where
    # the same sirop unflanned ends at 2.
    rules = ruleset("complete", house_rules={"flan_use": True}, dice_buying={"enabled": False}, negative_scores=False,
                    minimum_scores={"soufflette": 30, "grelottine": 30, "sirop_bet": 5,
                                    "sirotage_covers_chouette": False})
    for start in (6, 20):
        ends = []
        for flanned in (True, False):
            state = new_game(rules, 2, dice=[2, 2, 5, 3], items=[{}, {"flan": 1}], scores=[start, 50])
            play(state, BetOnSuccess() if flanned else PASS, ROLL, Sirop(), CoucheSirop())
            ends.append(state.scores[0])
        assert ends[0] == ends[1] == start - 4, (start, ends)


def test_a_flanned_neant_gives_the_flan_back_with_its_reason() -> None:
    state = new_game(flan_rules(), 2, dice=[1, 3, 6], items=[{}, {"flan": 1}])
    play(state, BetOnSuccess(), ROLL)
    assert event("item", seat=1, item="flan", change=1, reason="flan_kept") in state.log


def test_a_flanned_throw_whose_cul_is_bought_spends_the_flan_for_nothing_even_on_a_neant() -> None:
    # Seat 1 flans seat 0 and then buys seat 0's cul: the throw, a Néant (1, 3, 6), is seat 1's
    # own. It gave seat 1's Flan back as if seat 0 had thrown that Néant (docs/rules.md: spent).
    rules = ruleset("complete", house_rules={"flan_use": True})
    state = new_game(rules, 3, dice=[1, 3, 6], items=[{}, {"flan": 1}, {}], scores=[100, 100, 100])
    play(state, BetOnSuccess(), ROLL)
    while state.pending is not None and state.pending.kind != "buy_cul":
        play(state, PASS)
    assert state.pending is not None and state.pending.seat == 1
    play(state, BuyCul())
    assert [e["combination"] for e in state.log if e["type"] == "combination"] == ["neant"]
    assert state.items[1]["flan"] == 0 and not [e for e in state.log if e.get("reason") == "flan_kept"]


def test_a_flanned_combination_that_is_not_inverted_costs_nothing() -> None:
    # A Chouette-Velute (2, 2, 4) is no Chouette, Velute or Cul de Chouette: its race runs as
    # usual, nothing charged; the flan is spent all the same.
    state = new_game(flan_rules(), 2, dice=[2, 2, 4], items=[{}, {"flan": 1}], scores=[100, 100])
    play(state, BetOnSuccess(), ROLL)
    assert state.pending is not None and state.pending.reason == "chouette_velute"
    assert state.scores == [100, 100] and state.table.house == {}
    assert not [e for e in state.log if e.get("reason") == "flan"]


def tichette_rules() -> Any:
    return ruleset("classic", house_rules={"tichette": True}, dice_buying={"enabled": False})


def test_tichette_claimants_in_order_of_their_shouts() -> None:
    # 4, 2, 1 (7): seat 1 shouts at 300 ms, seat 2 at 100 ms, both at 50: the race lists seat
    # 2 first, and each loses 2 × 7 in that order.
    state = new_game(tichette_rules(), 3, dice=[4, 2, 1], scores=[0, 50, 50])
    play(state, ROLL)
    assert state.pending is not None and state.pending.answers == ("tichette",)  # no Robobrol off a Cul
    start = len(state.log)
    play(state, PASS, Shout("tichette", 300.0), Shout("tichette", 100.0))
    assert state.log[start + 2:start + 5] == [
        event("race", race="tichette", shouts={"1": 300.0, "2": 100.0}, tied=[2, 1]),
        event("score", seat=2, points=-14, delta=-14, score=36, reason="tichette_lost", capped=False, tichette=7,
              claimants=2),
        event("score", seat=1, points=-14, delta=-14, score=36, reason="tichette_lost", capped=False, tichette=7,
              claimants=2)]


def test_a_tichette_won_alone_is_no_robobrol() -> None:
    # 2, 5, 6 (13, a Néant) claimed by seat 1 alone: 13; the next turn follows, no rethrow.
    state = new_game(tichette_rules(), 2, dice=[2, 5, 6], scores=[0, 100])
    play(state, ROLL)
    start = len(state.log)
    play(state, PASS, Shout("tichette", 300.0))
    assert state.log[start + 2] == event("score", seat=1, points=13, delta=13, score=113, reason="tichette_won",
                                         capped=True, tichette=13)
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("turn_start", 1)
    # 1, 1, 1 claimed alone with « Tichette ! », not « Robobrol ! »: no rethrow either.
    cul = new_game(tichette_rules(), 2, dice=[1, 1, 1], scores=[0, 100])
    play(cul, ROLL, PASS, Shout("tichette", 300.0))
    assert not [e for e in cul.log if e["type"] == "robobrol"]
    assert cul.pending is not None and (cul.pending.kind, cul.pending.seat) == ("turn_start", 1)


def test_the_robobrol_rethrow_is_the_claimants() -> None:
    state = new_game(tichette_rules(), 2, dice=[1, 1, 1, 1, 4, 5], scores=[0, 100])
    play(state, ROLL)
    assert state.pending is not None and state.pending.answers == ("tichette", "robobrol")
    start = len(state.log)
    play(state, PASS, Shout("robobrol", 300.0))
    assert state.log[start + 4:start + 6] == [event("robobrol", seat=1),
                                              event("dice", reason="robobrol", seat=1, values=[1, 4, 5])]


def test_chante_sloubi_start_is_not_sung_unless_told_and_rounds_up() -> None:
    assert start_points([120, 80], 7) == 28  # not sung: ⌊40 × 7 / 10⌋
    points = start_points([55, 50], 6, True)  # ⌊3⌋ = 3, sung: ⌈4.5⌉
    assert points == 5 and isinstance(points, int)


def test_doublette_plays_at_8() -> None:
    assert teams(8) == [(0, 4), (1, 5), (2, 6), (3, 7)]
