"""The web table's server, over real TLS sockets on 127.0.0.1: pages gated by the room secret,
the /trust page over plain HTTP, the certificates, the WebSocket's messages (and what hostile
clients get), a phone playing a move and shouting in a race, and scripts/play.py --web."""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import os
import plistlib
import select
import socket
import ssl
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from doubles import FixedBot
from web_helpers import PlayWeb
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.sync.client import ClientConnection, connect

from cdc_env.dice import InjectedDice
from cdc_env.rules import load_ruleset
from voice.phone_clock import PhoneClock
from voice.session import PlaySession, SeatPlayer
from voice.web.certs import Certificates, ca_profile, ensure_certificates
from voice.web.protocol import audio_frame
from voice.web.room import TAP_DELIVERY_S, Room
from voice.web.server import (
    MAX_OPEN,
    WANTED_FDS,
    WebServer,
    _Places,
    open_cap,
    raise_open_files,
    raised_soft_limit,
    serving,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Certificates:
    return ensure_certificates(tmp_path_factory.mktemp("web"), addresses=["192.168.1.20"])


@pytest.fixture(scope="module")
def tls(certificates: Certificates) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(certificates.ca_cert))


def new_room(players: list[SeatPlayer] | None = None) -> Room:
    players = players or [SeatPlayer("Ana"), SeatPlayer("Bob"), SeatPlayer("bold-1", FixedBot(900), "bold")]
    return Room(players, chirp=lambda: np.zeros(800, np.float32), play=lambda samples, rate: None)


@pytest.fixture
def server(certificates: Certificates) -> Iterator[WebServer]:
    with serving(new_room(), certificates) as running:
        yield running


SOCKETS = contextlib.ExitStack()  # every test's client sockets, closed after it


@pytest.fixture(autouse=True)
def close_sockets() -> Iterator[None]:
    yield
    SOCKETS.close()


class Phone:
    """A WebSocket client that reads the messages it is waiting for, skipping the others."""

    def __init__(self, server: WebServer, tls: ssl.SSLContext, role: str = "phone", token: str | None = None) -> None:
        self.ws: ClientConnection = SOCKETS.enter_context(connect(
            f"wss://127.0.0.1:{server.port}/ws?room={server.room.secret}", ssl=tls, max_size=None, open_timeout=10))
        self.send({"type": "hello", "role": role, "token": token, "lang": "fr"})

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message))

    def wait(self, kind: str, timeout: float = 10.0, where: Any = None) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message["type"] == kind and (where is None or where(message)):
                return message

    def closed(self, timeout: float = 5.0) -> bool:
        try:
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                self.ws.recv(timeout=deadline - time.monotonic())
        except ConnectionClosed:
            return True
        except TimeoutError:
            return False
        return False


