"""F's rare combinations: the Suite-Velutée, the Artichette, the Bleu-Rouge with its sum bets
and the Pélican, the Flan, the Néant Soufflé."""

from __future__ import annotations

from cdc_env.actions import BetSum
from cdc_env.combinations import (
    RACE_ARTICHETTE,
    RACE_NEANT_SOUFFLE,
    RACE_SUITE_VELUTEE,
    classify,
)
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook import bets, races, scoring
from cdc_env.rulebook.phrases import NEANT_SOUFFLE_CALLS, THROWER_CALLS
from cdc_env.rulebook.table import Game


def bleu_rouge(game: Game, outcome: RollOutcome, bought: bool) -> Flow:
    """F: the thrower scores the Chouette of 3, then everyone bets a different sum and the
    thrower relaunches the three dice."""
    yield from scoring.score_combination(game, outcome, bought)
    thrower = outcome.scorer
    rules = game.rules.bleu_rouge
    bettors: dict[int, int] = {}  # sum -> seat
    game.table.sum_bets = {}
    for seat in game.seats_from(thrower, True):
        options = tuple(BetSum(t) for t in range(3, 19) if t not in bettors)
        bet = yield Decision(seat, "bleu_rouge_bet", options)
        assert isinstance(bet, BetSum)
        bettors[bet.total] = seat
        game.table.sum_bets[seat] = bet.total
        game.event("sum_bet", seat=seat, total=bet.total)
    dice = yield from game.roll_dice("bleu_rouge", 3, thrower)
    game.table.dice = dice
    total = sum(dice)
    winner = bettors.get(total)
    relaunch = classify(dice, game.rules)
    game.event("relaunch", seat=thrower, dice=list(dice), total=total, winner=winner,
                combination=relaunch.name)
    game.table.sum_bets = {}
    if winner is not None:
        game.change_score(winner, rules.bet_base + rules.bet_per_point * total,
                           "bleu_rouge_bet_won", total=total)
    if total == rules.pelican_sum:
        yield from pelican_race(game, thrower, winner)
    if relaunch.name == "neant":
        # F: "c'est un Jarret", which F never defines: a named event, nothing else (no
        # Grelottine either: a Jarret is not a Néant).
        game.event("jarret", seat=thrower, dice=list(dice))
    elif winner is not None:
        # Bet won: the combination applies, to the winner's benefit.
        yield from game.apply_combination(dice, winner)


def flan(game: Game, outcome: RollOutcome, _bought: bool) -> Flow:
    """F: "À Kadoc !" before the next throw gives a Flan (one at a time). How a Flan is
    used is cut off in F: the item is kept, and nothing uses it yet."""
    scorer = outcome.scorer
    if game.items[scorer]["flan"]:
        return
    if (yield from bets.claim(game, scorer, "a_kadoc")):
        game.give_item(scorer, "flan", "a_kadoc")


def thrower_race(game: Game, race: str, thrower: int, thrower_wins_ties: bool) -> Flow:
    """The thrower's phrase against the others' (F). Returns ("thrower" | "others" | "",
    the others tied first)."""
    seats = game.seats_from(thrower, True)
    own, others = THROWER_CALLS[race]
    answers: dict[int, tuple[str, ...]] = {seat: (own,) if seat == thrower else (others,) for seat in seats}
    calls = yield from races.collect_calls(game, race, seats, answers)
    onsets = {seat: onset for seat, (_, onset) in calls.items()}
    first = races.first_shouters(onsets, game.rules.races.tie_window_ms)
    races.race_event(game, race, onsets, first)
    if not first:
        return "", []
    if thrower in first and (len(first) == 1 or thrower_wins_ties):
        return "thrower", []
    return "others", [seat for seat in first if seat != thrower]


