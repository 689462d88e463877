"""Android Key Attestation chains made by the tests, under a test root (Python `cryptography`), in the
shape of a device's: root -> intermediate -> attestation (batch) key -> leaf, the leaf carrying the
KeyDescription extension (OID 1.3.6.1.4.1.11129.2.1.17, encoded here by a small DER writer). The server
pins the test root's key through PRICESVC_ANDROID_ATTESTATION_ROOTS_FILE. Every knob a negative case needs
is an argument. The reference chains of real devices are integration/fixtures/android-key-attestation."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

KEY_DESCRIPTION_OID = x509.ObjectIdentifier("1.3.6.1.4.1.11129.2.1.17")
PACKAGE = "org.example.pricesvc"
SIGNING_DIGEST = hashlib.sha256(b"pricesvc test signing certificate").digest()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures/android-key-attestation"
SOFTWARE, TRUSTED_ENVIRONMENT, STRONG_BOX = 0, 1, 2
VERIFIED, SELF_SIGNED, UNVERIFIED, FAILED = 0, 1, 2, 3
ML_DSA_44 = "2.16.840.1.101.3.4.3.17"


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def reference_vectors() -> list[dict]:
    return json.loads((FIXTURES / "vectors.json").read_text())["vectors"]


# ---------------------------------------------------------------- a DER writer (enough for KeyDescription)

def _length(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def tlv(tag: bytes, content: bytes) -> bytes:
    return tag + _length(len(content)) + content


def context_tag(number: int, constructed: bool = True) -> bytes:
    first = 0x80 | (0x20 if constructed else 0)
    if number < 31:
        return bytes([first | number])
    digits = []
    while True:
        digits.append(number & 0x7F)
        number >>= 7
        if not number:
            break
    digits.reverse()
    return bytes([first | 0x1F] + [d | 0x80 for d in digits[:-1]] + [digits[-1]])


def integer(n: int) -> bytes:
    length = max(1, (n.bit_length() + 8) // 8)
    return tlv(b"\x02", n.to_bytes(length, "big", signed=True))


def enumerated(n: int) -> bytes:
    return tlv(b"\x0a", n.to_bytes(1, "big"))


def octets(data: bytes) -> bytes:
    return tlv(b"\x04", data)


def boolean(value: bool) -> bytes:
    return tlv(b"\x01", b"\xff" if value else b"\x00")


def null() -> bytes:
    return b"\x05\x00"


def sequence(*items: bytes) -> bytes:
    return tlv(b"\x30", b"".join(items))


def set_of(*items: bytes) -> bytes:
    return tlv(b"\x31", b"".join(items))


def explicit(number: int, inner: bytes) -> bytes:
    return tlv(context_tag(number), inner)


def oid(dotted: str) -> bytes:
    arcs = [int(a) for a in dotted.split(".")]
    values = [arcs[0] * 40 + arcs[1]] + arcs[2:]
    body = b""
    for value in values:
        digits = [value & 0x7F]
        value >>= 7
        while value:
            digits.append(0x80 | (value & 0x7F))
            value >>= 7
        body += bytes(reversed(digits))
    return tlv(b"\x06", body)


def key_description(challenge: bytes, *, security_level: int = TRUSTED_ENVIRONMENT, keymint_level: int | None = None,
                    packages=((PACKAGE, 7),), digests=(SIGNING_DIGEST,), boot_state: int = VERIFIED,
                    locked: bool = True, root_of_trust: bool = True, version: int = 200,
                    hardware_tags: list[tuple[int, bytes]] | None = None) -> bytes:
    """The DER of a KeyDescription; `hardware_tags` replaces the hardware-enforced list's entries (tag, inner
    DER), in the order given."""
    application = sequence(set_of(*[sequence(octets(name.encode()), integer(v)) for name, v in packages]),
                           set_of(*[octets(d) for d in digests]))
    software = sequence(explicit(701, integer(1_700_000_000_000)), explicit(709, octets(application)))
    if hardware_tags is None:
        hardware_tags = [(1, set_of(integer(2))), (2, integer(3)), (3, integer(256)), (503, null()), (702, integer(0))]
        if root_of_trust:
            hardware_tags.append((704, sequence(octets(bytes(32)), boolean(locked), enumerated(boot_state), octets(bytes(32)))))
        hardware_tags += [(705, integer(140000)), (706, integer(202405))]
    hardware = sequence(*[explicit(tag, inner) for tag, inner in hardware_tags])
    return sequence(integer(version), enumerated(security_level), integer(version),
                    enumerated(security_level if keymint_level is None else keymint_level),
                    octets(challenge), octets(b""), software, hardware)


# ---------------------------------------------------------------- the test PKI

def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.SERIAL_NUMBER, text), x509.NameAttribute(NameOID.TITLE, "TEE")])


def _certificate(subject: str | x509.Name, key, issuer: str | x509.Name, issuer_key, not_before, not_after, *, ca: bool,
                 extensions=(), serial: int | None = None) -> x509.Certificate:
    subject = subject if isinstance(subject, x509.Name) else _name(subject)
    issuer = issuer if isinstance(issuer, x509.Name) else _name(issuer)
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer)
               .public_key(key.public_key()).serial_number(serial or x509.random_serial_number())
               .not_valid_before(not_before).not_valid_after(not_after))
    if ca:
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
    for value in extensions:
        builder = builder.add_extension(x509.UnrecognizedExtension(KEY_DESCRIPTION_OID, value), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def der(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def pem(chain: list[x509.Certificate]) -> bytes:
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain)


class AndroidCA:
    """A root, an intermediate and a batch attestation key, like a device's keybox, valid from a year ago
    for ten years unless `start` and `end` say otherwise. `attest` makes the leaf a device would for a
    challenge."""

    def __init__(self, name: str = "pricesvc-test", start: datetime.datetime | None = None,
                 end: datetime.datetime | None = None):
        self.start = start or now() - datetime.timedelta(days=365)
        self.end = end or self.start + datetime.timedelta(days=3650)
        self.root_key = ec.generate_private_key(ec.SECP384R1())
        self.root = _certificate(f"{name}-root", self.root_key, f"{name}-root", self.root_key, self.start, self.end, ca=True)
        self.intermediate_key = ec.generate_private_key(ec.SECP256R1())
        self.intermediate = _certificate(f"{name}-intermediate", self.intermediate_key, f"{name}-root", self.root_key,
                                         self.start, self.end, ca=True)
        self.batch_key = ec.generate_private_key(ec.SECP256R1())
        # Like real batch certificates (the Sony reference chain): no CA flag.
        self.batch = _certificate(f"{name}-batch", self.batch_key, f"{name}-intermediate", self.intermediate_key,
                                  self.start, self.end, ca=False)
        self.leaf_key: ec.EllipticCurvePrivateKey | None = None

    def root_pem(self) -> bytes:
        return pem([self.root])

    def attest(self, challenge: bytes, *, description: bytes | None = None, extensions: list[bytes] | None = None,
               key: ec.EllipticCurvePrivateKey | None = None, not_before=None, not_after=None,
               **fields) -> list[x509.Certificate]:
        """leaf, batch, intermediate, root: a well-formed chain unless an argument says otherwise.
        `fields` go to key_description; `extensions` replaces the leaf's KeyDescription list (none, two...)."""
        key = key or ec.generate_private_key(ec.SECP256R1())
        self.leaf_key = key
        value = description if description is not None else key_description(challenge, **fields)
        leaf = _certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Android Keystore Key")]), key,
                            self.batch.subject, self.batch_key,
                            not_before or datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc),
                            not_after or datetime.datetime(2048, 1, 1, tzinfo=datetime.timezone.utc),
                            ca=False, extensions=[value] if extensions is None else extensions)
        return [leaf, self.batch, self.intermediate, self.root]

    def extended(self, chain: list[x509.Certificate], extensions: list[bytes]) -> list[x509.Certificate]:
        """A certificate for a key of the app's choosing, signed by the attested key of the last `attest`
        (which the app holds), below the leaf: an extended chain, with `extensions` as its KeyDescriptions."""
        assert self.leaf_key is not None
        below = _certificate(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "extended")]),
                             ec.generate_private_key(ec.SECP256R1()), chain[0].subject, self.leaf_key,
                             self.start, self.end, ca=False, extensions=extensions)
        return [below, *chain]


