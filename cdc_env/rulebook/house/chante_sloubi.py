"""Chante-Sloubi, Kize's late joiner (cdc-engine `lib/game/game-handler.ts`: `singSloubi`; the
start in `src/store/current-game/current-game-selectors.ts`: `selectSloubiScore`; the round in
`GameHandler.getNumberOfTurns`): a player joins a game already under way and starts at
⌊(best score − second best score) × turn / 10⌋ points, or ⌈that × 1.5⌉ when the newcomer sang
the Sloubi to its end (Kize's « Sloubi réussi » box, judged by the table). At most 8 players.

Kize's "turn" is the round (the tour de table) in play, 1 in the first: how many turns the
first player has begun. Kize seats the newcomer after a player the scribe chooses; we seat
them in the next seat number, after the last seat and before seat 0 (the table's numbering
stays as it was). The join happens as a turn begins, before its first decision: that turn
stays its thrower's, and the newcomer first throws when the rotation reaches their seat. The
start is a gain off the newcomer's own dice, so the cap holds it (it can never win by itself).
At a Doublette table nobody joins (its teams are pairs seated from the start): the join is
refused, the two rules stay playable together (as `maison --house doublette`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cdc_env.rulebook.house.registry import HouseRule
from cdc_env.rulebook.table import Game


def start_points(scores: Sequence[int], round_number: int, sung: bool = False) -> int:
    """⌊(best − second best) × round / 10⌋, and ⌈× 1.5⌉ for a Sloubi sung to its end."""
    best, second = sorted(scores, reverse=True)[:2]
    points = (best - second) * round_number // 10
    return -(-points * 3 // 2) if sung else points


def newcomer_start(game: Game, _parameters: Mapping[str, Any], sung: bool) -> tuple[int, dict[str, Any]]:
    if game.players < 2:
        # Kize too refuses it ("There should be at least 2 players to sing a sloubi").
        raise ValueError("the Chante-Sloubi needs two players at the table: the newcomer's start "
                         "is the gap between the two best scores")
    best, second = sorted(game.scores, reverse=True)[:2]
    points = start_points(game.scores, game.round_number, sung)
    return points, {"best": best, "second": second, "round": game.round_number, "sung": sung}


RULE = HouseRule(
    name="chante_sloubi",
    source="Kize's cdc-engine (lib/game/game-handler.ts singSloubi; current-game-selectors.ts selectSloubiScore)",
    moments={},
    late_join=newcomer_start,
)
