"""What a rule may read and change of the game: the rules' own interface.

A rule module sees the game only through `Game`: what lies on the table (the ruleset, the
seats, the scores, the items, the turn, the table's public context) and what a rule may do
(change a score with its reason, give or spend an item, note an event, charge a Bévue, throw
dice, play a roll or a combination). `cdc_env.game.GameState` implements it; no rule module
imports `cdc_env.game`, so a house rule written in another package (or a test) needs nothing
but this protocol, `cdc_env.flow` and `cdc_env.actions`.
"""

from __future__ import annotations

from typing import Any, Protocol

from cdc_env.actions import Action
from cdc_env.flow import Flow, Table
from cdc_env.rules import Ruleset


class Game(Protocol):
    """The game as a rule sees it."""

    # ---------------------------------------------------------------- what a rule reads

    rules: Ruleset
    players: int
    scores: list[int]
    items: list[dict[str, int]]  # per seat: item -> 0 or 1
    turn_seat: int | None  # whose turn it is
    turn_number: int
    round_number: int  # the round (tour de table) in play: how many turns the first player has begun
    table: Table  # the public context of the moment (dice, the race on, bets)
    log: list[dict[str, Any]]  # what happened so far (read only: rules note events with `event`)

    def seats_from(self, seat: int, include_self: bool = False) -> list[int]:
        """The seats in playing order after `seat` (from `seat` itself with include_self)."""
        ...

    def meets_minimum(self, seat: int, what: str) -> bool:
        """F's minimum score for `what` (a key of the ruleset's minimum_scores)."""
        ...

    def false_shout_allowed(self, seat: int, phrase: str) -> bool:
        """Whether `seat` may shout `phrase` now outside a race (a false shout, not refused)."""
        ...

    # ---------------------------------------------------------------- what a rule changes

    def change_score(self, seat: int, points: int, reason: str, *, own_dice: bool = False,
                     **details: Any) -> None:
        """The one way a score changes: an event with its reason. `own_dice`: the points of
        the seat's own dice on its own turn, which the cap does not hold. May end the game."""
        ...

    def give_item(self, seat: int, item: str, reason: str) -> bool:
        """One of each item at a time: False when the seat already holds one."""
        ...

    def spend_item(self, seat: int, item: str, reason: str) -> None: ...

    def event(self, type_: str, **fields: Any) -> None:
        """Note what happened in the log (score changes note themselves)."""
        ...

    def bevue(self, seat: int, why: str) -> None:
        """Charge a Bévue's penalty, saying why."""
        ...

    def keep_in_history(self, seat: int, action: Action) -> None:
        """An action taken outside the pending decision (a false shout), kept for replays."""
        ...

    # ---------------------------------------------------------------- moments with dice

    def roll_dice(self, reason: str, count: int, seat: int | None, sides: int = 6) -> Flow:
        """A chance moment: `count` dice fall for `reason`; returns their values."""
        ...

    def roll(self, thrower: int, *, buyable: bool) -> Flow:
        """A whole roll (chouettes, perhaps a bought cul, the combination and its rules);
        returns its `RollOutcome`."""
        ...

    def apply_combination(self, dice: tuple[int, ...], scorer: int) -> Flow:
        """Dice thrown again inside a rule: their combination applies for `scorer`."""
        ...
