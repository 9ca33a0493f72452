"""The room: the seats of one game, the phones and boards connected to it, and the session's
View, KeyLines and Listener for them.

Threads: the web server runs an asyncio loop on a thread of its own (voice/web/server.py); the
session runs on another; each phone's audio is decoded on a worker thread of its own. The
session reaches the phones through `publish` (which hops onto the loop with
`call_soon_threadsafe`); the phones reach the session through the typed-line queue (a `choose`
becomes the line the terminal would have typed: `"N"` or `"N STAKE"`; a shout tap becomes
`"! SEAT"`, timed on the host's clock) and through the Listener's queue of heard phrases, whose
onsets each phone's clock (voice/phone_clock.py) puts on the host's clock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import re
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from cdc_env.actions import Action
from cdc_env.game import Decision
from voice.alignment import Alignment
from voice.crosstalk import Attribution
from voice.phone_clock import PhoneClockError
from voice.session import Heard, InputLost, PlaySession, Said, SeatPlayer, name_at_table, name_refusal, typed_number
from voice.table import TypedLines
from voice.web.protocol import (
    RATE,
    TOKEN_PATTERN,
    AudioChunk,
    AudioState,
    Choose,
    ClientMessage,
    ClockSample,
    Hello,
    Ping,
    ProtocolError,
    SeatInfo,
    Seats,
    ShoutTap,
    Welcome,
    refusal,
)
from voice.web.snapshot import SAID_LINES, french_phrases, question_json, table_json

if TYPE_CHECKING:
    from voice.recogniser import Outcome

log = logging.getLogger(__name__)

MIC_TIMEOUT_S = 0.7  # no audio frame for this long (7 chunks): the phone's microphone is offline
CHIRP_TAIL_S = 0.3  # the chirp's echo, masked too
MAX_BACKLOG = 100  # audio chunks waiting for a phone's recogniser (10 s): more is refused
TAP_SLACK_S = 5.0  # a tap timed further than this from its arrival: the phone's clock is wrong
# The earliest a tap is timed before its arrival. The page dates a tap at the finger's touch, at
# most 1 s before it handles it (`tapTime` in phone.js), and sends it as the finger lifts, a
# packet a phone saving power may hold a few hundred ms: a tap dated earlier (a finger held on
# the button, or a page that dates its shouts early to win every race) counts from here.
TAP_EARLIEST_S = 1.5
PONGS_KEPT = 32  # the last pongs sent to a connection, whose times its clock samples must carry back
# How long a race waits past its window for a tap made inside it (PlaySession.tap_delivery_s): a
# tap crosses the Wi-Fi in a few ms, but a phone saving power holds its packets for a beacon or
# three (about 100 ms each), and the page's event loop may be busy drawing.
TAP_DELIVERY_S = 0.5
RECHECK_EVERY_S = 30.0  # a calibration to recheck plays the chirp no sooner than this after the last
# A calibration that failed (the chirp not heard clearly: a player talking over it, a phone in a
# pocket) or still pending is tried again this long after the last chirp: else that phone's
# races were decided uncalibrated (or on an old delay) for the rest of the game. Not at the
# recheck's pace: a phone that cannot hear the laptop would have the table hear a chirp twice a
# minute for nothing.
RETRY_FAILED_S = 60.0
JOIN_CHIRP_WAIT_S = 6.0  # a phone starting in a race: its chirp waits this long at most for the race's end
# A page starts its microphone's stream when it joins and again when it comes back (hidden, asleep,
# reconnected). Each start asks for the chirp, which masks every phone's audio: a seat's first
# JOIN_CHIRPS_PER_MIN starts in a minute get it at once, later ones at the recheck's pace
# (RECHECK_EVERY_S); past STREAM_STARTS_PER_MIN (each start builds a recogniser) a start is refused.
JOIN_CHIRPS_PER_MIN = 3
PREVIOUS_STREAM_WAIT_S = 20.0  # a new stream waits this long at most for the one before to be decoded
STREAM_STARTS_PER_MIN = 20
MIC_TEST_S = 0.4  # a seat's microphone test passes once its phone heard this much voice near it
QUESTIONS_KEPT = 8  # the last questions' numbers a phone's choice may name (the same decision put again)


class PhoneClockLike(Protocol):
    """What the room needs of voice/phone_clock.PhoneClock (the timing part's public API)."""

    @property
    def input_delay_s(self) -> float | None: ...

    @property
    def calibration_state(self) -> str: ...

    def ping(self, t1: float, t2: float, t3: float, t4: float) -> None: ...

    def chunk(self, first_sample: int, frames: int, phone_ms: float) -> None: ...

    def host_time(self, sample_index: float) -> float: ...

    def to_host(self, phone_ms: float) -> float: ...

    def reset_stream(self) -> None: ...

    def expect_chirp(self, host_play_s: float) -> None: ...

    def feed(self, pcm_int16: np.ndarray, first_sample: int) -> float | None: ...

    def slip(self, seconds: float) -> None: ...


def default_phone_clock() -> PhoneClockLike:
    from voice.phone_clock import PhoneClock  # the timing part

    return PhoneClock(rate=RATE)


def default_chirp() -> np.ndarray:
    from voice.phone_clock import make_chirp

    return make_chirp(rate=RATE)


def play_sound(samples: np.ndarray, rate: int) -> None:
    """Plays through the default output without waiting (the host's loudspeaker)."""
    import sounddevice

    sounddevice.play(samples, rate)


class RecogniserLike(Protocol):
    lexicon: Any

    def accept(self, pcm: np.ndarray, start_sample: int | None = None) -> list[Any]: ...

    def flush(self) -> list[Any]: ...

    def set_intents(self, intents: Any, race: bool = False) -> list[Any]: ...

    def mask_playback(self, start_s: float, end_s: float) -> None: ...


MakeRecogniser = Callable[[Callable[[int], float]], RecogniserLike]
"""Makes a phone stream's recogniser from its sample clock (sample index -> host seconds)."""


@dataclass
class Stream:
    """One phone's audio stream: its recogniser, fed on a worker thread."""

    number: int
    recogniser: RecogniserLike | None
    chunks: queue.Queue[AudioChunk | None] = field(default_factory=lambda: queue.Queue(MAX_BACKLOG))
    lock: threading.Lock = field(default_factory=threading.Lock)
    next_sample: int = 0
    thread: threading.Thread | None = None
    stopped: bool = False


@dataclass
class Seat:
    index: int
    player: SeatPlayer
    token: str | None  # None for a bot's seat: nobody can take it
    taken: bool = False
    clock: PhoneClockLike | None = None
    stream: Stream | None = None
    mic: str = "none"  # "online" | "offline" | "none"
    last_frame: float = 0.0
    played: bool = False  # a phone has played it: its name stays (a new phone plays on as that player)
    # The microphone test: "none" (no stream yet), "waiting" (its page asks its player to say a
    # few words), "heard" (it heard them: the microphone works, and what each phone heard of
    # that voice tells the crosstalk check how well it hears this player). Passed once per seat.
    mic_test: str = "none"
    mic_test_since: float = 0.0  # host time up to which the test's audio was looked at (from the stream's start)...
    mic_test_voiced_s: float = 0.0  # ...and how much of the player's voice it held
    stream_starts: list[float] = field(default_factory=list)  # host times of its streams' starts, the last minute
    chirp_wanted: bool = False  # a stream started past JOIN_CHIRPS_PER_MIN: its chirp waits for the recheck pace
    worker: threading.Thread | None = None  # the last stream's worker (it may still decode what came)


@dataclass(eq=False)
class Connection:
    """One WebSocket: a phone (bound to a seat once welcomed) or a board."""

    outbox: asyncio.Queue[dict[str, Any] | None]
    role: str = ""
    seat: int | None = None
    clock: PhoneClockLike | None = None
    times: deque[float] = field(default_factory=deque)  # when the last second's text messages came
    frames: deque[float] = field(default_factory=deque)  # ... and its audio frames
    bad: deque[float] = field(default_factory=deque)  # when its refused messages came (BAD_WINDOW_S)
    received_at: float | None = None  # host clock when the message being handled came in
    unseated: bool = False  # its seat went to another phone: what it sent for the seat is dropped
    stream_refused: bool = False  # its last stream start was refused (STREAM_STARTS_PER_MIN): its audio is dropped
    table: dict[str, Any] | None = None  # the newest table not yet sent
    table_queued: bool = False  # TABLE is in the outbox: one slot for every table to come
    # The pongs sent (ping id: t1, t2, t3): a clock sample carries one back, so a page cannot make
    # up the host's times (t2, t3) and with them its clock's offset (a tap dated early).
    pongs: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    opened_at: float = field(default_factory=time.monotonic)  # the oldest socket silent is the first closed

    def unseat(self, why: str) -> None:
        """Its seat went to another phone: it is told, and what it had already sent for the seat
        (a clock sample answering a pong, a tap, audio) is dropped, not refused."""
        self.seat, self.clock, self.unseated = None, None, True
        self.put(refusal(why, "seat_lost"))

    def send_table(self, message: dict[str, Any]) -> None:
        """Queue the table; a slow client gets only the newest one, never a backlog of them."""
        self.table = message
        if not self.table_queued:
            self.table_queued = True
            self.outbox.put_nowait(TABLE)

    def put(self, message: dict[str, Any]) -> None:
        """Queue any other message; a table made after it is sent after it (a newcomer's
        `welcome`, then the table)."""
        self.outbox.put_nowait(message)
        self.table_queued = False

    def take(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The message to send for an outbox item (the newest table for the TABLE slot)."""
        if message is TABLE:
            self.table_queued = False
            return self.table
        return message


TABLE: dict[str, Any] = {"type": "table"}  # the outbox slot of a connection's newest table


def _is_token(value: Any) -> bool:
    """A room secret or a seat token as `secrets.token_urlsafe(16)` makes them (the characters a
    hello's token is checked for, at least as long as this table makes them)."""
    return isinstance(value, str) and 16 <= len(value) <= 64 and re.fullmatch(TOKEN_PATTERN, value) is not None


@dataclass(frozen=True)
class HostAnswer:
    """What the room answers a host's command: a line to show, and an address to show as a QR
    code beside it for a phone to scan."""

    text: str
    link: str | None = None


class Room:
    def __init__(self, players: Sequence[SeatPlayer], *, secret: str | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 make_clock: Callable[[], PhoneClockLike] = default_phone_clock,
                 make_recogniser: MakeRecogniser | None = None,
                 chirp: Callable[[], np.ndarray] = default_chirp,
                 play: Callable[[np.ndarray, int], None] = play_sound,
                 keys: TypedLines | None = None) -> None:
        self.secret = secret or secrets.token_urlsafe(16)
        # This run of the room (a new one for a table started again with --resume, its secret and
        # tokens kept): its lines and question ids count from 1, and a page seeing another run
        # forgets what it saw of the last (`welcome`).
        self.run = secrets.token_urlsafe(6)
        self._seats_changed = threading.Event()  # a seat claimed or handed over: `seats_changed`
        self.clock = clock
        self.make_clock, self.make_recogniser = make_clock, make_recogniser
        self.chirp, self.play = chirp, play
        self.seats = [Seat(i, p, secrets.token_urlsafe(16) if p.human else None) for i, p in enumerate(players)]
        self.keys = keys or TypedLines()
        # Where a phone joins: {"phone": the table's address, "trust": the /trust page's}, set
        # by whoever serves the room (play.py); the board shows them as QR codes while a seat is free.
        self.join: dict[str, str] | None = None
        self.connections: set[Connection] = set()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.french = french_phrases()
        # Every phone hears the other players too: what each phone's recogniser decides waits
        # until the other phones' audio of that moment has come, and goes to its own player.
        self.attribution: Attribution[Outcome] = Attribution()
        # ...and the same sounds at the same moments: a phone whose capture slipped against its
        # samples' numbers (no stamp shows it) is found against the others, and set right.
        self.alignment = Alignment()
        self.intents: list[str] = []
        self.race = False  # a race is open for the intents (Recogniser.set_race)
        self.masks: list[tuple[float, float]] = []
        self.view = WebView(self)
        self.listener = PhoneListener(self) if make_recogniser is not None else None
        self._lock = threading.Lock()  # the table and the question, written by the session's thread
        self._table: dict[str, Any] | None = None
        self._question: tuple[int, Decision, list[Action]] | None = None
        # Each question put gets a number, sent with it: a phone's choice names the question it
        # answers, so a tap sent as its player's voice answered the one before (« je lance »)
        # never answers the next one put to the same seat (« siroter ? »).
        self._asked = 0
        self._put: dict[int, Decision] = {}  # the last questions' numbers: the decision each put
        # The line the last phone's choice put in `keys`, and the decision it answers.
        self._answer: tuple[tuple[str, float], Decision] | None = None
        self._sent_live: Any = None
        self._calibrate = threading.Event()
        self._join_chirp = False  # a chirp asked for a phone that starts (not a recheck)
        self._last_chirp: float | None = None  # host time the last chirp was played
        self._chirping = False  # the chirp asked for is about to play (`sounding`)
        self._sounding_until = 0.0  # host time the last chirp's mask ends
        self._closed = False
        self._chirp_failed = False
        self._calibrator = threading.Thread(target=self._calibrations, daemon=True, name="chirp")
        self._calibrator.start()

    # ------------------------------------------------------------------ to every client

    def attach(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop

    def publish(self) -> None:
        """Send the table to everyone (from any thread)."""
        if self.loop is not None and not self.loop.is_closed():
            try:
                self.loop.call_soon_threadsafe(self._send_table)
            except RuntimeError:  # the loop closed meanwhile: the server is stopping
                pass

    def live(self) -> list[tuple[str, float | None, str, str]]:
        """What changes without the session: each seat's mic, calibration and microphone test."""
        out = []
        for seat in self.seats:
            clock = seat.clock
            delay = clock.input_delay_s if clock is not None else None
            state = clock.calibration_state if clock is not None else "pending"
            out.append((seat.mic, None if delay is None else round(delay * 1000, 1), state, seat.mic_test))
        return out

    def table_message(self) -> dict[str, Any] | None:
        with self._lock:
            table = self._table
        if table is None:
            return None
        players = []
        # A late friend's seat is added just before the table with them is set (`set_table`, on
        # the session's thread): meanwhile the table set last has a player fewer than the seats.
        seats, live = list(self.seats), self.live()
        for player, (mic, delay_ms, state, test), seat in zip(table["players"], live[:len(table["players"])],
                                                              seats[:len(table["players"])], strict=True):
            players.append({**player, "name": seat.player.name, "mic": mic if player["human"] else "none",
                            "calibration": {"delay_ms": delay_ms, "state": state},
                            "mic_test": test if player["human"] else "none"})
        race = table.get("race")
        if race is not None:  # a voice shout from an uncalibrated phone is said to be so
            live = self.live()
            race = {**race, "shouts": [{**shout, "calibration": live[shout["seat"]][2]
                                        if shout["by"] == "voice" else None} for shout in race["shouts"]]}
        return {**table, "players": players, "race": race}

    def _send_table(self) -> None:
        message = self.table_message()
        self._sent_live = self.live()
        if message is not None:
            for connection in list(self.connections):
                connection.send_table(message)

    def watch(self) -> None:
        """On the loop, every 0.1 s: silent microphones go offline; changes are sent."""
        now = self.clock()
        for seat in self.seats:
            if seat.mic == "online" and now - seat.last_frame > MIC_TIMEOUT_S:
                seat.mic = "offline"
            if seat.mic_test == "waiting":
                streaming = [s.index for s in self.seats if s.mic == "online"]
                voiced, seat.mic_test_since = self.attribution.voiced_between(seat.index, seat.mic_test_since,
                                                                              streaming)
                seat.mic_test_voiced_s += voiced
                if seat.mic_test_voiced_s >= MIC_TEST_S:
                    seat.mic_test = "heard"
        if self._recheck_due(now):
            self.calibrate(recheck=True)
        if self.live() != self._sent_live:
            self._send_table()

    def seats_message(self) -> dict[str, Any]:
        return Seats(seats=[SeatInfo(seat=s.index, name=s.player.name, human=s.player.human, taken=s.taken)
                            for s in self.seats]).model_dump()

    # ------------------------------------------------------------------ from a client (on the loop)

    def handle(self, connection: Connection, message: ClientMessage) -> dict[str, Any] | None:
        """Act on one valid message; the answer to send back, if any. ProtocolError: refused,
        nothing changed."""
        if isinstance(message, Hello):
            return self._hello(connection, message)
        if not connection.role:
            raise ProtocolError("say hello first")
        if isinstance(message, Ping):
            # t2: when the frame came off the socket (parsing it is the host's time, not the network's).
            t2 = (connection.received_at or self.clock()) * 1000
            pong = (message.t1, t2, self.clock() * 1000)
            connection.pongs.pop(message.id, None)  # (an id sent again is the newest)
            connection.pongs[message.id] = pong
            if len(connection.pongs) > PONGS_KEPT:
                del connection.pongs[next(iter(connection.pongs))]
            return {"type": "pong", "id": message.id, "t1": pong[0], "t2": pong[1], "t3": pong[2]}
        if connection.role == "board":
            raise ProtocolError("a board only watches")
        if message.type == "claim":
            return self._claim(connection, message.seat, message.name)
        if connection.seat is None or connection.clock is None:
            if connection.unseated:
                # Sent for the seat before the phone heard that it went to another one (a clock
                # sample answering a pong, a tap): dropped; an error would show on its page.
                return None
            raise ProtocolError("claim a seat first")
        seat = self.seats[connection.seat]
        if isinstance(message, ClockSample):
            self._clock_sample(connection, connection.clock, message)
        elif isinstance(message, AudioState):
            self._audio_state(seat, connection, message)
        elif isinstance(message, Choose):
            self._choose(seat, message)
        elif isinstance(message, ShoutTap):
            self._shout(seat, connection.clock, message.t)
        return None

    def _hello(self, connection: Connection, hello: Hello) -> dict[str, Any] | None:
        if connection.role:
            raise ProtocolError("hello twice")
        connection.role = hello.role
        if hello.role == "phone" and hello.token is not None:
            seat = next((s for s in self.seats if s.token is not None
                         and secrets.compare_digest(s.token, hello.token)), None)
            if seat is not None:
                self._welcome(connection, seat)  # a reconnection: the seat and the whole table back
                return None
            connection.put(refusal("unknown seat token: choose a seat", "unknown_token"))
        if hello.role == "board" and self.join is not None:
            connection.put({"type": "join", **self.join})
        connection.put(self.seats_message())
        table = self.table_message()
        if table is not None:
            connection.send_table(table)
        return None

    def _claim(self, connection: Connection, index: int, name: str | None) -> dict[str, Any] | None:
        if connection.seat is not None:
            raise ProtocolError(f"this phone already plays seat {connection.seat + 1}")
        if index >= len(self.seats):
            raise ProtocolError(f"no seat {index + 1}: the table has {len(self.seats)}")
        seat = self.seats[index]
        if not seat.player.human:
            raise ProtocolError(f"seat {index + 1} is a bot's")
        if seat.taken:
            raise ProtocolError(f"seat {index + 1} is taken", "seat_taken", n=index + 1)
        if name is not None and not seat.played:  # a seat handed to a new phone keeps its player's name
            others = [s.player.name for s in self.seats if s is not seat]
            refused = name_refusal(name, others)
            # The name refusals a friend meets typing at the page (its field holds 24 characters
            # of one line) have a code: a name already at the table, and one with markup's marks.
            code = "name_taken" if name_at_table(name, others) is not None else None
            if refused is None and any(c in name for c in "[]<>"):
                refused, code = f"the name {name!r} holds [ ] < or >: give a plain name", "name_plain"
            if refused is not None:
                raise ProtocolError(f"seat {index + 1}: {refused}", code, name=name.strip())
            seat.player.name = name.strip()
        seat.taken = True
        self._welcome(connection, seat)
        self._seats_changed.set()  # the save keeps who holds the seat, and the player's name
        return None

    def _welcome(self, connection: Connection, seat: Seat) -> None:
        """The phone plays this seat from now on (a reconnection takes over from the old one)."""
        assert seat.token is not None
        for other in list(self.connections):
            if other is not connection and other.seat == seat.index:
                other.unseat("this seat was taken over by another phone")
        seat.taken = seat.played = True
        self._stop_stream(seat, "offline" if seat.mic != "none" else "none")
        connection.seat, connection.clock, connection.unseated = seat.index, self.make_clock(), False
        seat.clock = connection.clock
        connection.put(Welcome(seat=seat.index, token=seat.token, run=self.run).model_dump())
        self._offer_seats(but=connection)  # one seat fewer to choose from
        self._send_table()  # the whole table, to the newcomer and the others
        return None

    def leave(self, connection: Connection) -> None:
        """A socket closed: its seat's microphone is offline (the seat stays taken)."""
        self.connections.discard(connection)
        if connection.seat is not None:
            seat = self.seats[connection.seat]
            if seat.clock is connection.clock:
                self._stop_stream(seat, "offline" if seat.mic != "none" else "none")
                self._send_table()

    @staticmethod
    def _clock_sample(connection: Connection, clock: PhoneClockLike, sample: ClockSample) -> None:
        """One round trip for the phone's clock, once its t1, t2, t3 are those of a pong sent to
        this connection (each pong counts once)."""
        sent = (sample.t1, sample.t2, sample.t3)
        ping = next((i for i, pong in connection.pongs.items() if pong == sent), None)
        if ping is None:
            raise ProtocolError("clock: t1, t2 and t3 are not those of a pong this host sent (or of one of its last "
                                f"{PONGS_KEPT}): send each pong's t1, t2 and t3 back as they came, once")
        del connection.pongs[ping]
        clock.ping(sample.t1, sample.t2, sample.t3, sample.t4)

    def _audio_state(self, seat: Seat, connection: Connection, message: AudioState) -> None:
        assert connection.clock is not None
        now = self.clock()
        if message.state == "on":
            seat.stream_starts = [t for t in seat.stream_starts if now - t < 60.0]
            if len(seat.stream_starts) >= STREAM_STARTS_PER_MIN:
                # The page numbers its new stream from 0 as it asks: the stream under way cannot go
                # on (each frame of the new numbering was refused, the fifth refusal closed the
                # socket, and the page, welcomed again, started its stream again: a loop). Its
                # microphone is off, and the frames already on their way are dropped quietly.
                self._stop_stream(seat, "offline")
                connection.stream_refused = True
                self._send_table()
                raise ProtocolError(f"the microphone was started {len(seat.stream_starts)} times within a minute: "
                                    "turn it on again in a minute", "mic_restarts")
            seat.stream_starts.append(now)
            connection.stream_refused = False
        self._stop_stream(seat, "offline")
        if message.state == "on":
            sample_clock = self._sample_clock(connection.clock, now)
            stream = Stream(message.stream, None)
            # The stream before may still be decoding what came (up to MAX_BACKLOG chunks): the
            # new one waits for it before resetting the clock and feeding the seat's checks, or
            # the two numberings would mix in them (the seat's onsets wrong for up to a minute).
            stream.thread = threading.Thread(target=self._decode, daemon=True, name=f"phone-{seat.index + 1}",
                                             args=(seat, connection.clock, stream, sample_clock, seat.worker))
            seat.worker = stream.thread
            seat.stream, seat.mic, seat.last_frame = stream, "online", now
            if seat.mic_test != "heard":
                seat.mic_test, seat.mic_test_since, seat.mic_test_voiced_s = "waiting", seat.last_frame, 0.0
            stream.thread.start()
            if len(seat.stream_starts) <= JOIN_CHIRPS_PER_MIN:
                self.calibrate()
            else:  # a page that keeps restarting: not a chirp over everyone's audio each time
                seat.chirp_wanted = True
        self._send_table()

    @staticmethod
    def _sample_clock(clock: PhoneClockLike, began: float) -> Callable[[float], float]:
        """The phone's chain (voice/phone_clock.py); until it can answer (no round trip or
        chunk yet), the stream's arrival time plus the samples counted."""
        def host_time(index: float) -> float:
            try:
                return clock.host_time(index)
            except PhoneClockError:  # not synced yet
                return began + index / RATE
        return host_time

    def _stop_stream(self, seat: Seat, mic: str) -> None:
        stream = seat.stream
        if stream is not None:
            while True:
                try:
                    stream.chunks.put_nowait(None)  # the worker decodes what came, flushes and ends
                    break
                except queue.Full:
                    stream.stopped = True  # a backlog nobody will wait for: dropped...
                    # ...and room made for the end: a worker that drained the queue meanwhile
                    # (a thread switch since the refusal) waits in get() for it, else for ever.
                    with contextlib.suppress(queue.Empty):
                        stream.chunks.get_nowait()
            seat.stream = None
        seat.mic = mic

    def audio(self, connection: Connection, chunk: AudioChunk) -> None:
        """A binary frame: queued for the seat's worker; the loop never decodes."""
        if connection.seat is None:
            if connection.unseated:
                return  # audio in flight when its seat went to another phone: dropped
            raise ProtocolError("claim a seat first")
        seat = self.seats[connection.seat]
        stream = seat.stream
        if stream is None and connection.stream_refused:
            return  # audio of a stream whose start was refused, sent before the page heard it
        if stream is None or seat.clock is not connection.clock:
            raise ProtocolError("send {\"type\":\"audio\",\"state\":\"on\"} before the audio")
        if chunk.first_sample < stream.next_sample:
            raise ProtocolError(f"audio frame starts at sample {chunk.first_sample}, before the end of "
                                f"the previous one ({stream.next_sample})")
        try:
            stream.chunks.put_nowait(chunk)
        except queue.Full:
            raise ProtocolError("audio arrives faster than it can be heard: send it as it is recorded") from None
        stream.next_sample = chunk.first_sample + len(chunk.pcm)
        seat.last_frame = self.clock()
        seat.mic = "online"

    def _choose(self, seat: Seat, choose: Choose) -> None:
        with self._lock:
            asked = self._question
            if asked is None or asked[0] != seat.index:
                raise ProtocolError("nothing is asked of your seat now", "not_asked")
            _, decision, options = asked
            # A number of this very decision put again (after another player's false shout) is
            # still an answer to it; another question's never is, were it equal (the next turn's).
            if choose.question is not None and self._put.get(choose.question) is not decision:
                raise ProtocolError("this question was answered already", "answered")  # the one shown now waits on
            if not self._still_pending(decision):
                self._question = None
                raise ProtocolError("this question was answered already", "answered")
            if choose.option < len(options):
                if choose.stake is not None:
                    raise ProtocolError("this option takes no stake")
                line = str(choose.option + 1)
            elif choose.option < len(options) + len(decision.stakes):
                _, allowed = decision.stakes[choose.option - len(options)]
                if choose.stake is None or choose.stake not in allowed:
                    raise ProtocolError(f"give a stake within {allowed.start}..{allowed.stop - 1}")
                line = f"{choose.option + 1} {choose.stake}"
            else:
                raise ProtocolError(f"no option {choose.option}: there are {len(options) + len(decision.stakes)}")
            self._question = None  # one answer per question: a second tap does nothing
            if self._table is not None:
                self._table = {**self._table, "question": None}
            self._answer = (self.keys.put(line, self.clock()), decision)
        self._send_table()

    def _still_pending(self, decision: Decision) -> bool:
        """Whether the session still waits on this decision (answered at the terminal or by
        voice, it has moved on: a late tap must not answer the next question)."""
        session = self.view.session
        if session is None:
            return True
        try:
            return session.state.pending == decision
        except Exception:  # noqa: BLE001 - the state is being changed on the session's thread right now: it moves on
            return False

    def _shout(self, seat: Seat, clock: PhoneClockLike, phone_ms: float) -> None:
        """A tap on the shout button: a race shout for this seat (or a false shout outside a race),
        at the tap's moment on the host's clock."""
        now = self.clock()
        try:
            at = clock.to_host(phone_ms)
        except PhoneClockError:  # no clock sample yet: the tap's arrival is the best we know
            at = now
        if not abs(at - now) <= TAP_SLACK_S:
            at = now
        self.keys.put(f"! {seat.index + 1}", min(max(at, now - TAP_EARLIEST_S), now))

    # ------------------------------------------------------------------ audio (worker threads)

    def _prepare(self, recogniser: RecogniserLike) -> None:
        now = self.clock()
        known = [i for i in self.intents if i in recogniser.lexicon]
        recogniser.set_intents(known, race=self.race)
        for start, end in self.masks:
            if end > now - 10:
                recogniser.mask_playback(start, end)

    def _decode(self, seat: Seat, clock: PhoneClockLike, stream: Stream,
                sample_clock: Callable[[float], float], previous: threading.Thread | None = None) -> None:
        if previous is not None:
            previous.join(timeout=PREVIOUS_STREAM_WAIT_S)
        clock.reset_stream()
        if self.make_recogniser is not None:
            # Made here, not on the server's loop: building one takes a while (the lexicon's grammar).
            try:
                recogniser = self.make_recogniser(sample_clock)
                with stream.lock:
                    stream.recogniser = recogniser
                    self._prepare(recogniser)
            except Exception:  # that phone is not heard (its taps still play); the others are
                log.exception("seat %d: no recogniser for the phone's stream", seat.index + 1)
                # Its page said "mic on" and its player would shout unheard: the phone is told.
                self._on_loop(self._tell_seat, seat.index, refusal(
                    "the host cannot hear this phone (its recogniser did not start: see the host's terminal): "
                    "press the buttons to shout and answer", "unheard"))
        while not stream.stopped and (chunk := stream.chunks.get()) is not None:
            try:
                clock.chunk(chunk.first_sample, len(chunk.pcm), chunk.phone_ms)
                timed = clock.input_delay_s is not None
                self.attribution.feed(seat.index, chunk.pcm, chunk.first_sample, sample_clock, timed)
                for index, seconds in self.alignment.feed(seat.index, chunk.pcm, chunk.first_sample, sample_clock,
                                                          timed):
                    self._slipped(index, seconds)
                state = clock.calibration_state
                # The clock keeps the last seconds of audio and searches them for each chirp played.
                if (delay := clock.feed(chunk.pcm, chunk.first_sample)) is not None:
                    self.alignment.measured(seat.index)  # set right by the chirp: its old readings go
                if delay is not None or clock.calibration_state != state:
                    self.publish()
                if stream.recogniser is not None:
                    with stream.lock:
                        outcomes = stream.recogniser.accept(chunk.pcm, chunk.first_sample)
                    for outcome in outcomes:
                        self.attribution.hold(seat.index, outcome, self.clock())
            except Exception:  # a broken chunk must not end the phone's stream
                log.exception("seat %d: audio chunk at sample %d", seat.index + 1, chunk.first_sample)
        if stream.recogniser is not None:
            with stream.lock:
                for outcome in stream.recogniser.flush():
                    self.attribution.hold(seat.index, outcome, self.clock())

    def _slipped(self, index: int, seconds: float) -> None:
        """The seat's phone's sounds sat `seconds` late against the other phones' (voice/alignment.py):
        taken off its onsets now (0 s: out of step, whose unknown), and the chirp measures it again
        when it may (`_recheck_due`)."""
        clock = self.seats[index].clock
        if clock is None or not seconds and clock.calibration_state == "rechecking":
            return  # already to be checked (by its stamps, or a slip taken off): nothing to add
        clock.slip(seconds)
        if seconds:
            log.info("seat %d: its sounds sat %+.1f ms from the other phones' (its capture slipped): set right, "
                     "to be checked by the chirp", index + 1, seconds * 1000)
        else:
            log.info("seat %d: out of step with the others, whose capture slipped cannot be told (two phones, "
                     "or as many in step on each side): to be checked by the chirp", index + 1)
        self.publish()

    def recognisers(self) -> list[Stream]:
        return [s.stream for s in self.seats if s.stream is not None and s.stream.recogniser is not None]

    # ------------------------------------------------------------------ calibration

    def calibrate(self, recheck: bool = False) -> None:
        """Play the chirp soon (requests close together are one chirp). A recheck (a phone's
        sample clock jumped, voice/phone_clock.py `_follow`) is not played while a race is open:
        the chirp is masked in every phone's stream, and a shout under it would be lost."""
        if not recheck:
            self._join_chirp = True
        self._calibrate.set()

    def _recheck_due(self, now: float) -> bool:
        """A phone's calibration is to be checked again (or its stream started once too often
        for a chirp at once), no race is open, and the last chirp is at least RECHECK_EVERY_S
        old: a real table is not to hear chirps all game long. A calibration that failed or is
        still pending is tried again once the last chirp is RETRY_FAILED_S old, or at once if
        none was ever played."""
        if self.race or self._calibrate.is_set():
            return False
        if self._last_chirp is not None and now - self._last_chirp < RECHECK_EVERY_S:
            return False
        retry = self._last_chirp is None or now - self._last_chirp >= RETRY_FAILED_S
        return any(seat.clock is not None and seat.stream is not None
                   and (seat.clock.calibration_state == "rechecking" or seat.chirp_wanted
                        or retry and seat.clock.calibration_state in ("failed", "pending"))
                   for seat in self.seats)

    def sounding(self) -> bool:
        """The host plays the chirp, or is about to: it is masked in every phone's stream, so a
        shout made under it is lost, and no dice are to show meanwhile (PlaySession holds its
        next move until it is over: under a second, at most every RECHECK_EVERY_S)."""
        if self._closed:
            return False
        return self._calibrate.is_set() or self._chirping or self.clock() < self._sounding_until

    def _calibrations(self) -> None:
        while not self._closed:
            self._calibrate.wait()
            if self._closed:
                return
            time.sleep(0.3)  # a few phones starting together hear one chirp
            self._chirping = True  # (before the request is cleared: `sounding` never lapses)
            self._calibrate.clear()
            try:
                self._chirp(join=self._join_chirp)
            finally:
                self._chirping = False

    def _chirp(self, join: bool) -> None:
        self._join_chirp = False
        if self._closed or not any(seat.stream is not None for seat in self.seats):
            return  # no phone streams: nobody to calibrate
        if self.race:
            if not join:
                return  # a race opened meanwhile: the recheck waits for its end (watch asks again)
            # A phone that starts during a race: its chirp waits for the race's end, as it would
            # mask the other phones' shouts. The session goes on meanwhile (a race's answers do
            # not wait for the host's sound), and `sounding` stays on all along: the move after
            # the race waits for the chirp (set off for each 50 ms wait, a move made within
            # 50 ms of the race's end slipped in, its dice under the chirp).
            deadline = time.monotonic() + JOIN_CHIRP_WAIT_S
            while self.race and not self._closed and time.monotonic() < deadline:
                time.sleep(0.05)
        try:
            samples = self.chirp()
            duration = len(samples) / RATE
            start = self.clock()
            self._last_chirp = start
            for seat in self.seats:
                if seat.clock is not None and seat.stream is not None:
                    seat.clock.expect_chirp(start)
                    seat.chirp_wanted = False
            self._sounding_until = start + duration + CHIRP_TAIL_S
            self.mark_playback(start, self._sounding_until)
            self.play(samples, RATE)
            self._chirping = False  # played: `sounding` until its mask ends
            self.publish()
            time.sleep(duration + 0.5)
        except Exception as error:  # noqa: BLE001 - no sound card: the phones' calibrations fail, shown on the board
            self._sounding_until = 0.0  # nothing sounds: no move is to wait for it
            if not self._chirp_failed:
                log.warning("the calibration chirp could not be played (%s): the phones stay "
                            "uncalibrated", error)
            self._chirp_failed = True

    def mark_playback(self, start: float, end: float) -> None:
        """What the host plays (bots' shouts, the chirp) is masked in every phone's stream."""
        self.masks = [*[m for m in self.masks if m[1] > self.clock() - 10], (start, end)]
        self.attribution.mask_playback(start, end)  # nor is it any player's voice for the crosstalk check
        for stream in self.recognisers():
            with stream.lock:
                stream.recogniser.mask_playback(start, end)  # type: ignore[union-attr]

    # ------------------------------------------------------------------ the session's side

    def set_table(self, session: PlaySession, voices: dict[int, str], said: Sequence[tuple[int, Said]]) -> None:
        self._seat_newcomers(session.players)
        with self._lock:
            asked = self._question
            pending = session.state.pending
            if asked is not None and (pending is None or pending != asked[1]):
                self._question = asked = None  # answered (by voice or at the terminal) or moved on
            if self._answer is not None and pending is not self._answer[1]:
                # A phone's answer the room took just as the game took its player's voice (or the
                # host's line): still unread, the next race would read « 2 » as seat 2's shout,
                # and a bot's turn as a line typed out of turn. The very decision put again keeps it.
                self.keys.withdraw(self._answer[0])
                self._answer = None
            question = None if asked is None else {**question_json(session, asked[1], asked[2], self.french),
                                                   "id": self._asked}
            self._table = table_json(session, question, voices, said, self.french)
        self.publish()

    def _seat_newcomers(self, players: Sequence[SeatPlayer]) -> None:
        """A late friend seated by the host (Chante-Sloubi, `+ Name` at the terminal's table) gets
        a seat here too: free for a phone to take, offered to the phones still choosing. Before
        the table with them is set, so that the seats and the table's players always match."""
        if len(players) <= len(self.seats):
            return
        for index in range(len(self.seats), len(players)):
            player = players[index]
            self.seats.append(Seat(index, player, secrets.token_urlsafe(16) if player.human else None))
        self._on_loop(self._offer_seats)

    def _offer_seats(self, but: Connection | None = None) -> None:
        """The seats, to the phones still choosing one and to the boards (which show the way in
        while a seat is free)."""
        seats = self.seats_message()
        for connection in self.connections:
            if connection is not but and (connection.role == "board"
                                          or connection.role == "phone" and connection.seat is None):
                connection.put(seats)

    # ------------------------------------------------------------------ kept in the save

    def kept(self) -> dict[str, Any]:
        """What the save keeps of the room (under "web"): its secret and each human seat's token
        (a seat with a phone is marked taken), so that a table started again with --resume on
        the same port is the same room, and every phone comes back to its seat by itself."""
        return {"web": {"address": self.join["phone"] if self.join else None, "room": self.secret, "seats": [
            {"token": s.token, "taken": s.taken, "played": s.played} if s.token is not None else None
            for s in self.seats]}}

    def restore(self, saved: Any) -> str | None:
        """Takes back a room's secret and seat tokens from a save (`kept`); what was wrong with
        them, if anything (the room then stays as it was made: the phones join again)."""
        if not isinstance(saved, dict):
            return "its 'web' is not an object"
        secret, seats = saved.get("room"), saved.get("seats")
        if not _is_token(secret):
            return "its room secret is not one this table makes"
        if not isinstance(seats, list) or len(seats) != len(self.seats):
            return f"it has {len(seats) if isinstance(seats, list) else 'no'} seats, the game {len(self.seats)}"
        for seat, kept in zip(self.seats, seats, strict=True):
            if (kept is None) != (seat.token is None) or kept is not None and not (
                    isinstance(kept, dict) and _is_token(kept.get("token")) and isinstance(kept.get("taken"), bool)):
                return f"seat {seat.index + 1}'s token does not fit a {'human' if seat.player.human else 'bot'}"
        self.secret = str(secret)
        for seat, kept in zip(self.seats, seats, strict=True):
            if kept is not None:
                seat.token, seat.taken = kept["token"], kept["taken"]
                # A seat a phone played keeps its name, also once handed to a new phone (« phone
                # N ») and the table started again: `played` is kept (a save without it: `taken`).
                seat.played = seat.played or kept["taken"] or kept.get("played") is True
        return None

    # ------------------------------------------------------------------ the host's commands

    def host_command(self, text: str) -> HostAnswer | None:
        """A line typed at the host's table that is the room's, not the game's; the answer to
        show, or None for a line that is the game's.

        `phone SEAT` (a number, or a player's name) gives a human's seat to a new phone. A seat
        stays taken for the whole game and only its token opens it again, so a player whose phone
        is lost (a flat battery, the link opened in another browser, a private tab closed) could
        not play on from another one: the host, who everybody at the table can see, frees it."""
        words = text.split(maxsplit=1)
        if not words or words[0].casefold() != "phone":
            return None
        humans = [s for s in self.seats if s.player.human]
        usage = ("« phone 2 » or « phone Ana » gives that human's seat to a new phone ("
                 + ", ".join(f"{s.index + 1} {s.player.name}" for s in humans) + ")" if humans
                 else "no human plays at this table: no seat goes to a phone")
        if len(words) == 1:  # the way in again, for a phone that has not joined yet
            if self.join is None:
                return HostAnswer(usage)
            return HostAnswer(f"the table's address: {self.join['phone']} (first time on a phone: "
                              f"{self.join['trust']}); {usage}", self.join["phone"])
        wanted = words[1].strip()
        # A seat's number first: a player may be named « 2 », and « phone 2 » is then still seat 2.
        named = name_at_table(wanted, [s.player.name for s in self.seats])
        seat = next((s for s in self.seats if typed_number(wanted) == s.index + 1), None) \
            or next((s for s in self.seats if s.player.name == named), None)
        if seat is None:
            shown = wanted if len(wanted) <= 30 else wanted[:30] + "…"
            return HostAnswer(f"no seat « {shown} » at this table; {usage}")
        if not seat.player.human:
            return HostAnswer(f"seat {seat.index + 1} ({seat.player.name}) is a bot's; {usage}")
        self._on_loop(self._hand_over, seat)
        said = (f"{seat.player.name}'s seat ({seat.index + 1}) is free for a new phone; the phone that had it "
                "can no longer play it")
        if self.join is None:
            return HostAnswer(said)
        link = f"{self.join['phone']}&seat={seat.index + 1}"
        return HostAnswer(f"{said}. On the new phone, scan this code or open {link}", link)

    def _hand_over(self, seat: Seat) -> None:
        """Frees a human's seat for another phone: a new token (the lost phone's no longer opens
        it), its phone told; the seat keeps its player, name and score."""
        assert seat.token is not None
        seat.token = secrets.token_urlsafe(16)
        seat.taken = False
        for connection in list(self.connections):
            if connection.seat == seat.index:
                connection.unseat("the host gave this seat to another phone")
        self._stop_stream(seat, "none")
        seat.clock = None
        # The new phone starts afresh: the lost one's microphone restarts (STREAM_STARTS_PER_MIN
        # would refuse its first start), its chirp waiting, and its microphone test are not its.
        seat.stream_starts, seat.chirp_wanted = [], False
        seat.mic_test, seat.mic_test_since, seat.mic_test_voiced_s = "none", 0.0, 0.0
        self._offer_seats()
        self._send_table()
        self._seats_changed.set()  # the new token, saved before the next move (a stop now kept the old one)

    def _tell_seat(self, index: int, message: dict[str, Any]) -> None:
        """Sends `message` to the phones playing seat `index` (on the server's loop)."""
        for connection in list(self.connections):
            if connection.seat == index:
                connection.put(message)

    def _on_loop(self, act: Callable[..., None], *args: Any) -> None:
        """Runs `act` on the server's loop, where the connections live; at once without one."""
        if self.loop is None or self.loop.is_closed():
            act(*args)
            return
        try:
            self.loop.call_soon_threadsafe(act, *args)
        except RuntimeError:  # the loop closed meanwhile: the server is stopping
            pass

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        assert decision.seat is not None
        with self._lock:
            self._question = (decision.seat, decision, list(options))
            self._asked += 1
            self._put[self._asked] = decision
            self._put.pop(self._asked - QUESTIONS_KEPT, None)
            # A phone's answer still unread when the next question is put was not the one the
            # game took (its player's voice, or the host, answered first): it is not this one's.
            # The very decision put again (another player's false shout came first: the game's
            # pending decision unchanged) keeps it; an equal one is a new moment (the next turn's
            # « lancer », after a voice answered this one).
            if self._answer is not None and self._answer[1] is not decision:
                self.keys.withdraw(self._answer[0])
                self._answer = None

    def seats_changed(self) -> bool:
        """Whether a seat was claimed (its player maybe renamed) or handed to a new phone since
        last asked: the session, waiting on a player meanwhile, saves (the save keeps the seats'
        tokens and the names) and shows the table again (the question names its player)."""
        if not self._seats_changed.is_set():
            return False
        self._seats_changed.clear()
        return True

    def close(self) -> None:
        self._closed = True
        self._calibrate.set()
        for seat in self.seats:
            self._stop_stream(seat, seat.mic)
        self.keys.close()


class WebView:
    """The session's View for the phones and the board: the whole table after every change."""

    def __init__(self, room: Room) -> None:
        self.room = room
        self.voices: dict[int, str] = {}
        # The lines said to the table, numbered so that a phone shows each new one once.
        self.said: list[tuple[int, Said]] = []
        self.session: PlaySession | None = None

    def show(self, session: PlaySession) -> None:
        if session is not self.session:  # a game's start (the next one too): every phone streaming is calibrated
            self.session = session
            self.room.calibrate()
        self.room.set_table(session, self.voices, self.said)

    def say(self, text: str) -> None:
        if not isinstance(text, Said):
            return  # an answer to the host's typing: the terminal shows it
        number = self.said[-1][0] + 1 if self.said else 1
        self.said = [*self.said[-(SAID_LINES - 1):], (number, text)]  # what the pages are sent
        if self.session is not None:
            self.room.set_table(self.session, self.voices, self.said)

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        self.room.ask(session, decision, options)
        self.show(session)

    def voice(self, seat: int, status: str) -> None:
        self.voices[seat] = status
        if self.session is not None:
            self.room.set_table(self.session, self.voices, self.said)


class PhoneListener:
    """The session's Listener for the phones: one recogniser per phone stream."""

    def __init__(self, room: Room) -> None:
        self.room = room

    @property
    def seats(self) -> Sequence[int]:
        """The human seats, a late friend's included: each may be played by a phone."""
        return [s.index for s in self.room.seats if s.player.human]

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        self.room.intents, self.room.race = sorted(intents), race
        for seat in self.room.seats:
            stream = seat.stream  # read once: the server's loop may end it meanwhile
            if stream is None:
                continue
            with stream.lock:
                recogniser = stream.recogniser
                if recogniser is None:
                    continue  # still being made: it takes room.intents when it is
                known = [i for i in self.room.intents if i in recogniser.lexicon]
                for outcome in recogniser.set_intents(known, race=race):
                    self.room.attribution.hold(seat.index, outcome, self.room.clock())

    def poll(self) -> list[Heard]:
        from voice.live import heard  # needs vosk only when phones are heard

        streaming = [seat.index for seat in self.room.seats if seat.stream is not None]
        return [heard(seat, outcome) for seat, outcome in self.room.attribution.settled(self.room.clock(), streaming)]

    def holding(self) -> bool:
        return self.room.attribution.holding()

    def sounding(self) -> bool:
        return self.room.sounding()

    def streaming(self, seat: int) -> bool:
        return 0 <= seat < len(self.room.seats) and self.room.seats[seat].mic == "online"

    def mark_playback(self, start: float, end: float) -> None:
        self.room.mark_playback(start, end)

    def close(self) -> None:
        pass  # the room closes the streams when the server stops



class Views:
    """Several Views as one (the terminal's table and the web's)."""

    def __init__(self, *views: Any) -> None:
        self.views = views

    def show(self, session: PlaySession) -> None:
        for view in self.views:
            view.show(session)

    def say(self, text: str) -> None:
        for view in self.views:
            view.say(text)

    def ask(self, session: PlaySession, decision: Decision, options: list[Action]) -> None:
        for view in self.views:
            view.ask(session, decision, options)

    def voice(self, seat: int, status: str) -> None:
        for view in self.views:
            view.voice(seat, status)


class Listeners:
    """Several Listeners as one (host microphones and phones); a lost one is dropped alone."""

    def __init__(self, *listeners: Any, report: Callable[[str], None] = print) -> None:
        self.listeners = list(listeners)
        self.report = report

    @property
    def seats(self) -> Sequence[int]:
        return sorted({seat for listener in self.listeners for seat in listener.seats})

    def listen_for(self, intents: set[str], race: bool = False) -> None:
        for listener in self.listeners:
            listener.listen_for(intents, race=race)

    def poll(self) -> list[Heard]:
        found: list[Heard] = []
        for listener in list(self.listeners):
            try:
                found += listener.poll()
            except InputLost as error:
                if len(self.listeners) == 1:
                    raise
                self.listeners.remove(listener)  # the others (the phones) go on
                listener.close()
                self.report(f"microphone lost ({error}); its seats go on by phone or keyboard")
        return found

    def holding(self) -> bool:
        return any(getattr(listener, "holding", lambda: False)() for listener in self.listeners)

    def sounding(self) -> bool:
        return any(getattr(listener, "sounding", lambda: False)() for listener in self.listeners)

    def streaming(self, seat: int) -> bool:
        return any(seat in listener.seats and getattr(listener, "streaming", lambda _: True)(seat)
                   for listener in self.listeners)

    def mark_playback(self, start: float, end: float) -> None:
        for listener in self.listeners:
            listener.mark_playback(start, end)

    def close(self) -> None:
        for listener in self.listeners:
            listener.close()
