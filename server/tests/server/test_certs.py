from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509

from pccstream.server.certs import RENEW_BEFORE, ensure_certificate


def test_creates_a_short_lived_p256_certificate(tmp_path: Path) -> None:
    cert = ensure_certificate(tmp_path)
    parsed = x509.load_pem_x509_certificate(cert.cert_path.read_bytes())
    assert parsed.public_key().curve.name == "secp256r1"  # type: ignore[union-attr]
    assert parsed.not_valid_after_utc - parsed.not_valid_before_utc < dt.timedelta(days=14)
    sans = parsed.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert "localhost" in sans.get_values_for_type(x509.DNSName)
    assert len(cert.sha256_hex) == 64
    assert (cert.key_path.stat().st_mode & 0o777) == 0o600


def test_reuses_a_valid_certificate_and_renews_an_expiring_one(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path)
    assert ensure_certificate(tmp_path).sha256_hex == first.sha256_hex
    near_expiry = first.not_after - RENEW_BEFORE + dt.timedelta(minutes=1)
    assert ensure_certificate(tmp_path, now=near_expiry).sha256_hex != first.sha256_hex


def test_replaces_a_corrupt_certificate(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path)
    first.cert_path.write_text("garbage")
    assert ensure_certificate(tmp_path).sha256_hex != first.sha256_hex