def opened(server: WebServer, tls: ssl.SSLContext, *, upgrade: bool = True) -> ssl.SSLSocket:
    """A TLS socket to the table, upgraded to a WebSocket by hand: no library between the test
    and the bytes, so a frame can be cut short."""
    sock = SOCKETS.enter_context(tls.wrap_socket(socket.create_connection(("127.0.0.1", server.port), timeout=10),
                                                 server_hostname="127.0.0.1"))
    if upgrade:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(f"GET /ws?room={server.room.secret} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                     f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096) or pytest.fail(f"closed during the handshake: {head!r}")
        assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def frame_head(length: int, opcode: int = 1) -> bytes:
    """A client's frame header (a text frame unless told): final, masked with a zero mask (the
    payload goes as it is), declaring `length` bytes."""
    if length < 126:
        sizes = struct.pack("!B", 0x80 | length)
    elif length < 1 << 16:
        sizes = struct.pack("!BH", 0x80 | 126, length)
    else:
        sizes = struct.pack("!BQ", 0x80 | 127, length)
    return bytes([0x80 | opcode]) + sizes + b"\0\0\0\0"


def dropped_within(sock: socket.socket, seconds: float) -> float | None:
    """Seconds until the server closes `sock` (what it sends is read and dropped), None if it is
    still open after `seconds`."""
    start = time.monotonic()
    while (left := start + seconds - time.monotonic()) > 0:
        sock.settimeout(left)
        try:
            if not sock.recv(65536):
                return time.monotonic() - start
        except TimeoutError:
            return None
        except OSError:  # reset, or a TLS error: closed all the same
            return time.monotonic() - start
    return None


def until(condition: Any, seconds: float) -> float | None:
    """Seconds until `condition()` holds, None if it does not within `seconds`."""
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        if condition():
            return time.monotonic() - start
        time.sleep(0.05)
    return None


def seats_of(room: Room) -> list[tuple[bool, str | None, str]]:
    return [(s.taken, s.token, s.player.name) for s in room.seats]


# ---------------------------------------------------------------- pages and certificates


def test_pages_need_the_room_secret(server: WebServer, tls: ssl.SSLContext) -> None:
    base = f"https://127.0.0.1:{server.port}"
    with httpx.Client(verify=tls) as client:
        page = client.get(f"{base}/?room={server.room.secret}")
        assert page.status_code == 200 and "<html" in page.text.lower()
        assert client.get(f"{base}/board?room={server.room.secret}").status_code == 200
        for wrong in ("/", "/?room=guess", "/board", f"/board?room={server.room.secret[:-1]}"):
            refused = client.get(base + wrong)
            assert refused.status_code == 403 and "QR" in refused.text
    with pytest.raises(Exception) as refused_ws:  # the WebSocket too: refused before it opens
        connect(f"wss://127.0.0.1:{server.port}/ws?room=guess", ssl=tls, open_timeout=5)
    assert "403" in str(refused_ws.value)


def test_a_fault_in_the_rooms_watch_is_logged_once_and_the_table_is_served_on(
        certificates: Certificates, tls: ssl.SSLContext, caplog: pytest.LogCaptureFixture) -> None:
    room = new_room()
    failures = [0]

    def failing_watch() -> None:
        failures[0] += 1
        raise RuntimeError("a fault of ours")

    room.watch = failing_watch  # type: ignore[method-assign]
    with caplog.at_level(logging.ERROR, logger="voice.web.server"), serving(room, certificates) as running:
        assert until(lambda: failures[0] >= 3, 5) is not None  # watched on, every 0.1 s
        with httpx.Client(verify=tls) as client:
            assert client.get(f"https://127.0.0.1:{running.port}/?room={room.secret}").status_code == 200
        assert running.error is None
    assert [r.getMessage() for r in caplog.records].count("the room's watch failed") == 1


def test_the_way_in_is_a_qr_code_behind_the_secret_and_the_board_is_told_it(server: WebServer,
                                                                             tls: ssl.SSLContext) -> None:
    base = f"https://127.0.0.1:{server.port}"
    secret = server.room.secret
    with httpx.Client(verify=tls) as client:
        # Before the host says where it is reached, there is no address to show.
        assert client.get(f"{base}/join.svg?to=phone&room={secret}").status_code == 404
        where = server.join_at("192.168.1.20")
        assert where["phone"] == f"https://192.168.1.20:{server.port}/?room={secret}"
        assert where["trust"] == f"http://192.168.1.20:{server.trust_port}/trust"
        for to in ("phone", "trust"):
            code = client.get(f"{base}/join.svg?to={to}&room={secret}")
            assert code.status_code == 200 and code.headers["content-type"] == "image/svg+xml"
            assert code.text.startswith("<svg") and f"<title>{where[to]}</title>" in code.text.replace("&amp;", "&")
        for wrong in (f"/join.svg?to=phone&room={secret[:-1]}", "/join.svg?to=phone", "/join.svg"):
            refused = client.get(base + wrong)
            assert refused.status_code == 403 and "svg" not in refused.headers["content-type"]
        for to in ("board", "x" * 5000, ""):
            assert client.get(f"{base}/join.svg?to={to}&room={secret}").status_code == 404
    board = Phone(server, tls, role="board")
    assert board.wait("join") == {"type": "join", "phone": where["phone"], "trust": where["trust"]}
    assert [s["taken"] for s in board.wait("seats")["seats"]] == [False, False, False]
    phone = Phone(server, tls)
    phone.send({"type": "claim", "seat": 0})
    phone.wait("welcome")
    # The board follows the seats: the way in is shown while one is free.
    assert [s["taken"] for s in board.wait("seats")["seats"]] == [True, False, False]


def test_the_qr_codes_read_back_as_their_addresses() -> None:
    from web_helpers import read_text_qr_codes

    from voice.web.server import qr_rows

    address = "https://192.168.1.20:8443/?room=Zq3_xV-9kLm0aBcDeFgHiJ&seat=2"
    rows = qr_rows(address)
    assert len({len(row) for row in rows}) == 1 and set("".join(rows)) <= set("█▀▄ ")
    assert read_text_qr_codes("\n".join(rows)) == [address]
    # Framed as a terminal shows it (a border, text beside it), it still reads.
    framed = "\n".join(f"│ {row} │ score 12" for row in rows)
    assert read_text_qr_codes(framed) == [address]


def test_trust_page_and_ca_over_plain_http(server: WebServer, certificates: Certificates) -> None:
    base = f"http://127.0.0.1:{server.trust_port}"
    page = httpx.get(f"{base}/trust")
    assert page.status_code == 200
    assert "Certificate Trust Settings" in page.text and "Réglages de confiance des certificats" in page.text
    assert 'href="/trust/cdc.mobileconfig"' in page.text and "Non vérifié" in page.text
    assert f"https://127.0.0.1:{server.port}/" in page.text
    ca = httpx.get(f"{base}/trust/ca.crt")
    assert ca.headers["content-type"] == "application/x-x509-ca-cert"
    assert ca.content == certificates.ca_cert.read_bytes()
    assert server.trust_port == server.port + 1 or server.port == 0 or server.trust_port != server.port


def test_the_ios_profile_holds_the_ca_and_keeps_its_uuids(server: WebServer, certificates: Certificates,
                                                         tls: ssl.SSLContext, tmp_path: Path) -> None:
    base = f"http://127.0.0.1:{server.trust_port}"
    first, second = (httpx.get(f"{base}/trust/cdc.mobileconfig") for _ in range(2))
    assert first.status_code == 200  # no room secret: the CA is no secret, the table is
    assert first.headers["content-type"] == "application/x-apple-aspen-config"
    profile = plistlib.loads(first.content)
    assert profile["PayloadType"] == "Configuration"
    assert profile["PayloadDisplayName"] == "Table de Cul de Chouette (cdc)"
    [root] = profile["PayloadContent"]
    assert root["PayloadType"] == "com.apple.security.root"
    ca = x509.load_pem_x509_certificate(certificates.ca_cert.read_bytes())
    assert root["PayloadContent"] == ca.public_bytes(serialization.Encoding.DER)
    assert x509.load_der_x509_certificate(root["PayloadContent"]) == ca

    def ids(p: dict[str, Any]) -> list[str]:
        return [p["PayloadIdentifier"], p["PayloadUUID"], p["PayloadContent"][0]["PayloadIdentifier"],
                p["PayloadContent"][0]["PayloadUUID"]]

    # The same CA, the same profile (installing it again replaces it); another CA, another one.
    assert ids(plistlib.loads(second.content)) == ids(profile)
    assert len(set(ids(profile))) == 4 and all(str(uuid.UUID(u)) == u.lower() for u in ids(profile)[1::2])
    other = plistlib.loads(ca_profile(ensure_certificates(tmp_path, addresses=["10.0.0.7"]).ca_cert.read_bytes()))
    assert not set(ids(other)) & set(ids(profile))
    # The plain-HTTP server serves the trust page and the CA only, never the table, and the
    # table's pages still want the room's secret.
    for path in ("/", f"/?room={server.room.secret}", f"/board?room={server.room.secret}", "/static/phone.js"):
        assert httpx.get(base + path).status_code == 404, path
    with httpx.Client(verify=tls) as client:
        assert client.get(f"https://127.0.0.1:{server.port}/?room=guess").status_code == 403
        assert client.get(f"https://127.0.0.1:{server.port}/trust/cdc.mobileconfig").status_code == 404


def test_certificates_name_the_lan_and_are_reused_until_it_changes(tmp_path: Path) -> None:
    first = ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    cert = x509.load_pem_x509_certificate(first.server_cert.read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = [str(ip) for ip in names.get_values_for_type(x509.IPAddress)]
    assert "192.168.1.20" in ips and "127.0.0.1" in ips and "localhost" in names.get_values_for_type(x509.DNSName)
    ca = x509.load_pem_x509_certificate(first.ca_cert.read_bytes())
    assert cert.issuer == ca.subject and first.issued
    assert (first.server_key.stat().st_mode & 0o077) == 0  # the keys are the user's alone
    again = ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    assert not again.issued and again.server_cert.read_bytes() == first.server_cert.read_bytes()
    moved = ensure_certificates(tmp_path, addresses=["10.0.0.7"])
    assert moved.issued and moved.ca_cert.read_bytes() == first.ca_cert.read_bytes()  # the CA stays
    assert "10.0.0.7" in moved.names and "192.168.1.20" not in moved.names


def test_a_host_name_with_accents_is_named_by_its_a_label_and_one_no_dns_name_can_be_is_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `--host tablé.local` (or a machine named so) ended play.py in x509's ValueError traceback.
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: "portable-de-zoé")
    made = ensure_certificates(tmp_path, addresses=["192.168.1.20"], also=["tablé.local", "a..b"])
    cert = x509.load_pem_x509_certificate(made.server_cert.read_bytes())
    dns = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert "xn--tabl-epa.local" in dns and "xn--portable-de-zo-okb" in dns and "localhost" in dns
    assert not any(".." in name for name in dns)


def test_config_folder_is_overridable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from voice.web.certs import web_dir

    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "w"))
    assert web_dir() == tmp_path / "w"
    monkeypatch.delenv("CDC_WEB_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert web_dir() == tmp_path / "cfg" / "cdc" / "web"


# ---------------------------------------------------------------- the WebSocket


def test_hello_claim_welcome_and_reconnection_by_token(server: WebServer, tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    seats = phone.wait("seats")["seats"]
    assert [(s["seat"], s["human"], s["taken"]) for s in seats] == [(0, True, False), (1, True, False),
                                                                       (2, False, False)]
    phone.send({"type": "claim", "seat": 1, "name": "Zoé"})
    welcome = phone.wait("welcome")
    assert welcome["seat"] == 1 and server.room.seats[1].taken and server.room.seats[1].player.name == "Zoé"
    session = PlaySession(load_ruleset("classic"), [s.player for s in server.room.seats], view=server.room.view,
                          keyboard=server.room.keys, seed=3)
    server.room.view.show(session)
    phone.ws.close()
    back = Phone(server, tls, token=welcome["token"])
    assert back.wait("welcome") == welcome
    table = back.wait("table")  # the whole table back
    assert [p["name"] for p in table["players"]] == ["Ana", "Zoé", "bold-1"] and table["players"][1]["human"]
    other = Phone(server, tls)
    assert [s["taken"] for s in other.wait("seats")["seats"]] == [False, True, False]


def test_hostile_messages_get_an_error_and_change_nothing(server: WebServer, tls: ssl.SSLContext) -> None:
    room = server.room
    owner = Phone(server, tls)
    owner.send({"type": "claim", "seat": 0})
    owner.wait("welcome")
    before = seats_of(room)
    forged = Phone(server, tls, token="A" * 22)
    refused = forged.wait("error")  # the page says it in its language: the refusal's code
    assert "token" in refused["message"] and refused["code"] == "unknown_token"
    assert forged.wait("seats")
    intruder = Phone(server, tls)
    for message, why, code in [({"type": "claim", "seat": 0}, "taken", "seat_taken"),
                               ({"type": "claim", "seat": 2}, "bot", None),
                               ({"type": "choose", "option": 0}, "claim a seat", None),
                               ({"type": "shout", "t": 5.0}, "claim a seat", None)]:
        intruder.send(message)
        refused = intruder.wait("error")
        assert why in refused["message"] and refused.get("code") == code
    assert refused.keys() == {"type", "message"}  # a broken page's: the host's words alone
    owner.send({"type": "choose", "option": 0})  # nothing is asked yet
    refused = owner.wait("error")
    assert "nothing is asked" in refused["message"] and (refused["code"], refused["params"]) == ("not_asked", {})
    owner.ws.send(b"\x00\x01\x02")  # binary garbage
    assert "audio frame" in owner.wait("error")["message"]
    owner.send({"type": "clock", "t1": 10.0, "t2": 5.0, "t3": 4.0, "t4": 11.0})  # host times no pong had
    assert "not those of a pong this host sent" in owner.wait("error")["message"]
    owner.send({"type": "ping", "id": 7, "t1": 10.0})
    pong = owner.wait("pong")
    owner.send({"type": "clock", "t1": 10.0, "t2": pong["t2"], "t3": pong["t3"], "t4": 5.0})  # back before it left
    assert "refused: impossible round trip" in owner.wait("error")["message"]
    board = Phone(server, tls, role="board")
    board.send({"type": "claim", "seat": 1})
    assert "board" in board.wait("error")["message"]
    assert seats_of(room) == before and room.keys.poll(0) is None


def test_repeated_garbage_closes_the_connection(server: WebServer, tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    phone.wait("seats")
    for text in ("{", '{"type":"dance"}', "[]", '{"type":"claim","seat":"0"}', "\x00"):
        phone.ws.send(text)
    assert phone.closed()
    assert phone.ws.close_code == 1008
    assert not any(s.taken for s in server.room.seats)


def test_refusals_spread_over_a_game_never_close_a_phone(certificates: Certificates, tls: ssl.SSLContext) -> None:
    """A page that plays by the rules is refused now and then: a tap on « lancer » just after its
    player's « je lance » was heard (« this question was answered already »). Those came to the
    5 refusals that close a socket over a long game, and the phone reconnected mid-game, its
    microphone restarted, a new chirp played. Five within BAD_WINDOW_S still close it."""
    from voice.web.server import BAD_WINDOW_S, MAX_BAD

    now = [100.0]
    room = Room([SeatPlayer("Ana"), SeatPlayer("Bob")], clock=lambda: now[0],
                chirp=lambda: np.zeros(800, np.float32), play=lambda samples, rate: None)
    with serving(room, certificates) as running:
        phone = Phone(running, tls)
        phone.send({"type": "claim", "seat": 0})
        phone.wait("welcome")
        for _ in range(3 * MAX_BAD):  # a stale tap now and then, over a game
            now[0] += BAD_WINDOW_S / (MAX_BAD - 1) + 0.1
            phone.send({"type": "choose", "option": 0})  # nothing is asked of the seat
            assert "nothing is asked" in phone.wait("error")["message"]
        phone.send({"type": "ping", "id": 7, "t1": 1.0})
        assert phone.wait("pong")["id"] == 7  # still open
        for _ in range(MAX_BAD):  # a broken page: refused again and again
            phone.send({"type": "choose", "option": 0})
        assert phone.closed()
        assert phone.ws.close_code == 1008


def test_a_flood_closes_the_connection(server: WebServer, tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    phone.wait("seats")
    for i in range(80):
        try:
            phone.send({"type": "ping", "id": i, "t1": 1.0})
        except ConnectionClosed:  # closed before the flood was all sent: what is asked
            break
    assert phone.closed()
    assert phone.ws.close_code == 1008


def test_a_ten_megabyte_message_closes_the_connection(server: WebServer, tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    phone.wait("seats")
    # The client compresses it (permessage-deflate) to ~10 kB: the server refuses it once
    # inflated past its limit. A socket timeout makes a server that stops reading without
    # closing a failure of this test, not a hang of the whole run.
    phone.ws.socket.settimeout(20)
    started = time.monotonic()
    with contextlib.suppress(ConnectionClosed):
        phone.ws.send("x" * 10_000_000)
    assert time.monotonic() - started < 20, "the send timed out: the server stopped reading and kept the socket"
    assert phone.closed()
    assert phone.ws.close_code == 1009  # too big: dropped before it is read
    assert not any(s.taken for s in server.room.seats)
    fine = Phone(server, tls)  # the server goes on
    assert fine.wait("seats")


def test_a_half_sent_oversized_frame_is_refused_at_its_header(server: WebServer, tls: ssl.SSLContext) -> None:
    """No compression: the header says 10 MB; the server answers 1009 and closes at once, so the
    rest of the payload cannot be sent (an error, not a send left hanging)."""
    sock = opened(server, tls)
    assert until(lambda: len(server.room.connections) == 1, 5) is not None
    sock.settimeout(20)
    started = time.monotonic()
    with pytest.raises(OSError) as refused:
        sock.sendall(frame_head(10_000_000) + b"x" * 10_000_000)
    assert not isinstance(refused.value, TimeoutError), "the server stopped reading and kept the socket"
    assert time.monotonic() - started < 5
    assert until(lambda: not server.room.connections, 3) is not None
    assert Phone(server, tls).wait("seats")  # the server goes on


def test_a_frame_that_stalls_is_dropped_within_seconds_and_the_others_play_on(server: WebServer,
                                                                               tls: ssl.SSLContext) -> None:
    """Two sockets each start a text frame of an allowed length (16 kB): one sends 10 bytes of it
    and stops, the other trickles a byte every 0.3 s. Neither can answer the server's pings in
    the middle of a frame: both are dropped, and their connections leave the room, within
    seconds, while a phone with a seat keeps playing."""
    room = server.room
    player = Phone(server, tls)
    player.send({"type": "claim", "seat": 0})
    player.wait("welcome")
    stops, trickles = opened(server, tls), opened(server, tls)
    assert until(lambda: len(room.connections) == 3, 5) is not None
    stops.sendall(frame_head(16_000) + b"x" * 10)
    trickles.sendall(frame_head(16_000))
    done = threading.Event()

    def trickle() -> None:
        with contextlib.suppress(OSError):
            while not done.wait(0.3):
                trickles.sendall(b"x")

    trickler = threading.Thread(target=trickle, daemon=True)
    trickler.start()
    started = time.monotonic()
    pongs = 0
    while len(room.connections) > 1 and time.monotonic() - started < 15:
        player.send({"type": "ping", "id": pongs, "t1": 1.0})
        assert player.wait("pong")["id"] == pongs  # the table answers its phone all along
        pongs += 1
        time.sleep(0.3)
    took = time.monotonic() - started
    done.set()
    trickler.join(5)
    assert len(room.connections) == 1, f"the stalled sockets still hold the room after {took:.1f} s"
    assert took < 9, f"dropped after {took:.1f} s"  # 2 s to the next ping, 3 s for its pong, 1 s for TLS
    assert dropped_within(stops, 2) is not None and dropped_within(trickles, 2) is not None
    assert room.seats[0].taken
    player.send({"type": "ping", "id": 99, "t1": 1.0})
    assert player.wait("pong")["id"] == 99


def test_clients_that_never_finish_their_handshake_are_dropped_within_seconds(server: WebServer,
                                                                              tls: ssl.SSLContext,
                                                                              caplog: pytest.LogCaptureFixture) -> None:
    """A TCP socket that never starts TLS, a TLS socket that never sends its request, and one
    whose request's head never ends: each is closed by the server within seconds, and a phone
    plays meanwhile (connected first: a WebSocket is no request left unfinished). Nothing is
    logged."""
    caplog.set_level(logging.ERROR)
    phone = Phone(server, tls)
    assert phone.wait("seats")
    tcp = SOCKETS.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
    silent = opened(server, tls, upgrade=False)
    unfinished = opened(server, tls, upgrade=False)
    unfinished.sendall(f"GET /ws?room={server.room.secret} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode())
    started = time.monotonic()
    for name, sock in (("no TLS", tcp), ("no request", silent), ("a request cut short", unfinished)):
        left = 9 - (time.monotonic() - started)
        assert dropped_within(sock, left) is not None, f"{name}: still open after {time.monotonic() - started:.1f} s"
    assert time.monotonic() - started < 8
    phone.send({"type": "ping", "id": 1, "t1": 1.0})
    assert phone.wait("pong")["id"] == 1
    assert not caplog.records, [record.getMessage() for record in caplog.records]


def closed_within(socks: list[socket.socket], seconds: float) -> list[int]:
    """The indexes of the sockets the server closed within `seconds` (waited for in full: the
    others are still open then)."""
    closed: set[int] = set()
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([s for i, s in enumerate(socks) if i not in closed], [], [], left)
        for sock in ready:
            try:
                data = sock.recv(65536)
            except OSError:  # reset: closed all the same
                data = b""
            if not data:
                closed.add(socks.index(sock))
    return sorted(closed)


def joins(server: WebServer, tls: ssl.SSLContext) -> bool:
    """Whether a new phone gets the seat list now."""
    try:
        return Phone(server, tls).wait("seats", timeout=3)["type"] == "seats"
    except (OSError, ConnectionClosed, InvalidHandshake):
        return False


def test_connections_over_the_cap_of_one_address_are_closed_at_once_and_the_table_plays_on(
        certificates: Certificates, tls: ssl.SSLContext) -> None:
    """20 raw TCP connections from 127.0.0.1 to each server, with a cap of 6 an address: the
    first ones are kept (on the table, the seated phone holds one place), the others closed
    within a second, before any TLS (the kept ones would wait 5 s for theirs). The phone plays
    on meanwhile, and once the flood lets go a new phone joins."""
    with serving(new_room(), certificates, per_ip=6) as server:
        phone = Phone(server, tls)
        phone.send({"type": "claim", "seat": 0})
        phone.wait("welcome")
        floods = []
        for port, kept in ((server.port, 5), (server.trust_port, 6)):
            flood = [SOCKETS.enter_context(socket.create_connection(("127.0.0.1", port), timeout=10))
                     for _ in range(20)]
            assert closed_within(flood, 1.0) == list(range(kept, 20)), f"port {port}"
            floods += flood[:kept]
        for i in range(3):
            phone.send({"type": "ping", "id": i, "t1": 1.0})
            assert phone.wait("pong")["id"] == i
        assert server.room.seats[0].taken
        for sock in floods:
            sock.close()
        assert until(lambda: joins(server, tls), 5) is not None
        assert httpx.get(f"http://127.0.0.1:{server.trust_port}/trust").status_code == 200


def test_connections_over_the_cap_of_all_addresses_are_closed_at_once_and_seated_phones_keep_a_share(
        certificates: Certificates, tls: ssl.SSLContext) -> None:
    """At most 12 connections open to both servers together, 3 of them kept for the seated
    phones' addresses. A phone not yet seated holds one; of 20 raw TCP connections to the table 8
    are kept and the others closed within a second, and one to /trust is closed too: the 3 kept
    places are not for an address without a seat. Once the phone is seated its address has them:
    a page request is answered and 2 more connections kept, the 3rd closed; the phone plays on,
    and once the flood lets go a new phone joins and /trust answers. (The flood and the phone
    share 127.0.0.1 here; test_the_places_kept_for_seated_phones tells addresses apart.)"""
    with serving(new_room(), certificates, per_ip=64, max_open=12) as server:
        phone = Phone(server, tls)
        phone.wait("seats")
        flood = [SOCKETS.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
                 for _ in range(20)]
        assert closed_within(flood, 1.0) == list(range(8, 20))
        trust = SOCKETS.enter_context(socket.create_connection(("127.0.0.1", server.trust_port), timeout=10))
        assert closed_within([trust], 0.5) == [0]
        phone.send({"type": "claim", "seat": 0})
        phone.wait("welcome")
        with httpx.Client(verify=tls) as client:  # keeps its connection open: one place
            assert client.get(f"https://127.0.0.1:{server.port}/?room={server.room.secret}").status_code == 200
            more = [SOCKETS.enter_context(socket.create_connection(("127.0.0.1", server.port), timeout=10))
                    for _ in range(3)]
            assert closed_within(more, 0.5) == [2]
            assert server.places.open == 12
        for i in range(3):
            phone.send({"type": "ping", "id": i, "t1": 1.0})
            assert phone.wait("pong")["id"] == i
        for sock in flood[:8] + more[:2]:
            sock.close()
        assert until(lambda: joins(server, tls), 5) is not None
        assert httpx.get(f"http://127.0.0.1:{server.trust_port}/trust").status_code == 200
        phone.ws.close()
        # every place given back but the joiners' (their WebSockets still open)
        assert until(lambda: server.places.open == len(server.room.connections) >= 1, 5) is not None


def test_the_places_kept_for_seated_phones() -> None:
    """A flood from other addresses takes at most 3/4 of the places; a seated phone's address
    (the last one each seat was played from) takes the rest; places given back are taken again."""
    places = _Places(8)
    assert [places.take(f"10.0.0.{i}") for i in range(8)] == [True] * 6 + [False] * 2
    places.seated[0] = "192.168.1.30"
    assert [places.take("192.168.1.30") for _ in range(3)] == [True, True, False]
    assert not places.take("10.0.0.1") and places.open == 8
    places.seated[0] = "192.168.1.31"  # the seat's phone on another address: the old one is no longer kept for
    places.give_back()
    assert not places.take("192.168.1.30") and places.take("192.168.1.31")
    for _ in range(3):
        places.give_back()
    assert places.take("10.0.0.9") and places.open == 6


def test_the_open_files_limit_is_raised_within_the_hard_one_and_the_cap_keeps_a_reserve() -> None:
    """The soft limit goes to 1024 where the hard one allows, never down; the connections'
    cap is the soft limit less 128 for the game, between 16 and 480."""
    infinite = pytest.importorskip("resource").RLIM_INFINITY  # Windows has no such limit
    assert raised_soft_limit(256, infinite) == WANTED_FDS == 1024  # macOS's default
    assert raised_soft_limit(256, 10240) == 1024
    assert raised_soft_limit(256, 512) == 512
    assert raised_soft_limit(1024, 4096) == 1024  # Linux's default: kept
    assert raised_soft_limit(20000, 20000) == 20000
    assert raised_soft_limit(infinite, infinite) == infinite
    assert raised_soft_limit(300, 1 << 20, wanted=600) == 600
    assert (open_cap(256), open_cap(1024), open_cap(1 << 20), open_cap(infinite)) == (128, MAX_OPEN, MAX_OPEN, MAX_OPEN)
    assert open_cap(100) == 16 and open_cap(None) == MAX_OPEN == 480


def test_raising_the_open_files_limit_leaves_a_valid_one() -> None:
    """From a soft limit lowered to 300 (as on a small system), one call raises it to 1024, or
    the hard limit if lower, and leaves the hard one as it was; the test's own limit is then
    put back."""
    resource = pytest.importorskip("resource")  # Windows has no such limit
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = 300 if hard == resource.RLIM_INFINITY or hard >= 300 else hard
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard))
        raised = raise_open_files()
        assert raised == resource.getrlimit(resource.RLIMIT_NOFILE)[0] == raised_soft_limit(lowered, hard)
        assert raised == (1024 if hard == resource.RLIM_INFINITY else min(hard, 1024))
        assert resource.getrlimit(resource.RLIMIT_NOFILE)[1] == hard
        assert open_cap(raised) == (MAX_OPEN if raised >= 1024 else max(16, min(MAX_OPEN, raised - 128)))
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_a_websocket_over_the_rooms_cap_is_refused_and_changes_nothing(certificates: Certificates,
                                                                        tls: ssl.SSLContext) -> None:
    """A room of at most 3 WebSockets: the 4th gets an error saying the table is full and is
    closed (1013, try again later) without entering the room; once one leaves, a new one joins."""
    with serving(new_room(), certificates, max_sockets=3) as server:
        room = server.room
        phones = [Phone(server, tls) for _ in range(3)]
        phones[0].send({"type": "claim", "seat": 0})
        phones[0].wait("welcome")
        for other in phones[1:]:
            other.wait("seats")
        before = seats_of(room)
        assert len(room.connections) == 3
        extra = SOCKETS.enter_context(connect(f"wss://127.0.0.1:{server.port}/ws?room={room.secret}", ssl=tls,
                                              open_timeout=10))
        refused = json.loads(extra.recv(timeout=5))
        assert refused["type"] == "error" and "full" in refused["message"] and refused["code"] == "full"
        assert refused["params"] == {"most": 3}  # the page says it in its language
        with pytest.raises(ConnectionClosed):
            extra.recv(timeout=5)
        assert extra.close_code == 1013 and "full" in (extra.close_reason or "")
        assert len(room.connections) == 3 and seats_of(room) == before
        phones[0].send({"type": "ping", "id": 1, "t1": 1.0})
        assert phones[0].wait("pong")["id"] == 1
        phones[2].ws.close()
        assert until(lambda: len(room.connections) == 2, 5) is not None
        assert Phone(server, tls).wait("seats")
        assert len(room.connections) == 3 and seats_of(room) == before


def test_a_socket_silent_is_closed_and_a_seated_phone_coming_back_to_a_full_table_gets_in(
        certificates: Certificates, tls: ssl.SSLContext) -> None:
    """/tmp/review_web/idle.py: sockets that never said hello stayed (pinged, answering), each a
    place under the cap, and Ana's phone coming back was refused "full". The oldest silent one
    makes room for a newcomer, and a socket silent for `hello_s` is closed."""
    with serving(new_room(), certificates, max_sockets=2, hello_s=2.0) as server:
        room = server.room
        ana = Phone(server, tls)
        ana.send({"type": "claim", "seat": 0})
        token = ana.wait("welcome")["token"]
        ana.ws.close()  # her screen locked
        assert until(lambda: not room.connections, 5) is not None
        url = f"wss://127.0.0.1:{server.port}/ws?room={room.secret}"
        silent = [SOCKETS.enter_context(connect(url, ssl=tls, open_timeout=10)) for _ in range(2)]
        opened = time.monotonic()
        back = Phone(server, tls, token=token)
        assert back.wait("welcome")["seat"] == 0
        refused = json.loads(silent[0].recv(timeout=5))
        assert refused["type"] == "error" and "sent no hello" in refused["message"]
        with pytest.raises(ConnectionClosed):
            silent[0].recv(timeout=5)
        said: dict[str, Any] = {}
        with pytest.raises(ConnectionClosed):  # the other one, once silent for 2 s
            while True:
                said = json.loads(silent[1].recv(timeout=5))
                assert said["type"] in ("table", "error"), said
        assert 1.0 <= time.monotonic() - opened < 5.0
        assert silent[1].close_code == 1008 and silent[1].close_reason == "no hello"
        assert "no hello within 2 s" in said["message"]
        assert until(lambda: len(room.connections) == 1, 5) is not None and room.seats[0].taken
        back.send({"type": "ping", "id": 1, "t1": 1.0})
        assert back.wait("pong")["id"] == 1  # said hello: never closed for silence


def test_mic_offline_within_a_second(server: WebServer, tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    phone.send({"type": "claim", "seat": 0})
    phone.wait("welcome")
    session = PlaySession(load_ruleset("classic"), [s.player for s in server.room.seats], view=server.room.view,
                          keyboard=server.room.keys, seed=3)
    server.room.view.show(session)  # a table to show (no game played)
    phone.send({"type": "audio", "stream": 1, "rate": 16000, "state": "on"})
    for i in range(5):
        phone.ws.send(audio_frame(i * 1600, 100.0 * (i + 1), np.zeros(1600, np.int16)))
        time.sleep(0.1)
    phone.wait("table", where=lambda t: t["players"][0]["mic"] == "online")
    stopped = time.monotonic()
    phone.wait("table", timeout=3, where=lambda t: t["players"][0]["mic"] == "offline")
    assert time.monotonic() - stopped < 1.0


# ---------------------------------------------------------------- a game played from a phone


def test_a_phone_plays_its_move_and_wins_a_race_by_its_tap_time(certificates: Certificates,
                                                                  tls: ssl.SSLContext) -> None:
    """Seat 0 (the phone) rolls 1,1,2: a Chouette-Velute race against a bot shouting at 1.2 s.
    The tap is sent 0.4 s into the race but timed 0.2 s in on the phone's clock: its onset on the
    host clock (through the phone's clock sync) is ~200 ms, and it wins."""
    room = new_room([SeatPlayer("Ana"), SeatPlayer("bot", FixedBot(1200), "fixed")])
    room.make_clock = lambda: PhoneClock(rate=16000)
    session = PlaySession(load_ruleset("basic"), [s.player for s in room.seats], view=room.view,
                          keyboard=room.keys, dice=InjectedDice([1, 6, 1, 1, 2, 6, 6, 6]),
                          setup={"scores": [0, 300]})
    done: list[Any] = []
    with serving(room, certificates) as server:
        phone = Phone(server, tls)
        phone.send({"type": "claim", "seat": 0})
        phone.wait("welcome")
        offset_ms = 7_000.0  # the phone's clock is 7 s behind the host's
        for i in range(5):  # clock samples: t1/t4 on the phone, t2/t3 on the host
            t1 = time.monotonic() * 1000 - offset_ms
            phone.send({"type": "ping", "id": i, "t1": t1})
            pong = phone.wait("pong")
            phone.send({"type": "clock", "t1": pong["t1"], "t2": pong["t2"], "t3": pong["t3"],
                        "t4": time.monotonic() * 1000 - offset_ms})
        threading.Thread(target=lambda: done.append(session.run()), daemon=True).start()
        asked = phone.wait("table", where=lambda t: t["question"] is not None)
        assert asked["question"]["seat"] == 0 and asked["question"]["options"][0]["label_en"] == "roll the dice"
        assert asked["question"]["options"][0]["label_fr"] == "lancer les dés"
        phone.send({"type": "choose", "option": 0})
        phone.wait("table", where=lambda t: t["race"] is not None and t["race"]["running"])
        seen = time.monotonic()
        time.sleep(0.4)
        phone.send({"type": "shout", "t": (seen + 0.2) * 1000 - offset_ms})
        deadline = time.monotonic() + 15
        while not done and time.monotonic() < deadline:
            time.sleep(0.05)
    assert done, "the game did not end"
    shouts = {s.seat: s for s in session.race_log[0]}
    # ~200 ms: the race starts on the session thread just around when the phone sees it; the tap
    # arrived ~400 ms in, so an onset taken at arrival would be 400+.
    assert shouts[0].by == "keyboard" and 150 <= shouts[0].onset_ms <= 320
    race = next(e for e in session.state.log if e["type"] == "race")
    assert race["tied"] == [0]


# ---------------------------------------------------------------- scripts/play.py --web


@pytest.mark.parametrize("given", ["unreadable", "empty"])
def test_play_web_without_a_terminal_to_read_plays_on_and_says_so(tmp_path: Path, given: str) -> None:
    # `nohup play.py --web --no-screen` from a terminal gives it an input it cannot read: the
    # host's typing thread ended in an OSError traceback. An empty input (/dev/null) ends quietly.
    save = tmp_path / "game.json"
    argv = ["--humans", "Ana", "--bots", "bold", "--seed", "3", "--save", str(save)]
    with open(os.devnull, "w") as unreadable:
        web = PlayWeb(tmp_path, argv, stdin=unreadable if given == "unreadable" else subprocess.DEVNULL)
        try:
            web.read_until("Ctrl+C stops")
            if given == "unreadable":
                web.read_until("the terminal's input cannot be read (OSError): the table plays on")
            rest, errors = web.interrupt()
        finally:
            web.close()
    assert "Traceback" not in errors and "Traceback" not in rest, errors
    assert "Game stopped. It is saved in" in rest


def test_play_web_serves_prints_the_qr_and_stops_on_ctrl_c_keeping_the_save(tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    web = PlayWeb(tmp_path, ["--humans", "Ana", "--bots", "bold", "--seed", "3", "--save", str(save)])
    port = web.port
    try:
        text = web.read_until("Ctrl+C stops")
        assert f"https://127.0.0.1:{port}/?room=" in text, text
        assert "▀" in text or "█" in text  # the QR code, drawn in the terminal
        assert "tapping only" in text  # no model: said once
        secret = text.split("?room=")[1].split()[0]
        tls = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.crt"))
        with httpx.Client(verify=tls) as client:
            assert client.get(f"https://127.0.0.1:{port}/?room={secret}").status_code == 200
            assert client.get(f"https://127.0.0.1:{port}/board?room={secret}").status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port + 1}/trust").status_code == 200
        # The host's terminal takes the room's lines without the terminal's table too.
        assert "« phone 2 »" in text
        web.type("phone 1")
        said = web.read_until("&seat=1")
        assert "Ana's seat (1) is free for a new phone; the phone that had it can no longer play it. On the new " \
               f"phone, scan this code or open https://127.0.0.1:{port}/?room={secret}&seat=1\n" in said, said
        # The game's answers to the lines typed here are printed here too (they went nowhere).
        web.type("-")
        web.read_until("« - » takes back a false shout or an answer a microphone heard: there is none to take back")
        web.type("+ Zoé")
        web.read_until("Zoé cannot join: no player can join a game under way in ruleset 'classic'")
        rest, errors = web.interrupt()
    finally:
        web.close()
    assert "Traceback" not in errors and "Traceback" not in rest, errors
    assert "Game stopped. It is saved in" in rest
    assert web.process.returncode == 1
    saved = PlaySession.read_save(save)
    assert [p["name"] for p in saved["lineup"]] == ["Ana", "bold-1"]


def test_a_web_game_resumed_at_the_same_address_is_the_same_room_and_its_phones_come_back(tmp_path: Path) -> None:
    """The host's laptop stops mid-game (Ctrl+C, a crash): `--resume` on the same port takes the
    room back from the save, so a phone's page, which keeps reconnecting with its secret and its
    seat's token, gets its seat back by itself; a seat no phone had stays free, a taken one
    stays taken. On another port the phones join again, as the table says."""
    from types import SimpleNamespace

    save = tmp_path / "game.json"
    first = PlayWeb(tmp_path, ["--humans", "Ana", "Bob", "--bots", "bold", "--seed", "3", "--save", str(save)])
    try:
        secret = first.read_until("Ctrl+C stops").split("?room=")[1].split()[0]
        tls = ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.crt"))  # made by the table's start
        at = SimpleNamespace(port=first.port, room=SimpleNamespace(secret=secret))
        ana = Phone(at, tls)  # type: ignore[arg-type]
        ana.send({"type": "claim", "seat": 0})
        token = ana.wait("welcome")["token"]
        first.interrupt()
    finally:
        first.close()
    kept = json.loads(save.read_text(encoding="utf-8"))["web"]
    assert kept["room"] == secret and kept["address"] == f"https://127.0.0.1:{first.port}/?room={secret}"
    # Saved at the game's start (and after each move): the tokens, whether a phone held a seat yet or not.
    assert kept["seats"][0]["token"] == token and kept["seats"][1]["token"] not in (None, token)
    assert kept["seats"][2] is None  # the bot's

    again = PlayWeb(tmp_path, ["--resume", str(save)], port=first.port)
    try:
        said = again.read_until("Ctrl+C stops")
        assert "the saved game's phones come back to their seats by themselves" in said, said
        assert f"?room={secret}" in said
        back = Phone(at, tls, token=token)  # type: ignore[arg-type]
        welcome = back.wait("welcome")  # (its `run` is the new room's: docs/web.md)
        assert {key: welcome[key] for key in ("type", "seat", "token")} == {"type": "welcome", "seat": 0,
                                                                           "token": token}
        table = back.wait("table")
        assert [p["name"] for p in table["players"]] == ["Ana", "Bob", "bold-1"]
        newcomer = Phone(at, tls)  # type: ignore[arg-type]
        assert [s["taken"] for s in newcomer.wait("seats")["seats"]] == [True, False, False]
        again.interrupt()
    finally:
        again.close()

    elsewhere = PlayWeb(tmp_path, ["--resume", str(save)])
    try:
        said = elsewhere.read_until("Ctrl+C stops")
        assert f"the saved game's phones were at https://127.0.0.1:{first.port}/?room={secret}" in said, said
        assert "the phones join it again" in said and f"?room={secret}" not in said.split("this table is at")[1]
        elsewhere.interrupt()
    finally:
        elsewhere.close()


def test_play_web_alone_plays_again_when_the_host_types_it(tmp_path: Path) -> None:
    """--no-screen: after the game's end, `again` typed in the host's terminal plays the next game
    at the same web table (a bot alone at `solo`, so that each game ends at once); saved beside."""
    save = tmp_path / "game.json"
    web = PlayWeb(tmp_path, ["--ruleset", "solo", "--humans", "--bots", "bold", "--seed", "3", "--pace", "0",
                             "--save", str(save)])
    try:
        assert "bold-1 wins" in web.read_until("wins")
        web.read_until("type « again » here for another game with the same players")
        web.type("again")
        assert f"a new game, the same players, saved in {tmp_path / 'game-2.json'}" in web.read_until("a new game")
        web.read_until("wins")
        web.read_until("type « again » here")
        rest, errors = web.interrupt()
    finally:
        web.close()
    assert "Traceback" not in errors and "Traceback" not in rest, errors
    assert web.process.returncode == 0, (rest, errors)
    for path in (save, tmp_path / "game-2.json"):
        assert PlaySession.read_save(path)["lineup"] == [{"name": "bold-1", "bot": "bold"}]


def test_play_web_refuses_a_taken_port_in_one_line(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = dict(os.environ, CDC_WEB_DIR=str(tmp_path / "certs"), PYTHONPATH=str(ROOT), CDC_VOSK_MODEL="")
        done = subprocess.run([sys.executable, str(ROOT / "scripts" / "play.py"), "--web", "--port", str(port),
                               "--host", "127.0.0.1", "--keyboard", "--no-screen", "--bots", "bold"],
                              capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"127.0.0.1:{port}" in done.stdout and "--port" in done.stdout


def load_play() -> Any:
    from doubles import script

    return script("play", "play_script")


def web_beside_the_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ssl.SSLContext]:
    """play.py --web with its Textual table (not yet run), Ana's seat for a phone against bold;
    the server started and its addresses printed, as play.py does; a TLS context trusting it."""
    import io

    from rich.console import Console

    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    monkeypatch.setenv("CDC_VOSK_MODEL", "")
    console = Console(width=200, record=True, file=io.StringIO())
    web = load_play().prepare(["--web", "--port", "0", "--host", "127.0.0.1", "--keyboard", "--humans", "Ana",
                               "--bots", "bold", "--seed", "3", "--pace", "0"], console)
    assert type(web).__name__ == "WebTable" and web.app is not None, console.export_text()
    web.server.start()
    web.announce(console)  # the room knows the addresses from here, as in play.py
    return web, ssl.create_default_context(cafile=str(tmp_path / "certs" / "ca.crt"))


def test_the_terminal_table_and_the_web_table_play_the_same_game(tmp_path: Path, tls: ssl.SSLContext,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """--web beside the Textual table: a phone's choice is played, and both show it."""
    import asyncio

    from voice.table import screen_text

    web, tls = web_beside_the_terminal(tmp_path, monkeypatch)
    # A race waits past its window for a tap made inside it and still on the network.
    assert web.session.tap_delivery_s == TAP_DELIVERY_S > 0

    def phone_plays() -> dict[str, Any]:
        phone = Phone(web.server, tls)
        phone.send({"type": "claim", "seat": 0})
        phone.wait("welcome")
        asked = phone.wait("table", timeout=15, where=lambda t: t["question"] is not None)
        phone.send({"type": "choose", "option": 0})
        return phone.wait("table", timeout=15, where=lambda t: t["turn"] > asked["turn"] or len(t["log"])
                          > len(asked["log"]))

    async def run() -> str:
        async with web.app.run_test(size=(120, 44)) as pilot:
            table = await asyncio.to_thread(phone_plays)
            assert table["dice"]
            await pilot.pause(0.3)
            return screen_text(web.app)

    try:
        screen = asyncio.run(run())
    finally:
        web.server.stop()
    assert "Ana: [" in screen  # the phone's roll, in the terminal's log


def test_the_host_gives_a_lost_phones_seat_to_a_new_one_at_the_terminal(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """`phone 1` typed at the terminal's table: the room's command, not the game's. The log
    says so with the QR code the new phone scans (it reads back as the seat's link); the lost
    phone is told and unseated; the new phone plays on as Ana."""
    import asyncio

    from web_helpers import read_text_qr_codes

    from voice.table import screen_text

    web, tls = web_beside_the_terminal(tmp_path, monkeypatch)
    lost = Phone(web.server, tls)
    lost.send({"type": "claim", "seat": 0})
    lost.wait("welcome")

    async def run() -> tuple[str, str]:
        async with web.app.run_test(size=(120, 60)) as pilot:
            await pilot.pause(0.3)
            for key in "phone 1":
                await pilot.press("space" if key == " " else key)
            await pilot.press("enter")
            await pilot.pause(0.5)
            screen = screen_text(web.app)
            told = await asyncio.to_thread(lost.wait, "error")
            offered = await asyncio.to_thread(lost.wait, "seats")
            assert told["message"] == "the host gave this seat to another phone"
            assert offered["seats"][0] == {"seat": 0, "name": "Ana", "human": True, "taken": False}
            new = Phone(web.server, tls)
            new.send({"type": "claim", "seat": 0, "name": "Léo"})
            welcome = await asyncio.to_thread(new.wait, "welcome")
            table = await asyncio.to_thread(new.wait, "table", 15, lambda t: t["question"] is not None)
            assert welcome["seat"] == 0 and table["players"][0]["name"] == "Ana"
            return screen, table["question"]["text_en"]

    try:
        screen, question = asyncio.run(run())
    finally:
        web.server.stop()
    link = f"https://127.0.0.1:{web.server.port}/?room={web.room.secret}&seat=1"
    assert "Ana's seat (1) is free for a new phone" in screen, screen
    assert read_text_qr_codes(screen) == [link]
    assert "phone 1" not in screen.replace("« phone 2 »", "")  # never the game's line (« … » ignored)
    assert "Ana" in question


def test_a_flood_of_audio_frames_closes_the_connection_but_a_burst_does_not(server: WebServer,
                                                                             tls: ssl.SSLContext) -> None:
    phone = Phone(server, tls)
    phone.send({"type": "claim", "seat": 0})
    phone.wait("welcome")
    phone.send({"type": "audio", "stream": 1, "rate": 16000, "state": "on"})
    silence = np.zeros(1600, np.int16)
    for i in range(40):  # 4 s of audio kept by a stalled page, sent at once
        phone.ws.send(audio_frame(i * 1600, 10.0 * i, silence))
    phone.send({"type": "ping", "id": 1, "t1": 1.0})
    assert phone.wait("pong")["id"] == 1
    with contextlib.suppress(ConnectionClosed):  # the server may close before the last ones are sent
        for i in range(40, 100):
            phone.ws.send(audio_frame(i * 1600, 10.0 * i, silence))
    assert phone.closed()
    assert phone.ws.close_code == 1008


def test_play_web_resume_with_another_lineup_is_one_clear_error(tmp_path: Path) -> None:
    save = tmp_path / "game.json"
    state = PlaySession(load_ruleset("classic"), [SeatPlayer("Ana"), SeatPlayer("Bob")], view=new_room().view,
                        keyboard=new_room().keys, seed=1)
    state.save_path = save
    state.save()
    env = dict(os.environ, CDC_WEB_DIR=str(tmp_path / "certs"), PYTHONPATH=str(ROOT), CDC_VOSK_MODEL="")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "play.py"), "--web", "--port", "0",
                           "--host", "127.0.0.1", "--keyboard", "--no-screen", "--resume", str(save),
                           "--humans", "Ana", "--bots", "bold"], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "cannot resume" in done.stdout


def test_a_korean_clip_streamed_over_the_socket_is_heard_at_its_onset_on_the_host_clock(
        certificates: Certificates, tls: ssl.SSLContext) -> None:
    """The whole chain over the network: clock samples, binary frames stamped on the phone's
    clock (7 s behind the host's), the phone's PhoneClock, its Recogniser (the Korean test
    model): the Heard comes back for the phone's seat with the onset where the speech began."""
    import ctypes

    from voice.audio import RATE, sound_span, synthesise, to_pcm16
    from voice.lexicon import load_lexicon
    from voice.model import load_model, packaged_model_path
    from voice.recogniser import Recogniser

    model = load_model(packaged_model_path())
    lexicon = load_lexicon(ROOT / "tests" / "voice" / "data" / "ko.yaml")
    speech = synthesise(lexicon.intents["pas_mou_le_caillou"][0], "ko", 175, 50)
    span = sound_span(speech)
    assert span is not None
    lead = round(0.8 * RATE)
    samples = to_pcm16(np.concatenate([np.zeros(lead), speech[span[0]:span[1]], np.zeros(RATE)]))
    room = Room([SeatPlayer("Ana"), SeatPlayer("Bob")], chirp=lambda: np.zeros(800, np.float32),
                play=lambda samples, rate: None,
                make_recogniser=lambda clock: Recogniser(model, lexicon, intents=[], clock=clock))
    assert room.listener is not None
    room.listener.listen_for({"pas_mou_le_caillou", "non"})
    offset_ms = 7_000.0
    with serving(room, certificates) as server:
        phone = Phone(server, tls)
        phone.send({"type": "claim", "seat": 1})
        phone.wait("welcome")
        for i in range(5):
            phone.send({"type": "ping", "id": i, "t1": time.monotonic() * 1000 - offset_ms})
            pong = phone.wait("pong")
            phone.send({"type": "clock", "t1": pong["t1"], "t2": pong["t2"], "t3": pong["t3"],
                        "t4": time.monotonic() * 1000 - offset_ms})
        phone.send({"type": "audio", "stream": 1, "rate": 16000, "state": "on"})
        t0 = time.monotonic()  # the host time of the stream's sample 0
        ctypes.CDLL(None).srand(1)  # Kaldi's dither (see tests/voice/conftest.py)
        for first in range(0, len(samples), 1600):
            chunk = samples[first:first + 1600]
            stamp = (t0 + (first + len(chunk)) / RATE) * 1000 - offset_ms  # its last sample's phone time
            phone.ws.send(audio_frame(first, stamp, chunk))
            time.sleep(0.03)  # faster than real time, under the flood limit
        phone.send({"type": "audio", "stream": 1, "rate": 16000, "state": "off"})
        heard: list[Any] = []
        deadline = time.monotonic() + 30
        while not heard and time.monotonic() < deadline:
            heard = room.listener.poll()
            time.sleep(0.05)
    assert [(h.seat, h.intent) for h in heard] == [(1, "pas_mou_le_caillou")]
    assert heard[0].onset == pytest.approx(t0 + lead / RATE, abs=0.06)


def test_a_port_taken_and_an_address_not_this_machines_get_each_their_own_fix() -> None:
    import socket

    from voice.web.server import bind

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="another program holds that port: choose another --port"):
            bind("127.0.0.1", taken.getsockname()[1])
    with pytest.raises(OSError, match="give --host one of this machine's addresses"):
        bind("999.1.1.1", 0)
    with pytest.raises(OSError) as long:
        bind("a" * 5000, 0)
    assert str(long.value).startswith(f"cannot listen on {'a' * 60}… (5000 characters):0: ")


def test_a_damaged_certificate_authority_gets_one_clear_error_and_is_not_replaced(tmp_path: Path) -> None:
    ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    cert, key = (tmp_path / "ca.crt").read_bytes(), (tmp_path / "ca.key").read_bytes()
    for damage in ("ca.crt", "ca.key", "mismatch"):
        if damage == "mismatch":  # another table's key beside this CA
            other = ensure_certificates(tmp_path / "other", addresses=["10.0.0.7"])
            (tmp_path / "ca.key").write_bytes((other.directory / "ca.key").read_bytes())
        else:
            (tmp_path / damage).write_text("garbage")
        kept = {name: (tmp_path / name).read_bytes() for name in ("ca.crt", "ca.key")}
        with pytest.raises(OSError, match="move that folder aside") as raised:
            ensure_certificates(tmp_path, addresses=["192.168.1.20"])
        assert str(tmp_path) in str(raised.value) and "Traceback" not in str(raised.value)
        assert {name: (tmp_path / name).read_bytes() for name in kept} == kept  # nothing replaced
        (tmp_path / "ca.crt").write_bytes(cert)
        (tmp_path / "ca.key").write_bytes(key)
    assert ensure_certificates(tmp_path, addresses=["192.168.1.20"]).ca_cert.read_bytes() == cert


def test_half_a_certificate_authority_is_never_made_again_on_its_own(tmp_path: Path) -> None:
    # ca.key gone: a new CA was made without a word, every phone had to trust again, and the kept
    # server certificate (its issuer of the same name) was signed by the old one: refused.
    ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    cert = (tmp_path / "ca.crt").read_bytes()
    (tmp_path / "ca.key").unlink()
    with pytest.raises(OSError, match="has ca.crt alone, without ca.key; put it back, or move that folder aside"):
        ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    assert (tmp_path / "ca.crt").read_bytes() == cert and not (tmp_path / "ca.key").exists()


def test_a_server_certificate_that_does_not_fit_its_key_or_its_ca_is_made_again(tmp_path: Path) -> None:
    # A reissue cut short (its new key written, the old certificate kept): the table did not
    # start (KEY_VALUES_MISMATCH) until the addresses changed. One of another CA: phones refused it.
    first = ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    other = ensure_certificates(tmp_path / "other", addresses=["192.168.1.20"])
    (tmp_path / "server.key").write_bytes((other.directory / "server.key").read_bytes())
    again = ensure_certificates(tmp_path, addresses=["192.168.1.20"])
    assert again.issued
    ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(again.server_cert, again.server_key)
    (tmp_path / "server.crt").write_bytes((other.directory / "server.crt").read_bytes())
    (tmp_path / "server.key").write_bytes((other.directory / "server.key").read_bytes())
    assert ensure_certificates(tmp_path, addresses=["192.168.1.20"]).issued  # signed by another CA
    assert first.ca_cert.read_bytes() == again.ca_cert.read_bytes()
    assert (first.server_key.stat().st_mode & 0o077) == 0 and (first.directory / "ca.key").stat().st_mode & 0o077 == 0


def test_the_address_play_web_shows_is_in_the_certificate_and_a_long_host_name_is_no_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --host 10.8.0.2 (an address the LAN probe missed, behind a VPN): phones were shown it and
    # refused its certificate. A 60-character host name raised (a common name is 64 at most).
    made = ensure_certificates(tmp_path, addresses=["192.168.1.20"], also=["10.8.0.2"])
    assert "10.8.0.2" in made.names
    monkeypatch.setattr("voice.web.certs.socket.gethostname", lambda: "h" * 60)
    assert ensure_certificates(tmp_path / "long", addresses=["192.168.1.20"]).issued


@pytest.mark.parametrize("where", ["file", "inside a file"])
def test_a_certificate_folder_that_cannot_be_made_is_one_clear_error(tmp_path: Path, where: str,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # XDG_CONFIG_HOME naming a file: a NotADirectoryError with no word of what to do.
    (tmp_path / "config").write_text("mine")
    monkeypatch.delenv("CDC_WEB_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config") if where == "inside a file" else str(tmp_path))
    if where == "file":
        (tmp_path / "cdc").write_text("mine too")
    with pytest.raises(OSError, match="^the web table's certificates cannot be kept in .*cdc/web "
                                      r"\(Not a directory\); set CDC_WEB_DIR to a folder of your own$"):
        ensure_certificates(addresses=["192.168.1.20"])
    assert (tmp_path / "config").read_text() == "mine"


def test_the_phones_are_shown_a_home_networks_address_before_a_vpns_and_told_the_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Sorted as strings, 10.8.0.2 (a VPN's) came before 192.168.1.20 (the Wi-Fi the phones are
    # on): the QR code sent every phone to an address it could not reach, with no other named.
    from voice.web import certs

    found = ["10.8.0.2", "100.101.1.7", "169.254.3.3", "172.20.0.5", "192.168.1.20", "84.12.0.9"]
    assert certs.by_rank([*found, "192.168.1.3"]) == [
        "192.168.1.3", "192.168.1.20", "172.20.0.5", "10.8.0.2", "100.101.1.7", "84.12.0.9", "169.254.3.3"]
    monkeypatch.setattr(certs, "lan_addresses", lambda: ["10.8.0.2", "192.168.1.20"])
    import io

    from rich.console import Console

    monkeypatch.setenv("CDC_WEB_DIR", str(tmp_path / "certs"))
    monkeypatch.setenv("CDC_VOSK_MODEL", "")
    console = Console(width=200, record=True, file=io.StringIO())
    web = load_play().prepare(["--web", "--port", "0", "--keyboard", "--humans", "Ana", "--bots", "bold",
                               "--seed", "3", "--pace", "0"], console)
    assert type(web).__name__ == "WebTable", console.export_text()
    try:
        assert web.shown_host == "192.168.1.20"
        assert web.server.certificates.lan == ["192.168.1.20", "10.8.0.2"]
        web.server.start()
        web.announce(console)
    finally:
        web.server.stop()
    shown = console.export_text()
    assert f"phones: https://192.168.1.20:{web.server.port}/?room=" in shown
    assert "this machine's other addresses: 10.8.0.2 (phones that cannot open the one above: --host ADDRESS)" in shown
