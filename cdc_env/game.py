"""The game: a state that knows who must decide what, and moves when a decision is applied.

The flow of a game is written as plain sequential code (generators): each `yield` is a moment
where a player, or the dice, must decide. `GameState` drives that flow; its whole interface is
`pending` (who decides what, with the legal options), `legal_actions()` and `apply_action()`.
Chance is explicit: at a dice moment the caller, or the dice source given to the state, applies
a `Dice` action. Every score change is an event with its reason, in `log`.

This module holds the turn itself — the first player, the roll, the combination shown — and the
tools every rule uses (score changes, items, events, dice). The rules live in the rulebook,
one module per family (`cdc_env/rulebook/`), registered in `cdc_env/rulebook/__init__.py`.

A state saves as its ruleset and the actions applied to it (plus a snapshot that guards against
corruption); loading replays them. Replaying is exact because the engine has no randomness and
no clock of its own.
"""

from __future__ import annotations

import copy
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from cdc_env.actions import (
    Action,
    DeclareCivet,
    Dice,
    IllegalActionError,
    Join,
    Roll,
    Shout,
    UseGrelottine,
    action_from_json,
    valid_onset,
)
from cdc_env.combinations import Combination, classify
from cdc_env.dice import DiceAgain, DiceExhaustedError, DiceSource, copy_dice, dice_from_json
from cdc_env.flow import DECISION_TEXT, ITEMS, Decision, Flow, RollOutcome, Table
from cdc_env.rulebook import COMBINATION_RULES, RACE_RULES, achat, civet, false_shouts, grelottine, scoring
from cdc_env.rulebook.house import REGISTRY, RULESET_PARTS, late_join_rule, moment_rules, plays_teams, teams_of
from cdc_env.rulebook.phrases import (
    CLAIM_PHRASES,
    GRELOTTINE_SHOUT,
    NEANT_SOUFFLE_CALLS,
    RACE_FAMILIES,
    RACE_PHRASES,
    RACE_SHOUTS,
    SHOUTABLE_PHRASES,
    THROWER_CALLS,
)
from cdc_env.rulebook.table import Game
from cdc_env.rules import Ruleset, RulesetError

# The engine's vocabulary, importable from here as before the rule families had rooms of their own.
__all__ = [
    "CLAIM_PHRASES", "DECISION_TEXT", "GRELOTTINE_SHOUT", "ITEMS", "NEANT_SOUFFLE_CALLS",
    "RACE_FAMILIES", "RACE_PHRASES", "RACE_SHOUTS", "SAVE_FORMAT", "SHOUTABLE_PHRASES",
    "THROWER_CALLS", "Decision", "Flow", "GameError", "GameLoadError", "GameState", "JoinRefused",
    "RollOutcome", "Table",
]

SAVE_FORMAT = "cdc-game/1"


class GameError(RuntimeError):
    pass


class GameLoadError(ValueError):
    """A saved game that cannot be loaded: says what is wrong with it."""


class JoinRefused(GameError, IllegalActionError):
    """A player cannot join the game now (`GameState.join`): says why and what to do. Like any
    refused action it changes nothing."""


class _Won(Exception):
    """Ends the flow at once: a player reached the target on their own turn."""


