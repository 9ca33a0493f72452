"""A game at the table: humans (voice and keyboard) and bots, one engine.

The session owns the loop: it asks bots for their choices, asks humans through their inputs,
and runs each race in real time — the window opens when the dice are shown, bots shout at
their sampled onsets (shown, and spoken if asked), humans' shouts carry their onsets (audio
timestamps, or the moment a key was pressed), and every shout goes to the engine's race
resolution. Nothing here decides a rule: the engine does.

Time is `time.monotonic()` seconds throughout; a microphone's detections are converted to it
by the listener (from the audio stream's own sample count and timestamps).
"""

from __future__ import annotations

import json
import select
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from cdc_env.actions import Action, KeepDice, Pass, Shout
from cdc_env.dice import DiceSource, SeededDice
from cdc_env.game import RACE_PHRASES, Decision, GameState
from cdc_env.rules import Ruleset
from voice.intents import action_for, intents_for

Clock = Callable[[], float]


@dataclass(frozen=True)
class Heard:
    """A phrase one human said, with its onset on the session's clock; `intent` is None when
    the recogniser heard an utterance but no phrase clearly won it (say it again)."""

    seat: int
    intent: str | None
    onset: float


class Listener(Protocol):
    """A source of heard phrases for some seats (a microphone per human)."""

    seats: Sequence[int]

    def listen_for(self, intents: set[str]) -> None: ...

    def poll(self) -> list[Heard]: ...

    def mark_playback(self, start: float, end: float) -> None: ...

    def close(self) -> None: ...


class InputLost(RuntimeError):
    """A microphone vanished: the session goes on with the keyboard."""


class Keyboard:
    """Lines typed at the terminal, each with the time it arrived.

    In a race, Enter alone shouts the right phrase for the only human at the keyboard; `N`
    shouts for seat N (1-based); a phrase's first letter (p, g, s) picks another phrase."""

    def __init__(self, stream: IO[str] | None = None, clock: Clock = time.monotonic) -> None:
        self.stream = stream or sys.stdin
        self.clock = clock
        self.closed = False

    def poll(self, timeout: float) -> tuple[str, float] | None:
        if self.closed:
            time.sleep(max(0.0, timeout))
            return None
        ready, _, _ = select.select([self.stream], [], [], max(0.0, timeout))
        if not ready:
            return None
        line = self.stream.readline()
        at = self.clock()
        if line == "":
            self.closed = True  # end of input: nobody is typing any more
            return None
        return line.strip(), at


@dataclass
class SeatPlayer:
    name: str
    bot: Any = None  # an object with act(state, decision); None for a human

    @property
    def human(self) -> bool:
        return self.bot is None


class View(Protocol):
    """What the session shows; scripts/play.py draws it with rich, tests record it."""

    def show(self, session: "PlaySession") -> None: ...

    def say(self, text: str) -> None: ...

    def ask(self, session: "PlaySession", decision: Decision, options: list[Action]) -> None: ...


@dataclass
class RaceShout:
    seat: int
    phrase: str
    onset_ms: float
    by: str  # "voice", "keyboard", "bot"


