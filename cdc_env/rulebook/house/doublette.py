"""The Doublette, Kize's team mode (`lib/game/game-handler.ts`, `getGameStatus`; the teams
chosen in `src/components/player-cards/select-doublette-teams.ts`): an even number of players,
4 to 8; seat i plays with seat i + N/2; a team's score is the sum of its two players'; the first
team to 343 wins.

Our reading of "first to 343" is the game's own: a win is judged when a gain that may win (one's
own dice, on one's own turn) lifts the team's sum to the target; the cap stays each player's.
Both players of the team win."""

from __future__ import annotations

from cdc_env.rulebook.house.registry import HouseRule


def teams(players: int) -> list[tuple[int, ...]]:
    if players % 2 or not 4 <= players <= 8:
        raise ValueError(f"the Doublette is played by an even number of players, 4 to 8, not {players}")
    half = players // 2
    return [(seat, seat + half) for seat in range(half)]


RULE = HouseRule(
    name="doublette",
    source="Kize's cdc-engine (lib/game/game-handler.ts, getGameStatus)",
    moments={},
    teams=teams,
)
