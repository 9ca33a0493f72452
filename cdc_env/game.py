"""The game: a state that knows who must decide what, and moves when a decision is applied.

The flow of a game is written as plain sequential code (generators): each `yield` is a moment
where a player, or the dice, must decide. `GameState` drives that flow; its whole interface is
`pending` (who decides what, with the legal options), `legal_actions()` and `apply_action()`.
Chance is explicit: at a dice moment the caller, or the dice source given to the state, applies
a `Dice` action. Every score change is an event with its reason, in `log`.

A state saves as its ruleset and the actions applied to it (plus a snapshot that guards against
corruption); loading replays them. Replaying is exact because the engine has no randomness and
no clock of its own.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field
from typing import Any

from cdc_env.actions import (
    Action,
    BeauSirop,
    BetOnSuccess,
    BetSum,
    BirdBet,
    BuyCul,
    ChallengeGrelottine,
    ChallengeSoufflette,
    CoucheSirop,
    DeclareCivet,
    Dice,
    IllegalActionError,
    KeepDice,
    Pass,
    Roll,
    Shout,
    Sirop,
    UseBoucliette,
    UseGrelottine,
    action_from_json,
    valid_onset,
)
from cdc_env.combinations import (
    RACE_ARTICHETTE,
    RACE_CHOUETTE_VELUTE,
    RACE_NEANT_SOUFFLE,
    RACE_SUITE,
    RACE_SUITE_VELUTEE,
    Combination,
    classify,
)
from cdc_env.dice import DiceExhaustedError, DiceSource, dice_from_json
from cdc_env.rules import Ruleset, RulesetError

SAVE_FORMAT = "cdc-game/1"

ITEMS = ("grelottine", "civet", "boucliette", "flan")

# The phrase that answers each race. A shout of another phrase in a race is a Bévue. Tie
# races are named after their phrase. (The phrase ids are the voice lexicon's intent names.)
RACE_PHRASES = {
    RACE_CHOUETTE_VELUTE: "pas_mou_le_caillou",
    RACE_SUITE: "grelotte_ca_picote",
    "suite_tie": "sans_fin",
    "pelican": "pelican",
    "passe_montagne": "passe_montagne",
    "zbradaraldjan": "zbradaraldjan",
    "fort_heureusement": "fort_heureusement",
    # Races with several phrases: the others' phrase here; each seat's own answers are in
    # `Decision.answers` (the thrower's differ).
    RACE_SUITE_VELUTEE: "velutee",
    RACE_ARTICHETTE: "artichette",
    RACE_NEANT_SOUFFLE: "mecreant",
}
# Races of the thrower against the others (F): (the thrower's phrase, the others' phrase).
THROWER_CALLS = {
    RACE_SUITE_VELUTEE: ("patte_de_canard", "velutee"),
    RACE_ARTICHETTE: ("raitournelle", "artichette"),
}
# The Néant Soufflé: anyone may shout either phrase; "Mécréant !" wins ties against the other.
NEANT_SOUFFLE_CALLS = ("mecreant", "je_suis_un_miserable")
# The phrases of each rare race's family (the race and its tie-breaks), offered together.
_PELICAN_CHAIN = ("pelican", "passe_montagne", "zbradaraldjan")
_NEANT_SOUFFLE_FAMILY = (*NEANT_SOUFFLE_CALLS, "fort_heureusement")
RACE_FAMILIES = {
    RACE_SUITE_VELUTEE: THROWER_CALLS[RACE_SUITE_VELUTEE],
    RACE_ARTICHETTE: THROWER_CALLS[RACE_ARTICHETTE],
    **{race: _PELICAN_CHAIN for race in _PELICAN_CHAIN},
    RACE_NEANT_SOUFFLE: _NEANT_SOUFFLE_FAMILY,
    "fort_heureusement": _NEANT_SOUFFLE_FAMILY,
}
# Shouts that claim a gain before the next throw (not races: only the claimant is asked).
CLAIM_PHRASES = ("a_kadoc", "sirop_gagnant")
# The phrases that start or answer a race. A person can shout one at any moment: outside a race
# it is a false shout, a Bévue where the ruleset plays Bévues (C: "« Grelotte ça picote »
# inapproprié (les dés ne sont pas de suite)").
RACE_SHOUTS: tuple[str, ...] = tuple(dict.fromkeys([
    *RACE_PHRASES.values(),
    *(phrase for calls in THROWER_CALLS.values() for phrase in calls),
    *NEANT_SOUFFLE_CALLS,
]))
# "Grelottine !", the challenge, from a player who holds no Grelottine (C: "lancer un défi sans
# posséder de Grelottine") is a false shout too.
GRELOTTINE_SHOUT = "grelottine"
# Every phrase a player may shout, each once: what an interface or an action space must offer.
SHOUTABLE_PHRASES: tuple[str, ...] = tuple(dict.fromkeys([
    *RACE_PHRASES.values(),
    *(phrase for calls in THROWER_CALLS.values() for phrase in calls),
    *NEANT_SOUFFLE_CALLS,
    *CLAIM_PHRASES,
]))

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


class GameError(RuntimeError):
    pass


class GameLoadError(ValueError):
    """A saved game that cannot be loaded: says what is wrong with it."""


class _Won(Exception):
    """Ends the flow at once: a player reached the target on their own turn."""


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
    staked: type[Action] | None = None
    stakes: tuple[tuple[str, range], ...] = ()
    # For a race: the phrases that count for this seat (the others are wrong phrases).
    answers: tuple[str, ...] = ()

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
        if self.staked is not None and type(action) is self.staked:
            stake = getattr(action, "stake")
            return any(
                name == getattr(action, "combination") and isinstance(stake, int) and stake in stakes
                for name, stakes in self.stakes
            )
        return action in self.options

    def legal_actions(self) -> list[Action]:
        if self.is_chance:
            faces = range(1, self.sides + 1)
            return [Dice(v) for v in itertools.product(faces, repeat=self.count)]
        staked: list[Action] = []
        if self.staked is not None:
            staked = [self.staked(name, stake) for name, stakes in self.stakes for stake in stakes]  # type: ignore[call-arg]
        return list(self.options) + staked

    def describe(self) -> str:
        if self.is_chance:
            return f"the dice fall: {self.count} die(s) of {self.sides} for {self.reason}"
        what = DECISION_TEXT.get(self.kind, self.kind)
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
    sum_bets: dict[int, int] = field(default_factory=dict)  # Bleu-Rouge: seat -> sum

    def to_json(self) -> dict[str, Any]:
        return {
            "dice": list(self.dice),
            "combination": self.combination,
            "thrower": self.thrower,
            "buyer": self.buyer,
            "civet": self.civet,
            "challenge": self.challenge,
            "soufflette": self.soufflette,
            "sirop_bets": {str(k): v for k, v in self.sirop_bets.items()},
            "success_bets": list(self.success_bets),
            "race": self.race,
            "race_shouts": {str(k): v for k, v in self.race_shouts.items()},
            "race_answers": {str(k): list(v) for k, v in self.race_answers.items()},
            "sum_bets": {str(k): v for k, v in self.sum_bets.items()},
        }


Flow = Generator[Decision, Action, Any]


class GameState:
    """One game of Cul de Chouette between `players` seats (0-based) under `rules`."""

    def __init__(self, rules: Ruleset, players: int, dice: DiceSource | None = None,
                 setup: dict[str, Any] | None = None) -> None:
        """`setup` starts from a position other than the rules' own: {"scores": [...],
        "items": [{"civet": 1, ...}, ...]} (a game carried over from paper, a test)."""
        if not rules.min_players <= players <= rules.max_players:
            raise GameError(
                f"ruleset {rules.name!r} is for {rules.min_players}–{rules.max_players} players, "
                f"not {players}"
            )
        self.rules = rules
        self.players = players
        self.dice_source = dice
        self.setup = _check_setup(setup, players)
        self.scores = list(self.setup.get("scores", [0] * players))
        self.items: list[dict[str, int]] = [
            {item: 0 for item in ITEMS} for _ in range(players)
        ]
        if rules.boucliette.enabled:
            for holding in self.items:
                holding["boucliette"] = rules.boucliette.per_player
        for holding, given in zip(self.items, self.setup.get("items", [{}] * players)):
            holding.update(given)
        self.turn_seat: int | None = None
        self.turn_number = 0
        self.first_player: int | None = None
        self.winner: int | None = None
        self.table = Table()
        self.log: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        self._flow: Flow = self._game()
        self.pending: Decision | None = next(self._flow)
        self._roll_pending_dice()

    # ---------------------------------------------------------------- interface

    @property
    def is_over(self) -> bool:
        return self.pending is None

    @property
    def current_seat(self) -> int | None:
        return None if self.pending is None else self.pending.seat

    def legal_actions(self) -> list[Action]:
        return [] if self.pending is None else self.pending.legal_actions()

    def apply_action(self, action: Action, seat: int | None = None) -> None:
        """Apply the pending decision's choice. An illegal action raises and changes nothing.

        `seat`, when given, must be the seat whose decision it is (a front-end passes who
        spoke or pressed a key, so that a player acting out of turn is refused)."""
        decision = self.pending
        if decision is None:
            raise IllegalActionError(f"the game is over (seat {self.winner} won); no more actions")
        if (isinstance(action, Shout) and seat is not None and decision.kind != "race"
                and not (decision.kind == "claim" and seat == decision.seat)):
            self._false_shout(seat, action)
            return
        if seat is not None and seat != decision.seat:
            who = "the dice" if decision.is_chance else f"seat {decision.seat}"
            raise IllegalActionError(
                f"seat {seat} acted out of turn: it is {who}'s decision ({decision.describe()})"
            )
        if not isinstance(action, Action) or not decision.allows(action):
            raise IllegalActionError(self._illegal_message(action, decision))
        self._advance(decision, action)
        self._roll_pending_dice()

    def false_shout_allowed(self, seat: int, phrase: str) -> bool:
        """Whether `seat` may shout `phrase` now outside a race: a race phrase, or "Grelottine !"
        without a Grelottine. (An interface refuses any other phrase out of its moment.)"""
        return phrase in RACE_SHOUTS or (phrase == GRELOTTINE_SHOUT and not self.items[seat]["grelottine"])

    def _false_shout(self, seat: int, shout: Shout) -> None:
        """A shout from `seat` outside any race: logged, and a Bévue where Bévues are played.
        The pending decision stays as it is; the history keeps the shout for replays."""
        if not (isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < self.players):
            raise IllegalActionError(f"no seat {seat!r} at this table (seats 0–{self.players - 1})")
        if not valid_onset(shout.onset_ms):
            raise IllegalActionError(
                f"a shout needs its onset in ms (a finite number ≥ 0), got {shout.onset_ms!r}")
        if not self.false_shout_allowed(seat, shout.phrase):
            raise IllegalActionError(
                f"seat {seat} shouted {shout.phrase!r}, which fits no moment now: outside a race a "
                f"player may shout only a race phrase ({', '.join(RACE_SHOUTS)}), or "
                f"{GRELOTTINE_SHOUT!r} without holding a Grelottine"
            )
        self.history.append({"seat": seat, "action": shout.to_json()})
        self._event("false_shout", seat=seat, phrase=shout.phrase, onset_ms=shout.onset_ms)
        if self.rules.bevue.enabled:
            why = (f"challenged with {GRELOTTINE_SHOUT!r} without holding a Grelottine"
                   if shout.phrase == GRELOTTINE_SHOUT else
                   f"shouted {shout.phrase!r} when no race was on")
            self._bevue(seat, why)

    def decisions(self) -> list[dict[str, Any]]:
        """The players' decisions so far (chance outcomes left out): with the seed, a replay."""
        return [entry for entry in self.history if entry["seat"] is not None]

    # ---------------------------------------------------------------- saving

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SAVE_FORMAT,
            "ruleset": self.rules.to_dict(),
            "players": self.players,
            "setup": copy.deepcopy(self.setup),
            "dice": None if self.dice_source is None else self.dice_source.to_json(),
            "history": copy.deepcopy(self.history),
            "snapshot": self.snapshot(),
        }

    def snapshot(self) -> dict[str, Any]:
        """The public state in plain data (also what a saved game is checked against)."""
        return {
            "scores": list(self.scores),
            "items": [dict(h) for h in self.items],
            "turn_seat": self.turn_seat,
            "turn_number": self.turn_number,
            "first_player": self.first_player,
            "winner": self.winner,
            "table": self.table.to_json(),
            "log_length": len(self.log),
        }

    @classmethod
    def from_json(cls, data: Any) -> "GameState":
        if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
            raise GameLoadError(
                f"not a saved game: expected an object with format {SAVE_FORMAT!r}"
            )
        missing = {"ruleset", "players", "history", "snapshot"} - set(data)
        if missing:
            raise GameLoadError(f"saved game is missing {sorted(missing)}")
        try:
            rules = Ruleset.from_dict(data["ruleset"], source="(saved game)")
            state = cls(rules, data["players"], setup=data.get("setup"))
        except (RulesetError, GameError, TypeError) as error:
            raise GameLoadError(f"saved game has a bad ruleset or player count: {error}") from None
        for index, entry in enumerate(data["history"]):
            try:
                state.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
            except (IllegalActionError, KeyError, TypeError) as error:
                raise GameLoadError(
                    f"saved game is corrupt: history entry {index} cannot be replayed: {error}"
                ) from None
        if state.snapshot() != data["snapshot"]:
            raise GameLoadError(
                "saved game is corrupt: replaying its history does not give the saved scores "
                "and items (the file was edited or damaged)"
            )
        try:
            state.dice_source = dice_from_json(data.get("dice"))
        except (ValueError, KeyError, TypeError) as error:
            raise GameLoadError(f"saved game has a bad dice source: {error}") from None
        state._roll_pending_dice()
        return state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.to_json() == other.to_json() and self.log == other.log

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------------- internals

    def _advance(self, decision: Decision, action: Action) -> None:
        self.history.append({"seat": decision.seat, "action": action.to_json()})
        try:
            self.pending = self._flow.send(action)
        except StopIteration:
            self.pending = None

    def _roll_pending_dice(self) -> None:
        while self.pending is not None and self.pending.is_chance and self.dice_source is not None:
            try:
                values = self.dice_source.roll(self.pending.count, self.pending.sides)
            except DiceExhaustedError:
                return  # the caller gives the dice from here on
            self._advance(self.pending, Dice(values))

    def _illegal_message(self, action: object, decision: Decision) -> str:
        shown = ", ".join(str(a) for a in decision.options[:12])
        more = f", … ({len(decision.options)} in all)" if len(decision.options) > 12 else ""
        for name, stakes in decision.stakes:
            more += f", {decision.staked.kind}({name}, stake {stakes.start}..{stakes.stop - 1})"  # type: ignore[union-attr]
        if isinstance(action, Shout) and not valid_onset(action.onset_ms):
            return f"a shout needs its onset in ms (a finite number ≥ 0), got {action.onset_ms!r}"
        if decision.is_chance:
            return f"{action} is not a legal outcome: {decision.describe()}"
        return f"{action} is not legal now: {decision.describe()}; legal: {shown}{more}"

    def _event(self, type_: str, **fields: Any) -> None:
        self.log.append({"type": type_, "turn": self.turn_number, **fields})

    def _seats_from(self, seat: int, include_self: bool = False) -> list[int]:
        start = 0 if include_self else 1
        return [(seat + i) % self.players for i in range(start, self.players)]

    def _change_score(self, seat: int, points: int, reason: str, *, own_dice: bool = False,
                      **details: Any) -> None:
        """Every score change goes through here, as an event with its reason.

        A gain the cap holds (`cap_holds`) stops at the cap and never lowers a score already
        above it; a gain it does not hold may pass the target and wins at once."""
        old = self.scores[seat]
        own_turn = seat == self.turn_seat
        uncapped = own_turn and (own_dice or self.rules.cap_holds == "off_own_turn")
        new = old + points
        if points > 0 and not uncapped:
            new = max(old, min(new, self.rules.cap_score))
        if not self.rules.negative_scores:
            new = max(new, 0)
        self.scores[seat] = new
        self._event("score", seat=seat, points=points, delta=new - old, score=new,
                    reason=reason, capped=points > 0 and not uncapped, **details)
        if uncapped and points > 0 and new >= self.rules.target_score:
            self.winner = seat
            self._event("win", seat=seat, score=new)
            raise _Won

    def _give_item(self, seat: int, item: str, reason: str) -> bool:
        """One of each item at a time: a second one is not given."""
        if self.items[seat][item]:
            return False
        self.items[seat][item] = 1
        self._event("item", seat=seat, item=item, change=1, reason=reason)
        return True

    def _spend_item(self, seat: int, item: str, reason: str) -> None:
        self.items[seat][item] -= 1
        self._event("item", seat=seat, item=item, change=-1, reason=reason)

    def _bevue(self, seat: int, why: str) -> None:
        self._change_score(seat, -self.rules.bevue.penalty, "bevue", why=why)

    def _roll_dice(self, reason: str, count: int, seat: int | None, sides: int = 6) -> Flow:
        outcome = yield Decision(None, "chance", count=count, sides=sides, reason=reason)
        assert isinstance(outcome, Dice)
        self._event("dice", reason=reason, seat=seat, values=list(outcome.values))
        return outcome.values

    # ---------------------------------------------------------------- the game

    def _game(self) -> Flow:
        seat = yield from self._choose_first_player()
        self.first_player = seat
        self._event("first_player", seat=seat)
        try:
            while True:
                yield from self._turn(seat)
                seat = (seat + 1) % self.players
        except _Won:
            return

    def _choose_first_player(self) -> Flow:
        if self.players == 1:
            return 0
        if self.rules.first_player == "random":
            (value,) = yield from self._roll_dice("first_player", 1, None, sides=self.players)
            return value - 1
        contenders = list(range(self.players))
        while True:
            rolls = {}
            for seat in contenders:
                (rolls[seat],) = yield from self._roll_dice("first_player", 1, seat)
            lowest = min(rolls.values())
            contenders = [s for s in contenders if rolls[s] == lowest]
            if len(contenders) == 1:
                return contenders[0]

    def _turn(self, seat: int) -> Flow:
        self.turn_seat = seat
        self.turn_number += 1
        self.table = Table(thrower=seat)
        self._event("turn_start", seat=seat)
        civet, grelottine = yield from self._turn_start(seat)
        # A roll that is the object of a bet cannot be bought.
        outcome = yield from self._roll(seat, buyable=civet is None and grelottine is None)
        if civet is not None:
            self._settle_civet(seat, civet, outcome)
        if grelottine is not None:
            self._settle_own_grelottine(seat, grelottine, outcome)
        yield from self._grelottine_challenges(outcome)

    def _turn_start(self, seat: int) -> Flow:
        """Before the roll: a Civet, or in solo (S) a Grelottine; one bet per roll."""
        stakes = self._civet_stakes(seat)
        options: tuple[Action, ...] = (Roll(),)
        if self._may_use_grelottine(seat):
            options += (UseGrelottine(),)
        choice = yield Decision(seat, "turn_start", options,
                                staked=DeclareCivet if stakes else None, stakes=stakes)
        if isinstance(choice, UseGrelottine):
            grelottine = yield from self._use_grelottine(seat)
            yield Decision(seat, "challenge_roll", (Roll(),))
            return None, grelottine
        if isinstance(choice, DeclareCivet):
            civet = yield from self._declare_civet(seat, choice)
            return civet, None
        return None, None

    def _civet_stakes(self, seat: int) -> tuple[tuple[str, range], ...]:
        civet_rules = self.rules.civet
        if not (civet_rules.enabled and self.items[seat]["civet"]):
            return ()
        highest = civet_rules.max_stake
        if civet_rules.stake_within_score:
            highest = min(highest, self.scores[seat])  # C: the stake is one's own points
        if highest < civet_rules.min_stake:
            return ()
        allowed = range(civet_rules.min_stake, highest + 1)
        return tuple((combination, allowed) for combination in civet_rules.combinations)

    def _declare_civet(self, seat: int, choice: DeclareCivet) -> Flow:
        self._spend_item(seat, "civet", "civet_declared")
        self.table.civet = {"seat": seat, "combination": choice.combination, "stake": choice.stake}
        self._event("civet", seat=seat, combination=choice.combination, stake=choice.stake)
        backers: list[int] = []
        if self.rules.civet.bets:
            backers = yield from self._success_bets("civet_bet", self._seats_from(seat))
        return {"choice": choice, "backers": backers}

    def _settle_civet(self, seat: int, civet: dict[str, Any], outcome: RollOutcome) -> None:
        choice: DeclareCivet = civet["choice"]
        made = _made(choice.combination, outcome, sirop_counts_for_cul=False)
        self._change_score(seat, choice.stake if made else -choice.stake,
                           "civet_made" if made else "civet_failed", combination=choice.combination)
        self._settle_success_bets(civet["backers"], made, self.rules.civet, "civet")

    def _success_bets(self, kind: str, seats: Iterable[int]) -> Flow:
        backers = []
        for seat in seats:
            choice = yield Decision(seat, kind, (BetOnSuccess(), Pass()))
            if isinstance(choice, BetOnSuccess):
                backers.append(seat)
                self.table.success_bets.append(seat)
                self._event("bet_on_success", seat=seat, on=kind)
        return backers

    def _settle_success_bets(self, backers: list[int], made: bool, bet_rules: Any, what: str) -> None:
        for seat in backers:
            if made:
                self._change_score(seat, bet_rules.bet_win, f"{what}_bet_won")
            else:
                self._change_score(seat, -bet_rules.bet_loss, f"{what}_bet_lost")

    def _meets_minimum(self, seat: int, what: str) -> bool:
        """F's minimum scores, which only a game without negative scores asks for."""
        return self.rules.negative_scores or self.scores[seat] >= getattr(self.rules.minimum_scores, what)

    def _claim(self, seat: int, phrase: str) -> Flow:
        """A gain that counts only if claimed before the next throw ("À Kadoc !",
        "Sirop gagnant !"): the claimant shouts it or says nothing; forgetting is no Bévue."""
        choice = yield Decision(seat, "claim", (Pass(), Shout(phrase)), reason=phrase)
        if not isinstance(choice, Shout):
            return False
        self._event("claim", seat=seat, phrase=phrase, onset_ms=choice.onset_ms)
        return True

    # ---------------------------------------------------------------- a roll

    def _roll(self, thrower: int, *, buyable: bool) -> Flow:
        """Two chouettes, perhaps a bought cul, then the combination and its rules."""
        chouettes = yield from self._roll_dice("chouettes", 2, thrower)
        self.table.dice = chouettes
        scorer = thrower
        if buyable and self.rules.dice_buying.enabled:
            for seat in self._seats_from(thrower):
                choice = yield Decision(seat, "buy_cul", (BuyCul(), Pass()))
                if isinstance(choice, BuyCul):
                    scorer = seat
                    self.table.buyer = seat
                    self._event("buy_cul", seat=seat, from_seat=thrower)
                    self._change_score(seat, -self.rules.dice_buying.cost, "achat_du_cul")
                    break
        cul = yield from self._roll_dice("cul", 1, scorer)
        dice = chouettes + cul
        combination = self._show(dice, scorer)
        bought = scorer != thrower
        if bought and chouettes[0] == chouettes[1]:
            # The seller keeps only the Chouette of the two dice they threw.
            self._change_score(thrower, self.rules.scores.chouette[chouettes[0] - 1], "chouette",
                               own_dice=True, bought_cul=True)
        outcome = RollOutcome(dice, combination, scorer)
        yield from self._combination_rules(outcome, bought)
        return outcome

    def _show(self, dice: tuple[int, ...], scorer: int) -> Combination:
        combination = classify(dice, self.rules)
        self.table.dice = dice
        self.table.combination = combination.name
        self._event("combination", seat=scorer, dice=list(dice), combination=combination.name,
                    value=combination.value, races=list(combination.races))
        return combination

    def _combination_rules(self, outcome: RollOutcome, bought: bool) -> Flow:
        yield from COMBINATION_RULES.get(outcome.combination.name, _no_effect)(self, outcome, bought)
        for race in outcome.combination.races:
            yield from RACE_RULES[race](self, outcome)

    def _apply_combination(self, dice: tuple[int, ...], scorer: int) -> Flow:
        """Dice thrown again inside a rule (a Velutée, a Bleu-Rouge relaunch, a sirop that
        makes a new combination): their combination applies for `scorer`. Off the scorer's own
        turn it counts like a bought cul (gains capped, a Soufflette does nothing). The table
        names `scorer` as the thrower from here: the combination is theirs."""
        self.table.thrower = scorer
        outcome = RollOutcome(dice, self._show(dice, scorer), scorer)
        yield from self._combination_rules(outcome, bought=scorer != self.turn_seat)
        return outcome

    # ---------------------------------------------------------------- combinations

    def _score_combination(self, outcome: RollOutcome, _bought: bool) -> Flow:
        combination = outcome.combination
        self._change_score(outcome.scorer, combination.value, combination.name, own_dice=True)
        return
        yield  # a generator, like every combination rule

    def _may_sirop(self, seat: int, value: int) -> bool:
        if not self.rules.sirotage.enabled:
            return False
        # F without negative scores: the score must cover the Chouette's points at stake.
        # (F's "Sirop-Jeannot !" against such a sirop wins a Contre-Sirop, which F never
        # defines: the sirop is simply not offered.)
        covers = not self.rules.minimum_scores.sirotage_covers_chouette or self.scores[seat] >= value
        return self.rules.negative_scores or covers

    def _chouette(self, outcome: RollOutcome, bought: bool) -> Flow:
        scorer, face = outcome.scorer, outcome.combination.face
        value = self.rules.scores.chouette[face - 1]
        if not self._may_sirop(scorer, value):
            yield from self._score_combination(outcome, bought)
            return
        choice = yield Decision(scorer, "sirop", (Sirop(), Pass()))
        if not isinstance(choice, Sirop):
            yield from self._score_combination(outcome, bought)
            return
        self._event("sirop", seat=scorer, face=face)
        bets = yield from self._sirop_bets(scorer, face)
        (die,) = yield from self._roll_dice("sirop", 1, scorer)
        dice = (face, face, die)
        self.table.dice = dice
        yield from self._settle_sirop_bets(bets, die)
        sirotage = self.rules.sirotage
        if die == face:
            outcome.sirop_success = True
            self._change_score(scorer, self.rules.scores.cul_de_chouette[face - 1], "sirop_success",
                               own_dice=True)
            return
        outcome.sirop_success = False
        self._change_score(scorer, -value, "sirop_failure")
        if face == 6 and sirotage.civet_on_failed_six:
            self._give_item(scorer, "civet", "civet_sirote")
        # F: a combination made by the siroted dice applies (3,3 siroted into 3,3,6).
        if classify(dice, self.rules).name in sirotage.rescore_after:
            yield from self._apply_combination(dice, scorer)

    def _sirop_bet_options(self, seat: int, face: int) -> tuple[Action, ...]:
        sirotage = self.rules.sirotage
        bevues = self.rules.bevue.enabled
        options: tuple[Action, ...] = (Pass(),)
        if sirotage.announce_pass:
            options += (CoucheSirop(),)
        if not bevues and not self._meets_minimum(seat, "sirop_bet"):
            return options
        if sirotage.beau_sirop:
            options += (BeauSirop(),)
        # With Beau-Sirop, naming the chouette's own bird is a Bévue (offered only to be one).
        return options + tuple(BirdBet(f) for f in range(1, 7)
                               if bevues or not (sirotage.beau_sirop and f == face))

    def _sirop_bets(self, scorer: int, face: int) -> Flow:
        """Bets on the sirop die: {seat: face bet on} (Beau-Sirop bets on the chouette's face)."""
        sirotage = self.rules.sirotage
        bets: dict[int, int] = {}
        if not sirotage.bird_bets:
            return bets
        bettors = [scorer] if sirotage.self_bet else self._seats_from(scorer)
        for seat in bettors:
            bet = yield Decision(seat, "sirop_bet", self._sirop_bet_options(seat, face))
            if isinstance(bet, (Pass, CoucheSirop)):
                if isinstance(bet, Pass) and sirotage.announce_pass and self.rules.bevue.enabled:
                    self._bevue(seat, "said nothing on a sirop (Couche-Sirop or File-Sirop)")
                continue
            if isinstance(bet, BirdBet) and sirotage.beau_sirop and bet.face == face:
                self._bevue(seat, "named the chouette's own bird instead of Beau-Sirop")
                continue
            if not self._meets_minimum(seat, "sirop_bet"):
                # F: the bet is void and the bettor falls to zero.
                self._bevue(seat, "bet on a sirop below the minimum score")
                if self.scores[seat] > 0:
                    self._change_score(seat, -self.scores[seat], "sirop_bet_below_minimum")
                continue
            assert isinstance(bet, (BirdBet, BeauSirop))
            bet_face = face if isinstance(bet, BeauSirop) else bet.face
            bets[seat] = bet_face
            self.table.sirop_bets[seat] = bet_face
            self._event("beau_sirop" if isinstance(bet, BeauSirop) else "bird_bet",
                        seat=seat, face=bet_face)
        return bets

    def _settle_sirop_bets(self, bets: dict[int, int], die: int) -> Flow:
        sirotage = self.rules.sirotage
        for seat, bet_face in bets.items():
            if bet_face != die:
                if sirotage.bet_loss:
                    self._change_score(seat, -sirotage.bet_loss, "bird_bet_lost", face=bet_face)
                continue
            # F: a winning bet pays only when claimed; forgotten, it neither pays nor costs.
            if sirotage.claim_winning_bets and not (yield from self._claim(seat, "sirop_gagnant")):
                self._event("bet_unclaimed", seat=seat, face=bet_face)
                continue
            self._change_score(seat, sirotage.bet_win, "bird_bet_won", face=bet_face)

    def _soufflette_allowed(self, souffleur: int, target: int) -> bool:
        return self._meets_minimum(souffleur, "soufflette") and self._meets_minimum(target, "soufflette")

    def _soufflette(self, outcome: RollOutcome, bought: bool) -> Flow:
        # A bought Soufflette does nothing.
        if bought or not self.rules.soufflette.enabled or self.players < 2:
            return
        souffleur = outcome.scorer
        seats = self._seats_from(souffleur)
        if not self.rules.bevue.enabled:
            seats = [t for t in seats if self._soufflette_allowed(souffleur, t)]
        if not seats:
            return
        targets = tuple(ChallengeSoufflette(t) for t in seats)
        choice = yield Decision(souffleur, "soufflette", (Pass(),) + targets)
        if not isinstance(choice, ChallengeSoufflette):
            return
        target = choice.target
        if not self._soufflette_allowed(souffleur, target):
            self._bevue(souffleur, "a Soufflette below the minimum score")
            return
        rules = self.rules.soufflette
        self.table.soufflette = {"challenger": souffleur, "target": target, "throw": 0}
        self._event("soufflette", seat=souffleur, target=target)
        kept: tuple[int, ...] = ()
        for throw in range(1, rules.throws + 1):
            self.table.soufflette["throw"] = throw
            rolled = yield from self._roll_dice("soufflette", 3 - len(kept), target)
            dice = kept + rolled
            self.table.dice = dice
            if sorted(dice) == [1, 2, 4]:
                reward = rules.rewards[throw - 1]
                self._change_score(souffleur, -reward, "soufflette_lost", throw=throw)
                self._change_score(target, reward, "soufflette_made", throw=throw)
                return
            if throw < rules.throws:
                keep = yield Decision(target, "soufflette_keep", _keep_options(dice))
                assert isinstance(keep, KeepDice)
                kept = keep.keep
        self._change_score(target, -rules.failure, "soufflette_failed")
        self._change_score(souffleur, rules.failure, "soufflette_won")
        last = classify(dice, self.rules)
        if rules.failed_throw_scores and last.value:
            # F: then the points (only the points) of the last throw's combination are added.
            self._change_score(target, last.value, "soufflette_last_throw", combination=last.name)

    def _neant(self, outcome: RollOutcome, _bought: bool) -> Flow:
        if self.rules.neant_gives_grelottine and self._meets_minimum(outcome.scorer, "grelottine"):
            self._give_item(outcome.scorer, "grelottine", "neant")
        return
        yield

    def _bleu_rouge(self, outcome: RollOutcome, bought: bool) -> Flow:
        """F: the thrower scores the Chouette of 3, then everyone bets a different sum and the
        thrower relaunches the three dice."""
        yield from self._score_combination(outcome, bought)
        thrower = outcome.scorer
        rules = self.rules.bleu_rouge
        bettors: dict[int, int] = {}  # sum -> seat
        self.table.sum_bets = {}
        for seat in self._seats_from(thrower, True):
            options = tuple(BetSum(t) for t in range(3, 19) if t not in bettors)
            bet = yield Decision(seat, "bleu_rouge_bet", options)
            assert isinstance(bet, BetSum)
            bettors[bet.total] = seat
            self.table.sum_bets[seat] = bet.total
            self._event("sum_bet", seat=seat, total=bet.total)
        dice = yield from self._roll_dice("bleu_rouge", 3, thrower)
        self.table.dice = dice
        total = sum(dice)
        winner = bettors.get(total)
        relaunch = classify(dice, self.rules)
        self._event("relaunch", seat=thrower, dice=list(dice), total=total, winner=winner,
                    combination=relaunch.name)
        self.table.sum_bets = {}
        if winner is not None:
            self._change_score(winner, rules.bet_base + rules.bet_per_point * total,
                               "bleu_rouge_bet_won", total=total)
        if total == rules.pelican_sum:
            yield from self._pelican_race(thrower, winner)
        if relaunch.name == "neant":
            # F: "c'est un Jarret", which F never defines: a named event, nothing else (no
            # Grelottine either: a Jarret is not a Néant).
            self._event("jarret", seat=thrower, dice=list(dice))
        elif winner is not None:
            # Bet won: the combination applies, to the winner's benefit.
            yield from self._apply_combination(dice, winner)

    def _flan(self, outcome: RollOutcome, _bought: bool) -> Flow:
        """F: "À Kadoc !" before the next throw gives a Flan (one at a time). How a Flan is
        used is cut off in F: the item is kept, and nothing uses it yet."""
        scorer = outcome.scorer
        if self.items[scorer]["flan"]:
            return
        if (yield from self._claim(scorer, "a_kadoc")):
            self._give_item(scorer, "flan", "a_kadoc")

    # ---------------------------------------------------------------- races

    def _wrong_phrases_offered(self) -> bool:
        offered = self.rules.races.wrong_phrases_offered
        return self.rules.bevue.enabled if offered is None else offered

    def _race_phrases(self, race: str) -> tuple[str, ...]:
        """The phrases offered in `race` (its buttons): the everyday shouts (Chouette-Velute,
        Suite and its tie) and the phrases of the race's own family. Any other phrase fits no
        moment of this race: an interface refuses it rather than charging a Bévue."""
        phrases = [RACE_PHRASES[RACE_CHOUETTE_VELUTE]]
        if self.rules.combinations.suite:
            phrases.append(RACE_PHRASES[RACE_SUITE])
            if self.players > 1:  # alone, nobody ties
                phrases.append(RACE_PHRASES["suite_tie"])
        phrases += RACE_FAMILIES.get(race, ())
        return tuple(phrases)

    def _collect_calls(self, race: str, seats: list[int], answers: dict[int, tuple[str, ...]]) -> Flow:
        """Each seat shouts or not; returns {seat: (phrase, onset_ms)} of the shouts that count:
        one of the seat's `answers`, within the race window.

        A wrong phrase counts as no shout, and is a Bévue when the ruleset plays Bévues."""
        self.table.race = race
        self.table.race_shouts = {}
        self.table.race_answers = {seat: answers[seat] for seat in seats}
        calls: dict[int, tuple[str, float]] = {}
        shouted: list[tuple[int, Shout]] = []
        for seat in seats:
            own = answers[seat]
            phrases = self._race_phrases(race) if self._wrong_phrases_offered() else own
            phrases += tuple(p for p in own if p not in phrases)
            options = (Pass(),) + tuple(Shout(p) for p in phrases)
            choice = yield Decision(seat, "race", options, reason=race, answers=own)
            if isinstance(choice, Shout):
                shouted.append((seat, choice))
        # The shouts are simultaneous: nothing of them (a Bévue's cost included) is known to
        # anyone until every seat has decided.
        for seat, choice in shouted:
            assert choice.onset_ms is not None
            self._event("shout", seat=seat, race=race, phrase=choice.phrase, onset_ms=choice.onset_ms)
            if choice.phrase not in answers[seat]:
                if self.rules.bevue.enabled:
                    self._bevue(seat, f"shouted {choice.phrase!r} in the {race} race")
            elif choice.onset_ms <= self.rules.races.race_window_ms:
                calls[seat] = (choice.phrase, float(choice.onset_ms))
                self.table.race_shouts[seat] = float(choice.onset_ms)
        self.table.race = ""
        self.table.race_answers = {}
        return calls

    def _collect_shouts(self, race: str, seats: list[int]) -> Flow:
        """A race with one phrase for everyone: {seat: onset_ms} of the shouts that count."""
        phrase = (RACE_PHRASES[race],)
        calls = yield from self._collect_calls(race, seats, {seat: phrase for seat in seats})
        return {seat: onset for seat, (_, onset) in calls.items()}

    def _race_event(self, race: str, shouts: dict[int, float], tied: list[int], **details: Any) -> None:
        self._event("race", race=race, shouts={str(k): v for k, v in shouts.items()}, tied=tied, **details)

    def _chouette_velute_race(self, outcome: RollOutcome) -> Flow:
        thrower, value = outcome.scorer, outcome.combination.value
        shouts = yield from self._collect_shouts(RACE_CHOUETTE_VELUTE, self._seats_from(thrower, True))
        tied = first_shouters(shouts, self.rules.races.tie_window_ms)
        self._race_event(RACE_CHOUETTE_VELUTE, shouts, tied)
        if not tied:
            if self.rules.races.chouette_velute_missed == "lose_value":
                self._change_score(thrower, -value, "chouette_velute_missed")
            return
        if len(tied) > 1 and self.rules.races.chouette_velute_tie == "subtract":
            for seat in tied:
                self._change_score(seat, -value, "chouette_velute_tie")
            return
        winner = tied[0]
        if len(tied) > 1:
            winner = yield from self._dice_for_six(tied, thrower)
        self._change_score(winner, value, "chouette_velute", own_dice=winner == thrower)

    def _dice_for_six(self, tied: list[int], thrower: int) -> Flow:
        if thrower in tied:
            # The other tied players roll once: exactly one 6 takes the points, else the
            # thrower keeps them.
            sixes = []
            for seat in tied:
                if seat != thrower:
                    (die,) = yield from self._roll_dice("chouette_velute_tie", 1, seat)
                    if die == 6:
                        sixes.append(seat)
            return sixes[0] if len(sixes) == 1 else thrower
        contenders = list(tied)
        while True:
            sixes = []
            for seat in contenders:
                (die,) = yield from self._roll_dice("chouette_velute_tie", 1, seat)
                if die == 6:
                    sixes.append(seat)
            if len(sixes) == 1:
                return sixes[0]
            if sixes:
                contenders = sixes  # those still tied roll again

    def _lowest_die_wins(self, tied: list[int], reason: str) -> Flow:
        """Each tied player rolls a die; the lowest wins; the tied lowest roll again."""
        contenders = list(tied)
        while len(contenders) > 1:
            rolls = {}
            for seat in contenders:
                (rolls[seat],) = yield from self._roll_dice(reason, 1, seat)
            lowest = min(rolls.values())
            contenders = [s for s in contenders if rolls[s] == lowest]
        return contenders[0]

    def _suite_race(self, outcome: RollOutcome) -> Flow:
        seats = self._seats_from(outcome.scorer, True)
        races = self.rules.races
        shouts = yield from self._collect_shouts(RACE_SUITE, seats)
        if len(seats) == 1:
            # Alone against the clock (S): a shout in time is safe, none loses the penalty.
            self._race_event(RACE_SUITE, shouts, [] if shouts else seats)
            if not shouts:
                self._change_score(seats[0], -races.suite_penalty, "suite_last")
            return
        tied = last_shouters(shouts, seats, races.tie_window_ms)
        self._race_event(RACE_SUITE, shouts, tied)
        if len(tied) > 1:
            shouts = yield from self._collect_shouts("suite_tie", tied)
            tied = last_shouters(shouts, tied, races.tie_window_ms)
            self._race_event("suite_tie", shouts, tied)
        penalty = races.suite_penalty
        while len(tied) > 1:
            rolls = {}
            for seat in tied:
                (rolls[seat],) = yield from self._roll_dice("suite_tie", 1, seat)
            worst = (min if races.suite_tie_die == "lowest" else max)(rolls.values())
            tied = [s for s in tied if rolls[s] == worst]
            if len(tied) > 1:
                penalty += races.suite_penalty_step
        self._change_score(tied[0], -penalty, "suite_last")

    def _thrower_race(self, race: str, thrower: int, thrower_wins_ties: bool) -> Flow:
        """The thrower's phrase against the others' (F). Returns ("thrower" | "others" | "",
        the others tied first)."""
        seats = self._seats_from(thrower, True)
        own, others = THROWER_CALLS[race]
        answers = {seat: (own,) if seat == thrower else (others,) for seat in seats}
        calls = yield from self._collect_calls(race, seats, answers)
        onsets = {seat: onset for seat, (_, onset) in calls.items()}
        first = first_shouters(onsets, self.rules.races.tie_window_ms)
        self._race_event(race, onsets, first)
        if not first:
            return "", []
        if thrower in first and (len(first) == 1 or thrower_wins_ties):
            return "thrower", []
        return "others", [seat for seat in first if seat != thrower]

    def _suite_velutee_race(self, outcome: RollOutcome) -> Flow:
        """F: "Patte de canard !" validates the thrower's Velute; otherwise the first
        "Velutée !" re-rolls the chouettes and their combination with the cul is theirs; two
        tied "Velutée !" re-roll one chouette each and only the points of that combination are
        subtracted from the thrower. Nobody shouts: the Velute is not validated."""
        thrower = outcome.scorer
        who, velutee = yield from self._thrower_race(
            RACE_SUITE_VELUTEE, thrower, self.rules.suite_velutee.thrower_wins_ties)
        if who == "thrower":
            self._change_score(thrower, outcome.combination.value, "patte_de_canard", own_dice=True)
            return
        if not velutee:
            return
        cul = outcome.dice[2]
        if len(velutee) == 1:
            chouettes = yield from self._roll_dice("velutee", 2, velutee[0])
            yield from self._apply_combination(chouettes + (cul,), velutee[0])
            return
        chouettes = yield from self._roll_dice("velutee", 2, None)
        dice = chouettes + (cul,)
        combination = classify(dice, self.rules)
        self.table.dice = dice
        self._event("velutee_tie", seats=velutee, dice=list(dice), combination=combination.name,
                    value=combination.value)
        if combination.value:
            self._change_score(thrower, -combination.value, "velutee_tie", combination=combination.name)

    def _artichette_race(self, outcome: RollOutcome) -> Flow:
        """F: "Raitournelle !" wins the Chouette of 4; "Artichette !" first makes the thrower
        lose it. Nobody shouts: nothing."""
        thrower, value = outcome.scorer, outcome.combination.value
        who, _ = yield from self._thrower_race(
            RACE_ARTICHETTE, thrower, self.rules.artichette.thrower_wins_ties)
        if who == "thrower":
            self._change_score(thrower, value, "raitournelle", own_dice=True)
        elif who == "others":
            self._change_score(thrower, -value, "artichette")

    def _neant_souffle_race(self, outcome: RollOutcome) -> Flow:
        """F: the first "Mécréant !" takes a Grelottine; a first "Je suis un misérable."
        means nobody takes it. Ties: "Mécréant !" first; among Mécréants, "Fort
        heureusement…", then the lowest die."""
        seats = self._seats_from(outcome.scorer, True)
        calls = yield from self._collect_calls(RACE_NEANT_SOUFFLE, seats,
                                               {seat: NEANT_SOUFFLE_CALLS for seat in seats})
        for seat, (phrase, _) in list(calls.items()):
            if phrase == "mecreant" and not self._meets_minimum(seat, "grelottine"):
                # F without negative scores: no Grelottine and a Bévue; it counts as no shout.
                self._bevue(seat, "shouted Mécréant below the minimum score")
                del calls[seat]
        onsets = {seat: onset for seat, (_, onset) in calls.items()}
        tie_window = self.rules.races.tie_window_ms
        first = first_shouters(onsets, tie_window)
        mecreants = [seat for seat in first if calls[seat][0] == "mecreant"]
        self._race_event(RACE_NEANT_SOUFFLE, onsets, first, mecreants=mecreants)
        if not mecreants:
            return
        if len(mecreants) > 1:
            shouts = yield from self._collect_shouts("fort_heureusement", mecreants)
            mecreants = first_shouters(shouts, tie_window) or mecreants
            self._race_event("fort_heureusement", shouts, mecreants)
        winner = mecreants[0]
        if len(mecreants) > 1:
            winner = yield from self._lowest_die_wins(mecreants, "neant_souffle_tie")
        self._give_item(winner, "grelottine", "mecreant")

    def _pelican_race(self, thrower: int, bettor: int | None) -> Flow:
        """F: a relaunch of 18. The first "Pélican !" wins 28; ties go on with
        "Passe-Montagne !" then "Zbradaraldjan !"; still tied, the one who bet 18 wins if
        among them, otherwise the lowest die."""
        tie_window = self.rules.races.tie_window_ms
        shouts = yield from self._collect_shouts("pelican", self._seats_from(thrower, True))
        tied = first_shouters(shouts, tie_window)
        self._race_event("pelican", shouts, tied)
        for race in ("passe_montagne", "zbradaraldjan"):
            if len(tied) < 2:
                break
            shouts = yield from self._collect_shouts(race, tied)
            tied = first_shouters(shouts, tie_window) or tied  # nobody shouts: still tied
            self._race_event(race, shouts, tied)
        if not tied:
            return
        winner = tied[0]
        if len(tied) > 1:
            winner = bettor if bettor in tied else (yield from self._lowest_die_wins(tied, "pelican_tie"))
        self._change_score(winner, self.rules.bleu_rouge.pelican_points, "pelican")

    # ---------------------------------------------------------------- Grelottine

    def _may_use_grelottine(self, seat: int) -> bool:
        """S: usable before one's roll when every combination it may draw has a stake."""
        rules = self.rules.grelottine
        return (rules.enabled and rules.use == "before_roll" and bool(self.items[seat]["grelottine"])
                and all(self._stake_limit(seat, seat, name) >= rules.min_stake for name in rules.stake_limits))

    def _use_grelottine(self, seat: int) -> Flow:
        """S: the game draws the combination (uniformly) and the stake is the maximum."""
        names = list(self.rules.grelottine.stake_limits)
        (drawn,) = yield from self._roll_dice("grelottine_combination", 1, seat, sides=len(names))
        combination = names[drawn - 1]
        stake = self._stake_limit(seat, seat, combination)
        self._spend_item(seat, "grelottine", "grelottine_used")
        self.table.challenge = {"challenger": seat, "challenged": seat, "combination": combination,
                                "stake": stake}
        self._event("grelottine", seat=seat, challenged=seat, combination=combination, stake=stake)
        return {"combination": combination, "stake": stake}

    def _settle_own_grelottine(self, seat: int, grelottine: dict[str, Any], outcome: RollOutcome) -> None:
        made = _made(grelottine["combination"], outcome, sirop_counts_for_cul=True)
        self._event("challenge_result", challenger=seat, challenged=seat, made=made)
        stake = grelottine["stake"]
        self._change_score(seat, stake if made else -stake,
                           "grelottine_won" if made else "grelottine_lost")
        self.table.challenge = None

    def _grelottine_challenges(self, outcome: RollOutcome) -> Flow:
        """After a Néant, another holder may challenge the thrower; the challenge throw is a
        normal roll in every respect, so a Néant there may be challenged again."""
        rules = self.rules.grelottine
        while rules.enabled and rules.use == "challenge" and outcome.combination.name == "neant":
            challenged = outcome.scorer
            result = yield from self._grelottine_challenge(challenged)
            if result is None:
                return
            outcome = result

    def _stake_limit(self, challenger: int, challenged: int, combination: str) -> int:
        limit = self.rules.grelottine.stake_limits[combination]
        smallest = min(self.scores[challenger], self.scores[challenged])
        return int(smallest * limit) if smallest > 0 else 0  # floor for positive scores

    def _grelottine_challenge(self, challenged: int) -> Flow:
        rules = self.rules.grelottine
        # Several challengers: the lowest score first, then seat order after the thrower.
        order = sorted(self._seats_from(challenged), key=lambda s: self.scores[s])
        challenge: ChallengeGrelottine | None = None
        challenger = -1
        for seat in order:
            if not self.items[seat]["grelottine"]:
                continue
            stakes = tuple(
                (combination, allowed)
                for combination in rules.stake_limits
                if (allowed := range(rules.min_stake,
                                     self._stake_limit(seat, challenged, combination) + 1))
            )
            if not stakes:
                continue
            choice = yield Decision(seat, "grelottine", (Pass(),),
                                    staked=ChallengeGrelottine, stakes=stakes)
            if isinstance(choice, ChallengeGrelottine):
                challenge, challenger = choice, seat
                break
        if challenge is None:
            return None
        self._spend_item(challenger, "grelottine", "grelottine_challenge")
        self.table.challenge = {"challenger": challenger, "challenged": challenged,
                                "combination": challenge.combination, "stake": challenge.stake}
        self._event("grelottine", seat=challenger, challenged=challenged,
                    combination=challenge.combination, stake=challenge.stake)
        if self.rules.boucliette.enabled:
            for seat in self._seats_from(challenged, True):
                if seat == challenger or not self.items[seat]["boucliette"]:
                    continue
                choice = yield Decision(seat, "boucliette", (UseBoucliette(), Pass()))
                if isinstance(choice, UseBoucliette):
                    self._spend_item(seat, "boucliette", "challenge_cancelled")
                    self._event("boucliette", seat=seat, challenger=challenger)
                    self.table.challenge = None
                    return None
        backers: list[int] = []
        if rules.bets:
            uninvolved = [s for s in self._seats_from(challenged) if s != challenger]
            backers = yield from self._success_bets("challenge_bet", uninvolved)
        yield Decision(challenged, "challenge_roll", (Roll(),))
        outcome = yield from self._roll(challenged, buyable=False)
        made = _made(challenge.combination, outcome, sirop_counts_for_cul=True)
        stake = challenge.stake
        winner, loser = (challenged, challenger) if made else (challenger, challenged)
        self._event("challenge_result", challenger=challenger, challenged=challenged, made=made)
        self._change_score(loser, -stake, "grelottine_lost")
        self._change_score(winner, stake, "grelottine_won")
        self._settle_success_bets(backers, made, rules, "challenge")
        self.table.challenge = None
        return outcome


