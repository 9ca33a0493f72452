"""The web table's certificate folder (whose files are the table's, what a damaged one says), and
what the server writes on the host's terminal (nothing a client sends, nothing at Ctrl+C)."""

from __future__ import annotations

import base64
import gc
import io
import json
import logging
import os
import socket
import ssl
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from doubles import FixedBot, script

from voice.session import SeatPlayer
from voice.web.certs import CertificateError, ensure_certificates, web_dir
from voice.web.room import Room
from voice.web.server import WebServer, serving

ADDRESSES = ["192.168.1.20"]


def new_room() -> Room:
    players = [SeatPlayer("Ana"), SeatPlayer("bold-1", FixedBot(900), "bold")]
    return Room(players, chirp=lambda: np.zeros(800, np.float32), play=lambda samples, rate: None)


def files_of(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def refusal(folder: Path) -> str:
    """What ensure_certificates says when it refuses `folder`, after checking that it left every
    file there as it was (no CA made, nothing written over)."""
    before = files_of(folder)
    with pytest.raises(CertificateError) as refused:
        ensure_certificates(folder, addresses=ADDRESSES)
    assert files_of(folder) == before
    return str(refused.value)


# ---------------------------------------------------------------- the certificate folder


@pytest.mark.parametrize("theirs", [("server.crt", "server.key", "server.json"), ("server.key",), ("server.json",)])
def test_a_folder_of_someone_elses_server_files_is_refused_and_left_as_it_is(tmp_path: Path,
                                                                              theirs: tuple[str, ...]) -> None:
    # CDC_WEB_DIR naming the folder of the user's own certificate: a new CA was made and the
    # user's server.key and server.crt silently written over.
    for name in theirs:
        (tmp_path / name).write_text(f"the user's own {name}")
    assert refusal(tmp_path) == (f"{tmp_path} holds {', '.join(theirs)} but no certificate authority of the table "
                                 "(ca.crt, ca.key): they are not the table's and are left as they are; set CDC_WEB_DIR "
                                 "to an empty folder, or to the one the table made")


def test_the_tables_own_folder_and_an_empty_one_are_used_as_before(tmp_path: Path) -> None:
    made = ensure_certificates(tmp_path / "empty", addresses=ADDRESSES)
    assert made.issued and (tmp_path / "empty" / "ca.crt").is_file()
    kept = files_of(made.directory)
    assert not ensure_certificates(made.directory, addresses=ADDRESSES).issued  # the table's own: kept
    assert files_of(made.directory) == kept
    assert ensure_certificates(made.directory, addresses=["10.0.0.7"]).issued  # and re-issued when the LAN changes


def test_a_leading_tilde_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # CDC_WEB_DIR='~/cdc-web' (quoted, so no shell expanded it) made a folder named ~ here.
    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    monkeypatch.setenv("CDC_WEB_DIR", "~/cdc-web")
    assert web_dir() == home / "cdc-web"
    made = ensure_certificates(addresses=ADDRESSES)
    assert made.directory == home / "cdc-web" and (home / "cdc-web" / "ca.crt").is_file()
    assert list(here.iterdir()) == []
    assert web_dir("~/given") == home / "given"
    monkeypatch.delenv("CDC_WEB_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", "~/cfg")
    assert web_dir() == home / "cfg" / "cdc" / "web"


@pytest.mark.parametrize("kept", ['{"names": null}', '{"names": 5}', '{"names": [1, "a"]}', '{"names": [[1]]}',
                                  '{"names": {"a": 1}}', '{"names": "192.168.1.20"}', "5", '[1, "a"]'])
def test_a_server_json_that_is_no_list_of_names_gets_the_certificate_issued_again(tmp_path: Path,
                                                                                    kept: str) -> None:
    # Its wrong types raised a TypeError traceback out of play.py --web.
    ensure_certificates(tmp_path, addresses=ADDRESSES)
    (tmp_path / "server.json").write_text(kept)
    again = ensure_certificates(tmp_path, addresses=ADDRESSES)
    assert again.issued
    assert sorted(json.loads((tmp_path / "server.json").read_text())["names"]) == sorted(again.names)


def _damaged_ca(folder: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    key = serialization.load_pem_private_key((folder / "ca.key").read_bytes(), password=None)
    if damage == "passphrase":
        (folder / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                          serialization.PrivateFormat.PKCS8,
                                                          serialization.BestAvailableEncryption(b"secret")))
    elif damage == "rsa":
        other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (folder / "ca.key").write_bytes(other.private_bytes(serialization.Encoding.PEM,
                                                            serialization.PrivateFormat.PKCS8,
                                                            serialization.NoEncryption()))
    elif damage == "unsupported":  # a key of a curve this build of cryptography does not have
        def unsupported(*args: Any, **kwargs: Any) -> Any:
            raise UnsupportedAlgorithm("Curve 1.3.132.0.6 is not supported by this backend. Read more.")
        monkeypatch.setattr(serialization, "load_pem_private_key", unsupported)
    else:
        (folder / "ca.crt").write_text("garbage")


@pytest.mark.parametrize(("damage", "why"), [
    ("passphrase", "ca.key is protected by a passphrase, which the table cannot give"),
    ("unsupported", "ca.key is of a kind the table cannot use (Curve 1.3.132.0.6 is not supported by this backend)"),
    # Cut at the first dot, the reason was the folder's path up to "ca" of "ca.key".
    ("rsa", "ca.key is not an elliptic-curve key"),
    ("garbage", "Unable to load PEM file"),
])
def test_a_certificate_authority_that_cannot_be_used_says_why_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str, why: str) -> None:
    folder = tmp_path / "some.folder"  # a dot in the path too
    ensure_certificates(folder, addresses=ADDRESSES)
    _damaged_ca(folder, damage, monkeypatch)
    assert refusal(folder) == (f"the table's certificate authority in {folder} cannot be read ({why}); move "
                               "that folder aside and start again: a new one is made, and each phone trusts it "
                               "once (the /trust page)")


