"""A short-lived self-signed certificate that Chromium accepts via `serverCertificateHashes`.

WebTransport's certificate-hash mode requires ECDSA P-256 and a validity under 14 days, so
the server makes one (or reuses the stored one while it has at least a day left) and hands
its SHA-256 to the page.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from pccstream.errors import UserError

VALIDITY = dt.timedelta(days=10)  # Chromium refuses hashes of certificates valid >= 14 days
RENEW_BEFORE = dt.timedelta(days=1)
CERT_FILE = "cert.pem"
KEY_FILE = "key.pem"


@dataclass(frozen=True)
class Certificate:
    cert_path: Path
    key_path: Path
    sha256_hex: str
    not_after: dt.datetime


def ensure_certificate(state_dir: Path, *, now: dt.datetime | None = None) -> Certificate:
    """Return a valid certificate from `state_dir`, creating a new one when needed."""
    now = now or dt.datetime.now(dt.UTC)
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(f"cannot create state directory {state_dir}: {exc.strerror}") from exc
    cert_path, key_path = state_dir / CERT_FILE, state_dir / KEY_FILE
    existing = _load_if_usable(cert_path, key_path, now)
    if existing is not None:
        return existing
    return _create(cert_path, key_path, now)


def _load_if_usable(cert_path: Path, key_path: Path, now: dt.datetime) -> Certificate | None:
    if not (cert_path.is_file() and key_path.is_file()):
        return None
    try:
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        serialization.load_pem_private_key(key_path.read_bytes(), password=None)
    except ValueError:
        return None  # unreadable or corrupt: replace it
    if not isinstance(cert.public_key(), ec.EllipticCurvePublicKey):
        return None
    if cert.not_valid_before_utc > now or cert.not_valid_after_utc - now < RENEW_BEFORE:
        return None
    if cert.not_valid_after_utc - cert.not_valid_before_utc >= dt.timedelta(days=14):
        return None
    return Certificate(cert_path, key_path, _fingerprint(cert), cert.not_valid_after_utc)


def _create(cert_path: Path, key_path: Path, now: dt.datetime) -> Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pccstream localhost")])
    not_before = now - dt.timedelta(minutes=5)  # tolerate small clock differences
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_before + VALIDITY)
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName("localhost"),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                    x509.IPAddress(ipaddress.ip_address("::1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return Certificate(cert_path, key_path, _fingerprint(cert), cert.not_valid_after_utc)


def _fingerprint(cert: x509.Certificate) -> str:
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()