@dataclass
class PlaySession:
    rules: Ruleset
    players: list[SeatPlayer]
    view: View
    keyboard: Keyboard
    listener: Listener | None = None
    seed: int = 0
    speak: Callable[[str], float] | None = None  # speaks a text, returns its duration in s
    clock: Clock = time.monotonic
    save_path: Path | None = None
    dice: DiceSource | None = None  # default: dice seeded by `seed`
    setup: dict[str, Any] | None = None  # a starting position (see GameState)
    state: GameState = field(init=False)
    race_log: list[list[RaceShout]] = field(default_factory=list)
    _race_answers: dict[int, Action] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.state = GameState(self.rules, len(self.players), dice=self.dice or SeededDice(self.seed),
                               setup=self.setup)

    @classmethod
    def resume(cls, path: Path, players: list[SeatPlayer], **kwargs: Any) -> "PlaySession":
        saved = json.loads(path.read_text(encoding="utf-8"))
        state = GameState.from_json(saved)
        session = cls(state.rules, players, **kwargs)
        session.state = state
        return session

    def save(self) -> None:
        if self.save_path is not None:
            tmp = self.save_path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.state.to_json()), encoding="utf-8")
            tmp.replace(self.save_path)

    # ------------------------------------------------------------------ the loop

    def run(self) -> GameState:
        while (decision := self.state.pending) is not None:
            assert decision.seat is not None
            player = self.players[decision.seat]
            if decision.kind == "race":
                action = self._race_answer(decision)
            elif player.human:
                self.view.show(self)
                action = self._ask_human(decision)
            else:
                action = player.bot.act(self.state, decision)
            self.state.apply_action(action, seat=decision.seat)
            self.save()
        self.view.show(self)
        return self.state

    # ------------------------------------------------------------------ humans

    def _ask_human(self, decision: Decision) -> Action:
        options = decision.legal_actions() if decision.staked is None else list(decision.options)
        self.view.ask(self, decision, options)
        if self.listener is not None:
            self._listen(intents_for(decision))
        while True:
            heard = self._poll_listener()
            for item in heard:
                if item.seat == decision.seat and self._not_understood(item):
                    continue
                if item.seat == decision.seat and item.intent is not None:
                    action, why = action_for(decision, [item.intent])
                    if action is not None:
                        return action
                    self.view.say(f"heard « {item.intent} »: {why}")
            typed = self.keyboard.poll(0.05)
            if typed is None:
                if self.keyboard.closed and self.listener is None:
                    raise EOFError("the keyboard input ended and no microphone is listening")
                continue
            action, why = self._typed_action(decision, options, typed[0])
            if action is not None:
                return action
            self.view.say(why)

    def _typed_action(self, decision: Decision, options: list[Action], text: str) -> tuple[Action | None, str]:
        """A number from the menu, a staked choice `N STAKE`, or intent words."""
        words = text.split()
        if words and words[0].isdigit():
            index = int(words[0]) - 1
            if not 0 <= index < len(options) + len(decision.stakes):
                return None, f"choose 1..{len(options) + len(decision.stakes)}"
            if index < len(options):
                return options[index], ""
            name, stakes = decision.stakes[index - len(options)]
            if len(words) < 2 or not words[1].lstrip("-").isdigit():
                return None, f"give the stake too: « {words[0]} {stakes.stop - 1} » ({stakes.start}..{stakes.stop - 1})"
            action = decision.staked(name, int(words[1]))  # type: ignore[misc]
            if not decision.allows(action):
                return None, f"the stake must be within {stakes.start}..{stakes.stop - 1}"
            return action, ""
        if decision.kind == "soufflette_keep" and all(w.isdigit() for w in words):
            return KeepDice(tuple(int(w) for w in words)), ""
        action, why = action_for(decision, words)
        return action, why

    def _not_understood(self, heard: Heard) -> bool:
        """An utterance the recogniser could not tell: ask that player to say it again and
        keep waiting (the keyboard stays open). A guess would cost more than a repeat."""
        if heard.intent is not None:
            return False
        self.view.say(f"{self.players[heard.seat].name}: not understood, say it again")
        return True

    def _listen(self, intents: set[str]) -> None:
        try:
            self.listener.listen_for(intents)  # type: ignore[union-attr]
        except InputLost as error:
            self._lose_listener(error)

    def _poll_listener(self) -> list[Heard]:
        if self.listener is None:
            return []
        try:
            return self.listener.poll()
        except InputLost as error:
            self._lose_listener(error)
            return []

    def _lose_listener(self, error: Exception) -> None:
        self.view.say(f"microphone lost ({error}); going on with the keyboard — the game is kept")
        try:
            self.listener.close()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - it is gone already
            pass
        self.listener = None

    # ------------------------------------------------------------------ races

    def _race_answer(self, decision: Decision) -> Action:
        """The engine asks each seat of a race in turn; the race itself is run once, in real
        time, when its first seat is asked, and the answers are handed out from it."""
        if decision.seat not in self._race_answers:
            self._race_answers = self._run_race(decision)
        return self._race_answers.pop(decision.seat, Pass())

    def _race_seats(self, decision: Decision) -> list[int]:
        return list(self.state.table.race_answers) or list(range(self.state.players))

    def _run_race(self, decision: Decision) -> dict[int, Action]:
        seats = self._race_seats(decision)
        phrases = [a.phrase for a in decision.options if isinstance(a, Shout)]
        window = self.rules.races.race_window_ms / 1000
        self.view.show(self)
        self.view.say(f"RACE: {decision.reason}! — shout « {RACE_PHRASES[decision.reason]} »"
                      " (Enter, or say it)")
        start = self.clock()
        if self.listener is not None:
            self._listen(set(phrases))
        shouts: dict[int, RaceShout] = {}
        pending_bots: list[tuple[float, int, Action]] = []
        answers = self.state.table.race_answers
        for seat in seats:
            player = self.players[seat]
            if not player.human:
                # The engine asks each seat in turn; a bot's choice is taken now, with the
                # phrases that count for its seat, so that it can be shown at its onset.
                own = answers.get(seat, (RACE_PHRASES[decision.reason],))
                options = decision.options + tuple(Shout(p) for p in own if Shout(p) not in decision.options)
                action = player.bot.act(self.state, Decision(seat, "race", options, reason=decision.reason,
                                                             answers=own))
                if isinstance(action, Shout):
                    pending_bots.append((action.onset_ms / 1000, seat, action))
        pending_bots.sort()
        humans = [s for s in seats if self.players[s].human]
        while self.clock() - start < window:
            now = self.clock() - start
            while pending_bots and pending_bots[0][0] <= now:
                _, seat, action = pending_bots.pop(0)
                shouts[seat] = RaceShout(seat, action.phrase, action.onset_ms, "bot")
                self._bot_shouts(seat, action)
            if all(s in shouts for s in humans) and not pending_bots:
                break
            for heard in self._poll_listener():
                if heard.seat in humans and heard.seat not in shouts and self._not_understood(heard):
                    continue
                if heard.seat in humans and heard.seat not in shouts and heard.intent in phrases:
                    onset_ms = max(0.0, (heard.onset - start) * 1000)
                    shouts[heard.seat] = RaceShout(heard.seat, heard.intent, onset_ms, "voice")
                    self.view.say(f"{self.players[heard.seat].name} (voice): « {heard.intent} » at {onset_ms:.0f} ms")
            next_bot = pending_bots[0][0] - now if pending_bots else window - now
            typed = self.keyboard.poll(min(0.02, max(0.0, next_bot)))
            if typed is not None:
                self._typed_shout(typed, start, humans, phrases, decision, shouts)
        self.race_log.append(sorted(shouts.values(), key=lambda s: s.onset_ms))
        answers: dict[int, Action] = {seat: Pass() for seat in seats}
        answers.update({seat: Shout(s.phrase, round(s.onset_ms, 1)) for seat, s in shouts.items()})
        return answers

    def _typed_shout(self, typed: tuple[str, float], start: float, humans: list[int],
                     phrases: list[str], decision: Decision, shouts: dict[int, RaceShout]) -> None:
        text, at = typed
        words = text.split()
        seat = humans[0] if len(humans) == 1 else None
        if words and words[0].isdigit():
            seat = int(words[0]) - 1
            words = words[1:]
        if seat not in humans or seat in shouts:
            return
        phrase = self.state.table.race_answers.get(seat, (RACE_PHRASES[decision.reason],))[0]
        if words:
            chosen = [p for p in phrases if p.startswith(words[0].lower())]
            phrase = chosen[0] if chosen else phrase
        onset_ms = max(0.0, (at - start) * 1000)
        shouts[seat] = RaceShout(seat, phrase, onset_ms, "keyboard")
        self.view.say(f"{self.players[seat].name} (keyboard): « {phrase} » at {onset_ms:.0f} ms")

    def _bot_shouts(self, seat: int, action: Shout) -> None:
        self.view.say(f"{self.players[seat].name} (bot): « {action.phrase} » at {action.onset_ms:.0f} ms")
        if self.speak is not None:
            begin = self.clock()
            duration = self.speak(action.phrase.replace("_", " "))
            if self.listener is not None:
                # What we play must not be heard as a player's shout.
                self.listener.mark_playback(begin, begin + duration + 0.3)