# ---------------------------------------------------------------- play.py: the save's address, the QR code


def test_a_saved_web_address_that_is_no_address_is_said_in_one_line(tmp_path: Path) -> None:
    # urlsplit's ValueError on "https://[bad/" ended play.py --resume in a traceback.
    play = script("play", "play_script")

    class NoRoom:
        def restore(self, kept: Any) -> str | None:
            raise AssertionError("a room taken back from an address that is none")

    said = play.take_back_room(NoRoom(), {"address": "https://[bad/?room=x"}, "https://127.0.0.1:8443/?room=y")
    assert said == ("the saved game's phones were at an address the save does not say; this table is at "
                    "https://127.0.0.1:8443/?room=y: the phones join it again (give the same --port and --host for "
                    "them to come back by themselves)")


@pytest.mark.parametrize("encoding", ["cp1252", "ascii", "utf-8"])
def test_the_qr_code_is_printed_only_where_the_terminal_can_draw_it(monkeypatch: pytest.MonkeyPatch,
                                                                     encoding: str) -> None:
    # PYTHONIOENCODING=cp1252 (a Windows console): segno's block characters raised UnicodeEncodeError.
    from rich.console import Console

    play = script("play", "play_script")
    out = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
    monkeypatch.setattr(sys, "stdout", out)
    server = SimpleNamespace(port=8443, trust_port=8444, room=SimpleNamespace(secret="s3cret"),
                             certificates=SimpleNamespace(lan=["192.168.1.20"]))
    console = Console(width=200, record=True, file=io.StringIO())
    play.WebTable.announce(SimpleNamespace(server=server, shown_host="192.168.1.20"), console)
    out.flush()
    printed, shown = out.buffer.getvalue().decode(encoding), console.export_text()
    assert "phones: https://192.168.1.20:8443/?room=s3cret" in shown
    if encoding == "utf-8":
        assert "█" in printed and "no QR code" not in shown
    else:
        assert printed == ""
        assert (f"no QR code: this terminal's encoding ({encoding}) cannot draw it; the phones' address above is "
                "the way in, typed into each phone's browser") in shown


def test_a_new_phones_code_is_drawn_only_where_the_terminal_can(monkeypatch: pytest.MonkeyPatch) -> None:
    # « phone 2 » at a --no-screen table printed the code's blocks through rich: on a cp1252
    # terminal a UnicodeEncodeError, the line lost.
    from rich.console import Console

    play = script("play", "play_script")
    link = "https://192.168.1.20:8443/?room=s3cret&token=t"
    room = SimpleNamespace(host_command=lambda line: SimpleNamespace(text=f"seat 2 to a new phone: open {link}",
                                                                    link=link))
    out = io.TextIOWrapper(io.BytesIO(), encoding="cp1252")
    Console(file=out, width=120).print(play.host_line(room, "phone 2", draw=play.can_draw_blocks(out)))
    out.flush()
    shown = out.buffer.getvalue().decode("cp1252")
    assert link in shown and "no QR code: this terminal cannot draw it" in shown
    drawn = Console(width=120, record=True, file=io.StringIO())
    drawn.print(play.host_line(room, "phone 2"))
    assert "█" in drawn.export_text() or "▀" in drawn.export_text()


# ---------------------------------------------------------------- what the server writes on the terminal


