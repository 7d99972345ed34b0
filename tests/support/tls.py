"""Certificates made for a test's HTTPS server on loopback: a CA, and a server certificate it
signs for 127.0.0.1 (or for another name, to be refused)."""

from __future__ import annotations

import datetime
import ssl
from dataclasses import dataclass
from ipaddress import IPv4Address
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


@dataclass(frozen=True)
class Authority:
    """A CA: its certificate (a bundle of one, as PEM) and the key that signs with it."""

    pem: bytes
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _valid(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
    return builder.not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(
        now + datetime.timedelta(days=1)
    )


def authority(name: str = "gpuenv test CA") -> Authority:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(_name(name))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    )
    cert = _valid(builder).sign(key, hashes.SHA256())
    return Authority(cert.public_bytes(serialization.Encoding.PEM), cert, key)


def server_files(folder: Path, ca: Authority, *, ip: str = "127.0.0.1") -> tuple[Path, Path]:
    """A server certificate `ca` signs, for the address `ip` (a name, when it is not one), and
    its key, written into `folder`."""
    key = ec.generate_private_key(ec.SECP256R1())
    try:
        alt: x509.GeneralName = x509.IPAddress(IPv4Address(ip))
    except ValueError:
        alt = x509.DNSName(ip)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(ip))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .add_extension(x509.SubjectAlternativeName([alt]), critical=False)
    )
    cert = _valid(builder).sign(ca.key, hashes.SHA256())
    folder.mkdir(parents=True, exist_ok=True)
    cert_file, key_file = folder / "server.pem", folder / "server.key"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


def server_context(cert_file: Path, key_file: Path) -> ssl.SSLContext:
    """A server's TLS context for loopback(handler, tls=...)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    return context
