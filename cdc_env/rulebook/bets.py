"""Bets that ride on another player's throw: bets on success (a Civet in V, a Grelottine
challenge) and the claims that make a gain count ("À Kadoc !", "Sirop gagnant !")."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cdc_env.actions import BetOnSuccess, Pass, Shout
from cdc_env.flow import Decision, Flow
from cdc_env.rulebook.table import Game


def success_bets(game: Game, kind: str, seats: Iterable[int]) -> Flow:
    backers = []
    for seat in seats:
        choice = yield Decision(seat, kind, (BetOnSuccess(), Pass()))
        if isinstance(choice, BetOnSuccess):
            backers.append(seat)
            game.table.success_bets.append(seat)
            game.event("bet_on_success", seat=seat, on=kind)
    return backers


def settle_success_bets(game: Game, backers: list[int], made: bool, bet_rules: Any, what: str) -> None:
    for seat in backers:
        if made:
            game.change_score(seat, bet_rules.bet_win, f"{what}_bet_won")
        else:
            game.change_score(seat, -bet_rules.bet_loss, f"{what}_bet_lost")


def claim(game: Game, seat: int, phrase: str) -> Flow:
    """A gain that counts only if claimed before the next throw ("À Kadoc !",
    "Sirop gagnant !"): the claimant shouts it or says nothing; forgetting is no Bévue."""
    choice = yield Decision(seat, "claim", (Pass(), Shout(phrase)), reason=phrase)
    if not isinstance(choice, Shout):
        return False
    game.event("claim", seat=seat, phrase=phrase, onset_ms=choice.onset_ms)
    return True
