"""App Attest attestation objects made by the tests, signed by a test root CA (Python `cryptography` and
`cbor2`), in the layout of the reference README (integration/fixtures/app-attest/README.md): a CBOR map of fmt,
attStmt {x5c: [leaf, intermediate], receipt} and authData; the leaf a P-256 key whose
1.2.840.113635.100.8.2 extension holds SHA-256(authData || clientDataHash). The server pins the test root
through PRICESVC_APP_ATTEST_ROOT_CA_FILE. Every knob a negative case needs is an argument."""

from __future__ import annotations

import datetime
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

NONCE_OID = x509.ObjectIdentifier("1.2.840.113635.100.8.2")
PRODUCTION = b"appattest" + bytes(7)
DEVELOPMENT = b"appattestdevelop"
APP_ID = "TEAM123456.org.example.pricesvc"
VECTORS = Path(__file__).resolve().parents[1] / "fixtures/app-attest/vectors.json"


def sha256(data: bytes) -> bytes:
    return hashlib.sha256(data).digest()


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def real_vectors() -> list[dict]:
    return [v for v in json.loads(VECTORS.read_text())["vectors"] if v["kind"] == "attestation"]


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "pricesvc tests")])


def _ca_certificate(subject: str, key, issuer: str, issuer_key, not_before, not_after) -> x509.Certificate:
    return (x509.CertificateBuilder()
            .subject_name(_name(subject)).issuer_name(_name(issuer))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(issuer_key, hashes.SHA384()))


@dataclass
class Attestation:
    object: bytes
    key_id: bytes
    client_data_hash: bytes


class AttestCA:
    """A root and an intermediate like Apple's (P-384), valid from a year ago for ten years."""

    def __init__(self, name: str = "pricesvc test App Attest"):
        start = now() - datetime.timedelta(days=365)
        end = start + datetime.timedelta(days=3650)
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.root = _ca_certificate(f"{name} Root CA", self.root_key, f"{name} Root CA", self.root_key, start, end)
        self.intermediate_key = ec.generate_private_key(ec.SECP384R1())
        self.intermediate = _ca_certificate(f"{name} CA 1", self.intermediate_key, f"{name} Root CA", self.root_key,
                                            start, end)

    def root_pem(self) -> bytes:
        return self.root.public_bytes(serialization.Encoding.PEM)

    def attest(self, client_data_hash: bytes, *, app_id: str = APP_ID, counter: int = 0, aaguid: bytes = PRODUCTION,
               nonce: bytes | None = None, key_id: bytes | None = None, credential_id: bytes | None = None,
               leaf_not_before: datetime.datetime | None = None, leaf_not_after: datetime.datetime | None = None,
               receipt: bytes = b"test receipt", fmt: str = "apple-appattest",
               key: ec.EllipticCurvePrivateKey | None = None) -> Attestation:
        """A well-formed attestation unless an argument says otherwise; `key_id` is what the app would
        send (by default SHA-256 of the leaf's public key). `key`: the Secure Enclave key (a new one by
        default; the same one twice is an app attesting one key twice)."""
        key = key or ec.generate_private_key(ec.SECP256R1())
        point = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
        real_key_id = sha256(point)
        cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: point[1:33], -3: point[33:65]})
        cred = real_key_id if credential_id is None else credential_id
        auth_data = (sha256(app_id.encode()) + bytes([0x40]) + counter.to_bytes(4, "big") + aaguid
                     + len(cred).to_bytes(2, "big") + cred + cose)
        nonce = sha256(auth_data + client_data_hash) if nonce is None else nonce
        extension = bytes([0x30, 2 + 2 + len(nonce), 0xa1, 2 + len(nonce), 0x04, len(nonce)]) + nonce
        start = leaf_not_before or now() - datetime.timedelta(days=1)
        leaf = (x509.CertificateBuilder()
                .subject_name(_name(real_key_id.hex())).issuer_name(self.intermediate.subject)
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(start).not_valid_after(leaf_not_after or start + datetime.timedelta(days=90))
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.UnrecognizedExtension(NONCE_OID, extension), critical=False)
                .sign(self.intermediate_key, hashes.SHA256()))
        obj = cbor2.dumps({"fmt": fmt, "attStmt": {"x5c": [leaf.public_bytes(serialization.Encoding.DER),
                                                           self.intermediate.public_bytes(serialization.Encoding.DER)],
                                                   "receipt": receipt},
                           "authData": auth_data})
        return Attestation(obj, real_key_id if key_id is None else key_id, client_data_hash)