def _check_setup(setup: dict[str, Any] | None, players: int) -> dict[str, Any]:
    if setup is None:
        return {}
    if not isinstance(setup, dict) or set(setup) - {"scores", "items"}:
        raise GameError("setup takes only 'scores' and 'items'")
    scores = setup.get("scores")
    if scores is not None and (len(scores) != players or not all(isinstance(s, int) for s in scores)):
        raise GameError(f"setup scores must be {players} whole numbers, got {scores!r}")
    items = setup.get("items")
    if items is not None:
        if len(items) != players:
            raise GameError(f"setup items must give one mapping per seat ({players})")
        for holding in items:
            if set(holding) - set(ITEMS) or any(v not in (0, 1) for v in holding.values()):
                raise GameError(f"setup items: each of {', '.join(ITEMS)} is held 0 or 1 times, got {holding!r}")
    return copy.deepcopy(setup)


def _no_effect(_state: GameState, _outcome: RollOutcome, _bought: bool) -> Flow:
    return
    yield


# Each combination's rule: a small generator that scores it (and asks what it must ask).
COMBINATION_RULES = {
    "cul_de_chouette": GameState._score_combination,
    "velute": GameState._score_combination,
    "chouette": GameState._chouette,
    "soufflette": GameState._soufflette,
    "neant": GameState._neant,
    "bleu_rouge": GameState._bleu_rouge,
    "flan": GameState._flan,
    # These points go to a race's winner; the Suite and the Néant Soufflé are only races.
    "chouette_velute": _no_effect,
    "suite": _no_effect,
    "suite_velutee": _no_effect,
    "artichette": _no_effect,
    "neant_souffle": _no_effect,
}

