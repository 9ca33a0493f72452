"""The web table's server: a Starlette app served by uvicorn over TLS on a thread of its own
(its own event loop), and a plain-HTTP `/trust` server on the next port for the phones to get
the host's certificate authority. Addresses and messages: docs/web.md."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import html
import io
import json
import logging
import os
import secrets
import socket
import threading
from collections import deque
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import h11
import segno
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, HTMLResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect
from uvicorn.protocols.http.h11_impl import H11Protocol

from cdc_env.cli import short_path
from voice.web.certs import Certificates, ca_profile
from voice.web.protocol import MAX_BINARY, MAX_TEXT, ProtocolError, parse_audio, parse_message, refusal
from voice.web.room import Connection, Room

log = logging.getLogger(__name__)

STATIC = Path(__file__).resolve().parent / "static"
FLOOD_PER_S = 50  # messages (or audio frames) a second from one connection; more closes it
MAX_BAD = 5  # refused messages from one connection within BAD_WINDOW_S: the last closes it
# A page that plays by the rules is refused now and then (a tap on « lancer » as its player's
# « je lance » was heard, a choice a take-back made stale): over a long game those must never
# add up to a closed socket, a reconnection and a new chirp; a broken client errs many times a second.
BAD_WINDOW_S = 10.0
WS_MAX_SIZE = MAX_BINARY + 1024  # uvicorn drops bigger frames before they are read
CLOSE_POLICY = 1008
# A client that stops, or trickles, in the middle of a frame cannot answer a ping: it is closed
# PING_S + PONG_S after its last pong at most, and leaves the room TLS_CLOSE_S later.
PING_S = 2.0
PONG_S = 3.0
TLS_CLOSE_S = 1.0  # how long a closed socket waits for the client's TLS close_notify
HANDSHAKE_S = 5.0  # for the TLS handshake, then again for the request's head
# How many connections a flood may hold. A phone opens 1-3 at once (the page, its static files,
# the WebSocket; a browser opens at most 6 for the files), a laptop showing /board and a phone
# tab a few more: more from one address are closed as soon as they are accepted, so one client
# cannot use up the host's file descriptors (256 on macOS, 1024 on Linux) and keep phones out.
PER_IP = 32  # connections open at once from one address, to each server (the table, /trust)
# Seats are 16 at most, plus boards: every WebSocket gets every table, so hundreds of them (from
# a client that knows the secret) would slow the host and the phones' game.
MAX_SOCKETS = 64  # WebSockets in the room at once; the next one is refused (CLOSE_FULL)
CLOSE_FULL = 1013  # "try again later"
# A page says hello as soon as its socket opens: a socket silent this long is closed. Else a
# client that knows the secret kept sockets open without a word (pinged, never asked for one),
# each a place under MAX_SOCKETS, and a seated phone coming back was refused "full".
HELLO_S = 5.0
# Many addresses together could still use up the host's file descriptors, and then neither the
# phones nor the game's save get one. Both servers (the table and /trust) share one count of the
# connections open at once, all addresses together: min(MAX_OPEN, the soft limit - FD_RESERVE).
# A table of 16 phones (1-3 connections each) and a few boards needs about 100.
MAX_OPEN = 480  # under 512, the most sockets select() watches on Windows (no `resource` there)
FD_RESERVE = 128  # descriptors kept for the game: saves, recognisers' models, logs, audio, the
# listeners, the event loop, the voices' subprocesses
MIN_OPEN = 16  # the count where the soft limit leaves less: a few phones still get in
WANTED_FDS = 1024  # the soft limit raised to at start (MAX_OPEN + FD_RESERVE, and every
# descriptor under 1024, where select() stops: macOS's 256 is raised, Linux's 1024 kept)


def _page(name: str, title: str) -> Response:
    path = STATIC / name
    if path.is_file():
        return FileResponse(path, media_type="text/html", headers={"Cache-Control": "no-store"})
    return HTMLResponse(f"<!doctype html><meta charset=utf-8><title>{title}</title><h1>{title}</h1>"
                        f"<p>The page {html.escape(name)} is missing from voice/web/static.</p>")


FORBIDDEN = ("<!doctype html><meta charset=utf-8><title>403</title><h1>403</h1>"
             "<p>Adresse incomplète : scannez le QR code de la table. / Wrong address: scan the table's QR code.</p>")


def qr_svg(address: str) -> bytes:
    """The address as a QR code, an SVG a screen shows large (black on white, with the quiet
    zone a phone's camera needs)."""
    out = io.BytesIO()
    segno.make(address, error="m").save(out, kind="svg", scale=8, border=4, xmldecl=False,
                                        dark="#000", light="#fff", title=address)
    return out.getvalue()


def qr_rows(address: str) -> list[str]:
    """The address as a QR code in text, two modules a character (▀ ▄ █), for a terminal to
    show dark on light."""
    matrix = [list(row) for row in segno.make(address, error="m").matrix_iter(scale=1, border=4)]
    matrix.append([0] * len(matrix[0]))  # an even count of rows
    blocks = {(1, 1): "█", (1, 0): "▀", (0, 1): "▄", (0, 0): " "}
    return ["".join(blocks[bool(top), bool(bottom)] for top, bottom in zip(upper, lower, strict=True))
            for upper, lower in zip(matrix[::2], matrix[1::2], strict=True)]


def make_app(room: Room, max_sockets: int = MAX_SOCKETS, places: _Places | None = None,
             hello_s: float = HELLO_S) -> Starlette:
    def allowed(params: Any) -> bool:
        given = params.get("room") or ""
        return secrets.compare_digest(given.encode(), room.secret.encode())

    async def phone(request: Request) -> Response:
        if not allowed(request.query_params):
            return HTMLResponse(FORBIDDEN, status_code=403)
        return _page("phone.html", "Cul de Chouette")

    async def board(request: Request) -> Response:
        if not allowed(request.query_params):
            return HTMLResponse(FORBIDDEN, status_code=403)
        return _page("board.html", "Cul de Chouette — table")

    async def ws(websocket: WebSocket) -> None:
        if not allowed(websocket.query_params):
            await websocket.close(code=CLOSE_POLICY)  # before accepting: the client sees 403
            return
        await websocket.accept()
        # Counted once accepted: serve_socket adds it to the room with no await in between, so
        # sockets accepted together cannot all slip under the cap.
        if len(room.connections) >= max_sockets and not _close_oldest_silent(room):
            full = f"the table is full: {max_sockets} connections at most; close a tab, or try again later"
            with contextlib.suppress(Exception):  # it may have gone already
                await websocket.send_text(as_json(refusal(full, "full", most=max_sockets)))
                await websocket.close(code=CLOSE_FULL, reason="the table is full")
            return
        await serve_socket(room, websocket, places, hello_s)

    async def favicon(request: Request) -> Response:
        return Response(status_code=204)  # browsers ask; nothing to show

    async def join(request: Request) -> Response:
        """The way in as a QR code, for the board: `to=phone` (the table's address) or
        `to=trust` (the /trust page). Behind the room's secret, as the address it holds."""
        if not allowed(request.query_params):
            return HTMLResponse(FORBIDDEN, status_code=403)
        to = request.query_params.get("to", "phone")
        if room.join is None or to not in room.join:
            return Response("no such address: to=phone or to=trust", status_code=404, media_type="text/plain")
        return Response(qr_svg(room.join[to]), media_type="image/svg+xml", headers={"Cache-Control": "no-store"})

    return Starlette(routes=[Route("/", phone), Route("/board", board), WebSocketRoute("/ws", ws),
                             Route("/favicon.ico", favicon), Route("/join.svg", join),
                             Mount("/static", StaticFiles(directory=STATIC, check_dir=False), name="static")])


def as_json(message: dict[str, Any]) -> str:
    """A message as a text frame. ASCII JSON (non-ASCII letters as \\u escapes, which every
    browser's JSON.parse reads back): a client's text quoted in an error may hold a lone
    surrogate ("\\ud800" is valid JSON), which has no UTF-8; Starlette's send_json failed on it
    and ended that connection's sending for good, its phone never told anything again."""
    return json.dumps(message, separators=(",", ":"))


def _close_oldest_silent(room: Room) -> bool:
    """The room is full: the socket open longest without a hello leaves it now (a page says
    hello as it opens; a silent one is no player's), making room for the one just accepted,
    maybe a seated phone coming back. Whether there was one."""
    silent = [c for c in room.connections if not c.role]
    if not silent:
        return False
    oldest = min(silent, key=lambda c: c.opened_at)
    room.leave(oldest)
    oldest.put(refusal("closed to make room at a full table: this socket sent no hello; send "
                       "{\"type\":\"hello\"} as soon as the socket opens"))
    oldest.outbox.put_nowait(None)  # its sender closes the socket, and its loop ends
    return True


async def serve_socket(room: Room, websocket: WebSocket, places: _Places | None = None,
                       hello_s: float = HELLO_S) -> None:
    """One phone or board: messages in, the outbox out, until either side closes (or the client
    says no hello within `hello_s`). A phone welcomed to a seat gives `places` its address (the
    places kept for seated phones)."""
    connection = Connection(asyncio.Queue())
    hello_by = asyncio.get_running_loop().time() + hello_s
    address = websocket.client.host if websocket.client is not None else ""
    room.connections.add(connection)

    async def send() -> None:
        while (message := await connection.outbox.get()) is not None:
            if (sent := connection.take(message)) is not None:
                await websocket.send_text(as_json(sent))
        with contextlib.suppress(Exception):  # the server stops: the phone sees the socket close
            await websocket.close(code=1001)

    sender = asyncio.create_task(send())
    try:
        while True:
            if connection.role:
                received = await websocket.receive()
            else:
                try:
                    received = await asyncio.wait_for(websocket.receive(),
                                                      hello_by - asyncio.get_running_loop().time())
                except TimeoutError:
                    connection.put(refusal(f"no hello within {hello_s:g} s: send {{\"type\":\"hello\"}} "
                                           "as soon as the socket opens"))
                    await asyncio.sleep(0.05)  # let the error go out
                    await websocket.close(code=CLOSE_POLICY, reason="no hello")
                    break
            if received["type"] == "websocket.disconnect":
                break
            # Text and audio frames are counted apart: a phone whose page stalled sends the audio
            # it kept all at once (up to 5 s of it in one second), which is no flood.
            now = room.clock()  # the host clock (time.monotonic() unless a test gives another)
            connection.received_at = now
            times = connection.frames if received.get("bytes") is not None else connection.times
            if _count_within(times, now, 1.0) > FLOOD_PER_S:
                await websocket.close(code=CLOSE_POLICY, reason="too many messages")
                break
            try:
                answer = _receive(room, connection, received)
            except (ProtocolError, ValueError, ArithmeticError, LookupError, RuntimeError) as error:
                # ProtocolError says what was wrong; the others are values the phone's clock
                # refused (an impossible round trip): refused all the same, nothing changed.
                bad = _count_within(connection.bad, now, BAD_WINDOW_S)
                if isinstance(error, ProtocolError):
                    connection.put(refusal(str(error), error.code, **error.params))
                else:
                    connection.put(refusal(f"refused: {error}"[:200]))
                if bad >= MAX_BAD:
                    await asyncio.sleep(0.05)  # let the last error go out
                    await websocket.close(code=CLOSE_POLICY, reason="too many bad messages")
                    break
                continue
            if answer is not None:
                connection.put(answer)
            if places is not None and connection.seat is not None:
                places.seated[connection.seat] = address
    except (WebSocketDisconnect, RuntimeError):
        pass
    finally:
        room.leave(connection)
        connection.outbox.put_nowait(None)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(sender, 1.0)
        sender.cancel()


def _count_within(stamps: deque[float], now: float, window_s: float) -> int:
    """`now` added to a connection's stamps (its messages, its refusals), those older than
    `window_s` dropped: how many came within it."""
    stamps.append(now)
    while stamps[0] < now - window_s:
        stamps.popleft()
    return len(stamps)


def _receive(room: Room, connection: Connection, received: MutableMapping[str, Any]) -> dict[str, Any] | None:
    data = received.get("bytes")
    if data is not None:
        if connection.role != "phone":
            raise ProtocolError("only a phone sends audio")
        room.audio(connection, parse_audio(data))
        return None
    text = received.get("text")
    if text is None or len(text) > MAX_TEXT:
        raise ProtocolError(f"message too long: at most {MAX_TEXT} bytes")
    return room.handle(connection, parse_message(text))


TRUST_PAGE = """<!doctype html><html lang="fr"><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Faire confiance à la table / Trust the table</title>
<style>body{{font-family:sans-serif;max-width:40em;margin:1em auto;padding:0 1em;line-height:1.5}}
a.button{{display:inline-block;padding:.8em 1.2em;background:#2a6;color:#fff;border-radius:.5em;
text-decoration:none}}</style>
<h1>Cul de Chouette : faire confiance à la table</h1>
<p>Le micro d'un téléphone ne marche que sur une page sécurisée (https). La table a son propre
certificat ; votre téléphone doit l'accepter une fois.</p>
<h2>Android (Chrome)</h2>
<p>Ouvrez l'adresse de la table ({phone}). Chrome avertit « Votre connexion n'est pas privée » :
touchez <b>Paramètres avancés</b> puis <b>Continuer vers le site</b>.</p>
<h2>iPhone (Safari)</h2>
<ol><li><a class="button" href="/trust/cdc.mobileconfig">Télécharger le profil de la table</a> puis « Autoriser ».</li>
<li>Réglages → <b>Profil téléchargé</b> (ou Général → VPN et gestion de l'appareil) → « Table de Cul de
Chouette (cdc) » → <b>Installer</b>. iOS le dit « Non vérifié » : le profil n'est pas signé, c'est normal.</li>
<li>Réglages → Général → Informations → <b>Réglages de confiance des certificats</b> → activez la
confiance totale pour « cdc local CA ».</li>
<li>Ouvrez l'adresse de la table ({phone}).</li></ol>
<p>Autre appareil : <a href="/trust/ca.crt">le certificat seul (ca.crt)</a>.</p>
<hr lang="en">
<h1 lang="en">Cul de Chouette: trust the table</h1>
<p lang="en">A phone's microphone works only on a secure (https) page. The table has its own certificate;
your phone must accept it once.</p>
<h2 lang="en">Android (Chrome)</h2>
<p lang="en">Open the table's address ({phone}). Chrome warns "Your connection is not private": tap
<b>Advanced</b>, then <b>Proceed to the site</b>.</p>
<h2 lang="en">iPhone (Safari)</h2>
<ol lang="en"><li><a class="button" href="/trust/cdc.mobileconfig">Download the table's profile</a>, then "Allow".</li>
<li>Settings → <b>Profile Downloaded</b> (or General → VPN &amp; Device Management) → "Table de Cul de
Chouette (cdc)" → <b>Install</b>. iOS calls it "Not Verified": the profile is not signed, which is expected.</li>
<li>Settings → General → About → <b>Certificate Trust Settings</b> → turn on full trust for "cdc local CA".</li>
<li>Open the table's address ({phone}).</li></ol>
<p lang="en">Another device: <a href="/trust/ca.crt">the certificate alone (ca.crt)</a>.</p>
</html>"""


def make_trust_app(certificates: Certificates, https_port: int) -> Starlette:
    async def trust(request: Request) -> Response:
        host = (request.url.hostname or "127.0.0.1")
        phone = html.escape(f"https://{host}:{https_port}/")
        return HTMLResponse(TRUST_PAGE.format(phone=phone))

    async def ca(request: Request) -> Response:
        return Response(certificates.ca_cert.read_bytes(), media_type="application/x-x509-ca-cert",
                        headers={"Content-Disposition": 'attachment; filename="cdc-ca.crt"'})

    async def profile(request: Request) -> Response:
        # iOS Safari offers to install a profile served with this type; a bare .crt it handles less well.
        return Response(ca_profile(certificates.ca_cert.read_bytes()), media_type="application/x-apple-aspen-config")

    return Starlette(routes=[Route("/trust", trust), Route("/trust/ca.crt", ca),
                             Route("/trust/cdc.mobileconfig", profile)])


class _Accepted(socket.socket):
    """An accepted connection that gives its place back to its listener when closed."""

    release: Callable[[], None] | None = None

    def close(self) -> None:
        release, self.release = self.release, None
        super().close()
        if release is not None:
            release()


class _Places:
    """The connections open at once to one WebServer, its two listeners and all addresses
    together, at most `total`. A quarter of them are kept for the addresses of the seated phones
    (the last address each seat was played from): a flood from other addresses, which the
    listener cannot tell from a phone before TLS, takes the rest, and a seated phone whose
    WebSocket dropped (a screen locked, the Wi-Fi lost a moment) still gets back in to
    play on. A phone not yet seated, or a board, waits for the flood to end: the friends who
    play come first, and one seat's address at a time is remembered, so at most 16 addresses."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.kept = total // 4  # for the seated phones' addresses
        self.open = 0  # the loop's thread alone, as the listeners' counts
        self.seated: dict[int, str] = {}  # seat -> the address its phone last played from

    def take(self, ip: str) -> bool:
        """A place for a connection from `ip`, if one is left to it."""
        limit = self.total if ip in self.seated.values() else self.total - self.kept
        if self.open >= limit:
            return False
        self.open += 1
        return True

    def give_back(self) -> None:
        self.open = max(0, self.open - 1)


def raised_soft_limit(soft: int, hard: int, wanted: int = WANTED_FDS) -> int:
    """The soft limit of open files to ask for, from the current (soft, hard): `wanted`, or as
    near as the hard limit allows; never lower than now (a negative limit, or
    resource.RLIM_INFINITY, is none)."""
    infinite = _infinite()
    if soft < 0 or soft == infinite or soft >= wanted:
        return soft
    if hard < 0 or hard == infinite:
        return wanted
    return max(soft, min(hard, wanted))


def _infinite() -> int:
    try:
        import resource
    except ImportError:  # Windows
        return -1
    return resource.RLIM_INFINITY


def raise_open_files(wanted: int = WANTED_FDS) -> int | None:
    """Raise this process's soft limit of open files towards `wanted` where the OS allows
    (Linux, macOS), so that a real table has room; the soft limit in effect after, or None
    where the OS has none to read (Windows). A refusal keeps the old limit."""
    try:
        import resource
    except ImportError:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if (new := raised_soft_limit(soft, hard, wanted)) != soft:
        with contextlib.suppress(ValueError, OSError):  # some systems cap it below the hard limit
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def open_cap(soft: int | None) -> int:
    """The connections a WebServer keeps open at once, for a soft limit of open files (None:
    unknown)."""
    if soft is None or soft < 0 or soft == _infinite():
        return MAX_OPEN
    return max(MIN_OPEN, min(MAX_OPEN, soft - FD_RESERVE))


class _Listener(socket.socket):
    """A listening socket that keeps at most `per_ip` connections open at once from one address,
    and takes a place in `places` for each (None: no count of all addresses together): one over
    either is closed as soon as it is accepted, before any TLS work or request. Done here,
    at the socket, because asyncio's selector loop (uvicorn hands it this socket) accepts with
    `sock.accept()` and its transports close the accepted socket with `close()`, TLS or not;
    asyncio's protocols learn the client's address only after the TLS handshake."""

    per_ip = PER_IP
    places: _Places | None = None

    def __init__(self) -> None:
        super().__init__(socket.AF_INET, socket.SOCK_STREAM)
        self.open: dict[str, int] = {}  # client address -> connections open; the loop's thread alone

    def accept(self) -> tuple[socket.socket, Any]:
        fd, address = self._accept()  # type: ignore[attr-defined]
        ip = address[0]
        if self.open.get(ip, 0) >= self.per_ip:
            os.close(fd)
            # "None waiting" to asyncio: it comes back on the loop's next turn while more wait,
            # so a flood is refused one connection a turn, the table's other work in between.
            raise BlockingIOError(errno.EAGAIN, f"over {self.per_ip} connections from {ip}")
        if self.places is not None and not self.places.take(ip):
            os.close(fd)  # refused the same way: the places of all addresses are taken
            raise BlockingIOError(errno.EAGAIN, f"over {self.places.total} connections open")
        self.open[ip] = self.open.get(ip, 0) + 1
        conn = _Accepted(self.family, self.type, self.proto, fileno=fd)
        conn.release = lambda: self._release(ip)
        if socket.getdefaulttimeout() is None and self.gettimeout():  # as socket.accept does
            conn.setblocking(True)
        return conn, address

    def _release(self, ip: str) -> None:
        if self.places is not None:
            self.places.give_back()
        if (left := self.open.get(ip, 1) - 1) > 0:
            self.open[ip] = left
        else:
            self.open.pop(ip, None)


def bind(host: str, port: int, per_ip: int = PER_IP, places: _Places | None = None) -> socket.socket:
    """A listening socket (port 0: a free one), at most `per_ip` connections open from one
    address, each taking a place in `places`; OSError names the port when it is taken."""
    sock = _Listener()
    sock.per_ip, sock.places = per_ip, places
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as error:
        sock.close()
        if error.errno == errno.EADDRINUSE:
            fix = "another program holds that port: choose another --port"
        elif error.errno == errno.EACCES:
            fix = "ports below 1024 need root: choose another --port"
        else:
            fix = "give --host one of this machine's addresses (0.0.0.0: all of them)"
        # The host cut short: a page of a mistyped --host was quoted whole.
        raise OSError(f"cannot listen on {short_path(host)}:{port}: {error.strerror or error}; {fix}") from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


class _Loop(asyncio.SelectorEventLoop):
    """The server thread's loop: uvicorn's create_server passes neither TLS timeout, and
    asyncio's defaults keep a socket that never finishes its TLS handshake for 60 s, and a
    closed one waiting for the client's close_notify for 30 s (its connection still in the room)."""

    async def create_server(self, *args: Any, **kwargs: Any) -> asyncio.Server:
        if kwargs.get("ssl") is not None:
            kwargs.setdefault("ssl_handshake_timeout", HANDSHAKE_S)
            kwargs.setdefault("ssl_shutdown_timeout", TLS_CLOSE_S)
        return await super().create_server(*args, **kwargs)


class _H11(H11Protocol):
    """uvicorn's HTTP/1.1, with a deadline for each request's head. uvicorn has none: its
    keep-alive timer starts only after a response and any byte stops it, so a client that never
    sends its request, or sends it a byte at a time, would keep its socket for ever."""

    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_response_complete(self) -> None:  # the next request on this connection: its own deadline
        super().on_response_complete()
        self._arm()

    def handle_websocket_upgrade(self, event: h11.Request) -> None:  # a WebSocket now: its pings watch it
        self._disarm()
        super().handle_websocket_upgrade(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._deadline = self.loop.call_later(HANDSHAKE_S, self._too_slow)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self) -> None:
        answering = self.cycle is not None and not self.cycle.response_complete
        if not answering and not self.transport.is_closing():
            self.transport.close()


class _UvicornLines(logging.Handler):
    """uvicorn's own log lines, kept off the terminal. Its default handlers write to the stderr
    the process started with, in the middle of the terminal's table: a warning for every bad
    request anyone on the LAN sends, a traceback for a frame of bad UTF-8. A warning is about a
    client's bytes, already answered (400, a closed socket): logged at debug. An error (a fault of
    ours in the app, a frame uvicorn could not read) is said in one line, no traceback, by this
    module's logger, as the room's watch says its faults."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            message = record.getMessage().strip()
            if record.levelno < logging.ERROR:
                log.debug("the web server: %s", message)
                return
            said = message.splitlines()[0] if message else "an error"
            if record.exc_info is not None and record.exc_info[1] is not None:
                error = record.exc_info[1]
                said = f"{said} ({type(error).__name__}: {(str(error).splitlines() or [''])[0]})"
            log.error("the web server: %s", said[:300])
        except Exception:  # noqa: BLE001 - logging's own way: a line of logging's, never a crash
            self.handleError(record)


_UVICORN_LINES = _UvicornLines()


def _quiet_uvicorn() -> None:
    """uvicorn's loggers ("uvicorn.error", "uvicorn.access", …) to _UvicornLines alone: the
    Config's log_config=None leaves them without its handlers."""
    logger = logging.getLogger("uvicorn")
    logger.handlers = [_UVICORN_LINES]
    logger.propagate = False


def _end_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel the tasks the server left on its loop and let them end, before the loop closes: a
    client in the middle of its TLS handshake at Ctrl+C left its accepting task pending, and
    asyncio said "Task was destroyed but it is pending!" on the terminal as it was collected."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    with contextlib.suppress(Exception):  # a task's own error at its end: the server stops all the same
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=TLS_CLOSE_S))
        loop.run_until_complete(asyncio.sleep(0))  # the cancelled transports' closing callbacks
        loop.run_until_complete(loop.shutdown_asyncgens())


