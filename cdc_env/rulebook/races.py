"""Races: who shouts first, or last, decided from shout onsets. The Chouette-Velute's
"Pas mou le caillou !" with its dice for a six, the Suite's "Grelotte ça picote !" with
"Sans fin…" and its dice ties; the collection of shouts every race shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cdc_env.actions import Pass, Shout
from cdc_env.combinations import RACE_CHOUETTE_VELUTE, RACE_SUITE
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook.phrases import RACE_FAMILIES, RACE_PHRASES
from cdc_env.rulebook.table import Game

# Races lost by the last shouter (a race event's `tied` names the losers); every other race is
# won by the first.
LAST_SHOUTER_LOSES = (RACE_SUITE, "suite_tie")


def wrong_phrases_offered(game: Game) -> bool:
    offered = game.rules.races.wrong_phrases_offered
    return game.rules.bevue.enabled if offered is None else offered


def race_phrases(game: Game, race: str) -> tuple[str, ...]:
    """The phrases offered in `race` (its buttons): the everyday shouts (Chouette-Velute,
    Suite and its tie) and the phrases of the race's own family. Any other phrase fits no
    moment of this race: an interface refuses it rather than charging a Bévue."""
    phrases = [RACE_PHRASES[RACE_CHOUETTE_VELUTE]]
    if game.rules.combinations.suite:
        phrases.append(RACE_PHRASES[RACE_SUITE])
        if game.players > 1:  # alone, nobody ties
            phrases.append(RACE_PHRASES["suite_tie"])
    phrases += RACE_FAMILIES.get(race, ())
    return tuple(phrases)


def collect_calls(game: Game, race: str, seats: list[int], answers: Mapping[int, tuple[str, ...]],
                  bevue_answers: Mapping[int, tuple[str, ...]] | None = None) -> Flow:
    """Each seat shouts or not; returns {seat: (phrase, onset_ms)} of the shouts that count:
    one of the seat's `answers`, within the race window.

    A wrong phrase counts as no shout, and is a Bévue when the ruleset plays Bévues.
    `bevue_answers`: answers the caller charges a Bévue for (« Mécréant ! » below F's minimum),
    named in the decision's `bevues` with the wrong phrases."""
    game.table.race = race
    game.table.race_shouts = {}
    game.table.race_answers = {seat: answers[seat] for seat in seats}
    game.table.race_decisions = {}
    for seat in seats:
        own = answers[seat]
        phrases = race_phrases(game, race) if wrong_phrases_offered(game) else own
        phrases += tuple(p for p in own if p not in phrases)
        options = (Pass(),) + tuple(Shout(p) for p in phrases)
        charged = (bevue_answers or {}).get(seat, ())
        bevues = tuple(Shout(p) for p in phrases if p not in own or p in charged) if game.rules.bevue.enabled else ()
        game.table.race_decisions[seat] = Decision(seat, "race", options, reason=race, answers=own, bevues=bevues)
    calls: dict[int, tuple[str, float]] = {}
    shouted: list[tuple[int, Shout]] = []
    for seat in seats:
        choice = yield game.table.race_decisions[seat]
        if isinstance(choice, Shout):
            shouted.append((seat, choice))
    # The shouts are simultaneous: nothing of them (a Bévue's cost included) is known to
    # anyone until every seat has decided.
    for seat, choice in shouted:
        assert choice.onset_ms is not None
        game.event("shout", seat=seat, race=race, phrase=choice.phrase, onset_ms=choice.onset_ms)
        if choice.phrase not in answers[seat]:
            if game.rules.bevue.enabled:
                game.bevue(seat, f"shouted {choice.phrase!r} in the {race} race")
        elif choice.onset_ms <= game.rules.races.race_window_ms:
            calls[seat] = (choice.phrase, float(choice.onset_ms))
            game.table.race_shouts[seat] = float(choice.onset_ms)
    game.table.race = ""
    game.table.race_answers = {}
    game.table.race_decisions = {}
    return calls


def collect_shouts(game: Game, race: str, seats: list[int]) -> Flow:
    """A race with one phrase for everyone: {seat: onset_ms} of the shouts that count."""
    phrase = (RACE_PHRASES[race],)
    calls = yield from collect_calls(game, race, seats, {seat: phrase for seat in seats})
    return {seat: onset for seat, (_, onset) in calls.items()}


def race_event(game: Game, race: str, shouts: dict[int, float], tied: list[int], **details: Any) -> None:
    game.event("race", race=race, shouts={str(k): v for k, v in shouts.items()}, tied=tied, **details)


def chouette_velute_race(game: Game, outcome: RollOutcome) -> Flow:
    thrower, value = outcome.scorer, outcome.combination.value
    shouts = yield from collect_shouts(game, RACE_CHOUETTE_VELUTE, game.seats_from(thrower, True))
    tied = first_shouters(shouts, game.rules.races.tie_window_ms)
    race_event(game, RACE_CHOUETTE_VELUTE, shouts, tied)
    if not tied:
        if game.rules.races.chouette_velute_missed == "lose_value":
            game.change_score(thrower, -value, "chouette_velute_missed")
        return
    if len(tied) > 1 and game.rules.races.chouette_velute_tie == "subtract":
        for seat in tied:
            game.change_score(seat, -value, "chouette_velute_tie")
        return
    winner = tied[0]
    if len(tied) > 1:
        winner = yield from dice_for_six(game, tied, thrower)
    game.change_score(winner, value, "chouette_velute", own_dice=winner == thrower)


def dice_for_six(game: Game, tied: list[int], thrower: int) -> Flow:
    if thrower in tied:
        # The other tied players roll once: exactly one 6 takes the points, else the
        # thrower keeps them.
        sixes = []
        for seat in tied:
            if seat != thrower:
                (die,) = yield from game.roll_dice("chouette_velute_tie", 1, seat)
                if die == 6:
                    sixes.append(seat)
        return sixes[0] if len(sixes) == 1 else thrower
    contenders = list(tied)
    while True:
        sixes = []
        for seat in contenders:
            (die,) = yield from game.roll_dice("chouette_velute_tie", 1, seat)
            if die == 6:
                sixes.append(seat)
        if len(sixes) == 1:
            return sixes[0]
        if sixes:
            contenders = sixes  # those still tied roll again


def lowest_die_wins(game: Game, tied: list[int], reason: str) -> Flow:
    """Each tied player rolls a die; the lowest wins; the tied lowest roll again."""
    contenders = list(tied)
    while len(contenders) > 1:
        rolls = {}
        for seat in contenders:
            (rolls[seat],) = yield from game.roll_dice(reason, 1, seat)
        lowest = min(rolls.values())
        contenders = [s for s in contenders if rolls[s] == lowest]
    return contenders[0]


def suite_race(game: Game, outcome: RollOutcome) -> Flow:
    seats = game.seats_from(outcome.scorer, True)
    races = game.rules.races
    shouts = yield from collect_shouts(game, RACE_SUITE, seats)
    if len(seats) == 1:
        # Alone against the clock (S): a shout in time is safe, none loses the penalty.
        race_event(game, RACE_SUITE, shouts, [] if shouts else seats)
        if not shouts:
            game.change_score(seats[0], -races.suite_penalty, "suite_last")
        return
    tied = last_shouters(shouts, seats, races.tie_window_ms)
    race_event(game, RACE_SUITE, shouts, tied)
    if len(tied) > 1:
        shouts = yield from collect_shouts(game, "suite_tie", tied)
        tied = last_shouters(shouts, tied, races.tie_window_ms)
        race_event(game, "suite_tie", shouts, tied)
    penalty = races.suite_penalty
    while len(tied) > 1:
        rolls = {}
        for seat in tied:
            (rolls[seat],) = yield from game.roll_dice("suite_tie", 1, seat)
        worst = (min if races.suite_tie_die == "lowest" else max)(rolls.values())
        tied = [s for s in tied if rolls[s] == worst]
        if len(tied) > 1:
            penalty += races.suite_penalty_step
    game.change_score(tied[0], -penalty, "suite_last")


def first_shouters(shouts: dict[int, float], tie_window_ms: float) -> list[int]:
    """The first shouter, or those tied for first (within the tie window of the earliest)."""
    if not shouts:
        return []
    earliest = min(shouts.values())
    return sorted((s for s, t in shouts.items() if t - earliest <= tie_window_ms),
                  key=lambda s: (shouts[s], s))


def last_shouters(shouts: dict[int, float], seats: list[int], tie_window_ms: float) -> list[int]:
    """The last shouter, or those tied for last. Not shouting counts as last."""
    silent = [s for s in seats if s not in shouts]
    if silent:
        return silent
    latest = max(shouts.values())
    return [s for s in seats if latest - shouts[s] <= tie_window_ms]
