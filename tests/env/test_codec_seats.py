"""The action codec names a Soufflette's target relative to the acting seat (+1: the next seat in
play order), both ways, at every table size a Soufflette can be played at."""

from __future__ import annotations

import pytest

from cdc_env.actions import ChallengeSoufflette, Pass
from cdc_env.game import Decision
from cdc_env.spaces import ActionCodec


def soufflette(seat: int, players: int) -> Decision:
    """A Soufflette challenge: the acting seat may name any other seat, or pass."""
    others = [other for other in range(players) if other != seat]
    return Decision(seat, "soufflette", (Pass(), *(ChallengeSoufflette(other) for other in others)))


def test_hand_worked_four_seats() -> None:
    """At 4 seats the block is seat+1, seat+2, seat+3, in that order. Seat 1 challenging seat 3
    is offset +2 (3 − 1), the block's second index; +2 is its own mirror at 4 seats (−2 ≡ +2),
    so the asymmetric cases pin the direction: seat 1 naming seat 2 is +1 (its next seat), seat 2
    naming seat 1 is +3 (the seat before it), seat 3 naming seat 0 is +1 (play order wraps)."""
    codec = ActionCodec(players=4)
    start = codec.blocks["soufflette"].start
    assert codec.blocks["soufflette"].choices == (1, 2, 3)
    for seat, target, offset in ((1, 3, 2), (1, 2, 1), (2, 1, 3), (3, 0, 1), (0, 3, 3), (0, 1, 1)):
        decision = soufflette(seat, 4)
        index = codec.encode(ChallengeSoufflette(target), decision, seat)
        assert index == start + offset - 1, (seat, target)
        assert codec.names[index] == f"soufflette seat+{offset}"
        assert codec.decode(index, decision, seat) == ChallengeSoufflette(target)


def test_hand_worked_three_seats() -> None:
    codec = ActionCodec(players=3)
    start = codec.blocks["soufflette"].start
    assert codec.encode(ChallengeSoufflette(1), soufflette(0, 3), 0) == start  # +1
    assert codec.encode(ChallengeSoufflette(0), soufflette(1, 3), 1) == start + 1  # +2: the seat before
    assert codec.decode(start, soufflette(2, 3), 2) == ChallengeSoufflette(0)
    assert codec.decode(start + 1, soufflette(2, 3), 2) == ChallengeSoufflette(1)


@pytest.mark.parametrize("players", range(3, 9))
def test_every_seat_and_target_both_ways(players: int) -> None:
    codec = ActionCodec(players=players)
    start = codec.blocks["soufflette"].start
    assert codec.blocks["soufflette"].stop - start == players - 1
    for seat in range(players):
        decision = soufflette(seat, players)
        mask = codec.mask(decision, seat)
        assert list(mask[start:start + players - 1]) == [1] * (players - 1)
        for target in range(players):
            if target == seat:
                continue
            index = codec.encode(ChallengeSoufflette(target), decision, seat)
            assert index == start + (target - seat) % players - 1
            assert codec.decode(index, decision, seat) == ChallengeSoufflette(target)
        for offset in range(1, players):
            assert codec.decode(start + offset - 1, decision, seat) == ChallengeSoufflette((seat + offset) % players)


@pytest.mark.parametrize("players", range(3, 9))
def test_a_single_target_masks_only_its_own_offset(players: int) -> None:
    """With one seat on offer (the others out of reach), only that seat's index is legal."""
    codec = ActionCodec(players=players)
    start = codec.blocks["soufflette"].start
    for seat in range(players):
        target = (seat - 1) % players  # the seat before: offset players − 1, never +1
        decision = Decision(seat, "soufflette", (Pass(), ChallengeSoufflette(target)))
        legal = [i - start for i in range(start, start + players - 1) if codec.mask(decision, seat)[i]]
        assert legal == [players - 2]
        assert codec.decode(start + players - 2, decision, seat) == ChallengeSoufflette(target)