class WebServer:
    """The HTTPS table and the HTTP /trust page, served on a background thread."""

    def __init__(self, room: Room, certificates: Certificates, host: str = "0.0.0.0", port: int = 8443, *,
                 per_ip: int = PER_IP, max_sockets: int = MAX_SOCKETS, max_open: int | None = None,
                 hello_s: float = HELLO_S) -> None:
        """`max_open`: the connections open at once to both servers (None: from the soft limit
        of open files, raised first, see open_cap); `hello_s`: how long a socket may stay silent."""
        self.room, self.certificates, self.host = room, certificates, host
        self.places = _Places(max_open if max_open is not None else open_cap(raise_open_files()))
        _quiet_uvicorn()
        common: dict[str, Any] = dict(log_config=None, log_level="warning", access_log=False, lifespan="off",
                                      timeout_graceful_shutdown=1, http=_H11)
        self._https = uvicorn.Server(uvicorn.Config(
            make_app(room, max_sockets, self.places, hello_s), ssl_certfile=str(certificates.server_cert),
            ssl_keyfile=str(certificates.server_key),
            ws_max_size=WS_MAX_SIZE, ws_ping_interval=PING_S, ws_ping_timeout=PONG_S, **common))
        # No TLS 1.3 session tickets: they go out just after the handshake, while the client may
        # be writing its request, and a client that reads and writes one TLS socket from two
        # threads (the tests' websockets client) then loses its request now and then. A phone
        # gains little from them: a full handshake on the LAN takes milliseconds.
        self._https.config.load()  # builds its SSLContext (serve() loads only a config not loaded)
        if self._https.config.ssl is not None:
            self._https.config.ssl.num_tickets = 0
        self._https_socket = bind(host, port, per_ip, self.places)
        self.port = self._https_socket.getsockname()[1]
        self._http_socket = bind(host, self.port + 1 if port else 0, per_ip, self.places)
        self.trust_port = self._http_socket.getsockname()[1]
        self._http = uvicorn.Server(uvicorn.Config(make_trust_app(certificates, self.port), **common))
        self._thread = threading.Thread(target=self._run, daemon=True, name="web")
        self._ready = threading.Event()
        self.error: BaseException | None = None

    def join_at(self, host: str) -> dict[str, str]:
        """The addresses at `host` (a LAN address of this machine): the phones', the board's
        and the trust page's; the room shows the phones' and the trust page's on the board (QR
        codes) while a seat is free."""
        where = addresses(self, host)
        self.room.join = {"phone": where["phone"], "trust": where["trust"]}
        return where

    def start(self, timeout: float = 10.0) -> WebServer:
        self._thread.start()
        if not self._ready.wait(timeout) or self.error is not None:
            raise RuntimeError(f"the web server did not start: {self.error!r}")
        return self

    def _run(self) -> None:
        loop = _Loop()
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve())
        except BaseException as error:  # noqa: BLE001 - reported by start()
            self.error = error
            self._ready.set()
        finally:
            _end_tasks(loop)
            loop.close()

    async def _serve(self) -> None:
        self.room.attach(asyncio.get_running_loop())

        async def watch() -> None:
            failing = False
            while not self._https.should_exit:
                try:
                    self.room.watch()
                    failing = False
                except Exception:  # a fault of ours must not stop the table: said once, watched again
                    if not failing:
                        log.exception("the room's watch failed")
                    failing = True
                await asyncio.sleep(0.1)

        async def ready() -> None:
            while not (self._https.started and self._http.started):
                await asyncio.sleep(0.01)
            self._ready.set()

        await asyncio.gather(self._https.serve(sockets=[self._https_socket]),
                             self._http.serve(sockets=[self._http_socket]), watch(), ready())

    def stop(self) -> None:
        """Close every socket and wait for the thread: no traceback, nothing left running."""
        loop = self.room.loop
        if loop is not None and not loop.is_closed():
            def end_sockets() -> None:
                for connection in list(self.room.connections):
                    connection.outbox.put_nowait(None)
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(end_sockets)
        self._https.should_exit = True
        self._http.should_exit = True
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self.room.close()
        for sock in (self._https_socket, self._http_socket):
            sock.close()


@contextlib.contextmanager
def serving(room: Room, certificates: Certificates, host: str = "127.0.0.1", port: int = 0, *,
            per_ip: int = PER_IP, max_sockets: int = MAX_SOCKETS, max_open: int | None = None,
            hello_s: float = HELLO_S) -> Iterator[WebServer]:
    server = WebServer(room, certificates, host, port, per_ip=per_ip, max_sockets=max_sockets,
                       max_open=max_open, hello_s=hello_s).start()
    try:
        yield server
    finally:
        server.stop()


def addresses(server: WebServer, host: str) -> dict[str, str]:
    """The phone's, the board's and the trust page's addresses for `host` (a LAN address)."""
    room = server.room.secret
    return {"phone": f"https://{host}:{server.port}/?room={room}",
            "board": f"https://{host}:{server.port}/board?room={room}",
            "trust": f"http://{host}:{server.trust_port}/trust"}
