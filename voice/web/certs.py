"""The web table's certificates: a local certificate authority and a server certificate for
this machine's LAN addresses, made with `cryptography` on first run and kept in the user's
config folder.

Phones allow the microphone only on a secure page, and a LAN address has no public
certificate; so the host is its own CA. A phone trusts that CA once (the `/trust` page), and
every later server certificate, re-issued whenever the LAN addresses change, is trusted with it.
Nothing here sends a packet: the LAN addresses are read from the system.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import plistlib
import re
import socket
import uuid
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from cdc_env.cli import parse_json, short_path, write_atomic

CA_DAYS = 3650
# iOS refuses TLS server certificates valid for more than 825 days.
SERVER_DAYS = 800


def web_dir(explicit: str | Path | None = None) -> Path:
    """Where the certificates live: the argument, `CDC_WEB_DIR`, or the user's config folder.
    A leading ~ is the home folder: a shell leaves it as it is in `CDC_WEB_DIR='~/cdc-web'`, and
    a folder named ~ was made in the current one."""
    if explicit:
        return Path(explicit).expanduser()
    if os.environ.get("CDC_WEB_DIR"):
        return Path(os.environ["CDC_WEB_DIR"]).expanduser()
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config).expanduser() / "cdc" / "web"


def lan_addresses() -> list[str]:
    """This machine's IPv4 LAN addresses, loopback left out (in no order: `by_rank`). Connecting a UDP socket only picks
    the route (no packet is sent); the host name's own addresses add the other interfaces."""
    found: list[str] = []
    for probe in ("10.255.255.255", "192.168.255.255", "172.31.255.255"):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
                udp.connect((probe, 9))
                found.append(udp.getsockname()[0])
        except OSError:
            continue
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET):
            found.append(str(info[4][0]))
    except OSError:
        pass
    usable = [a for a in dict.fromkeys(found)
              if not ipaddress.ip_address(a).is_loopback and not ipaddress.ip_address(a).is_unspecified]
    return usable


# The address shown to the phones is the first: a home or café Wi-Fi's range before the others.
# A VPN's address (often in 10/8, or 100.64/10 for Tailscale) first would send every phone to an
# address it cannot reach.
_LAN_RANKS = [ipaddress.ip_network(n) for n in ("192.168.0.0/16", "172.16.0.0/12", "10.0.0.0/8", "100.64.0.0/10")]
_LINK_LOCAL = ipaddress.ip_network("169.254.0.0/16")  # no DHCP answered: last


def lan_rank(address: str) -> int:
    """How likely the phones at the table reach `address`: 0 (a home network's range) first."""
    ip = ipaddress.ip_address(address)
    if ip in _LINK_LOCAL:
        return len(_LAN_RANKS) + 1
    return next((rank for rank, net in enumerate(_LAN_RANKS) if ip in net), len(_LAN_RANKS))


def by_rank(addresses: list[str]) -> list[str]:
    """`addresses` in the order to show them to the phones (`lan_rank`, then by number); a name
    that is no address last, as given."""
    def key(name: str) -> tuple[int, int]:
        return (lan_rank(name), int(ipaddress.ip_address(name))) if _is_address(name) else (len(_LAN_RANKS) + 2, 0)
    return sorted(addresses, key=key)


@dataclass(frozen=True)
class Certificates:
    directory: Path
    ca_cert: Path
    server_cert: Path
    server_key: Path
    names: tuple[str, ...]  # the server certificate's subject alternative names
    issued: bool  # the server certificate was (re-)made on this run

    @property
    def lan(self) -> list[str]:
        """The LAN addresses it names, the one to show the phones first (`lan_addresses`' order;
        an address given with `also`, play.py's --host, before them)."""
        return [n for n in self.names if _is_address(n) and not ipaddress.ip_address(n).is_loopback]


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    # write_atomic: whole or not at all, and (private) its temporary file is the user's alone from
    # the start (mkstemp's 0600), so a key is never readable by others, not even for a moment.
    write_atomic(path, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()), private=True)


