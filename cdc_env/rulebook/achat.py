"""The Achat de dé (C, F; not V): after the chouettes fall, another player may buy the cul.
The buyer throws it and the whole combination is theirs; the seller keeps only the Chouette
of their own two dice."""

from __future__ import annotations

from cdc_env.actions import BuyCul, Pass
from cdc_env.flow import Decision, Flow
from cdc_env.rulebook.table import Game


def offer_the_cul(game: Game, thrower: int) -> Flow:
    """The other players are asked in seat order; the first who buys pays and throws the cul.
    Returns who throws it."""
    for seat in game.seats_from(thrower):
        if not can_pay(game, seat):
            continue
        choice = yield Decision(seat, "buy_cul", (BuyCul(), Pass()))
        if isinstance(choice, BuyCul):
            game.table.buyer = seat
            game.event("buy_cul", seat=seat, from_seat=thrower)
            game.change_score(seat, -game.rules.dice_buying.cost, "achat_du_cul")
            return seat
    return thrower


def can_pay(game: Game, seat: int) -> bool:
    """Without negative scores (F's option) a score held at 0 cannot pay: only a buyer whose
    score covers the cost is offered the cul (`minimum_scores.achat_covers_cost`)."""
    rules = game.rules
    return (rules.negative_scores or not rules.minimum_scores.achat_covers_cost
            or game.scores[seat] >= rules.dice_buying.cost)


def seller_keeps_chouette(game: Game, thrower: int, chouettes: tuple[int, ...]) -> None:
    """The seller keeps only the Chouette of the two dice they threw (their own dice)."""
    if chouettes[0] == chouettes[1]:
        game.change_score(thrower, game.rules.scores.chouette[chouettes[0] - 1], "chouette",
                           own_dice=True, bought_cul=True)
