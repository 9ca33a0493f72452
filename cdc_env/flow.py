"""The moments of a game: who must decide what (`Decision`), what the table shows (`Table`),
what a roll made (`RollOutcome`), and `Flow`, the generator type every rule is written as:
each `yield` is a moment where a player, or the dice, must decide."""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

from cdc_env.actions import Action, ChallengeGrelottine, DeclareCivet, Dice, Shout, valid_onset
from cdc_env.combinations import Combination

ITEMS = ("grelottine", "civet", "boucliette", "flan")

# What each kind of decision asks, for messages and user interfaces.
DECISION_TEXT = {
    "turn_start": "roll the dice (or first declare a Civet, or use a Grelottine in solo)",
    "civet_bet": "bet on the Civet's success, or pass",
    "buy_cul": "buy the cul (the third die), or pass",
    "sirop": "sirop the odd die, or keep the Chouette",
    "sirop_bet": "bet a bird on the sirop die, or pass",
    "race": "shout, or stay silent",
    "soufflette": "challenge a player to a Soufflette, or pass",
    "soufflette_keep": "choose the dice to keep before the next Soufflette throw",
    "grelottine": "challenge the thrower to a Grelottine, or pass",
    "boucliette": "cancel the challenge with a Boucliette, or pass",
    "challenge_bet": "bet on the challenge's success, or pass",
    "challenge_roll": "roll the challenge throw",
    "bleu_rouge_bet": "bet on the sum of the Bleu-Rouge relaunch (a sum nobody took)",
    "claim": "shout the claim before the next throw, or say nothing",
    "chance": "the dice fall",
}


@dataclass(frozen=True)
class Decision:
    """A moment where `seat` (None: the dice) must choose one of `options`."""

    seat: int | None
    kind: str
    options: tuple[Action, ...] = ()
    # For a chance moment: how many dice fall, with how many sides, and why.
    count: int = 0
    sides: int = 6
    # Why this moment exists: the race, the chance reason ("chouettes", "cul", "sirop", ...).
    reason: str = ""
    # A staked choice (Civet, Grelottine): its action type and, per combination, the stakes
    # allowed. Kept as ranges rather than hundreds of options.
    staked: type[DeclareCivet] | type[ChallengeGrelottine] | None = None
    stakes: tuple[tuple[str, range], ...] = ()
    # For a race: the phrases that count for this seat (the others are wrong phrases).
    answers: tuple[str, ...] = ()
    # The options the rules make a Bévue whatever comes after (a wrong phrase in a race, the
    # silent pass where « Couche-Sirop ! » is said): offered, as a player can make them, and
    # named here once, for the bots that never make one and the screens that say so.
    bevues: tuple[Action, ...] = ()
    # The same moment asked with the scores as they are now: a decision whose choices depend on
    # the scores (a Civet's or a challenge's stakes, F's sirop) is put again after a false
    # shout's Bévue changed them while it waited (its old stakes were still accepted).
    refresh: Callable[[], Decision] | None = field(default=None, compare=False, repr=False)

    @property
    def is_chance(self) -> bool:
        return self.seat is None

    def allows(self, action: Action) -> bool:
        if self.is_chance:
            return (
                isinstance(action, Dice)
                and len(action.values) == self.count
                and all(isinstance(v, int) and 1 <= v <= self.sides for v in action.values)
            )
        if isinstance(action, Shout):
            return Shout(action.phrase) in self.options and valid_onset(action.onset_ms)
        if isinstance(action, (DeclareCivet, ChallengeGrelottine)) and type(action) is self.staked:
            stake = action.stake
            return any(
                name == action.combination and isinstance(stake, int) and stake in stakes
                for name, stakes in self.stakes
            )
        return action in self.options

    def legal_actions(self) -> list[Action]:
        if self.is_chance:
            faces = range(1, self.sides + 1)
            return [Dice(v) for v in itertools.product(faces, repeat=self.count)]
        staked: list[Action] = []
        if self.staked is not None:
            staked = [self.staked(name, stake) for name, stakes in self.stakes for stake in stakes]
        return list(self.options) + staked

    def describe(self) -> str:
        if self.is_chance:
            return f"the dice fall: {self.count} die(s) of {self.sides} for {self.reason}"
        what = DECISION_TEXT.get(self.kind) or _house_decision_text(self.kind)
        extra = f" [{self.reason}]" if self.reason else ""
        return f"seat {self.seat} must {what}{extra}"


@dataclass
class RollOutcome:
    """What a roll made, for the rules that judge it afterwards (Civet, Grelottine)."""

    dice: tuple[int, ...]
    combination: Combination
    scorer: int
    sirop_success: bool | None = None  # None: no sirop


@dataclass
class Table:
    """The public context of the moment, for observations and user interfaces."""

    dice: tuple[int, ...] = ()
    combination: str = ""
    thrower: int | None = None
    buyer: int | None = None
    civet: dict[str, Any] | None = None
    challenge: dict[str, Any] | None = None
    soufflette: dict[str, Any] | None = None
    sirop_bets: dict[int, int] = field(default_factory=dict)
    success_bets: list[int] = field(default_factory=list)
    race: str = ""
    race_shouts: dict[int, float] = field(default_factory=dict)
    # During a race: the phrases that count for each seat in it (the thrower's may differ).
    race_answers: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # During a race: the decision each seat in it is asked (its options, answers and Bévues), for
    # a client that asks the seats itself (the live table asks its bots at once). Not saved: a
    # loaded game rebuilds it by replaying its turn.
    race_decisions: dict[int, Decision] = field(default_factory=dict)
    sum_bets: dict[int, int] = field(default_factory=dict)  # Bleu-Rouge: seat -> sum
    # What the table's house rules show (their bets): name -> plain data.
    house: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "dice": list(self.dice),
            "combination": self.combination,
            "thrower": self.thrower,
            "buyer": self.buyer,
            # Copies: the rules change these in place (a Soufflette's throw count), and a save or a
            # snapshot kept in memory went on changing with the game, then failed to load.
            "civet": copy.deepcopy(self.civet),
            "challenge": copy.deepcopy(self.challenge),
            "soufflette": copy.deepcopy(self.soufflette),
            "sirop_bets": {str(k): v for k, v in self.sirop_bets.items()},
            "success_bets": list(self.success_bets),
            "race": self.race,
            "race_shouts": {str(k): v for k, v in self.race_shouts.items()},
            "race_answers": {str(k): list(v) for k, v in self.race_answers.items()},
            "sum_bets": {str(k): v for k, v in self.sum_bets.items()},
            # Only where a house rule put something: the tables of the five texts stay as saved.
            **({"house": copy.deepcopy(self.house)} if self.house else {}),
        }


def _house_decision_text(kind: str) -> str:
    """What a house rule's decision asks (its own words), else the kind's name."""
    from cdc_env.rulebook.house.registry import REGISTRY  # the registry imports this module

    return next((rule.decisions[kind] for rule in REGISTRY.values() if kind in rule.decisions), kind)


Flow = Generator[Decision, Action, Any]
