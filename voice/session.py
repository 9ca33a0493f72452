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

import errno
import json
import select
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

from cdc_env.actions import Action, CoucheSirop, IllegalActionError, KeepDice, Pass, Shout
from cdc_env.cli import parse_json, path_error, short_path, write_atomic
from cdc_env.dice import DiceSource, SeededDice
from cdc_env.game import RACE_PHRASES, Decision, GameLoadError, GameState, JoinRefused, name_key
from cdc_env.play import words
from cdc_env.rulebook.phrases import race_shouts_played
from cdc_env.rules import Ruleset
from voice.intents import KEEP_MORE_S, action_for, answer_in_parts, intents_for

# The race phrases the ruleset plays (`race_shouts_played`) may be shouted at any moment: outside
# the seat's race they are false shouts, which the engine answers (a Bévue in rulesets with Bévues).
# Voice status words for the view, per human seat.
LISTENING, KEYBOARD_ONLY, SAY_AGAIN = "listening", "keyboard only", "say it again"

Clock = Callable[[], float]

# How long a race waits after its window for shouts said inside it: the recogniser decides an
# utterance once it has ended (latency p95 about 0.45 s on an idle machine, docs/voice.md).
VOICE_GRACE_S = 1.0
# ...and, past that, how long it waits on while the listener still holds an utterance (a crowded
# reading waits up to 0.8 s for another phone to bear it out: voice/crosstalk.py, CROWD_WAIT_S).
HELD_GRACE_S = 1.0
# A shout's onset may fall this much before the race's start (the clocks' error, a few ms) and
# still count, as 0 ms; earlier, it began before the dice were shown and does not count.
EARLY_TOLERANCE_S = 0.05
# A seat's race phrase again this soon after its own shout in the race just settled is that
# shout repeated (the phrase said twice takes about 1.5 s; a double tap a fraction of a second),
# not a false shout: races end as soon as every shout is in, so a repeat often falls after.
REPEAT_S = 2.0
# An answer's onset may read this much before its question was put (the onset's own error, a
# phone's clock); one begun earlier still answered the question before it.
ANSWER_EARLY_S = 0.1
# A seat that tapped (or pressed) its shout while saying it: its voice began no later than the tap
# and is decided once the phrase has ended (about a second) and the recogniser has waited for its
# end (0.25-0.45 s). The race waits this long after the tap for it, and the earlier counts.
VOICE_AFTER_TAP_S = 2.0
# The longest a move waits for the host's own sound to end (`PlaySession._wait_for_host_sound`:
# the phones' chirp and its echo, 0.45 s, asked for 0.3 s before): a sound that never ends
# (a stuck player) is not to stop the game.
HOST_SOUND_WAIT_S = 2.0
# What the host plays (a bot's spoken shout) is masked this long past its end in the microphones'
# audio: the sound card's output latency and the room's echo.
PLAYBACK_TAIL_S = 0.3
# The longest the game waits for the bots' shouts spoken after a race (`--speak`).
SPEECH_WAIT_S = 6.0
# Typed alone, takes back the last thing a microphone heard that the game took, a false shout
# or an answer (PlaySession.take_back): a recogniser now and then takes talk for a phrase, and
# the table knows who said nothing.
TAKE_BACK = "-"
# The French of a line's words the pages show (Said): how a shout came, and when it was too early or late.
BY_FR = {"voice": "voix", "keyboard": "touche"}
WHEN_FR = {True: "avant que les dés soient montrés", False: "après la fenêtre de la course"}


class Said(str):
    """A line the game says to the whole table, not only to the host at the terminal: the web
    pages show it (the board all of them, a phone those about its own player). The str is the
    English, as every view prints it; `fr` is the French, where « {phrase} » stands for `phrase`,
    an intent the page puts in its own words; `seat` is the player it is about, if any.
    Lines that answer the host's typing stay plain str: the terminal alone shows them."""

    fr: str
    seat: int | None
    phrase: str | None

    def __new__(cls, english: str, fr: str, seat: int | None = None, phrase: str | None = None) -> Said:
        line = super().__new__(cls, english)
        line.fr, line.seat, line.phrase = fr, seat, phrase
        return line


@dataclass(frozen=True)
class Misheard:
    """A phrase a microphone heard that the game took, which the table may take back: a race
    phrase outside any race (a false shout), or an answer to its player's question."""

    index: int  # its entry in the game's history
    seat: int
    phrase: str
    answer: bool


@dataclass(frozen=True)
class Heard:
    """A phrase one human said, with its onset on the session's clock; `intent` is None when
    the recogniser heard an utterance but no phrase clearly won it (say it again)."""

    seat: int
    intent: str | None
    onset: float


class Listener(Protocol):
    """A source of heard phrases for some seats (a microphone per human)."""

    @property
    def seats(self) -> Sequence[int]: ...  # read only: a list or a tuple will do

    def listen_for(self, intents: set[str], race: bool = False) -> None: ...  # race: a race is open for them

    def poll(self) -> list[Heard]: ...

    # Optional: `holding() -> bool`, whether an utterance heard is still held back (the room
    # attributing it to a seat); a race then waits for it a little longer (HELD_GRACE_S).
    # Optional: `streaming(seat) -> bool`, whether the seat's microphone is on now (a phone's may
    # be off; a race does not wait for the voice of a seat that cannot be heard).
    # Optional: `sounding() -> bool`, whether the host plays (or is about to play) a sound masked
    # in the listener's audio (the phones' calibration chirp); no move is made under it.

    def mark_playback(self, start: float, end: float) -> None: ...

    def close(self) -> None: ...


class KeyLines(Protocol):
    """Lines typed by the humans, each with the moment Enter was pressed (a terminal's stdin,
    or the live table's input line)."""

    closed: bool

    def poll(self, timeout: float) -> tuple[str, float] | None: ...


class UnknownPhrase(ValueError):
    """Words typed for a shout that start none of the phrases that can be shouted."""


class SaveError(OSError):
    """The save cannot be written (a full disk, its folder gone): the game stops there, and the
    message says what the file keeps and how to go on."""


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
    bot_name: str = ""  # what the bot was made from ("bold", a model path): kept in saves

    @property
    def human(self) -> bool:
        return self.bot is None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "bot": None if self.human else (self.bot_name or "bot")}


NAME_LIMIT = 30  # characters: the table's players column and a phone's seat list show a name whole


def name_at_table(name: str, taken: Sequence[str]) -> str | None:
    """The player of `taken` whose name is `name`, whatever the case, the spaces around it and
    how its accents were typed (« Léa » with é as one character or as e and an accent: a phone's
    keyboard and the host's may differ, and the two look the same on every screen)."""
    return next((other for other in taken if name_key(other) == name_key(name)), None)


def name_refusal(name: str, taken: Sequence[str]) -> str | None:
    """Why `name` cannot be a player's at a table whose other players are `taken` (None: it can):
    an empty name, one too long to show, one with a line break, or one already there (the phones
    and the log tell players apart by name)."""
    if not name.strip():
        return "a name is empty: give each player a name"
    if len(name) > NAME_LIMIT:
        return f"the name {name[:12]!r}… has {len(name)} characters: give at most {NAME_LIMIT}"
    if not name.isprintable():
        return f"the name {name!r} holds a line break or a control character: give a plain name"
    same = name_at_table(name, taken)
    if same is not None:
        known = "" if same == name.strip() else f" as {same}"
        return f"{name.strip()} is already at the table{known}: give each player a name of their own"
    return None