def token_chain(chain: list[x509.Certificate]) -> list[str]:
    return [base64.b64encode(der(c)).decode() for c in chain]


# ---------------------------------------------------------------- surgery on certificates

def _read(data: bytes, position: int = 0) -> tuple[bytes, int, int]:
    """(tag byte, contents start, end) of the element at `position` (short tags only)."""
    tag = data[position]
    length = data[position + 1]
    start = position + 2
    if length & 0x80:
        count = length & 0x7F
        length = int.from_bytes(data[start:start + count], "big")
        start += count
    return bytes([tag]), start, start + length


def with_unsupported_public_key(certificate: x509.Certificate, issuer_key) -> x509.Certificate:
    """The certificate with an ML-DSA-44 subject public key (random bytes), re-signed by `issuer_key`: a
    key OpenSSL 3.0 cannot decode."""
    data = der(certificate)
    _, cert_start, _ = _read(data)
    _, tbs_start, tbs_end = _read(data, cert_start)
    fields = []
    position = tbs_start
    while position < tbs_end:
        _, _, end = _read(data, position)
        fields.append(data[position:end])
        position = end
    # [0] version, serial, signature, issuer, validity, subject, subjectPublicKeyInfo, [3] extensions
    fields[6] = sequence(sequence(oid(ML_DSA_44)), tlv(b"\x03", b"\x00" + os.urandom(1312)))
    tbs = sequence(*fields)
    signature = issuer_key.sign(tbs, ec.ECDSA(hashes.SHA256()))
    algorithm = sequence(oid("1.2.840.10045.4.3.2"))
    return x509.load_der_x509_certificate(sequence(tbs, algorithm, tlv(b"\x03", b"\x00" + signature)))


def with_unsupported_signature(certificate: x509.Certificate) -> x509.Certificate:
    """The certificate as if its issuer had signed it with ML-DSA-44 (its algorithm in the TBS and outside,
    2420 random signature bytes): a signature OpenSSL 3.0 cannot check."""
    data = der(certificate)
    _, cert_start, _ = _read(data)
    _, tbs_start, tbs_end = _read(data, cert_start)
    fields = []
    position = tbs_start
    while position < tbs_end:
        _, _, end = _read(data, position)
        fields.append(data[position:end])
        position = end
    algorithm = sequence(oid(ML_DSA_44))
    fields[2] = algorithm
    return x509.load_der_x509_certificate(sequence(sequence(*fields), algorithm, tlv(b"\x03", b"\x00" + os.urandom(2420))))
