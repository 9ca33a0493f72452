"""The Sirotage (C, V, F, S): the thrower of a Chouette may re-roll the odd die while the
others bet a bird on it; F's Beau-Sirop, Couche-Sirop, Sirop gagnant and the combination a
siroted die makes."""

from __future__ import annotations

from cdc_env.actions import Action, BeauSirop, BirdBet, CoucheSirop, Pass, Sirop
from cdc_env.combinations import classify
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook import bets, scoring
from cdc_env.rulebook.house.registry import moment_rules
from cdc_env.rulebook.table import Game


def may_sirop(game: Game, seat: int, value: int) -> bool:
    if not game.rules.sirotage.enabled:
        return False
    # F without negative scores: the score must cover the Chouette's points at stake.
    # (F's "Sirop-Jeannot !" against such a sirop wins a Contre-Sirop, which F never
    # defines: the sirop is simply not offered.)
    covers = not game.rules.minimum_scores.sirotage_covers_chouette or game.scores[seat] >= value
    return game.rules.negative_scores or covers


def chouette(game: Game, outcome: RollOutcome, bought: bool) -> Flow:
    scorer, face = outcome.scorer, outcome.combination.face
    value = game.rules.scores.chouette[face - 1]
    if not may_sirop(game, scorer, value):
        yield from scoring.score_combination(game, outcome, bought)
        return

    def ask() -> Decision:  # (F: a Bévue meanwhile may leave the score short of the Chouette)
        options = (Sirop(), Pass()) if may_sirop(game, scorer, value) else (Pass(),)
        return Decision(scorer, "sirop", options, refresh=ask)

    choice = yield ask()
    if not isinstance(choice, Sirop):
        yield from scoring.score_combination(game, outcome, bought)
        return
    game.event("sirop", seat=scorer, face=face)
    # A house rule (the Attrape-oiseau) may let another player take the sirop over: the
    # thrower then keeps the Chouette, and the sirop's gain or loss is the catcher's.
    siroter = scorer
    for rule, parameters in moment_rules(game.rules.house_rules, "sirop_declared"):
        catcher = yield from rule.moments["sirop_declared"](game, parameters, (scorer, face))
        if catcher is not None:
            siroter = catcher
    own = siroter == scorer
    if not own:
        yield from scoring.score_combination(game, outcome, bought)
    placed = yield from bird_bets(game, scorer, face)
    (die,) = yield from game.roll_dice("sirop", 1, siroter)
    dice = (face, face, die)
    game.table.dice = dice
    yield from settle_bird_bets(game, placed, die)
    sirotage = game.rules.sirotage
    if die == face:
        if own:
            outcome.sirop_success = True
        game.change_score(siroter, game.rules.scores.cul_de_chouette[face - 1], "sirop_success",
                          own_dice=own)
        return
    if own:
        outcome.sirop_success = False
    game.change_score(siroter, -value, "sirop_failure")
    for rule, parameters in moment_rules(game.rules.house_rules, "sirop_failed"):  # a Contre-Sirop
        yield from rule.moments["sirop_failed"](game, parameters, (siroter, face))
    if face == 6 and sirotage.civet_on_failed_six:
        game.give_item(siroter, "civet", "civet_sirote")
    # F: a combination made by the siroted dice applies (3,3 siroted into 3,3,6).
    if classify(dice, game.rules).name in sirotage.rescore_after:
        yield from game.apply_combination(dice, siroter)


def bird_bet_options(game: Game, seat: int, face: int) -> tuple[Action, ...]:
    sirotage = game.rules.sirotage
    bevues = game.rules.bevue.enabled
    options: tuple[Action, ...] = (Pass(),)
    if sirotage.announce_pass:
        options += (CoucheSirop(),)
    if not bevues and not game.meets_minimum(seat, "sirop_bet"):
        return options
    if sirotage.beau_sirop:
        options += (BeauSirop(),)
    # With Beau-Sirop, naming the chouette's own bird is a Bévue (offered only to be one).
    return options + tuple(BirdBet(f) for f in range(1, 7)
                           if bevues or not (sirotage.beau_sirop and f == face))


BELOW_MINIMUM = "bet on a sirop below the minimum score"


def bird_bet_bevue(game: Game, seat: int, face: int, bet: Action) -> str | None:
    """Why `bet` on a sirop of `face` is a Bévue, whatever the sirop die shows; None if it is not.
    The one reading of these Bévues: bird_bets charges them, its decision names them."""
    sirotage = game.rules.sirotage
    if not game.rules.bevue.enabled:
        return None  # (then bird_bet_options offers none of the bets below)
    if isinstance(bet, Pass) and sirotage.announce_pass:
        return "said nothing on a sirop (Couche-Sirop or File-Sirop)"
    if isinstance(bet, BirdBet) and sirotage.beau_sirop and bet.face == face:
        return "named the chouette's own bird instead of Beau-Sirop"
    if isinstance(bet, (BirdBet, BeauSirop)) and not game.meets_minimum(seat, "sirop_bet"):
        return BELOW_MINIMUM
    return None


def bird_bets(game: Game, scorer: int, face: int) -> Flow:
    """Bets on the sirop die: {seat: face bet on} (Beau-Sirop bets on the chouette's face)."""
    sirotage = game.rules.sirotage
    placed: dict[int, int] = {}
    if not sirotage.bird_bets:
        return placed
    bettors = [scorer] if sirotage.self_bet else game.seats_from(scorer)
    def ask(seat: int) -> Decision:  # (put again, `refresh`, if a false shout changes the scores meanwhile)
        options = bird_bet_options(game, seat, face)
        bevues = tuple(option for option in options if bird_bet_bevue(game, seat, face, option))
        return Decision(seat, "sirop_bet", options, bevues=bevues, refresh=lambda: ask(seat))

    for seat in bettors:
        bet = yield ask(seat)
        if (why := bird_bet_bevue(game, seat, face, bet)) is not None:
            game.bevue(seat, why)
            if why == BELOW_MINIMUM and game.scores[seat] > 0:
                # F: a bet below the minimum is void and the bettor falls to zero.
                game.change_score(seat, -game.scores[seat], "sirop_bet_below_minimum")
            continue
        if isinstance(bet, (Pass, CoucheSirop)):
            continue
        assert isinstance(bet, (BirdBet, BeauSirop))
        bet_face = face if isinstance(bet, BeauSirop) else bet.face
        placed[seat] = bet_face
        game.table.sirop_bets[seat] = bet_face
        game.event("beau_sirop" if isinstance(bet, BeauSirop) else "bird_bet",
                    seat=seat, face=bet_face)
    return placed


def settle_bird_bets(game: Game, placed: dict[int, int], die: int) -> Flow:
    sirotage = game.rules.sirotage
    for seat, bet_face in placed.items():
        if bet_face != die:
            if sirotage.bet_loss:
                game.change_score(seat, -sirotage.bet_loss, "bird_bet_lost", face=bet_face)
            continue
        # F: a winning bet pays only when claimed; forgotten, it neither pays nor costs.
        if sirotage.claim_winning_bets and not (yield from bets.claim(game, seat, "sirop_gagnant")):
            game.event("bet_unclaimed", seat=seat, face=bet_face)
            continue
        game.change_score(seat, sirotage.bet_win, "bird_bet_won", face=bet_face)
