"""The Soufflette (C, V, F): the thrower of a 1,2,4 challenges a player, who has three
throws to make 1,2,4, keeping dice between throws."""

from __future__ import annotations

import itertools

from cdc_env.actions import ChallengeSoufflette, KeepDice, Pass
from cdc_env.combinations import classify
from cdc_env.flow import Decision, Flow, RollOutcome
from cdc_env.rulebook.table import Game


def allowed(game: Game, souffleur: int, target: int) -> bool:
    return game.meets_minimum(souffleur, "soufflette") and game.meets_minimum(target, "soufflette")


def challenge(game: Game, outcome: RollOutcome, bought: bool) -> Flow:
    # A bought Soufflette does nothing.
    if bought or not game.rules.soufflette.enabled or game.players < 2:
        return
    souffleur = outcome.scorer
    seats = game.seats_from(souffleur)
    if not game.rules.bevue.enabled:
        seats = [t for t in seats if allowed(game, souffleur, t)]
    if not seats:
        return
    targets = tuple(ChallengeSoufflette(t) for t in seats)

    def ask() -> Decision:  # (put again, `refresh`, if a false shout changes the scores meanwhile)
        return Decision(souffleur, "soufflette", (Pass(),) + targets, refresh=ask,
                        bevues=tuple(t for t in targets if not allowed(game, souffleur, t.target)))

    choice = yield ask()
    if not isinstance(choice, ChallengeSoufflette):
        return
    target = choice.target
    if not allowed(game, souffleur, target):
        game.bevue(souffleur, "a Soufflette below the minimum score")
        return
    rules = game.rules.soufflette
    game.table.soufflette = {"challenger": souffleur, "target": target, "throw": 0}
    game.event("soufflette", seat=souffleur, target=target)
    kept: tuple[int, ...] = ()
    for throw in range(1, rules.throws + 1):
        game.table.soufflette["throw"] = throw
        rolled = yield from game.roll_dice("soufflette", 3 - len(kept), target)
        dice = kept + rolled
        game.table.dice = dice
        if sorted(dice) == [1, 2, 4]:
            reward = rules.rewards[throw - 1]
            game.change_score(souffleur, -reward, "soufflette_lost", throw=throw)
            game.change_score(target, reward, "soufflette_made", throw=throw)
            return
        if throw < rules.throws:
            keep = yield Decision(target, "soufflette_keep", keep_options(dice))
            assert isinstance(keep, KeepDice)
            kept = keep.keep
    game.change_score(target, -rules.failure, "soufflette_failed")
    game.change_score(souffleur, rules.failure, "soufflette_won")
    last = classify(dice, game.rules)
    if rules.failed_throw_scores and last.value:
        # F: then the points (only the points) of the last throw's combination are added.
        game.change_score(target, last.value, "soufflette_last_throw", combination=last.name)


def keep_options(dice: tuple[int, ...]) -> tuple[KeepDice, ...]:
    """Every choice of 0, 1 or 2 of the dice to keep (keeping all three would throw nothing)."""
    choices = {tuple(sorted(c)) for size in range(3) for c in itertools.combinations(dice, size)}
    return tuple(KeepDice(c) for c in sorted(choices, key=lambda c: (len(c), c)))