def suite_velutee_race(game: Game, outcome: RollOutcome) -> Flow:
    """F: "Patte de canard !" validates the thrower's Velute; otherwise the first
    "Velutée !" re-rolls the chouettes and their combination with the cul is theirs; two
    tied "Velutée !" re-roll one chouette each and only the points of that combination are
    subtracted from the thrower. Nobody shouts: the Velute is not validated."""
    thrower = outcome.scorer
    who, velutee = yield from thrower_race(game,
        RACE_SUITE_VELUTEE, thrower, game.rules.suite_velutee.thrower_wins_ties)
    if who == "thrower":
        game.change_score(thrower, outcome.combination.value, "patte_de_canard", own_dice=True)
        return
    if not velutee:
        return
    cul = outcome.dice[2]
    if len(velutee) == 1:
        chouettes = yield from game.roll_dice("velutee", 2, velutee[0])
        yield from game.apply_combination(chouettes + (cul,), velutee[0])
        return
    chouettes = yield from game.roll_dice("velutee", 2, None)
    dice = chouettes + (cul,)
    combination = classify(dice, game.rules)
    game.table.dice = dice
    game.event("velutee_tie", seats=velutee, dice=list(dice), combination=combination.name,
                value=combination.value)
    if combination.value:
        game.change_score(thrower, -combination.value, "velutee_tie", combination=combination.name)


def artichette_race(game: Game, outcome: RollOutcome) -> Flow:
    """F: "Raitournelle !" wins the Chouette of 4; "Artichette !" first makes the thrower
    lose it. Nobody shouts: nothing."""
    thrower, value = outcome.scorer, outcome.combination.value
    who, _ = yield from thrower_race(game,
        RACE_ARTICHETTE, thrower, game.rules.artichette.thrower_wins_ties)
    if who == "thrower":
        game.change_score(thrower, value, "raitournelle", own_dice=True)
    elif who == "others":
        game.change_score(thrower, -value, "artichette")


def neant_souffle_race(game: Game, outcome: RollOutcome) -> Flow:
    """F: the first "Mécréant !" takes a Grelottine; a first "Je suis un misérable."
    means nobody takes it. Ties: "Mécréant !" first; among Mécréants, "Fort
    heureusement…", then the lowest die."""
    seats = game.seats_from(outcome.scorer, True)
    below = [seat for seat in seats if not game.meets_minimum(seat, "grelottine")]
    calls = yield from races.collect_calls(game, RACE_NEANT_SOUFFLE, seats,
                                           {seat: NEANT_SOUFFLE_CALLS for seat in seats},
                                           {seat: ("mecreant",) for seat in below})
    for seat, (phrase, _) in list(calls.items()):
        if phrase == "mecreant" and seat in below:
            # F without negative scores: no Grelottine and a Bévue; it counts as no shout.
            if game.rules.bevue.enabled:
                game.bevue(seat, "shouted Mécréant below the minimum score")
            del calls[seat]
    onsets = {seat: onset for seat, (_, onset) in calls.items()}
    tie_window = game.rules.races.tie_window_ms
    first = races.first_shouters(onsets, tie_window)
    mecreants = [seat for seat in first if calls[seat][0] == "mecreant"]
    races.race_event(game, RACE_NEANT_SOUFFLE, onsets, first, mecreants=mecreants)
    if not mecreants:
        return
    if len(mecreants) > 1:
        shouts = yield from races.collect_shouts(game, "fort_heureusement", mecreants)
        mecreants = races.first_shouters(shouts, tie_window) or mecreants
        races.race_event(game, "fort_heureusement", shouts, mecreants)
    winner = mecreants[0]
    if len(mecreants) > 1:
        winner = yield from races.lowest_die_wins(game, mecreants, "neant_souffle_tie")
    game.give_item(winner, "grelottine", "mecreant")


def pelican_race(game: Game, thrower: int, bettor: int | None) -> Flow:
    """F: a relaunch of 18. The first "Pélican !" wins 28; ties go on with
    "Passe-Montagne !" then "Zbradaraldjan !"; still tied, the one who bet 18 wins (F: "le
    joueur ayant relancé de 18 gagne les points", among the tied or not), and only if nobody
    bet 18 do the tied throw a die, the lowest winning."""
    tie_window = game.rules.races.tie_window_ms
    shouts = yield from races.collect_shouts(game, "pelican", game.seats_from(thrower, True))
    tied = races.first_shouters(shouts, tie_window)
    races.race_event(game, "pelican", shouts, tied)
    for race in ("passe_montagne", "zbradaraldjan"):
        if len(tied) < 2:
            break
        shouts = yield from races.collect_shouts(game, race, tied)
        tied = races.first_shouters(shouts, tie_window) or tied  # nobody shouts: still tied
        races.race_event(game, race, shouts, tied)
    if not tied:
        return
    winner = tied[0]
    if len(tied) > 1:
        winner = bettor if bettor is not None else (yield from races.lowest_die_wins(game, tied, "pelican_tie"))
    game.change_score(winner, game.rules.bleu_rouge.pelican_points, "pelican")