def test_garbage_to_the_trust_port_writes_nothing_on_the_terminal(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    # uvicorn's "WARNING:  Invalid HTTP request received." landed in the middle of the terminal's table.
    certificates = ensure_certificates(tmp_path, addresses=ADDRESSES)
    with serving(new_room(), certificates) as server:
        with socket.create_connection(("127.0.0.1", server.trust_port), timeout=5) as garbage:
            garbage.sendall(b"GARBAGE\x00 / HTTP/9.9\r\n\x00\x01\r\n\r\n")
            assert garbage.recv(100).startswith(b"HTTP/1.1 400")
        time.sleep(0.2)
    assert capfd.readouterr().err == ""
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


def test_a_text_frame_of_bad_utf8_is_one_line_with_no_traceback(tmp_path: Path, capfd: pytest.CaptureFixture[str],
                                                                caplog: pytest.LogCaptureFixture) -> None:
    # uvicorn wrote its UnicodeDecodeError's whole traceback on the host's terminal.
    certificates = ensure_certificates(tmp_path, addresses=ADDRESSES)
    tls = ssl.create_default_context(cafile=str(certificates.ca_cert))
    with serving(new_room(), certificates) as server:
        with tls.wrap_socket(socket.create_connection(("127.0.0.1", server.port), timeout=5),
                             server_hostname="127.0.0.1") as sock:
            key = base64.b64encode(os.urandom(16)).decode()
            sock.sendall(f"GET /ws?room={server.room.secret} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                         f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
                         .encode())
            assert sock.recv(4096).startswith(b"HTTP/1.1 101")
            bad = b'{"type":"ping","id":1,"t1":\xff}'
            sock.sendall(bytes([0x81, 0x80 | len(bad)]) + b"\0\0\0\0" + bad)  # a masked text frame
            with pytest.raises(OSError):  # the server closes it (1007), or resets it
                while sock.recv(4096):
                    pass
                raise ConnectionResetError
        time.sleep(0.2)
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Invalid UTF-8" not in err, err
    lines = [r for r in caplog.records if r.name == "voice.web.server" and r.levelno >= logging.ERROR]
    assert [r.getMessage() for r in lines] == [
        "the web server: Invalid UTF-8 sequence received from client. (UnicodeDecodeError: 'utf-8' codec can't "
        "decode byte 0xff in position 27: invalid start byte)"]
    assert all(r.exc_info is None for r in caplog.records if r.levelno >= logging.ERROR)


def test_stopping_with_a_client_in_its_tls_handshake_leaves_nothing_pending(
        tmp_path: Path, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    # Ctrl+C then: "Task was destroyed but it is pending!" on the terminal.
    certificates = ensure_certificates(tmp_path, addresses=ADDRESSES)
    server = WebServer(new_room(), certificates, "127.0.0.1", 0).start()
    with socket.create_connection(("127.0.0.1", server.port), timeout=5) as raw:
        raw.sendall(b"\x16\x03")  # the start of a TLS record, and no more
        time.sleep(0.3)  # accepted, its handshake waiting
        server.stop()
        gc.collect()
    assert not server._thread.is_alive()
    said = capfd.readouterr().err + caplog.text
    assert "Task was destroyed" not in said and "pending" not in said, said


def test_ctrl_c_that_comes_out_as_a_locks_error_is_a_stop_not_an_error(tmp_path: Path) -> None:
    # Under load, Ctrl+C in a lock's wait came out as RuntimeError('release unlocked lock') (its
    # context the KeyboardInterrupt), and --no-screen said "the game stopped on an error".
    from rich.console import Console

    play = script("play", "play_script")

    def interrupted(session: Any, console: Any) -> int:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise RuntimeError("release unlocked lock")  # noqa: B904 - its context is the interrupt, as in threading

    stopped: list[str] = []
    table = SimpleNamespace(
        session=SimpleNamespace(save=lambda: None, save_path=None), app=None, listener=None,
        server=SimpleNamespace(start=lambda: None, stop=lambda: stopped.append("stop")),
        announce=lambda console: None, _run_alone=interrupted)
    console = Console(record=True, file=io.StringIO(), width=200)
    assert play.WebTable.run(table, console) == 1
    assert "Game stopped." in console.export_text() and "error" not in console.export_text()
    assert stopped == ["stop"]

    def broken(session: Any, console: Any) -> int:
        raise RuntimeError("a bug of ours")

    table._run_alone = broken
    console = Console(record=True, file=io.StringIO(), width=200)
    assert play.WebTable.run(table, console) == 1
    assert "the game stopped on an error: RuntimeError('a bug of ours')" in console.export_text()


def test_a_folder_of_someone_elses_certificate_authority_is_refused_and_left_as_it_is(tmp_path: Path) -> None:
    # The user's own CA, an elliptic-curve one as the table makes: the table took it for its own,
    # signed with it, and wrote its server files over the user's.
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Ana's home lab"),
                      x509.NameAttribute(NameOID.COMMON_NAME, "Ana's CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (tmp_path / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    (tmp_path / "server.crt").write_text("Ana's own server certificate")
    assert refusal(tmp_path) == (f"the certificate authority in {tmp_path} is not one the table made "
                                 "(CN=Ana's CA,O=Ana's home lab): it and its folder are left as they are; set "
                                 "CDC_WEB_DIR to an empty folder, or to the one the table made")