class GameState:
    """One game of Cul de Chouette between `players` seats (0-based) under `rules`."""

    def __init__(self, rules: Ruleset, players: int, dice: DiceSource | None = None,
                 setup: dict[str, Any] | None = None) -> None:
        """`setup` starts from a position other than the rules' own: {"scores": [...],
        "items": [{"civet": 1, ...}, ...]} (a game carried over from paper, a test)."""
        if (refusal := rules.players_refusal(players)) is not None:
            raise GameError(refusal)
        self.rules = rules
        try:
            # Each seat's team: itself alone, unless a house rule plays teams (the Doublette).
            self.teams = teams_of(rules.house_rules, players)
        except ValueError as error:
            raise GameError(str(error)) from None
        self.players = players
        # The seats at the start: a saved game replays from them (players who joined later,
        # the Chante-Sloubi, are steps of its history).
        self.seated_at_start = players
        # Who holds this game's list of players fixed (an environment's agents), refusing any
        # late friend: None at a table that may take one.
        self.seats_fixed_by: str | None = None
        self.dice_source = dice
        self.setup = _check_setup(setup, players, rules, self.teams)
        self.scores = list(self.setup.get("scores", [0] * players))
        self.items: list[dict[str, int]] = self._initial_items()
        self.turn_seat: int | None = None
        self.turn_number = 0
        self.round_number = 0
        self.first_player: int | None = None
        self.winner: int | None = None
        self.table = Table()
        self.log: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        # Where the turn in play began (its seat, and the state then): what `clone` rebuilds
        # from. None before the first turn.
        self._turn_began: _TurnStart | None = None
        # The actions applied since then (seat, action, whether it moved the flow; a false
        # shout does not), as objects: a clone replays them without parsing the history.
        self._turn_actions: list[tuple[int | None, Action, bool]] = []
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
        if isinstance(action, Join):
            self._join(action, seat)
            return
        if decision is None:
            raise IllegalActionError(f"the game is over (seat {self.winner} won); no more actions")
        # Outside a race a shout is a false shout, unless it is the answer this seat's own
        # decision asks for (a claim such as "Sirop gagnant !"). A claimant who shouts a race
        # phrase instead has shouted out of place like anyone else.
        if isinstance(action, Shout) and seat is not None and decision.kind != "race" and not (
                seat == decision.seat and (decision.allows(action)
                                           or not self.false_shout_allowed(seat, action.phrase))):
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

    def _false_shout(self, seat: int, shout: Shout) -> None:
        """A false shout taken (its Bévue charged), kept for a copy's replay, and the pending
        moment put again where its choices depend on the scores the Bévue changed."""
        false_shouts.false_shout(self, seat, shout)
        self._turn_actions.append((seat, shout, False))
        if self.pending is not None and self.pending.refresh is not None:
            self.pending = self.pending.refresh()

    def false_shout_allowed(self, seat: int, phrase: str) -> bool:
        """Whether `seat` may shout `phrase` now outside a race: a race phrase, "Grelottine !"
        without a Grelottine or without a Néant to challenge, a claim with nothing to claim
        (`cdc_env/rulebook/false_shouts.py`)."""
        return false_shouts.allowed(self, seat, phrase, self.pending)

    def decisions(self) -> list[dict[str, Any]]:
        """The players' decisions so far (chance outcomes left out): with the seed, a replay."""
        return [entry for entry in self.history if entry["seat"] is not None]

    def clone(self, dice: DiceSource | None | Literal["copy"] = "copy") -> GameState:
        """An independent copy of this state, at a cost that does not grow with the game.

        The flow is a generator, which cannot be copied; but between turns the whole state is
        in the fields (scores, items, turn, first player), so the copy starts a fresh flow at
        the turn in play and replays only that turn's actions (a handful, kept as objects
        beside the history). The log and the
        history before the turn are shared entries in new lists: the engine never changes an
        entry once written. `dice`: "copy" (default) goes on with a copy of this state's dice
        source (the very dice this state would get), or give another source, or None."""
        start = self._turn_began
        twin = GameState.__new__(GameState)
        twin.rules, twin.setup = self.rules, self.setup
        twin.seated_at_start, twin.seats_fixed_by = self.seated_at_start, self.seats_fixed_by
        # The seats as the turn began: a player who joined since joins the copy again below.
        twin.players = self.seated_at_start if start is None else len(start.scores)
        twin.teams = self.teams  # a newcomer's own team in it is never read before they join
        twin.dice_source = None  # the turn's dice are in its history
        twin.first_player = self.first_player
        twin.winner = None
        twin.table = Table()
        if start is None:  # still choosing the first player: the whole (short) history
            twin.scores = list(self.setup.get("scores", [0] * twin.players))
            twin.items = twin._initial_items()
            twin.turn_seat, twin.turn_number, twin.round_number = None, 0, 0
            twin.log, twin.history = [], []
            twin._turn_began = None
            twin._flow = twin._game()
        else:
            twin.scores = list(start.scores)
            twin.items = [dict(holding) for holding in start.items]
            twin.turn_seat, twin.turn_number = start.turn_seat, start.turn_number
            twin.round_number = start.round_number
            twin.log = self.log[:start.log_length]
            twin.history = self.history[:start.history_length]
            twin._turn_began = start
            twin._flow = twin._play_from(start.seat)
        twin._turn_actions = []
        twin.pending = next(twin._flow)
        # The turn's own actions (before the first turn: the game's), as they were applied:
        # legal then, legal now, so no checks.
        for seat, action, moved in self._turn_actions:
            if moved:
                assert twin.pending is not None
                twin._advance(twin.pending, action)
            elif isinstance(action, Join):
                twin._join(action, seat)
            else:
                twin._false_shout(seat, action)  # type: ignore[arg-type]
        twin.dice_source = copy_dice(self.dice_source) if dice == "copy" else dice
        twin._roll_pending_dice()
        return twin

    def without(self, index: int) -> GameState:
        """This game with history entry `index` left out, replayed from the start: a shout the
        table takes back (talk a microphone misheard), as if it had never been said. The dice
        go on as this state's would (a copy of its source). IllegalActionError when what came
        after no longer replays without it; IndexError for no such entry."""
        self._check_entry(index)
        return self._replayed(self.history[:index] + self.history[index + 1:], copy_dice(self.dice_source))

    def before(self, index: int) -> GameState:
        """This game as it was before history entry `index`, replayed from the start: an answer
        the table takes back (talk a microphone misheard), with all that followed it, so that
        its decision is asked again. The dice thrown since come again first, in their order,
        then this state's source goes on: taking an answer back never draws other dice.
        IndexError for no such entry."""
        self._check_entry(index)
        thrown = [value for entry in self.history[index:] if entry["action"]["kind"] == Dice.kind
                  for value in entry["action"]["values"]]
        return self._replayed(self.history[:index], DiceAgain(thrown, copy_dice(self.dice_source)))

    def _check_entry(self, index: int) -> None:
        if not 0 <= index < len(self.history):
            raise IndexError(f"no history entry {index} (the game has {len(self.history)})")

    def _replayed(self, entries: list[dict[str, Any]], dice: DiceSource | None) -> GameState:
        """A new game of this one's table with these history entries applied, then `dice` as
        its source (the next chance moment, if one is pending, rolled at once)."""
        twin = GameState(self.rules, self.seated_at_start, setup=self.setup)
        for entry in entries:
            twin.apply_action(action_from_json(entry["action"]), seat=entry["seat"])
        twin.dice_source = dice
        twin._roll_pending_dice()
        return twin

    # ---------------------------------------------------------------- a late friend

    def join(self, name: str, sung: bool = False) -> int:
        """A player joins the game under way, where a house rule lets them (chante_sloubi):
        they take the next seat and start with the points the rule gives. A recorded step of
        the history, so saves, replays and clones keep them. Returns their seat; JoinRefused
        says why not and changes nothing."""
        seat = self.players
        self.apply_action(Join(name.strip() if isinstance(name, str) else name, sung), seat=seat)
        return seat

    @property
    def at_turn_start(self) -> bool:
        """A turn has begun and nothing in it was decided yet: when a late friend may sit down
        (before its thrower's first decision; the turn stays its thrower's)."""
        return (self._turn_began is not None and self.pending is not None
                and not any(moved for _, _, moved in self._turn_actions))

    def join_refusal(self, name: str, *, now: bool = True) -> str | None:
        """Why `name` cannot join this game (None: they can). `now=False` leaves the moment out:
        what a front-end checks before it waits for the next turn to seat them."""
        if late_join_rule(self.rules.house_rules) is None:
            rules = ", ".join(r.name for r in REGISTRY.values() if r.late_join is not None) or "none"
            return (f"no player can join a game under way in ruleset {self.rules.name!r}: that is the house "
                    f"rule {rules} (--house {rules}, or its key in the ruleset's house_rules:)")
        if self.seats_fixed_by is not None:
            return f"nobody can join this game: {self.seats_fixed_by}"
        if plays_teams(self.rules.house_rules):
            return ("nobody can join a game played in teams (the Doublette): its teams are pairs seated from "
                    "the start, and a newcomer would have no partner")
        if self.pending is None:
            return "the game is over: nobody can join it"
        if self.players >= self.rules.max_players:
            return f"the table is full: ruleset {self.rules.name!r} seats at most {self.rules.max_players} players"
        if not name.strip():
            return "a newcomer needs a name"
        for event in self.log:
            if event["type"] == "join" and name_key(event["name"]) == name_key(name):
                return f"{event['name']} has already joined (seat {event['seat']}): give the newcomer another name"
        if now and not self.at_turn_start:
            return ("a player joins as a turn begins, before its first decision: wait for the next turn "
                    f"(now {self.pending.describe()})")
        return None

    def _join(self, action: Join, seat: int | None) -> None:
        refusal = self.join_refusal(action.name)
        if refusal is None and seat is not None and seat != self.players:
            refusal = f"a newcomer takes the next seat, {self.players}, not seat {seat}"
        if refusal is not None:
            raise JoinRefused(refusal)
        found = late_join_rule(self.rules.house_rules)
        assert found is not None  # join_refusal found the rule
        rule, parameters = found
        assert rule.late_join is not None  # late_join_rule gives only such a rule
        try:
            points, details = rule.late_join(self, parameters, action.sung)
        except ValueError as error:
            raise JoinRefused(str(error)) from None
        seat = self.players
        self.history.append({"seat": seat, "action": action.to_json()})
        self._turn_actions.append((seat, action, False))
        self.players += 1
        self.scores.append(0)
        self.items.append(self._fresh_items())
        self.teams = {**self.teams, seat: (seat,)}
        self.event("join", seat=seat, name=action.name, rule=rule.name)
        self.change_score(seat, points, rule.name, **details)

    # ---------------------------------------------------------------- saving

    def to_json(self) -> dict[str, Any]:
        return {
            "format": SAVE_FORMAT,
            "ruleset": self.rules.to_dict(),
            "players": self.seated_at_start,
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
    def from_json(cls, data: Any) -> GameState:
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
        # The most faces a die may have: six, the seats' count (who starts), a Grelottine's draw.
        faces = max(6, state.players, len(rules.grelottine.stake_limits))
        try:
            state.dice_source = dice_from_json(data.get("dice"), faces)
            state._roll_pending_dice()  # injected dice of too many faces for this very roll
        except (ValueError, KeyError, TypeError, OverflowError) as error:  # Overflow: a word past 32 bits
            raise GameLoadError(f"saved game has a bad dice source: {error}") from None
        return state

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GameState) and self.to_json() == other.to_json() and self.log == other.log

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------------- internals

    def _advance(self, decision: Decision, action: Action) -> None:
        self.history.append({"seat": decision.seat, "action": action.to_json()})
        self._turn_actions.append((decision.seat, action, True))
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

    # ---------------------------------------------------------------- the rules' interface
    # What a rule may read and change (`cdc_env.rulebook.table.Game`): the rule modules see
    # the game only through these.

    def event(self, type_: str, **fields: Any) -> None:
        self.log.append({"type": type_, "turn": self.turn_number, **fields})

    def seats_from(self, seat: int, include_self: bool = False) -> list[int]:
        start = 0 if include_self else 1
        return [(seat + i) % self.players for i in range(start, self.players)]

    def change_score(self, seat: int, points: int, reason: str, *, own_dice: bool = False,
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
        self.event("score", seat=seat, points=points, delta=new - old, score=new,
                    reason=reason, capped=points > 0 and not uncapped, **details)
        if uncapped and points > 0 and self.team_score(seat) >= self.rules.target_score:
            self.winner = seat
            team = self.teams[seat]
            self.event("win", seat=seat, score=new,
                       **({"team": list(team), "team_score": self.team_score(seat)} if len(team) > 1 else {}))
            raise _Won

    def team_score(self, seat: int) -> int:
        """The score that wins: the seat's own, or its team's sum (the Doublette)."""
        team = self.teams[seat]
        return self.scores[seat] if len(team) == 1 else sum(self.scores[s] for s in team)

    def give_item(self, seat: int, item: str, reason: str) -> bool:
        """One of each item at a time: a second one is not given."""
        if self.items[seat][item]:
            return False
        self.items[seat][item] = 1
        self.event("item", seat=seat, item=item, change=1, reason=reason)
        return True

    def spend_item(self, seat: int, item: str, reason: str) -> None:
        self.items[seat][item] -= 1
        self.event("item", seat=seat, item=item, change=-1, reason=reason)

    def keep_in_history(self, seat: int, action: Action) -> None:
        self.history.append({"seat": seat, "action": action.to_json()})

    def bevue(self, seat: int, why: str) -> None:
        self.change_score(seat, -self.rules.bevue.penalty, "bevue", why=why)

    def meets_minimum(self, seat: int, what: str) -> bool:
        """F's minimum scores, which only a game without negative scores asks for."""
        return self.rules.negative_scores or self.scores[seat] >= getattr(self.rules.minimum_scores, what)

    def roll_dice(self, reason: str, count: int, seat: int | None, sides: int = 6) -> Flow:
        outcome = yield Decision(None, "chance", count=count, sides=sides, reason=reason)
        assert isinstance(outcome, Dice)
        self.event("dice", reason=reason, seat=seat, values=list(outcome.values))
        return outcome.values

    # ---------------------------------------------------------------- the game

    def _fresh_items(self) -> dict[str, int]:
        """A seat's items as it sits down."""
        holding = {item: 0 for item in ITEMS}
        if self.rules.boucliette.enabled:
            holding["boucliette"] = self.rules.boucliette.per_player
        return holding

    def _initial_items(self) -> list[dict[str, int]]:
        items = [self._fresh_items() for _ in range(self.players)]
        for holding, given in zip(items, self.setup.get("items", [{}] * self.players), strict=True):
            holding.update(given)
        return items

    def _game(self) -> Flow:
        seat = yield from self._choose_first_player()
        self.first_player = seat
        self.event("first_player", seat=seat)
        yield from self._play_from(seat)

    def _play_from(self, seat: int) -> Flow:
        """The turns from `seat`'s on, until someone wins (where a clone's flow starts)."""
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
            (value,) = yield from self.roll_dice("first_player", 1, None, sides=self.players)
            return value - 1
        contenders = list(range(self.players))
        while True:
            rolls = {}
            for seat in contenders:
                (rolls[seat],) = yield from self.roll_dice("first_player", 1, seat)
            lowest = min(rolls.values())
            contenders = [s for s in contenders if rolls[s] == lowest]
            if len(contenders) == 1:
                return contenders[0]

    def _turn(self, seat: int) -> Flow:
        self._turn_began = _TurnStart(seat, tuple(self.scores), tuple(dict(h) for h in self.items),
                                      self.turn_seat, self.turn_number, self.round_number,
                                      len(self.log), len(self.history))
        self._turn_actions = []
        self.turn_seat = seat
        self.turn_number += 1
        if seat == self.first_player:
            self.round_number += 1
        self.table = Table(thrower=seat)
        self.event("turn_start", seat=seat)
        for rule, parameters in moment_rules(self.rules.house_rules, "turn_started"):  # a Flan's use
            yield from rule.moments["turn_started"](self, parameters, seat)
        declared, grelottine_used = yield from self._turn_start(seat)
        # A roll that is the object of a bet cannot be bought.
        outcome = yield from self.roll(seat, buyable=declared is None and grelottine_used is None)
        if declared is not None:
            civet.settle(self, seat, declared, outcome)
        if grelottine_used is not None:
            grelottine.settle_own(self, seat, grelottine_used, outcome)
        yield from grelottine.challenges(self, outcome)

    def _turn_start(self, seat: int) -> Flow:
        """Before the roll: a Civet, or in solo (S) a Grelottine; one bet per roll."""
        def ask() -> Decision:
            stakes = civet.stakes(self, seat)
            options: tuple[Action, ...] = (Roll(),)
            if grelottine.may_use(self, seat):
                options += (UseGrelottine(),)
            return Decision(seat, "turn_start", options, staked=DeclareCivet if stakes else None, stakes=stakes,
                            refresh=ask)

        choice = yield ask()
        if isinstance(choice, UseGrelottine):
            used = yield from grelottine.use_before_roll(self, seat)
            yield Decision(seat, "challenge_roll", (Roll(),))
            return None, used
        if isinstance(choice, DeclareCivet):
            declared = yield from civet.declare(self, seat, choice)
            for rule, parameters in moment_rules(self.rules.house_rules, "civet_declared"):
                yield from rule.moments["civet_declared"](self, parameters, declared)
            return declared, None
        return None, None

    # ---------------------------------------------------------------- a roll

    def roll(self, thrower: int, *, buyable: bool) -> Flow:
        """Two chouettes, perhaps a bought cul, then the combination and its rules."""
        chouettes = yield from self.roll_dice("chouettes", 2, thrower)
        self.table.dice = chouettes
        # House rules that act before the cul (a Verdier bet): what each returns, it settles
        # once the roll is made.
        carried: dict[str, Any] = {}
        for rule, parameters in moment_rules(self.rules.house_rules, "chouettes"):
            carried[rule.name] = yield from rule.moments["chouettes"](self, parameters, chouettes)
        scorer = thrower
        if buyable and self.rules.dice_buying.enabled:
            scorer = yield from achat.offer_the_cul(self, thrower)
        cul = yield from self.roll_dice("cul", 1, scorer)
        dice = chouettes + cul
        combination = self._show(dice, scorer)
        bought = scorer != thrower
        if bought:
            achat.seller_keeps_chouette(self, thrower, chouettes)
        outcome = RollOutcome(dice, combination, scorer)
        for rule, parameters in moment_rules(self.rules.house_rules, "combination_shown"):
            shown = yield from rule.moments["combination_shown"](self, parameters, outcome)
            if shown is not None:
                carried[rule.name] = shown
        # A roll off the scorer's own turn (a buyer's Néant challenged by a Grelottine) counts
        # like a bought cul, as `apply_combination` does: a Soufflette from it does nothing.
        yield from self._combination_rules(outcome, bought or scorer != self.turn_seat)
        for rule, parameters in moment_rules(self.rules.house_rules, "roll_made"):
            yield from rule.moments["roll_made"](self, parameters, (outcome, carried.get(rule.name)))
        return outcome

    def _show(self, dice: tuple[int, ...], scorer: int) -> Combination:
        combination = classify(dice, self.rules)
        self.table.dice = dice
        self.table.combination = combination.name
        self.event("combination", seat=scorer, dice=list(dice), combination=combination.name,
                    value=combination.value, races=list(combination.races))
        return combination

    def _combination_rules(self, outcome: RollOutcome, bought: bool) -> Flow:
        yield from COMBINATION_RULES.get(outcome.combination.name, scoring.no_effect)(self, outcome, bought)
        for race in outcome.combination.races:
            yield from RACE_RULES[race](self, outcome)

    def apply_combination(self, dice: tuple[int, ...], scorer: int) -> Flow:
        """Dice thrown again inside a rule (a Velutée, a Bleu-Rouge relaunch, a sirop that
        makes a new combination): their combination applies for `scorer`. Off the scorer's own
        turn it counts like a bought cul (gains capped, a Soufflette does nothing). The table
        names `scorer` as the thrower from here: the combination is theirs."""
        self.table.thrower = scorer
        outcome = RollOutcome(dice, self._show(dice, scorer), scorer)
        yield from self._combination_rules(outcome, bought=scorer != self.turn_seat)
        return outcome


@dataclass(frozen=True)
class _TurnStart:
    """The state as a turn begins: with the turn's actions, all a copy needs."""

    seat: int
    scores: tuple[int, ...]
    items: tuple[dict[str, int], ...]  # copies, never changed
    turn_seat: int | None
    turn_number: int
    round_number: int
    log_length: int
    history_length: int


def decided_winner(state: GameState) -> int | None:
    """The game's winner, or else the single leader by score (what decides a game cut short,
    as the environments' reward and the searcher's samples read it); None when several share
    the lead. At a table in teams (the Doublette) the lead is the team's sum, and the seat
    returned is one of the leading team (`on_winning_side` for either of its players)."""
    if state.winner is not None:
        return state.winner
    totals = [state.team_score(seat) for seat in range(state.players)]
    best = max(totals)
    leading = {state.teams[seat] for seat, total in enumerate(totals) if total == best}
    return min(leading.pop()) if len(leading) == 1 else None


def turns_played(state: GameState) -> int:
    """The turns played: the turn in progress counts once it is over, when the next one starts
    or the game ends (a game cut short after `max_turns` has begun turn `max_turns` + 1)."""
    return state.turn_number - (0 if state.is_over else 1)


def on_winning_side(state: GameState, seat: int) -> bool:
    """The seat won the game, or (cut short) leads it: alone, or with its team."""
    winner = decided_winner(state)
    return winner is not None and seat in state.teams[winner]


def _the_rules_see_a_game(state: GameState) -> Game:
    """Checked by mypy: GameState is the `Game` the rule modules are written against."""
    return state


def _check_setup(setup: dict[str, Any] | None, players: int, rules: Ruleset,
                 teams: dict[int, tuple[int, ...]]) -> dict[str, Any]:
    if setup is None:
        return {}
    if not isinstance(setup, dict) or set(setup) - {"scores", "items"}:
        raise GameError("setup takes only 'scores' and 'items'")
    # (A key given as None, or a number where a list goes, was a TypeError from len().)
    scores = setup.get("scores", [])
    if "scores" in setup and (not isinstance(scores, list | tuple) or len(scores) != players
                              or not all(isinstance(s, int) and not isinstance(s, bool) for s in scores)):
        raise GameError(f"setup scores must be {players} whole numbers, got {scores!r}")
    if "scores" in setup:
        # A seat (or team) already at the target has won: a game from there would go on for a
        # turn and crown whoever the flow reached first, not a position anyone could be in.
        for seat, team in sorted(teams.items()):
            total = sum(scores[s] for s in team)
            if total >= rules.target_score:
                who = f"seat {seat}" if len(team) == 1 else f"the team of seats {', '.join(map(str, team))}"
                raise GameError(f"setup scores: {who} has {total}, at or past the target "
                                f"({rules.target_score}), so the game would be over; give scores below it")
        if not rules.negative_scores and any(s < 0 for s in scores):
            raise GameError(f"setup scores: this ruleset keeps scores at 0 or more "
                            f"(negative_scores: false), got {scores!r}")
    items = setup.get("items", [])
    if "items" in setup:
        if not isinstance(items, list | tuple) or len(items) != players:
            raise GameError(f"setup items must give one mapping per seat ({players})")
        for holding in items:
            if not isinstance(holding, dict):  # (a list there was an AttributeError)
                raise GameError(f"setup items must give one mapping per seat ({players}), such as "
                                f"{{'civet': 1}}, got {holding!r}")
            # (True and 1.0 equal 1, and were kept as they came into the saved game.)
            if set(holding) - set(ITEMS) or any(type(v) is not int or v not in (0, 1) for v in holding.values()):
                raise GameError(f"setup items: each of {', '.join(ITEMS)} is held 0 or 1 times, got {holding!r}")
            unplayed = sorted(item for item, held in holding.items() if held and not RULESET_PARTS[item](rules))
            if unplayed:
                raise GameError(f"setup items: this ruleset ({rules.name}) does not play "
                                f"{' or '.join(unplayed)}, so nobody can hold one; leave it out")
    return copy.deepcopy(setup)


def name_key(name: str) -> str:
    """What tells a player's name from another's at a table: not case, the spaces around it, or
    how its accents were typed (é as one character or as e and a combining accent)."""
    return unicodedata.normalize("NFKC", name.strip()).casefold()