RACE_RULES = {
    RACE_CHOUETTE_VELUTE: GameState._chouette_velute_race,
    RACE_SUITE: GameState._suite_race,
    RACE_SUITE_VELUTEE: GameState._suite_velutee_race,
    RACE_ARTICHETTE: GameState._artichette_race,
    RACE_NEANT_SOUFFLE: GameState._neant_souffle_race,
}

# Rows that also count as another combination for a Civet or a Grelottine (F: 1,2,3 "c'est
# également une Velute"). Artichette and Bleu-Rouge are not Chouettes (F: no sirop on them).
ALSO_COUNTS_AS = {"suite_velutee": "velute"}


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


def _made(named: str, outcome: RollOutcome, *, sirop_counts_for_cul: bool) -> bool:
    """Whether a roll made the combination a Civet or a Grelottine named.

    Judged on the dice as thrown; a successful sirop also makes a Cul de Chouette for a
    Grelottine ("with sirotage" is its own Civet bet). A sirop never un-makes a Chouette."""
    thrown = outcome.combination.name
    if named == "suite":
        return RACE_SUITE in outcome.combination.races
    if named == "cul_de_chouette_sirote":
        return outcome.sirop_success is True
    if named == "cul_de_chouette" and sirop_counts_for_cul and outcome.sirop_success:
        return True
    return thrown == named or ALSO_COUNTS_AS.get(thrown) == named


def _keep_options(dice: tuple[int, ...]) -> tuple[KeepDice, ...]:
    """Every choice of 0, 1 or 2 of the dice to keep (keeping all three would throw nothing)."""
    choices = {tuple(sorted(c)) for size in range(3) for c in itertools.combinations(dice, size)}
    return tuple(KeepDice(c) for c in sorted(choices, key=lambda c: (len(c), c)))