def _load_key(path: Path) -> ec.EllipticCurvePrivateKey:
    """The key in `path`; ValueError (its reason in one sentence) for any key the table cannot use."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except TypeError:  # cryptography's word for a key that needs a password
        raise ValueError(f"{path.name} is protected by a passphrase, which the table cannot give") from None
    except UnsupportedAlgorithm as error:
        raise ValueError(f"{path.name} is of a kind the table cannot use ({_reason(error)})") from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError(f"{path.name} is not an elliptic-curve key")
    return key


def _reason(error: Exception) -> str:
    """An error's reason, its first sentence: cryptography adds advice and links after it. Cut at
    a full stop that ends a sentence (a dot before a space or the end), never at the dot of a
    file name (ca.key) or a version number."""
    line = next((part.strip() for part in str(error).splitlines() if part.strip()), type(error).__name__)
    return re.split(r"\.(?:\s|$)", line, maxsplit=1)[0]


ORGANIZATION = "cdc (Cul de Chouette table)"  # in every certificate the table makes: how it knows its own CA


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, ORGANIZATION),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _make_ca(directory: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    # A common name holds 64 characters at most (a long host name raised, a traceback).
    name = _name(f"cdc local CA ({socket.gethostname()[:48]})")
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                         content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False,
                                         encipher_only=False, decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    _write_key(directory / "ca.key", key)
    write_atomic(directory / "ca.crt", cert.public_bytes(serialization.Encoding.PEM), private=True)


def _a_label(name: str) -> str | None:
    """A host name as a certificate names it: ASCII, « tablé.local » as its IDNA A-label
    (x509 refused the Unicode name with a traceback); None for one no DNS name can be (an empty
    label, one too long): left out of the certificate, where no browser could ask for it."""
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return None


def _make_server(directory: Path, names: tuple[str, ...]) -> None:
    ca_key = _load_key(directory / "ca.key")
    ca_cert = x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes())
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    alt: list[x509.GeneralName] = []
    for name in names:
        try:
            alt.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            label = _a_label(name)
            if label is not None:
                alt.append(x509.DNSName(label))
    ends = min(now + datetime.timedelta(days=SERVER_DAYS), ca_cert.not_valid_after_utc)  # not past its CA
    cert = (x509.CertificateBuilder().subject_name(_name(names[0][:64])).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(ends)
            .add_extension(x509.SubjectAlternativeName(alt), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                           critical=False)
            .sign(ca_key, hashes.SHA256()))
    # The names last: a reissue cut short leaves no record that the key and the certificate fit.
    (directory / "server.json").unlink(missing_ok=True)
    _write_key(directory / "server.key", key)
    write_atomic(directory / "server.crt", cert.public_bytes(serialization.Encoding.PEM), private=True)
    write_atomic(directory / "server.json", json.dumps({"names": list(names)}).encode(), private=True)


def _kept_names(kept: object) -> list[str] | None:
    """server.json's names, None unless it holds a list of strings (a file edited by hand, or
    damaged: the certificate is issued again)."""
    names = kept.get("names") if isinstance(kept, dict) else None
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        return None
    return names


def _server_current(directory: Path, names: tuple[str, ...]) -> bool:
    """The kept server certificate names these addresses, is signed by the kept CA and has a
    month left."""
    try:
        kept = _kept_names(parse_json((directory / "server.json").read_text(encoding="utf-8")))
        cert = x509.load_pem_x509_certificate((directory / "server.crt").read_bytes())
        ca_cert = x509.load_pem_x509_certificate((directory / "ca.crt").read_bytes())
        key = _load_key(directory / "server.key")
        # Signed by this very CA (every CA of this host has the same name), with this key.
        cert.verify_directly_issued_by(ca_cert)
        if cert.public_key() != key.public_key():
            return False
    except (OSError, ValueError, TypeError, InvalidSignature, UnsupportedAlgorithm):
        return False
    left = cert.not_valid_after_utc - datetime.datetime.now(datetime.timezone.utc)
    return kept is not None and sorted(kept) == sorted(names) and left > datetime.timedelta(days=30)


PROFILE_NAME = "Table de Cul de Chouette (cdc)"
# uuid5's namespace for the profiles' UUIDs (any fixed UUID: it only keeps them apart from others').
PROFILE_NAMESPACE = uuid.UUID("6f0d3c2a-5b1e-4c8e-9a57-2f3c6d1e0b84")


def ca_profile(ca_pem: bytes) -> bytes:
    """An iOS configuration profile (a `.mobileconfig` plist, unsigned) holding the CA as one
    `com.apple.security.root` payload. Its identifiers and UUIDs come from the CA's fingerprint:
    installing the same CA again replaces its profile, and another table's CA (another laptop)
    gets a profile of its own instead of replacing this one."""
    cert = x509.load_pem_x509_certificate(ca_pem)
    fingerprint = cert.fingerprint(hashes.SHA256()).hex()
    identifier = f"cdc.table.ca.{fingerprint[:16]}"
    payload = {
        "PayloadType": "com.apple.security.root",
        "PayloadVersion": 1,
        "PayloadIdentifier": f"{identifier}.root",
        "PayloadUUID": str(uuid.uuid5(PROFILE_NAMESPACE, f"{fingerprint}/root")).upper(),
        "PayloadDisplayName": "cdc local CA",
        "PayloadCertificateFileName": "cdc-ca.cer",
        "PayloadContent": cert.public_bytes(serialization.Encoding.DER),
    }
    profile = {
        "PayloadType": "Configuration",
        "PayloadVersion": 1,
        "PayloadIdentifier": identifier,
        "PayloadUUID": str(uuid.uuid5(PROFILE_NAMESPACE, f"{fingerprint}/profile")).upper(),
        "PayloadDisplayName": PROFILE_NAME,
        "PayloadDescription": "Le certificat de la table, pour le micro du téléphone (https). / "
                              "The table's certificate, for the phone's microphone (https).",
        "PayloadOrganization": "cdc (Cul de Chouette table)",
        "PayloadRemovalDisallowed": False,
        "PayloadContent": [payload],
    }
    return plistlib.dumps(profile, fmt=plistlib.FMT_XML, sort_keys=True)


# What to do with a CA that cannot be used (it is never replaced on its own).
ANOTHER_CA = ("move that folder aside and start again: a new one is made, and each phone trusts it once "
              "(the /trust page)")


class CertificateError(OSError):
    """The kept certificate authority cannot be used; the message says what to do."""


def _check_ca(folder: Path) -> None:
    """The kept CA, readable and whole, or one clear error. It is never made again on its own:
    every phone that trusted it would have to trust the new one."""
    try:
        cert = x509.load_pem_x509_certificate((folder / "ca.crt").read_bytes())
        key = _load_key(folder / "ca.key")
        public = cert.public_key()  # a key type cryptography does not know raises here
    except (OSError, ValueError, UnsupportedAlgorithm) as error:
        why = error.strerror if isinstance(error, OSError) and error.strerror else _reason(error)
        raise CertificateError(f"the table's certificate authority in {folder} cannot be read ({why}); "
                               f"{ANOTHER_CA}") from None
    if public != key.public_key():
        raise CertificateError(f"{folder / 'ca.crt'} and {folder / 'ca.key'} do not belong together; {ANOTHER_CA}")
    organizations = [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)]
    if organizations != [ORGANIZATION]:
        # The user's own CA (of the same kind of key): the table signed its server files with it
        # and wrote them over whatever server.crt and server.key the folder held.
        raise CertificateError(f"the certificate authority in {short_path(folder)} is not one the table made "
                               f"({cert.subject.rfc4514_string()}): it and its folder are left as they are; set "
                               "CDC_WEB_DIR to an empty folder, or to the one the table made")
    if cert.not_valid_after_utc < datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=30):
        raise CertificateError(f"the table's certificate authority in {folder} ends on "
                               f"{cert.not_valid_after_utc:%Y-%m-%d} (made for {CA_DAYS // 365} years); {ANOTHER_CA}")


# The table's server files: made only beside its own CA, so without one they are someone else's.
SERVER_FILES = ("server.crt", "server.key", "server.json")


def _not_the_tables(folder: Path) -> CertificateError | None:
    """A folder with no CA of the table but server files (the user's own certificate, another
    program's): the table would make a CA and write its own server files over them."""
    found = [name for name in SERVER_FILES if (folder / name).exists() or (folder / name).is_symlink()]
    if not found:
        return None
    return CertificateError(f"{short_path(folder)} holds {', '.join(found)} but no certificate authority of the "
                            "table (ca.crt, ca.key): they are not the table's and are left as they are; set "
                            "CDC_WEB_DIR to an empty folder, or to the one the table made")


def _unwritable(folder: Path, error: OSError) -> CertificateError:
    return CertificateError(f"the web table's certificates cannot be kept in {short_path(folder)} "
                            f"({error.strerror or error}); set CDC_WEB_DIR to a folder of your own")


def ensure_certificates(directory: str | Path | None = None, addresses: list[str] | None = None,
                        also: list[str] | None = None) -> Certificates:
    """The CA (made once) and a server certificate for 127.0.0.1, localhost, the host name and
    the LAN addresses (re-issued when they change). `also`: more names (play.py's --host: an
    address the LAN probe may miss, behind a VPN)."""
    folder = web_dir(directory)
    lan = [*(also or []), *by_rank(lan_addresses() if addresses is None else addresses)]
    names = tuple(dict.fromkeys([*lan, "127.0.0.1", "localhost", socket.gethostname()]))
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)  # the CA's key is in it
        kept = [name for name in ("ca.crt", "ca.key") if (folder / name).is_file()]
        if len(kept) == 1:  # half a CA: made again, the phones trusting the old one would refuse the table
            raise CertificateError(f"the table's certificate authority in {folder} has {kept[0]} alone, without "
                                   f"{({'ca.crt', 'ca.key'} - set(kept)).pop()}; put it back, or {ANOTHER_CA}")
        if not kept:
            if (refused := _not_the_tables(folder)) is not None:
                raise refused
            _make_ca(folder)
    except CertificateError:
        raise
    except OSError as error:  # a file where the folder goes (XDG_CONFIG_HOME a file), a read-only home
        raise _unwritable(folder, error) from None
    _check_ca(folder)
    issued = not _server_current(folder, names)
    if issued:
        try:
            _make_server(folder, names)
        except OSError as error:
            raise _unwritable(folder, error) from None
    return Certificates(folder, folder / "ca.crt", folder / "server.crt", folder / "server.key", names, issued)
