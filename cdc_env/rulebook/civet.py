"""The Civet (C, V, F, S): before rolling, its holder stakes points on the roll making a
named combination; in V the others may bet on its success."""

from __future__ import annotations

from typing import Any

from cdc_env.actions import DeclareCivet
from cdc_env.flow import Flow, RollOutcome
from cdc_env.rulebook import bets, scoring
from cdc_env.rulebook.table import Game


def stakes(game: Game, seat: int) -> tuple[tuple[str, range], ...]:
    civet_rules = game.rules.civet
    if not (civet_rules.enabled and game.items[seat]["civet"]):
        return ()
    highest = civet_rules.max_stake
    if civet_rules.stake_within_score:
        highest = min(highest, game.scores[seat])  # C: the stake is one's own points
    if highest < civet_rules.min_stake:
        return ()
    allowed = range(civet_rules.min_stake, highest + 1)
    return tuple((combination, allowed) for combination in civet_rules.combinations)


def declare(game: Game, seat: int, choice: DeclareCivet) -> Flow:
    game.spend_item(seat, "civet", "civet_declared")
    game.table.civet = {"seat": seat, "combination": choice.combination, "stake": choice.stake}
    game.event("civet", seat=seat, combination=choice.combination, stake=choice.stake)
    backers: list[int] = []
    if game.rules.civet.bets:
        backers = yield from bets.success_bets(game, "civet_bet", game.seats_from(seat))
    # A house rule (the Civet doublé) may multiply the stake before the roll.
    return {"choice": choice, "seat": seat, "backers": backers, "multiplier": 1}


def settle(game: Game, seat: int, civet: dict[str, Any], outcome: RollOutcome) -> None:
    choice: DeclareCivet = civet["choice"]
    made = scoring.made(choice.combination, outcome, sirop_counts_for_cul=False)
    stake = choice.stake * civet.get("multiplier", 1)
    game.change_score(seat, stake if made else -stake,
                      "civet_made" if made else "civet_failed", combination=choice.combination)
    bets.settle_success_bets(game, civet["backers"], made, game.rules.civet, "civet")
