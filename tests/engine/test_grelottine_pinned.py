"""The Grelottine (cdc_env/rulebook/grelottine.py) by hand, event by event: a challenge lost
then a second one made on the next Néant, a Boucliette that cancels one, who is asked first
when some holders cannot challenge, a table without bets on challenges, the stake limit at one
point, and S's Grelottine used before the roll (RULES.md, Actions and challenges; Solo)."""

from __future__ import annotations

from typing import Any

from engine_helpers import PASS, ROLL, event, new_game, play, ruleset, score

from cdc_env.actions import BetOnSuccess, BuyCul, ChallengeGrelottine, Roll, Sirop, UseBoucliette, UseGrelottine
from cdc_env.dice import InjectedDice
from cdc_env.game import GameState
from cdc_env.rules import load_ruleset

NEANT = [1, 3, 6]


def holders(rules: Any = "classic", scores: list[int] | None = None, dice: list[int] | None = None,
            holding: tuple[int, ...] = (1, 2)) -> GameState:
    """3 seats, seat 0 throws a Néant first; the seats in `holding` hold a Grelottine."""
    items: list[dict[str, int]] = [{"grelottine": 1} if seat in holding else {} for seat in range(3)]
    return new_game(rules, 3, dice=[*NEANT, *(dice or [])], items=items, scores=scores or [100, 100, 100])


def test_a_challenge_lost_on_a_neant_is_challenged_again_and_the_second_is_made() -> None:
    # Seat 0's Néant gives it a Grelottine. Seat 1 challenges a Velute for 20, nobody cancels,
    # seat 2 bets on success; the throw is a Néant again: seat 0 loses 20, seat 1 wins 20
    # (a stake: capped, C), seat 2 loses 5. Seat 2 then challenges the new Néant: a Chouette
    # for 10 (at most ⌊80 × 33 %⌋ = 26); seat 1 bets; 2,2,5 is a Chouette of 2: made.
    state = holders(dice=[*NEANT, 2, 2, 5])
    play(state, ROLL, PASS, PASS)  # nobody buys the cul
    start = len(state.log)
    play(state, ChallengeGrelottine("velute", 20))
    assert state.table.challenge == {"challenger": 1, "challenged": 0, "combination": "velute", "stake": 20}
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("boucliette", 0)
    play(state, PASS, PASS)
    assert (state.pending.kind, state.pending.seat) == ("challenge_bet", 2)
    play(state, BetOnSuccess())
    assert (state.pending.kind, state.pending.seat, state.pending.options) == ("challenge_roll", 0, (Roll(),))
    play(state, ROLL)
    assert (state.pending.kind, state.pending.seat) == ("grelottine", 2)
    assert state.table.challenge is None
    assert {name: stakes.stop - 1 for name, stakes in state.pending.stakes} == {
        "chouette": 26, "velute": 20, "cul_de_chouette": 12, "chouette_velute": 6}
    play(state, ChallengeGrelottine("chouette", 10), PASS, PASS, BetOnSuccess(), ROLL, PASS)
    assert state.log[start:] == [
        event("item", seat=1, item="grelottine", change=-1, reason="grelottine_challenge"),
        event("grelottine", seat=1, challenged=0, combination="velute", stake=20),
        event("bet_on_success", seat=2, on="challenge_bet"),
        event("dice", reason="chouettes", seat=0, values=[1, 3]),
        event("dice", reason="cul", seat=0, values=[6]),
        event("combination", seat=0, dice=[1, 3, 6], combination="neant", value=0, races=[]),
        event("challenge_result", challenger=1, challenged=0, made=False),
        score(0, -20, 80, "grelottine_lost", False),
        score(1, 20, 120, "grelottine_won", True),
        score(2, -5, 95, "challenge_bet_lost", False),
        event("item", seat=2, item="grelottine", change=-1, reason="grelottine_challenge"),
        event("grelottine", seat=2, challenged=0, combination="chouette", stake=10),
        event("bet_on_success", seat=1, on="challenge_bet"),
        event("dice", reason="chouettes", seat=0, values=[2, 2]),
        event("dice", reason="cul", seat=0, values=[5]),
        event("combination", seat=0, dice=[2, 2, 5], combination="chouette", value=4, races=[]),
        score(0, 4, 84, "chouette", False),
        event("challenge_result", challenger=2, challenged=0, made=True),
        score(2, -10, 85, "grelottine_lost", False),
        score(0, 10, 94, "grelottine_won", True),
        score(1, 25, 145, "challenge_bet_won", True),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]


def test_a_boucliette_cancels_the_challenge_and_both_items_are_spent() -> None:
    state = holders()
    play(state, ROLL, PASS, PASS)
    start = len(state.log)
    play(state, ChallengeGrelottine("chouette", 30), UseBoucliette())
    assert state.log[start:] == [
        event("item", seat=1, item="grelottine", change=-1, reason="grelottine_challenge"),
        event("grelottine", seat=1, challenged=0, combination="chouette", stake=30),
        event("item", seat=0, item="boucliette", change=-1, reason="challenge_cancelled"),
        event("boucliette", seat=0, challenger=1),
        {"type": "turn_start", "turn": 2, "seat": 1},
    ]
    assert state.scores == [100, 100, 100]