def describe_lineup(lineup: Sequence[dict[str, Any]]) -> str:
    """`Ana (human), bold-1 (bot bold)`: a saved line-up in words."""
    return ", ".join(f"{p.get('name')} ({'human' if p.get('bot') is None else 'bot ' + str(p['bot'])})"
                     for p in lineup)


class View(Protocol):
    """What the session shows; scripts/play.py draws it with rich, tests record it."""

    def show(self, session: PlaySession) -> None: ...

    def say(self, text: str) -> None: ...

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None: ...

    def voice(self, seat: int, status: str) -> None:
        """A human's voice status: "listening", 'heard « … »', "say it again", "keyboard only"."""


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
    keyboard: KeyLines
    listener: Listener | None = None
    seed: int = 0
    speak: Callable[[str], float] | None = None  # speaks a text, returns its duration in s
    clock: Clock = time.monotonic
    save_path: Path | None = None
    dice: DiceSource | None = None  # default: dice seeded by `seed`
    setup: dict[str, Any] | None = None  # a starting position (see GameState)
    pace: float = 0.0  # seconds to leave after each bot's move, for people to follow (and shout)
    # How long after a race's window a tap made inside it may still be on its way (a phone's, over
    # the network, stamped with its own moment): the race waits that long for a human not in it.
    # 0 at a terminal, whose lines arrive as they are pressed.
    tap_delivery_s: float = 0.0
    # What the table keeps in the save beside the game, read at each save (the web room's secret
    # and seat tokens: voice/web/room.py `kept`), for --resume to take back.
    keep: Callable[[], dict[str, Any]] | None = None
    # Whether what `keep` saves (or a player's name) changed outside the game's moves (a phone
    # claiming a seat): asked while a player is waited on, to save and show the table again.
    seats_changed: Callable[[], bool] | None = None
    # How the table was set that the game does not hold (the bots' reaction time and thinking
    # budget, play.py): kept in the save, so that --resume alone brings the same bots back.
    settings: dict[str, Any] = field(default_factory=dict)
    state: GameState = field(init=False)
    race_log: list[list[RaceShout]] = field(default_factory=list)
    race_now: list[RaceShout] = field(default_factory=list)  # the shouts of the race under way
    race_log_from: int = 0  # where in the log the race run last began (its verdict comes after)
    # Each seat's last shout that a race counted: its onset (session clock), phrase and means;
    # and its last false shout: when, and the phrase. A repeat of either within REPEAT_S is the
    # same shout (the phrase said twice, louder the second time; a double tap).
    _own_shouts: dict[int, tuple[float, str, str]] = field(default_factory=dict)
    _false_shouts: dict[int, tuple[float, str]] = field(default_factory=dict)
    # The question put and when it was first put (put again after another player's false shout,
    # it is the same question): an utterance begun before it is no answer to it.
    _asked_at: tuple[Decision, float] | None = None
    _asking_again: bool = False  # the last question was left unanswered (a false shout, a take-back)
    _race_answers: dict[int, Action] = field(default_factory=dict)
    _moment: float = 0.0  # when the current decision was put (false shouts' onsets count from it)
    # When this game began to be played here (`run`): a phrase begun before it was said over the
    # game before (a shout at its end, heard as `again` starts this one): not this game's.
    _began: float | None = None
    # The last race run: its start, the end of its window, when it was settled (session clock)
    # and its phrases. A shout said in it but heard after it was settled is late, not false.
    _last_race: tuple[float, float, float, frozenset[str]] | None = None
    # Late friends typed in (`+ Name`) waiting for the next turn to begin: (name, Sloubi sung).
    joining: list[tuple[str, bool]] = field(default_factory=list)
    # The false shouts and answers the microphones heard, which the table may take back (`-`:
    # talk the recogniser took for a phrase). This game's only.
    misheard: list[Misheard] = field(default_factory=list)
    _voice_answer: str | None = None  # the phrase the decision being applied was heard as
    race_shouts: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        # The race phrases of this table's rows: the false shouts listened for between races.
        self.race_shouts = race_shouts_played(self.rules)
        self.state = GameState(self.rules, len(self.players), dice=self.dice or SeededDice(self.seed),
                               setup=self.setup)

    @staticmethod
    def read_save(path: Path) -> dict[str, Any]:
        """A save file's content, checked enough to resume it; GameLoadError says what is wrong."""
        try:
            if path.exists() and not path.is_file() and not path.is_dir():  # a pipe was waited on forever
                kind = "pipe" if path.is_fifo() else "device"
                raise GameLoadError(f"{path} is not a saved game (not a file but a {kind}); "
                                    "give a file written by --save")
            saved = parse_json(path.read_text(encoding="utf-8"))
        except OSError as error:  # no such file, a folder, a name too long (cut short: it was quoted whole)
            advice = "" if error.errno == errno.ENAMETOOLONG else "; give a file written by --save"
            raise GameLoadError(f"{path_error(error)}{advice}") from None
        except UnicodeDecodeError:
            raise GameLoadError(f"{path} is not a saved game (not UTF-8 text); give a file written by --save") \
                from None
        except json.JSONDecodeError as error:
            raise GameLoadError(f"{path} is not a saved game (not JSON: {error})") from None
        if not isinstance(saved, dict):
            raise GameLoadError(f"{path} is not a saved game: expected a JSON object")
        if not isinstance(saved.get("history"), list):
            raise GameLoadError(f"{path} is damaged: its 'history' must be the list of moves, got "
                                f"{json.dumps(saved.get('history'))}; resume from another save")
        lineup = saved.get("lineup")
        if lineup is not None and (not isinstance(lineup, list) or not all(
                isinstance(p, dict) and isinstance(p.get("name"), str) and isinstance(p.get("bot", 0), str | None)
                for p in lineup)):
            # Each player as SeatPlayer.to_json writes it: a name, and a bot's name or null for a human.
            raise GameLoadError(f"{path} is damaged: its 'lineup' must be a list of players, each "
                                '{"name": ..., "bot": a bot\'s name or null}; resume from another save')
        if lineup == []:
            # Never the default line-up in its place: that would be another game, said nowhere.
            raise GameLoadError(f"{path} is damaged: its line-up is empty (no players); resume from another save, "
                                "or start a new game without --resume")
        joining = saved.get("joining", [])
        if not isinstance(joining, list) or not all(
                isinstance(j, list) and len(j) == 2 and isinstance(j[0], str) and isinstance(j[1], bool)
                for j in joining):
            raise GameLoadError(f"{path} is damaged: its 'joining' must be a list of [name, sung] for the late "
                                "friends waiting for the next turn; resume from another save")
        if not isinstance(saved.get("settings", {}), dict):
            raise GameLoadError(f"{path} is damaged: its 'settings' must be an object; resume from another save")
        return saved

    @classmethod
    def resume(cls, path: Path, players: list[SeatPlayer], **kwargs: Any) -> PlaySession:
        """Go on with a saved game, with the players it was saved with (same seats, the same
        seats human); any other line-up is refused with the save's own."""
        saved = cls.read_save(path)
        lineup = saved.get("lineup")
        state = GameState.from_json(saved)
        seats = state.players  # with the late friends who joined (their joins are in the history)
        given = [p.to_json() for p in players]
        if lineup and len(lineup) != seats:
            raise GameLoadError(f"{path} is damaged: its 'lineup' names {len(lineup)} players, its game has "
                                f"{seats}; resume from another save")
        said = describe_lineup(lineup) if lineup else f"{seats} players"
        if len(players) != seats or (lineup and [p["bot"] for p in given] != [p.get("bot") for p in lineup]):
            raise GameLoadError(f"{path} is a game of {said}, not of {describe_lineup(given)}; "
                                "resume it with the same humans and bots (or with --resume alone)")
        session = cls(state.rules, players, **kwargs)
        session.state = state
        session.joining = [(name, sung) for name, sung in saved.get("joining", [])]
        return session

    def rematch(self, seed: int, save_path: Path | None) -> PlaySession:
        """Another game at the same table, once this one is over: the same rules, players (the
        late friends who joined too, now from the start), screens, keyboard, microphones and
        pace; new dice from `seed`, saved in `save_path`. Lines typed once the game was over
        (a shout, a choice) are dropped: they are not the next game's first moves."""
        while self.keyboard.poll(0) is not None:
            pass
        session = PlaySession(self.state.rules, self.players, self.view, self.keyboard, self.listener, seed=seed,
                              speak=self.speak, clock=self.clock, save_path=save_path, pace=self.pace, keep=self.keep,
                              tap_delivery_s=self.tap_delivery_s, settings=self.settings,
                              seats_changed=self.seats_changed)
        session.joining = list(self.joining)  # told they would sit down as the next turn began: the next game's
        return session

    def save(self) -> None:
        if self.save_path is not None:
            # Whole or not at all, through a temporary file of its own (a fixed `game.tmp` beside
            # it was a file of the user's, overwritten then renamed away).
            saved = {**self.state.to_json(), "lineup": [p.to_json() for p in self.players],
                     **({"settings": self.settings} if self.settings else {}),
                     **({"joining": [[name, sung] for name, sung in self.joining]} if self.joining else {}),
                     **(self.keep() if self.keep is not None else {})}
            try:
                write_atomic(self.save_path, json.dumps(saved))
            except OSError as error:
                where = short_path(self.save_path)
                kept = (f"the file keeps the game as it was before: make room, then go on with --resume {where}"
                        if self.save_path.exists() else "nothing was saved: make room and start again")
                raise SaveError(f"the game cannot be saved in {where} ({error.strerror or error}); {kept}") from None

    # ------------------------------------------------------------------ the loop

    def run(self) -> GameState:
        self._began = self.clock()
        for seat, player in enumerate(self.players):
            if player.human:
                self.view.voice(seat, LISTENING if self._hears(seat) else KEYBOARD_ONLY)
        self.view.show(self)  # this game's table at once (after `again`, a bot may move first)
        while (decision := self.state.pending) is not None:
            if self.joining and self._seat_joining():
                continue  # the turn's first decision again, with the newcomer at the table
            assert decision.seat is not None
            player = self.players[decision.seat]
            self._moment = self.clock()
            action: Action | None
            if decision.kind == "race":
                action = self._race_answer(decision)
            elif player.human:
                self.view.show(self)
                action = self._ask_human(decision)
            else:
                action = player.bot.act(self.state, decision)
            if action is not None:  # None: a false shout changed the game; ask again
                if decision.kind != "race":
                    self._wait_for_host_sound()
                index = len(self.state.history)
                self.state.apply_action(action, seat=decision.seat)
                if self._voice_answer is not None:
                    self.misheard.append(Misheard(index, decision.seat, self._voice_answer, answer=True))
            self._voice_answer = None
            self.save()
            if player.human:
                # The question just answered goes from the screen now: a bot thinking next left
                # it there, and the answer typed again answered the player's next question.
                self.view.show(self)
            if self.state.pending is None or self.state.pending.kind != "race":
                # A race resumed from a save made in it was run for every seat, those that had
                # answered before the save too: their answers, never asked for, go with it.
                self._race_answers = {}
            # Time for the table to follow a bot's move, unless the move opened a race: the
            # race's clock starts as its dice are shown, so shouting at once is shouting in it.
            racing = self.state.pending is not None and self.state.pending.kind == "race"
            # (not after the winning move: a line typed then was "not your turn yet", a `!` the
            # engine's "game is over (seat 1 won)", its seat counted from 0)
            over = self.state.pending is None
            if not player.human and decision.kind != "race" and self.pace > 0 and not racing and not over:
                self.view.show(self)
                self._pause(self.pace)
        self.view.show(self)
        return self.state

    def _hears(self, seat: int) -> bool:
        return self.listener is not None and seat in self.listener.seats

    def _streaming(self, seat: int) -> bool:
        """Whether the seat's microphone is on now (`Listener.streaming`; else whether it is heard)."""
        streaming = getattr(self.listener, "streaming", None)
        return self._hears(seat) and (streaming is None or bool(streaming(seat)))

    def _wait_for_host_sound(self) -> None:
        """A move may show dice, and dice may open a race: not while the host plays a sound
        masked in the listener's audio (the phones' chirp), where a shout would be lost. The
        chirp and its echo last under a second; HOST_SOUND_WAIT_S bounds the wait all the same."""
        sounding = getattr(self.listener, "sounding", None)
        if sounding is None:
            return
        deadline = time.monotonic() + HOST_SOUND_WAIT_S
        while sounding() and time.monotonic() < deadline:
            time.sleep(0.01)

    # ------------------------------------------------------------------ humans

    def _ask_human(self, decision: Decision) -> Action | None:
        """The asked human's choice, or None after a false shout (the game moved on)."""
        assert decision.seat is not None
        options = decision.legal_actions() if decision.staked is None else list(decision.options)
        # The same question put again (another player's false shout came first, or a take-back:
        # its stakes maybe changed by a Bévue) keeps the time it was first put; any other question,
        # the next turn's equal one too, is put now.
        asked = self._asked_at
        if not (self._asking_again and asked is not None and (asked[0].seat, asked[0].kind) == (decision.seat,
                                                                                                   decision.kind)):
            self._asked_at = (decision, self.clock())
        self._asking_again = False
        put_at = self._asked_at[1] if self._asked_at is not None else self.clock()
        self.view.ask(self, decision, options)
        if self.listener is not None:
            self._listen(intents_for(decision) | set(self.race_shouts))
        parts: list[str] = []  # the asked player's answer said in parts so far (voice/intents.py)
        held: tuple[Action, float] | None = None  # one die kept, waiting a moment for a second
        while True:
            # Every phrase of a batch is judged: several come at once where the room holds
            # utterances back to tell whose they are (an answer and another player's false shout
            # said together; two false shouts). The first answer that fits is kept.
            answer: Action | None = None
            shouted = False  # a false shout the game took
            for item in self._poll_listener():
                if item.intent in self.race_shouts:  # outside a race, the engine judges it a false shout
                    shouted = self._false_shout(item.seat, item.intent, item.onset, "voice") or shouted
                    continue
                if item.seat != decision.seat or answer is not None:
                    continue  # another player's words (not theirs to answer now), or said after the answer
                if item.onset < put_at - ANSWER_EARLY_S:
                    continue  # begun before the question was put: the last answer said twice (« oui… OUI »)
                if self._not_understood(item):
                    continue
                assert item.intent is not None  # (understood)
                parts, action, why, more = answer_in_parts(decision, parts, item.intent,
                                                           onset_ms=self._since_asked(item.onset))
                self.view.voice(item.seat, f"heard « {', '.join(map(words, parts))} »" + (" …" if more else ""))
                if action is not None and more:
                    held = (action, self.clock() + KEEP_MORE_S)  # a second die may be named
                    continue
                if action is not None:
                    answer, self._voice_answer, held = action, item.intent, None
                    continue
                if more:
                    continue  # begun (« civet »): its combination and stake to come
                parts, held = [], None
                self.view.voice(item.seat, SAY_AGAIN)
                name = self.players[item.seat].name
                self.view.say(Said(f"{name}: heard « {words(item.intent)} »: "
                                   f"{self._plain_reason(why, options, decision)}",
                                   f"{name} : « {{phrase}} » entendu, qui ne répond pas à la question : répétez",
                                   item.seat, item.intent))
            if shouted:  # the game took a false shout: the answer stands if it still answers the question
                if answer is not None and self.state.pending == decision:
                    return answer
                return self._unanswered()
            if answer is None and held is not None and self.clock() >= held[1]:
                answer, self._voice_answer = held[0], parts[-1]  # no second die named: one kept
            if answer is not None:
                return answer
            self._seats_settled()
            typed = self.keyboard.poll(0.05)
            if typed is None:
                if self.keyboard.closed and self.listener is None:
                    raise EOFError("the keyboard input ended and no microphone is listening")
                continue
            if typed[0].startswith("!"):
                if self._typed_false_shout(typed, default_seat=decision.seat):
                    return self._unanswered()
                continue
            if typed[0].startswith("+"):
                if self._typed_join(typed[0]):
                    return self._unanswered()
                continue
            if typed[0].strip() == TAKE_BACK:
                if self.take_back():
                    return self._unanswered()  # the game changed: ask again
                continue
            if not typed[0].strip() and self._own_shout_repeated(decision.seat, typed[1], by="keyboard"):
                continue  # Enter pressed twice for a shout: no answer to the question put since
            if typed[1] < put_at - ANSWER_EARLY_S:
                # Typed while a bot was thinking (--pace 0 leaves no pause to refuse it in): meant
                # for what was on the screen then, it answered this question unseen.
                self.view.say(f"« {typed[0]} » ignored: typed before this question was put; type it again"
                              if typed[0].strip() else "Enter ignored: pressed before this question was put; "
                              "press it again")
                continue
            action, why = self._typed_action(decision, options, typed[0])
            if action is not None:
                return self._timed(action, typed[1])
            self.view.say(why)

    def _unanswered(self) -> Action | None:
        """The question is left unanswered for now (the game took a false shout, a take-back or a
        late friend first): put again, it is the same question (`_asked_at`). None, `_ask_human`'s."""
        self._asking_again = True
        return None

    def _seats_settled(self) -> None:
        """A seat changed hands outside the moves (`seats_changed`): saved now, not at the next
        move (a stop before it lost the new phone's token and the player's chosen name), and
        shown again (the question named the player by their old name)."""
        if self.seats_changed is not None and self.seats_changed():
            self.save()
            self.view.show(self)

    def _pause(self, seconds: float) -> None:
        """Time for the table to see a bot's move; a human may shout (falsely) meanwhile."""
        if self.listener is not None:
            self._listen(set(self.race_shouts))
        end = self.clock() + seconds
        while (left := end - self.clock()) > 0:
            self._seats_settled()
            for item in self._poll_listener():
                if item.intent in self.race_shouts:
                    self._false_shout(item.seat, item.intent, item.onset, "voice")
            typed = self.keyboard.poll(min(0.05, left))
            if typed is None:
                continue
            if typed[0].startswith("!"):
                self._typed_false_shout(typed, default_seat=None)
            elif typed[0].startswith("+"):
                self._typed_join(typed[0])
            elif typed[0].strip() == TAKE_BACK:
                self.take_back()
            else:
                self.view.say(f"« {typed[0]} » ignored: it is not your turn yet")

    def _typed_false_shout(self, typed: tuple[str, float], default_seat: int | None) -> bool:
        """`!`, `! 2`, `! g`: a race phrase shouted at the keyboard outside a race."""
        humans = [s for s, p in enumerate(self.players) if p.human]
        if default_seat is None and len(humans) == 1:
            default_seat = humans[0]
        try:
            parsed = self._parse_shout(typed[0], humans, default_seat, self.race_shouts)
        except UnknownPhrase as error:
            self.view.say(str(error))  # a typo, not a shout: no Bévue for it
            return False
        if parsed is None:
            self.view.say("a shout at the keyboard: « ! » then the seat number when several humans "
                          "play (« ! 2 »), and a phrase's first letters if not « pas mou le caillou »")
            return False
        return self._false_shout(parsed[0], parsed[1], typed[1], "keyboard")

    # ------------------------------------------------------------------ a late friend

    def join(self, name: str, sung: bool = False) -> None:
        """A late friend joins as a human (the Chante-Sloubi house rule): at once if a turn is
        beginning, else as the next one begins; a refusal is said in one line."""
        name = name.strip()
        refusal = self._join_refusal(name)
        if refusal is not None:
            shown = name if len(name) <= NAME_LIMIT else f"{name[:NAME_LIMIT]}…"
            self.view.say(f"{shown or 'a newcomer'} cannot join: {refusal}")
            return
        self.joining.append((name, sung))
        if not self._seat_joining():
            self.view.say(Said(f"{name} joins as the next turn begins", f"{name} s'assoit au début du prochain tour"))

    def _join_refusal(self, name: str) -> str | None:
        """What the engine would refuse, and what only the table knows: its seats' names, the
        friends already waiting, and bots that cannot play a larger table."""
        if name and (shape := name_refusal(name, [])) is not None:  # too long to show, a control character
            return shape
        taken = [p.name for p in self.players] + [waiting for waiting, _ in self.joining]
        same = name_at_table(name, taken) if name else None
        if same is not None:
            return f"{same} is already at the table: give the newcomer another name"
        refusal = self.state.join_refusal(name, now=False)
        if refusal is not None:
            return refusal
        seats = self.state.players + len(self.joining) + 1
        if seats > self.rules.max_players:
            return f"the table is full: ruleset {self.rules.name!r} seats at most {self.rules.max_players} players"
        for player in self.players:
            check = getattr(player.bot, "check_seats", None)  # a model trained for one table size
            if check is not None:
                try:
                    check(self.rules, seats)
                except ValueError as error:
                    return f"{player.name} cannot play at {seats} seats ({error})"
        return None

    def _typed_join(self, text: str) -> bool:
        """`+ Name` (`+ Name !`: the newcomer sang the Sloubi to its end). True when someone
        sat down now (the pending decision is asked again, with them at the table)."""
        words = text[1:].strip()
        sung = words.endswith("!")
        name = words.rstrip("!").strip()
        if not name:
            self.view.say("a late friend joins with « + Name » (« + Name ! » if they sang the Sloubi to its end)")
            return False
        before = self.state.players
        self.join(name, sung)
        return self.state.players > before

    def _seat_joining(self) -> bool:
        """Seats the late friends waiting, if a turn is beginning; True when someone sat down.
        A human at the keyboard; the game is saved at once."""
        seated = False
        while self.joining and self.state.at_turn_start:
            name, sung = self.joining.pop(0)
            try:
                seat = self.state.join(name, sung)
            except JoinRefused as error:
                self.view.say(f"{name} cannot join: {error}")
                continue
            self.players.append(SeatPlayer(name))
            seated = True
            points = self.state.scores[seat]
            self.view.say(Said(f"{name} joins at seat {seat + 1} with {points} points (Chante-Sloubi"
                               f"{', the Sloubi sung' if sung else ''})",
                               f"{name} s'assoit à la place {seat + 1} avec {points} points (Chante-Sloubi"
                               f"{', le Sloubi chanté' if sung else ''})", seat))
            self.view.voice(seat, LISTENING if self._hears(seat) else KEYBOARD_ONLY)
        if seated:
            self.save()
            self.view.show(self)
        return seated

    def _late_race_shout(self, seat: int, phrase: str | None, at: float, by: str) -> bool:
        """Whether a race phrase heard or pressed outside a race (`phrase` None: « ! » alone)
        belongs to the last race, and so is no false shout. It is not counted in the race
        either: the race's answers are given.
        - Begun inside the race's window, and recognised or received only after the race was
          settled: the table says so.
        - Begun after the window but before the race was settled (its grace wait for shouts
          still on their way): not counted, as it is when decided during that wait; which of
          the two it is depends only on how fast the recogniser decided.
        - Its seat's repeat of the shout it made in that race, up to REPEAT_S after it: the phrase
          said twice, or a double tap whose second tap came once the race was over (a race ends
          as soon as every shout is in). Quietly dropped, as a repeat inside the race is."""
        if self._own_shout_repeated(seat, at, phrase=phrase):
            return True  # (its race may be one before the last: a tie's race among others followed)
        if self._last_race is None:
            return False
        start, end, settled, phrases = self._last_race
        if phrase is not None and phrase not in phrases:
            return False
        if not start - EARLY_TOLERANCE_S <= at <= max(end, settled):
            return False
        if at > end:
            self.view.say(self._outside_window(seat, phrase, early=False))
        elif not any(shout.seat == seat for shout in self.race_log[-1]):
            name = self.players[seat].name
            how, how_fr = ("heard", "entendu") if by == "voice" else ("pressed", "touché")
            if phrase is None:  # « ! » alone, a phone's tap: the shout of whatever race it was
                self.view.say(Said(f"{name}: a shout {how} after the race was settled: not counted",
                                   f"{name} : cri {how_fr} après la course réglée : non compté", seat))
            else:
                self.view.say(Said(f"{name}: « {words(phrase)} » was {how} after the race was settled: not counted",
                                   f"{name} : « {{phrase}} » {how_fr} après la course réglée : non compté",
                                   seat, phrase))
        return True

    def _outside_window(self, seat: int, phrase: str | None, early: bool) -> Said:
        """What the table says of a shout (`phrase` None: « ! » alone, pressed) that began
        before the dice were shown (`early`) or after the race's window: it is not counted."""
        name = self.players[seat].name
        when = "before the dice were shown" if early else "after the race's window"
        if phrase is None:
            return Said(f"{name}: pressed {when}: not counted",
                        f"{name} : touché {WHEN_FR[early]} : non compté", seat)
        return Said(f"{name}: « {words(phrase)} » began {when}: not counted",
                    f"{name} : « {{phrase}} » commencé {WHEN_FR[early]} : non compté", seat, phrase)

    def _own_shout_repeated(self, seat: int, at: float, by: str | None = None, phrase: str | None = None) -> bool:
        """Whether `at` is up to REPEAT_S after the seat's own last counted shout (made `by` that
        means, and of `phrase`, where given): that shout repeated (the phrase said twice, a
        double tap or press), the race having ended as soon as every shout was in."""
        own = self._own_shouts.get(seat)
        return (own is not None and by in (None, own[2]) and phrase in (None, own[1])
                and own[0] - EARLY_TOLERANCE_S <= at <= own[0] + REPEAT_S)

    def _listener_holds(self) -> bool:
        holding = getattr(self.listener, "holding", None)
        return bool(holding()) if holding is not None else False

    def _false_shout(self, seat: int, phrase: str | None, at: float, by: str) -> bool:
        """A race phrase shouted outside that seat's race (None: « ! » alone, the first race
        phrase): unless it belongs to the last race (a repeat, or said in it and heard late:
        `_late_race_shout`), the engine judges it (a Bévue in rulesets with Bévues). True when
        the game took it."""
        if self._late_race_shout(seat, phrase, at, by):
            return False
        phrase = phrase or self.race_shouts[0]
        last = self._false_shouts.get(seat)
        if last is not None and last[1] == phrase and last[0] <= at <= last[0] + REPEAT_S:
            return False  # the same false shout again (said twice, louder; a double tap): one Bévue
        onset_ms = self._since_asked(at)
        name = self.players[seat].name
        try:
            self.state.apply_action(Shout(phrase, onset_ms), seat=seat)
        except IllegalActionError as error:
            self.view.say(Said(f"{name} shouted « {words(phrase)} » ({by}) out of any race: {error}",
                               f"{name} a crié « {{phrase}} » ({BY_FR.get(by, by)}) hors de toute course : refusé",
                               seat, phrase))
            return False
        self.view.say(Said(f"{name} shouted « {words(phrase)} » ({by}) with no race to shout for"
                           + (f"; if it was talk the microphone misheard, « {TAKE_BACK} » typed at the table takes it "
                              "back" if by == "voice" else ""),
                           f"{name} a crié « {{phrase}} » ({BY_FR.get(by, by)}) sans course à crier"
                           + (f" ; si c'était une parole mal entendue, « {TAKE_BACK} » tapé à la table le reprend"
                              if by == "voice" else ""), seat, phrase))
        self._false_shouts[seat] = (at, phrase)
        if by == "voice":
            self.misheard.append(Misheard(len(self.state.history) - 1, seat, phrase, answer=False))
        self.save()
        self.view.show(self)
        return True

    def take_back(self) -> bool:
        """`-`: the table takes back the last thing a microphone heard that the game took (talk
        the recogniser took for a phrase), and the game is saved so:
        - a false shout: the game goes on as if it had never been said, its Bévue undone;
        - an answer: its question is asked again, what followed it undone; the dice thrown since
          fall again as they fell (GameState.before), so a take-back is never a new throw.
        Refused, in one line, when there is none, when the game that followed no longer plays
        without the shout, or when a human has played since the answer (their moves, a race's
        shouts, would be lost). True when it was taken back."""
        if not self.misheard:
            self.view.say(f"« {TAKE_BACK} » takes back a false shout or an answer a microphone heard: there is "
                          "none to take back")
            return False
        heard = self.misheard[-1]
        name = self.players[heard.seat].name
        if heard.answer:
            since = self._human_since(heard.index)
            if since is not None:
                self.view.say(f"{name}'s « {words(heard.phrase)} » cannot be taken back: {since} has played since (an "
                              "answer is taken back while only dice and bots have played after it)")
                return False
            thrown = any(entry["seat"] is None for entry in self.state.history[heard.index + 1:])
            state = self.state.before(heard.index)
            done = f"{name} is asked again" + (" (the dice that followed fall again)" if thrown else "")
            done_fr = f"{name} répond à nouveau" + (" (les dés qui ont suivi retombent pareils)" if thrown else "")
        else:
            try:
                state = self.state.without(heard.index)
            except IllegalActionError as error:
                self.view.say(f"{name}'s « {words(heard.phrase)} » cannot be taken back: the game since no longer "
                              f"plays without it ({error})")
                return False
            done, done_fr = "as if never said", "comme jamais dit"
        self.misheard.pop()
        self.state = state
        self.view.say(Said(f"{name}'s « {words(heard.phrase)} » is taken back: talk the microphone misheard, {done}",
                           f"{name} : « {{phrase}} » est repris (une parole mal entendue), {done_fr}",
                           heard.seat, heard.phrase))
        self.save()
        self.view.show(self)
        return True

    def _human_since(self, index: int) -> str | None:
        """The first human who played after history entry `index` (an answer, a race's shout or
        silence, a false shout, a late friend's arrival), by name; None when only dice and bots
        did."""
        for entry in self.state.history[index + 1:]:
            if entry["seat"] is not None and self.players[entry["seat"]].human:
                return self.players[entry["seat"]].name
        return None

    def _since_asked(self, at: float) -> float:
        """When something said or pressed at `at` began, in ms after the game asked (≥ 0)."""
        return round(max(0.0, (at - self._moment) * 1000), 1)

    def _timed(self, action: Action, at: float) -> Action:
        """A shout chosen from the menu (a claim: « À Kadoc ! », « Sirop gagnant ! ») is timed
        as every shout is, from when the game asked: the menu's option has no onset."""
        if isinstance(action, Shout) and action.onset_ms is None:
            return Shout(action.phrase, self._since_asked(at))
        return action

    def _typed_action(self, decision: Decision, options: list[Action], text: str) -> tuple[Action | None, str]:
        """A number from the menu, a staked choice `N STAKE`, or intent words; Enter alone
        takes the only option."""
        words = text.split()
        choices = len(options) + len(decision.stakes)
        if not words:
            if choices == 1 and options:
                return options[0], ""
            return None, f"type the number of your choice (1..{choices}), then Enter"
        if words[0].isdecimal():  # (not isdigit: « ² » is a digit int() refuses, on AZERTY's first key)
            numbers = [typed_number(w) for w in words]
            if decision.kind == "soufflette_keep" and len(words) > 1 and all(n is not None for n in numbers):
                keep = KeepDice(tuple(n for n in numbers if n is not None))  # « 3 5 »: the faces kept
                if decision.allows(keep):
                    return keep, ""
                return None, f"« {text} » is no keep of these dice: type the number of your choice (1..{choices})"
            index = (numbers[0] or 0) - 1  # (a number too long to read is none of the choices)
            if not 0 <= index < choices:
                return None, f"choose 1..{choices}"
            if index < len(options):
                if len(words) > 1:  # a stake where none is taken: more likely a wrong number than a choice
                    return None, f"choice {index + 1} takes no stake: type « {index + 1} » alone"
                return options[index], ""
            name, stakes = decision.stakes[index - len(options)]
            stake = typed_number(words[1]) if len(words) > 1 else None  # (« --5 » was a ValueError: the game stopped)
            if stake is None:
                return None, f"give the stake too: « {words[0]} {stakes.stop - 1} » ({stakes.start}..{stakes.stop - 1})"
            if len(words) > 2:  # « 2 40 velute »: the words after the stake were dropped, the 40 played
                return None, f"« {text} »: the choice and its stake alone, such as « {words[0]} {words[1]} »"
            action = decision.staked(name, stake)  # type: ignore[misc]
            if not decision.allows(action):
                return None, f"the stake must be within {stakes.start}..{stakes.stop - 1}"
            return action, ""
        # The words of an answer typed as they are said (« couche sirop », « Couche-Sirop »: the
        # hint says to say them) are its intent, as heard; typed in parts, the words themselves.
        intent = typed_intent(text, intents_for(decision))
        action, why = action_for(decision, [intent] if intent is not None else words)
        if action is None and CoucheSirop() in options and "couche sirop" in why:
            # (ending in no « ) »: _plain_reason says it as it is)
            why = f"{why}; typed, « couche sirop » or {options.index(CoucheSirop()) + 1}"
        return action, self._plain_reason(why, options, decision, typed=text)

    @staticmethod
    def _plain_reason(why: str, options: list[Action], decision: Decision, typed: str | None = None) -> str:
        """action_for's reason names the decision in the engine's general words ("roll the dice
        (or first declare a Civet, …)"); the menu on screen says what is possible now."""
        if not why.endswith(")"):
            return why  # a specific hint: "a Civet needs a combination and a stake: …"
        choices = len(options) + len(decision.stakes)
        if typed is None:
            return "not one of the choices now: say it again"
        return f"« {typed} » is not one of the choices now: type 1..{choices}, then Enter"

    def _not_understood(self, heard: Heard) -> bool:
        """An utterance the recogniser could not tell: ask that player to say it again and
        keep waiting (the keyboard stays open). A guess would cost more than a repeat."""
        if heard.intent is not None:
            return False
        self.view.voice(heard.seat, SAY_AGAIN)
        name = self.players[heard.seat].name
        self.view.say(Said(f"{name}: not understood, say it again", f"{name} : pas compris, répétez", heard.seat))
        return True

    def _listen(self, intents: set[str], race: bool = False) -> None:
        try:
            self.listener.listen_for(intents, race=race)  # type: ignore[union-attr]
        except InputLost as error:
            self._lose_listener(error)

    def _poll_listener(self) -> list[Heard]:
        if self.listener is None:
            return []
        try:
            heard = self.listener.poll()
        except InputLost as error:
            self._lose_listener(error)
            return []
        return [h for h in heard if self._began is None or h.onset >= self._began]

    def _lose_listener(self, error: Exception) -> None:
        self.view.say(Said(f"microphone lost ({error}); going on with the keyboard — the game is kept",
                           f"micro perdu ({error}) ; la partie continue au clavier, elle est gardée"))
        for seat in getattr(self.listener, "seats", ()):
            self.view.voice(seat, KEYBOARD_ONLY)
        try:
            self.listener.close()  # type: ignore[union-attr]
        except Exception:  # noqa: BLE001 - it is gone already
            pass
        self.listener = None

    # ------------------------------------------------------------------ races

    def _race_answer(self, decision: Decision) -> Action:
        """The engine asks each seat of a race in turn; the race itself is run once, in real
        time, when its first seat is asked, and the answers are handed out from it."""
        assert decision.seat is not None  # a race decision is a seat's
        if decision.seat not in self._race_answers:
            answered = self._run_race(decision)
            # A race resumed from a save made in it is run for every seat, but the engine asks
            # only the seats from this one on (in its order): the others answered before the
            # save, and an answer kept for them would be handed to the next race's question.
            order = self._race_seats(decision)
            still = order[order.index(decision.seat):] if decision.seat in order else order
            self._race_answers = {seat: answer for seat, answer in answered.items() if seat in still}
        return self._race_answers.pop(decision.seat, Pass())

    def _race_seats(self, decision: Decision) -> list[int]:
        return list(self.state.table.race_answers) or list(range(self.state.players))

    def _run_race(self, decision: Decision) -> dict[int, Action]:
        seats = self._race_seats(decision)
        allowed = race_phrases_by_seat(self.state.table.race_answers, decision, seats)
        phrases = list(dict.fromkeys(p for own in allowed.values() for p in own))
        window = self.rules.races.race_window_ms / 1000
        self.race_now = []
        self.race_log_from = len(self.state.log)  # the race panel's verdict is this race's only
        self.view.show(self)
        names = [p.name for p in self.players]
        callout = race_callout(self.state.table.race_answers, decision, names)
        # Enter alone shouts for the only human racing; several at one keyboard name their seat.
        keys = shout_keys([s for s in seats if self.players[s].human], names) or "Enter"
        self.view.say(f"RACE: {words(decision.reason)}! — shout {callout}"
                      f" ({f'{keys}, or say it' if self.listener is not None else keys})")
        start = self.clock()
        if self.listener is not None:
            self._listen(set(phrases), race=True)
        shouts: dict[int, RaceShout] = {}
        pending_bots: list[tuple[float, int, Shout]] = []
        for seat in seats:
            player = self.players[seat]
            if not player.human:
                # The engine asks each seat in turn; a bot's choice is taken now, so that it can be
                # shown at its onset, on the decision the engine will put to its seat (its phrases,
                # and its Bévues, which ModelBot leaves out).
                asked = self.state.table.race_decisions.get(seat) or replace(decision, seat=seat)
                action = player.bot.act(self.state, asked)
                # A shout without an onset is no answer (the engine refuses it too): no shout.
                if isinstance(action, Shout) and action.onset_ms is not None:
                    pending_bots.append((action.onset_ms / 1000, seat, action))
        pending_bots.sort()
        humans = [s for s in seats if self.players[s].human]

        def voice_may_come(seat: int) -> bool:
            """A seat whose shout so far is a tap, and whose voice (begun no later) may follow."""
            shout = shouts.get(seat)
            return (shout is not None and shout.by == "keyboard" and self._streaming(seat)
                    and self.clock() < start + shout.onset_ms / 1000 + VOICE_AFTER_TAP_S)

        phrases_of = {seat: allowed[seat] for seat in humans}  # what each human may shout
        while self.clock() - start < window:
            now = self.clock() - start
            while pending_bots and pending_bots[0][0] <= now:
                _, seat, action = pending_bots.pop(0)
                assert action.onset_ms is not None  # only shouts with an onset are pending
                shouts[seat] = RaceShout(seat, action.phrase, action.onset_ms, "bot")
                self._bot_shouts(seat, action)
            if all(s in shouts for s in humans) and not pending_bots and not any(map(voice_may_come, humans)):
                break
            for heard in self._poll_listener():
                self._heard_shout(heard, start, window, humans, phrases_of, shouts)
            next_bot = pending_bots[0][0] - now if pending_bots else window - now
            typed = self.keyboard.poll(min(0.02, max(0.0, next_bot)))
            if typed is not None:
                self._typed_shout(typed, start, humans, phrases_of, decision, shouts, window)
        # A shout said inside the window is decided a few hundred ms after it ends (the
        # recogniser waits for the utterance to end), and a phone's tap made inside it may still
        # be on the network: wait for those before settling the race.
        closed = self.clock()
        waits = {s: max(VOICE_GRACE_S if self._hears(s) else 0.0, self.tap_delivery_s) for s in humans}

        def awaited(seat: int) -> bool:
            if seat in shouts:
                return voice_may_come(seat)
            now = self.clock()
            return now < closed + waits[seat] or (
                self._hears(seat) and now < closed + VOICE_GRACE_S + HELD_GRACE_S and self._listener_holds())

        while any(awaited(s) for s in humans):
            for heard in self._poll_listener():
                self._heard_shout(heard, start, window, humans, phrases_of, shouts)
            typed = self.keyboard.poll(0.02)
            if typed is not None:  # pressed after the window: said so, not counted
                self._typed_shout(typed, start, humans, phrases_of, decision, shouts, window)
        self._last_race = (start, start + window, self.clock(), frozenset(phrases))
        if self.listener is not None:
            # The race is over: its grammar and its race-time look (which reads talk as the
            # race's phrase) end with it; until the next question, any race phrase is a false
            # shout to hear (with no pause between bots' moves, the race's stayed on).
            self._listen(set(self.race_shouts))
        self._speak_bots_after_race([s for s in sorted(shouts.values(), key=lambda s: s.onset_ms) if s.by == "bot"])
        self.race_log.append(sorted(shouts.values(), key=lambda s: s.onset_ms))
        self.race_now = self.race_log[-1]
        for shout in shouts.values():
            self._own_shouts[shout.seat] = (start + shout.onset_ms / 1000, shout.phrase, shout.by)
        answered: dict[int, Action] = {seat: Pass() for seat in seats}
        answered.update({seat: Shout(s.phrase, round(s.onset_ms, 1)) for seat, s in shouts.items()})
        return answered

    @staticmethod
    def _parse_shout(text: str, humans: list[int], default_seat: int | None,
                     phrases: Sequence[str]) -> tuple[int, str | None] | None:
        """`[!] [SEAT] [PHRASE-START]` typed for a shout: (seat, the phrase named or None),
        or None when no human seat is named (or implied by a single human). Words that start
        no phrase are UnknownPhrase: a typo is never shouted as some other phrase."""
        parts = text.lstrip("!").split()
        seat = default_seat if default_seat in humans else (humans[0] if len(humans) == 1 else None)
        if parts and parts[0].isdecimal():
            seat = (typed_number(parts[0]) or 0) - 1
            parts = parts[1:]
        if seat is None or seat not in humans:
            return None
        first = parts[0].casefold() if parts else ""  # « mé » as « me »: the phrase as written, or its name
        chosen = [p for p in phrases if first and (p.startswith(first) or words(p).casefold().startswith(first))]
        if parts and not chosen:
            raise UnknownPhrase(f"« {' '.join(parts)} » is no phrase to shout here: type « ! » alone, or the "
                                f"first letters of one of {', '.join(map(words, phrases))}")
        return seat, chosen[0] if chosen else None

    def _heard_shout(self, heard: Heard, start: float, window: float, humans: list[int],
                     phrases_of: dict[int, list[str]], shouts: dict[int, RaceShout]) -> None:
        """A phrase a human said during a race: their shout, if it began inside the window (and
        before their tap, where they tapped too: a seat's shout is its earliest). `phrases_of`:
        what each seat may shout (a thrower's own phrase differs from the others' in some races)."""
        if heard.seat not in humans:
            return
        if self._not_understood(heard) or heard.intent not in phrases_of[heard.seat]:
            return
        earlier = shouts.get(heard.seat)
        if earlier is not None and heard.onset - start >= earlier.onset_ms / 1000:
            return  # said after its tap, or said twice
        if not -EARLY_TOLERANCE_S <= heard.onset - start <= window:
            self.view.say(self._outside_window(heard.seat, heard.intent, early=heard.onset < start))
            return
        onset_ms = max(0.0, (heard.onset - start) * 1000)
        shouts[heard.seat] = RaceShout(heard.seat, heard.intent, onset_ms, "voice")
        self.view.voice(heard.seat, f"heard « {words(heard.intent)} »")
        self._race_shout(shouts[heard.seat])

    def _typed_shout(self, typed: tuple[str, float], start: float, humans: list[int],
                     phrases_of: dict[int, list[str]], decision: Decision, shouts: dict[int, RaceShout],
                     window: float) -> None:
        text, at = typed
        phrases = list(dict.fromkeys(p for own in phrases_of.values() for p in own))
        if text.startswith("+"):
            self._typed_join(text)  # a late friend: seated once the turn is over
            return
        if text.strip() == TAKE_BACK:  # not mid-race: the race's answers are being gathered
            self.view.say(f"« {TAKE_BACK} » takes back a misheard shout or answer once the race is settled: type it "
                          "again then")
            return
        if not -EARLY_TOLERANCE_S <= at - start <= window:
            # Pressed while a bot was still playing, before the dice were shown (a race is won
            # by reacting to the dice, so a key waiting in the queue never counts as 0 ms), or
            # after the window.
            early = at < start
            when = "before the dice were shown" if early else "after the race's window"
            seat = self._pressed_by(text, humans, phrases)
            if seat in shouts:
                return  # a repeat (a double tap) of a shout that counted: nothing to say
            if seat is None:  # not a shout the table can name (a typo): the host's line alone
                self.view.say(f"« {text} » was pressed {when}: not counted in this race")
                return
            name = self.players[seat].name
            self.view.say(Said(f"{name}'s « {text} » was pressed {when}: not counted in this race",
                               f"{name} : touché {WHEN_FR[early]} : non compté dans cette course", seat))
            return
        try:
            parsed = self._parse_shout(text, humans, None, phrases)
        except UnknownPhrase as error:
            self.view.say(str(error))
            return
        if parsed is None:  # no human seat of this race named (or implied): it was dropped without a word
            if len(humans) == 1:  # (a bot's seat number, or one out of the table)
                self.view.say(f"« {text} »: Enter alone shouts for {self.players[humans[0]].name} (seat "
                              f"{humans[0] + 1}), the only human in this race")
            else:
                seats = ", ".join(f"{s + 1} {self.players[s].name}" for s in humans)
                self.view.say(f"« {text} »: several humans race here: « ! » then your seat's number ({seats})")
            return
        earlier = shouts.get(parsed[0])
        if earlier is not None and (at - start) * 1000 >= earlier.onset_ms:
            return  # a double tap, or a tap after its voice
        seat, phrase = parsed
        if phrase is not None and phrase not in phrases_of[seat]:
            self.view.say(f"« {words(phrase)} » is not {self.players[seat].name}'s to shout in this race: "
                          f"« {words(phrases_of[seat][0])} »")
            return
        phrase = phrase or phrases_of[seat][0]  # its own (race_phrases_by_seat puts it first)
        onset_ms = max(0.0, (at - start) * 1000)
        shouts[seat] = RaceShout(seat, phrase, onset_ms, "keyboard")
        self._race_shout(shouts[seat])

    def _pressed_by(self, text: str, humans: list[int], phrases: list[str]) -> int | None:
        """The seat a shout typed or tapped is for, or None if the line names none."""
        try:
            parsed = self._parse_shout(text, humans, None, phrases)
        except UnknownPhrase:
            return None
        return None if parsed is None else parsed[0]

    def _race_shout(self, shout: RaceShout) -> None:
        """A shout in the race under way, on the table at once (in place of its seat's later one:
        a voice heard after its tap, begun before it)."""
        self.race_now = [*(s for s in self.race_now if s.seat != shout.seat), shout]
        name = self.players[shout.seat].name
        self.view.say(f"{name} ({shout.by}): « {words(shout.phrase)} » at {shout.onset_ms:.0f} ms")
        self.view.show(self)

    def _bot_shouts(self, seat: int, action: Shout) -> None:
        assert action.onset_ms is not None
        self._race_shout(RaceShout(seat, action.phrase, action.onset_ms, "bot"))
        if self.speak is not None and self.listener is None:
            self.speak(words(action.phrase))  # nobody listens: heard as it is made

    def _speak_bots_after_race(self, said: list[RaceShout]) -> None:
        """Where the game listens, the bots' shouts are spoken once the race is decided (each is
        on the table at its onset all the same). What we play is masked in every microphone, as it
        must not be taken for a player's shout; spoken during the race, each bot's shout masked a
        second of it, the heart of the players' own reaction times, and a player's shout begun
        under it was lost. The game waits for the speech to end: an answer said under it is lost too."""
        if self.speak is None or self.listener is None or not said:
            return
        begin = self.clock()
        duration = self.speak(" ".join(words(shout.phrase) for shout in said))
        self.listener.mark_playback(begin, begin + duration + PLAYBACK_TAIL_S)
        time.sleep(min(duration + PLAYBACK_TAIL_S, SPEECH_WAIT_S))


