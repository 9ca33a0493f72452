"""The Sirotage (cdc_env/rulebook/sirop.py) by hand, event by event: F's bets in `complete`
(the chouette's own bird a Bévue, Beau-Sirop, silence a Bévue, a winning bet claimed or
forgotten), F's minimum score to bet, the options without Bévues, and a failed sirop that
judges a Civet and a Flan (RULES.md, Actions and challenges: Sirotage)."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, event, new_game, nobody_buys, play, ruleset, score

from cdc_env.actions import BeauSirop, BetOnSuccess, BirdBet, CoucheSirop, DeclareCivet, Shout, Sirop

CLAIM = Shout("sirop_gagnant", 500.0)


def sirop_of_two(rules: Any = "complete", players: int = 4, die: int = 2, **setup: Any) -> Any:
    """Seat 0 throws 2,2,5 (a Chouette of 2), nobody buys the cul, seat 0 sirops; the sirop
    die is `die`."""
    state = new_game(rules, players, dice=[2, 2, 5, die], **setup)
    play(state, ROLL)
    nobody_buys(state)
    play(state, Sirop())
    return state


def test_the_own_bird_is_a_bevue_a_lost_bet_costs_and_a_claimed_beau_sirop_pays() -> None:
    # F: seat 1 names the Alouette (2, the chouette's own bird): a Bévue, no bet; seat 2 bets
    # the Fauvette (3), seat 3 Beau-Sirop; the die is a 2: seat 2 loses 5, seat 3 claims and
    # wins 25, seat 0 scores the Cul de Chouette of 2 (60).
    state = sirop_of_two()
    start = len(state.log)
    play(state, BirdBet(2), BirdBet(3), BeauSirop())
    assert state.table.sirop_bets == {2: 3, 3: 2}
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("claim", 3)
    play(state, CLAIM)
    assert state.log[start:] == [
        score(1, -10, -10, "bevue", why="named the chouette's own bird instead of Beau-Sirop"),
        event("bird_bet", seat=2, face=3),
        event("beau_sirop", seat=3, face=2),
        event("dice", reason="sirop", seat=0, values=[2]),
        score(2, -5, -5, "bird_bet_lost", face=3),
        event("claim", seat=3, phrase="sirop_gagnant", onset_ms=500.0),
        score(3, 25, 25, "bird_bet_won", True, face=2),
        score(0, 60, 60, "sirop_success"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_winning_bet_forgotten_pays_nothing_and_silence_is_a_bevue() -> None:
    # Seats 1 and 2 say Beau-Sirop, seat 3 says nothing (F: Couche-Sirop must be said); the die
    # is a 2: seat 1 forgets to claim (nothing), seat 2 claims (25).
    state = sirop_of_two()
    start = len(state.log)
    play(state, BeauSirop(), BeauSirop(), PASS, PASS, CLAIM)
    assert state.log[start:] == [
        event("beau_sirop", seat=1, face=2),
        event("beau_sirop", seat=2, face=2),
        score(3, -10, -10, "bevue", why="said nothing on a sirop (Couche-Sirop or File-Sirop)"),
        event("dice", reason="sirop", seat=0, values=[2]),
        event("bet_unclaimed", seat=1, face=2),
        event("claim", seat=2, phrase="sirop_gagnant", onset_ms=500.0),
        score(2, 25, 25, "bird_bet_won", True, face=2),
        score(0, 60, 60, "sirop_success"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_bet_below_the_minimum_score_is_a_bevue_and_falls_to_zero() -> None:
    # F without negative scores: a bird bet needs 5 points. Seats 1 (4) and 2 (2) bet anyway:
    # each a Bévue (here 3 points) and no bet; seat 1, at 1 after it, falls to 0; seat 2 is
    # already at 0. The die misses: seat 0 loses the Chouette of 2.
    rules = ruleset("complete", negative_scores=False, bevue={"penalty": 3})
    state = sirop_of_two(rules, 3, die=3, scores=[50, 4, 2])
    start = len(state.log)
    play(state, BirdBet(3), BirdBet(3))
    assert state.log[start:] == [
        score(1, -3, 1, "bevue", why="bet on a sirop below the minimum score"),
        score(1, -1, 0, "sirop_bet_below_minimum"),
        {**score(2, -3, 0, "bevue", why="bet on a sirop below the minimum score"), "delta": -2},
        event("dice", reason="sirop", seat=0, values=[3]),
        score(0, -4, 46, "sirop_failure"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_without_bevues_nobody_is_offered_a_bet_that_would_be_one() -> None:
    # Below the minimum only the passes are offered; with Beau-Sirop the chouette's own bird
    # (the Alouette, 2) is not offered.
    rules = ruleset("complete", negative_scores=False, bevue={"enabled": False})
    state = sirop_of_two(rules, 3, scores=[50, 4, 20])
    assert state.pending is not None and state.pending.options == (PASS, CoucheSirop())
    play(state, PASS)
    assert state.pending.options == (PASS, CoucheSirop(), BeauSirop(), *(BirdBet(f) for f in (1, 3, 4, 5, 6)))


def test_a_false_shout_that_takes_a_bettor_below_the_minimum_names_its_bets_bevues_at_once() -> None:
    # Seat 1 has 12 (a bird bet needs 5), is asked first, and shouts out of place: 2 points. The
    # decision is put again (`refresh`): it named no Bévue, then charged one for the bet.
    state = new_game(ruleset("complete", negative_scores=False), 4, dice=[2, 2, 5, 3], scores=[50, 12, 50, 50])
    play(state, ROLL)
    nobody_buys(state)
    play(state, Sirop())
    assert state.pending is not None and state.pending.seat == 1 and BirdBet(3) not in state.pending.bevues
    state.apply_action(Shout("pas_mou_le_caillou", 100.0), seat=1)
    assert state.scores[1] == 2
    assert state.pending is not None and BirdBet(3) in state.pending.bevues


def test_each_bet_decision_names_the_bevues_it_charges() -> None:
    # Decision.bevues, the one reading of these Bévues that the bots and the screens use: the
    # silent pass where Couche-Sirop is said, the chouette's own bird, and every bet below the
    # minimum; none at a table that plays no Bévue.
    state = sirop_of_two()
    assert state.pending is not None and state.pending.bevues == (PASS, BirdBet(2))
    rules = ruleset("complete", negative_scores=False)
    state = sirop_of_two(rules, 3, scores=[50, 4, 20])
    assert state.pending is not None and state.pending.bevues == (PASS, BeauSirop(), *(BirdBet(f) for f in range(1, 7)))
    play(state, CoucheSirop())
    assert state.pending is not None and state.pending.bevues == (PASS, BirdBet(2))
    quiet = sirop_of_two(ruleset("complete", bevue={"enabled": False}))
    assert quiet.pending is not None and CoucheSirop() in quiet.pending.options and quiet.pending.bevues == ()
    start = len(quiet.log)
    play(quiet, PASS)
    assert all(e.get("reason") != "bevue" for e in quiet.log[start:])


def test_a_failed_sirop_does_not_make_a_civet_on_a_siroted_cul_de_chouette() -> None:
    state = new_game("classic", 2, dice=[2, 2, 5, 3], items=[{"civet": 1}, {}], scores=[50, 0])
    play(state, DeclareCivet("cul_de_chouette_sirote", 10), Sirop(), PASS)
    assert state.log[-3:] == [
        score(0, -4, 46, "sirop_failure"),
        score(0, -10, 36, "civet_failed", combination="cul_de_chouette_sirote"),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_flanned_chouette_siroted_and_failed_is_judged_by_its_sirop() -> None:
    # The Flan's use (house rule): seat 1 flans seat 0's throw; the Chouette of 2 is charged
    # −8 ahead, then siroted and failed (−4): the sirop judges it, so the 8 come back.
    rules = ruleset("complete", house_rules={"flan_use": True}, dice_buying={"enabled": False})
    state = new_game(rules, 2, dice=[2, 2, 5, 3], items=[{}, {"flan": 1}], scores=[50, 50])
    play(state, BetOnSuccess(), ROLL, Sirop(), CoucheSirop())
    assert [(e["reason"], e["points"]) for e in state.log if e["type"] == "score"] == [
        ("flan", -8), ("sirop_failure", -4), ("flan_siroted", 8)]
    assert state.scores == [46, 50]