def test_a_holder_who_cannot_challenge_passes_the_turn_to_the_next() -> None:
    # The lowest score is asked first: seat 1 holds no Grelottine, so seat 2 is asked; then
    # seat 1 holds one but has no points (no stake of 1 or more), so again seat 2.
    without = holders(scores=[100, 50, 100], holding=(2,))
    play(without, ROLL, PASS, PASS)
    assert without.pending is not None and (without.pending.kind, without.pending.seat) == ("grelottine", 2)
    pointless = holders(scores=[100, 0, 100])
    play(pointless, ROLL, PASS, PASS)
    assert pointless.pending is not None and (pointless.pending.kind, pointless.pending.seat) == ("grelottine", 2)


def test_without_bets_on_challenges_the_throw_comes_at_once() -> None:
    state = holders(ruleset("classic", grelottine={"bets": False}), dice=[2, 4, 6])
    play(state, ROLL, PASS, PASS, ChallengeGrelottine("velute", 20), PASS, PASS)
    assert state.pending is not None and state.pending.kind == "challenge_roll"
    play(state, ROLL)
    assert state.scores == [100 + 72 + 20, 80, 100]


def test_a_limit_of_all_the_points_lets_one_point_be_staked() -> None:
    # floor(1 × 100 %) = 1: a stake of 1 is allowed (RULES.md: a stake must be ≥ 1).
    rules = ruleset("classic", grelottine={"stake_limits": {"chouette": "100%"}})
    state = holders(rules, scores=[1, 1, 1])
    play(state, ROLL, PASS, PASS)
    assert state.pending is not None and state.pending.kind == "grelottine"
    assert state.pending.stakes == (("chouette", range(1, 2)),)


def solo(dice: list[int], points: int) -> GameState:
    return GameState(load_ruleset("solo"), 1, dice=InjectedDice(dice),
                     setup={"scores": [points], "items": [{"grelottine": 1}]})


def test_a_solo_grelottine_on_a_cul_de_chouette_is_made_by_a_sirop() -> None:
    # S: the draw 2 of 5 names the Cul de Chouette (16 % of 100 = 16); 3,3,5 siroted into a 3:
    # the sirop's Cul de Chouette of 3 (70) makes it too.
    state = solo([2, 3, 3, 5, 3], 100)
    play(state, UseGrelottine(), ROLL, Sirop(), PASS)
    assert state.log[2:] == [
        event("dice", reason="grelottine_combination", seat=0, values=[2]),
        event("item", seat=0, item="grelottine", change=-1, reason="grelottine_used"),
        event("grelottine", seat=0, challenged=0, combination="cul_de_chouette", stake=16),
        event("dice", reason="chouettes", seat=0, values=[3, 3]),
        event("dice", reason="cul", seat=0, values=[5]),
        event("combination", seat=0, dice=[3, 3, 5], combination="chouette", value=9, races=[]),
        event("sirop", seat=0, face=3),
        event("dice", reason="sirop", seat=0, values=[3]),
        score(0, 70, 170, "sirop_success", False),
        event("challenge_result", challenger=0, challenged=0, made=True),
        score(0, 16, 186, "grelottine_won", True),
        {"type": "turn_start", "turn": 2, "seat": 0},
    ]


def test_a_solo_grelottine_missed_loses_the_stake() -> None:
    # The draw 1 names the Chouette-Velute (8 % of 200 = 16); 2,4,6 is a Velute of 6.
    state = solo([1, 2, 4, 6], 200)
    play(state, UseGrelottine(), ROLL)
    assert state.log[-3:] == [
        event("challenge_result", challenger=0, challenged=0, made=False),
        score(0, -16, 256, "grelottine_lost", False),
        {"type": "turn_start", "turn": 2, "seat": 0},
    ]


def test_a_buyers_challenge_throw_of_1_2_4_is_no_soufflette_the_throwers_is() -> None:
    # Seat 1 buys seat 0's cul and throws a Néant; seat 2 challenges it. The challenge throw
    # 1,2,4 is seat 1's off its own turn, like a bought cul: no Soufflette (C: "une Soufflette
    # achetée ne fait rien"), and the game goes on to seat 1's turn.
    state = new_game("classic", 3, dice=[1, 3, 6, 1, 2, 4], scores=[100] * 3, items=[{}, {}, {"grelottine": 1}])
    play(state, ROLL, BuyCul())
    state.apply_action(ChallengeGrelottine("chouette", 10))
    while state.pending is not None and state.pending.kind in ("boucliette", "challenge_bet"):
        state.apply_action(PASS)
    play(state, ROLL)
    assert state.pending is not None and state.pending.kind != "soufflette"
    # The thrower's own Néant challenged, the same throw on its own turn is a Soufflette.
    state = new_game("classic", 3, dice=[1, 3, 6, 1, 2, 4], scores=[100] * 3, items=[{}, {}, {"grelottine": 1}])
    play(state, ROLL, PASS, PASS)
    state.apply_action(ChallengeGrelottine("chouette", 10))
    while state.pending is not None and state.pending.kind in ("boucliette", "challenge_bet"):
        state.apply_action(PASS)
    play(state, ROLL)
    assert state.pending is not None and (state.pending.kind, state.pending.seat) == ("soufflette", 0)