def shout_keys(humans: Sequence[int], names: Sequence[str]) -> str | None:
    """How the humans of a race shout at the one keyboard where Enter alone is not theirs (several
    race: Enter alone is refused, `_parse_shout`), or None where it is (one human)."""
    if len(humans) < 2:
        return None
    return "« ! » then your seat's number: " + ", ".join(f"« ! {s + 1} » {names[s]}" for s in humans)


def typed_intent(text: str, intents: set[str]) -> str | None:
    """The intent among `intents` whose words `text` is, whatever its case, accents, hyphens and
    the punctuation around it (« Couche-Sirop ! » is couche_sirop), or None."""
    plain = "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))
    key = "_".join(plain.replace("-", " ").replace("'", " ").strip(" !?.,«»").split())
    return key if key in intents else None


def typed_number(word: str) -> int | None:
    """A whole number typed (a minus sign allowed), or None: « --5 », or digits too many to read
    (a held key: int() refuses past 4300 of them, a ValueError that stopped the game)."""
    digits = word[1:] if word.startswith("-") else word
    return int(word) if digits.isdecimal() and len(digits) <= 9 else None


def race_phrases_by_seat(answers: dict[int, tuple[str, ...]], decision: Decision,
                         seats: Sequence[int]) -> dict[int, list[str]]:
    """What each seat of a race may shout: its own phrases (`race_answers`; a Suite Velutée's
    thrower says « patte de canard », the others « velutée »), and where the ruleset offers the
    wrong phrases too (a Bévue to say), those. `decision` is the first seat's."""
    offered = [a.phrase for a in decision.options if isinstance(a, Shout)]
    wrong_offered = set(offered) != set(decision.answers or offered)
    return {seat: list(dict.fromkeys([*answers.get(seat, (race_phrase_of(decision),)),
                                      *(offered if wrong_offered else ())])) for seat in seats}


def race_callout(answers: dict[int, tuple[str, ...]], decision: Decision, names: Sequence[str]) -> str:
    """« the phrase » to shout, and where some seats have their own (the thrower's in a Suite
    Velutée, an Artichette), whose it is: « velutée » (Ana: « patte de canard »)."""
    own = {seat: phrases[0] for seat, phrases in answers.items() if phrases}
    common = race_phrase_of(decision)
    others = [f"{names[seat]}: « {words(phrase)} »" for seat, phrase in own.items() if phrase != common]
    return f"« {words(common)} »" + (f" ({', '.join(others)})" if others else "")


def race_phrase_of(decision: Decision) -> str:
    """The race's phrase: the engine's table of them, or the decision's own answers (a house
    rule's race, such as the Tichette, is in no table)."""
    return RACE_PHRASES.get(decision.reason) or (decision.answers[0] if decision.answers else decision.reason)
