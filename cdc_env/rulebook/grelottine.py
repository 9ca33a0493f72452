"""The Grelottine (C, V, F, S): a Néant gives one; another holder challenges the thrower
of a Néant to make a named combination for a stake, a Boucliette may cancel the challenge,
the uninvolved bet on its success. In S the holder uses it before their own roll."""

from __future__ import annotations

from typing import Any

from cdc_env.actions import ChallengeGrelottine, Pass, Roll, UseBoucliette
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook import bets, scoring
from cdc_env.rulebook.table import Game


def neant(game: Game, outcome: RollOutcome, _bought: bool) -> Flow:
    if game.rules.neant_gives_grelottine and game.meets_minimum(outcome.scorer, "grelottine"):
        game.give_item(outcome.scorer, "grelottine", "neant")
    return
    yield


def may_use(game: Game, seat: int) -> bool:
    """S: usable before one's roll when every combination it may draw has a stake."""
    rules = game.rules.grelottine
    return (rules.enabled and rules.use == "before_roll" and bool(game.items[seat]["grelottine"])
            and all(stake_limit(game, seat, seat, name) >= rules.min_stake for name in rules.stake_limits))


def use_before_roll(game: Game, seat: int) -> Flow:
    """S: the game draws the combination (uniformly) and the stake is the maximum."""
    names = list(game.rules.grelottine.stake_limits)
    (drawn,) = yield from game.roll_dice("grelottine_combination", 1, seat, sides=len(names))
    combination = names[drawn - 1]
    stake = stake_limit(game, seat, seat, combination)
    game.spend_item(seat, "grelottine", "grelottine_used")
    game.table.challenge = {"challenger": seat, "challenged": seat, "combination": combination,
                            "stake": stake}
    game.event("grelottine", seat=seat, challenged=seat, combination=combination, stake=stake)
    return {"combination": combination, "stake": stake}


def settle_own(game: Game, seat: int, grelottine: dict[str, Any], outcome: RollOutcome) -> None:
    made = scoring.made(grelottine["combination"], outcome, sirop_counts_for_cul=True)
    game.event("challenge_result", challenger=seat, challenged=seat, made=made)
    stake = grelottine["stake"]
    game.change_score(seat, stake if made else -stake,
                       "grelottine_won" if made else "grelottine_lost")
    game.table.challenge = None


def challenges(game: Game, outcome: RollOutcome) -> Flow:
    """After a Néant, another holder may challenge the thrower; the challenge throw is a
    normal roll in every respect, so a Néant there may be challenged again."""
    rules = game.rules.grelottine
    while rules.enabled and rules.use == "challenge" and outcome.combination.name == "neant":
        challenged = outcome.scorer
        result = yield from challenge_thrower(game, challenged)
        if result is None:
            return
        outcome = result


def stake_limit(game: Game, challenger: int, challenged: int, combination: str) -> int:
    limit = game.rules.grelottine.stake_limits[combination]
    smallest = min(game.scores[challenger], game.scores[challenged])
    return int(smallest * limit) if smallest > 0 else 0  # floor for positive scores


def challenge_thrower(game: Game, challenged: int) -> Flow:
    rules = game.rules.grelottine
    # Several challengers: the lowest score first, then seat order after the thrower.
    order = sorted(game.seats_from(challenged), key=lambda s: game.scores[s])
    challenge: ChallengeGrelottine | None = None
    challenger = -1

    def offer(seat: int) -> Decision:  # (put again, `refresh`, if a Bévue changes the scores meanwhile)
        stakes = tuple(
            (combination, allowed)
            for combination in rules.stake_limits
            if (allowed := range(rules.min_stake,
                                 stake_limit(game, seat, challenged, combination) + 1))
        )
        return Decision(seat, "grelottine", (Pass(),), staked=ChallengeGrelottine if stakes else None,
                        stakes=stakes, refresh=lambda: offer(seat))

    for seat in order:
        if not game.items[seat]["grelottine"]:
            continue
        offered = offer(seat)
        if not offered.stakes:
            continue
        choice = yield offered
        if isinstance(choice, ChallengeGrelottine):
            challenge, challenger = choice, seat
            break
    if challenge is None:
        return None
    game.spend_item(challenger, "grelottine", "grelottine_challenge")
    game.table.challenge = {"challenger": challenger, "challenged": challenged,
                            "combination": challenge.combination, "stake": challenge.stake}
    game.event("grelottine", seat=challenger, challenged=challenged,
                combination=challenge.combination, stake=challenge.stake)
    if game.rules.boucliette.enabled:
        for seat in game.seats_from(challenged, True):
            if seat == challenger or not game.items[seat]["boucliette"]:
                continue
            choice = yield Decision(seat, "boucliette", (UseBoucliette(), Pass()))
            if isinstance(choice, UseBoucliette):
                game.spend_item(seat, "boucliette", "challenge_cancelled")
                game.event("boucliette", seat=seat, challenger=challenger)
                game.table.challenge = None
                return None
    backers: list[int] = []
    if rules.bets:
        uninvolved = [s for s in game.seats_from(challenged) if s != challenger]
        backers = yield from bets.success_bets(game, "challenge_bet", uninvolved)
    yield Decision(challenged, "challenge_roll", (Roll(),))
    outcome = yield from game.roll(challenged, buyable=False)
    made = scoring.made(challenge.combination, outcome, sirop_counts_for_cul=True)
    stake = challenge.stake
    winner, loser = (challenged, challenger) if made else (challenger, challenged)
    game.event("challenge_result", challenger=challenger, challenged=challenged, made=made)
    game.change_score(loser, -stake, "grelottine_lost")
    game.change_score(winner, stake, "grelottine_won")
    bets.settle_success_bets(game, backers, made, rules, "challenge")
    game.table.challenge = None
    return outcome
