"""The web table's messages (docs/web.md), checked strictly: every field typed and bounded,
no field the contract does not name. A message that fails here is answered with an error
and changes nothing."""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

MAX_TEXT = 4096  # bytes of one JSON message
HEADER = struct.Struct("<qd")  # int64 first_sample, float64 phone_ms
MAX_SAMPLES = 8000  # half a second at 16 kHz
MAX_BINARY = HEADER.size + 2 * MAX_SAMPLES
RATE = 16000
MAX_SEATS = 8
# Phone times are performance.now() milliseconds: from the page's start, under a year.
PhoneMs = Annotated[float, Field(ge=0, le=3.2e10, allow_inf_nan=False)]
HostMs = Annotated[float, Field(ge=0, le=1e15, allow_inf_nan=False)]


class ProtocolError(ValueError):
    """A message that breaks the contract; its text goes back to the sender. A refusal a
    player meets by playing (a seat taken, a question answered already) has a `code`, with its
    `params`: the page says it in its own language (i18n.js, `host:CODE`)."""

    def __init__(self, message: str, code: str | None = None, **params: str | int) -> None:
        super().__init__(message)
        self.code, self.params = code, params


def refusal(message: str, code: str | None = None, **params: str | int) -> dict[str, Any]:
    """The `error` message that says a refusal (ProtocolError's words, code and params)."""
    if code is None:  # a broken page's: the host's words alone
        return {"type": "error", "message": message}
    return Error(message=message, code=code, params=params).model_dump()


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# The characters of a room secret and of a seat token (`secrets.token_urlsafe`).
TOKEN_PATTERN = r"^[A-Za-z0-9_-]+$"


class Hello(_Message):
    type: Literal["hello"]
    role: Literal["phone", "board"]
    token: Annotated[str, Field(min_length=8, max_length=64, pattern=TOKEN_PATTERN)] | None = None
    lang: Literal["fr", "en"] = "fr"


class Claim(_Message):
    type: Literal["claim"]
    seat: Annotated[int, Field(ge=0, lt=MAX_SEATS)]
    # Checked by the room as play.py's --humans are (voice.session.name_refusal), with a reason a
    # player can act on; the message's own cap bounds its length.
    name: str | None = None


class Ping(_Message):
    type: Literal["ping"]
    id: Annotated[int, Field(ge=0, le=2**31)]
    t1: PhoneMs


class ClockSample(_Message):
    type: Literal["clock"]
    t1: PhoneMs
    t2: HostMs
    t3: HostMs
    t4: PhoneMs


class AudioState(_Message):
    type: Literal["audio"]
    stream: Annotated[int, Field(ge=0, le=2**31)]
    rate: Literal[16000] = 16000
    state: Literal["on", "off"]


class Choose(_Message):
    type: Literal["choose"]
    option: Annotated[int, Field(ge=0, lt=200)]
    stake: Annotated[int, Field(ge=0, le=10000)] | None = None
    question: Annotated[int, Field(ge=0, le=2**31)] | None = None  # the question's `id` in the table it answers


class ShoutTap(_Message):
    type: Literal["shout"]
    t: PhoneMs


ClientMessage = Annotated[Hello | Claim | Ping | ClockSample | AudioState | Choose | ShoutTap,
                          Field(discriminator="type")]
_CLIENT: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


def parse_message(text: str) -> ClientMessage:
    """One JSON text frame from a phone or a board, or ProtocolError saying what is wrong."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT:
        raise ProtocolError(f"message too long: at most {MAX_TEXT} bytes")
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise ProtocolError("not JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise ProtocolError("a message is a JSON object with a 'type'")
    try:
        return _CLIENT.validate_python(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "message"
        raise ProtocolError(f"{data['type'][:20]}: {where}: {first['msg']}") from None


@dataclass(frozen=True)
class AudioChunk:
    first_sample: int
    phone_ms: float
    pcm: np.ndarray  # int16 mono


def parse_audio(data: bytes) -> AudioChunk:
    """A binary audio frame: the 16-byte header then n int16 samples (1 ≤ n ≤ 8000)."""
    if len(data) > MAX_BINARY:
        raise ProtocolError(f"audio frame too long: at most {MAX_SAMPLES} samples")
    if len(data) < HEADER.size + 2 or (len(data) - HEADER.size) % 2:
        raise ProtocolError("audio frame: a 16-byte header then whole int16 samples")
    first_sample, phone_ms = HEADER.unpack_from(data)
    if first_sample < 0 or first_sample > 2**40:
        raise ProtocolError(f"audio frame: first_sample {first_sample} out of range")
    if not math.isfinite(phone_ms) or not 0 <= phone_ms <= 3.2e10:
        raise ProtocolError("audio frame: phone_ms out of range")
    pcm = np.frombuffer(data, dtype="<i2", offset=HEADER.size).astype(np.int16)
    return AudioChunk(int(first_sample), float(phone_ms), pcm)


def audio_frame(first_sample: int, phone_ms: float, pcm: np.ndarray) -> bytes:
    """The binary frame a phone sends (for tests and the bench)."""
    return HEADER.pack(first_sample, phone_ms) + np.asarray(pcm, dtype="<i2").tobytes()


# Host -> phone/board (the table itself is built by voice/web/snapshot.py).
class SeatInfo(_Message):
    seat: int
    name: str
    human: bool
    taken: bool


class Seats(_Message):
    type: Literal["seats"] = "seats"
    seats: list[SeatInfo]


class Welcome(_Message):
    type: Literal["welcome"] = "welcome"
    seat: int
    token: str
    run: str  # this room's run: a host started again (--resume) numbers its lines and questions anew


class Pong(_Message):
    type: Literal["pong"] = "pong"
    id: int
    t1: float
    t2: float
    t3: float


class Error(_Message):
    type: Literal["error"] = "error"
    message: str  # in English, for the host's log and a page without words of its own for it
    code: str | None = None  # docs/web.md (Messages): answered, not_asked, seat_taken, name_taken, …
    params: dict[str, str | int] = Field(default_factory=dict)
