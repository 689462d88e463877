"""`pricesvc verify-attestation`: the verifier sign-up runs, on the real attestation objects made by iPhones
(integration/fixtures/app-attest/vectors.json, against Apple's pinned root) and on objects these tests make
(app_attest.py, against a test root given as PRICESVC_APP_ATTEST_ROOT_CA_FILE): every step's refusal."""

from __future__ import annotations

import base64
import datetime
import json

import cbor2
import pytest

from app_attest import APP_ID, DEVELOPMENT, AttestCA, now, real_vectors, sha256


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def verify(env, tmp_path, attestation: bytes | str, *, app_id: str, key_id: str, client_data_hash: str,
           at: str | None = None, root: bytes | None = None, development: bool = False, extra=()) -> tuple[int, dict]:
    path = tmp_path / "attestation"
    path.write_bytes(attestation.encode() if isinstance(attestation, str) else attestation)
    settings = {"APP_ATTEST_DEVELOPMENT": "true" if development else "false"}
    if root is not None:
        (tmp_path / "root.pem").write_bytes(root)
        settings["APP_ATTEST_ROOT_CA_FILE"] = str(tmp_path / "root.pem")
    args = ["verify-attestation", "--app-id", app_id, "--key-id", key_id, "--client-data-hash", client_data_hash,
            *(["--at", at] if at else []), *extra, str(path)]
    result = env.run(*args, **settings)
    assert result.stdout.strip(), result.stderr
    return result.returncode, json.loads(result.stdout)


# ---------------------------------------------------------------- the real vectors

@pytest.mark.parametrize("vector", real_vectors(), ids=lambda v: v["name"])
def test_a_real_attestation_verifies_at_its_time(env, tmp_path, vector):
    code, verdict = verify(env, tmp_path, vector["attestation_b64"], app_id=vector["app_id"],
                           key_id=vector["key_id_b64"], client_data_hash=vector["client_data_hash_b64"],
                           at=vector["verify_at"], development=True)
    assert code == 0, verdict
    assert verdict["ok"] is True and verdict["app_id"] == vector["app_id"]
    assert verdict["environment"] == vector["environment"]
    assert verdict["key_id"] == vector["key_id_b64"]
    public_key = base64.b64decode(verdict["public_key"])
    assert len(public_key) == 65 and sha256(public_key) == base64.b64decode(vector["key_id_b64"])
    assert verdict["counter"] == 0 and verdict["receipt_bytes"] > 0


@pytest.mark.parametrize("vector", real_vectors(), ids=lambda v: v["name"])
def test_a_real_attestation_fails_outside_its_leafs_validity_and_for_another_app(env, tmp_path, vector):
    at = datetime.datetime.fromisoformat(vector["verify_at"].replace("Z", "+00:00"))
    common = dict(key_id=vector["key_id_b64"], client_data_hash=vector["client_data_hash_b64"], development=True)
    for moved in (at - datetime.timedelta(days=400), at + datetime.timedelta(days=400)):
        code, verdict = verify(env, tmp_path, vector["attestation_b64"], app_id=vector["app_id"],
                               at=moved.isoformat().replace("+00:00", "Z"), **common)
        assert code == 1 and verdict["ok"] is False, verdict
        assert verdict["code"] == "certificate_chain", verdict
    code, verdict = verify(env, tmp_path, vector["attestation_b64"], app_id="ABCDE12345.org.example.other",
                           at=vector["verify_at"], **common)
    assert (code, verdict["code"]) == (1, "app_id_mismatch"), verdict


def test_a_development_key_needs_development_accepted(env, tmp_path):
    vector = next(v for v in real_vectors() if v["environment"] == "development")
    code, verdict = verify(env, tmp_path, vector["attestation_b64"], app_id=vector["app_id"],
                           key_id=vector["key_id_b64"], client_data_hash=vector["client_data_hash_b64"],
                           at=vector["verify_at"], development=False)
    assert (code, verdict["code"]) == (1, "environment"), verdict


# ---------------------------------------------------------------- objects made here, one refusal each

@pytest.fixture(scope="module")
def ca() -> AttestCA:
    return AttestCA()


CLIENT_DATA_HASH = sha256(b"a challenge")


def check(env, tmp_path, ca, attestation, *, app_id=APP_ID, client_data_hash=CLIENT_DATA_HASH, root=None,
          development=False, key_id=None) -> tuple[int, dict]:
    return verify(env, tmp_path, attestation.object if hasattr(attestation, "object") else attestation,
                  app_id=app_id, key_id=b64(key_id or attestation.key_id), client_data_hash=b64(client_data_hash),
                  root=root or ca.root_pem(), development=development)


def refused(result: tuple[int, dict], code: str) -> dict:
    exit_code, verdict = result
    assert exit_code == 1 and verdict["ok"] is False, verdict
    assert verdict["code"] == code, verdict
    return verdict


def test_a_well_made_object_verifies_under_the_test_root(env, tmp_path, ca):
    attestation = ca.attest(CLIENT_DATA_HASH)
    code, verdict = check(env, tmp_path, ca, attestation)
    assert code == 0 and verdict["environment"] == "production" and verdict["key_id"] == b64(attestation.key_id), verdict
    # The same object against Apple's root (the default): not a chain to it.
    code, verdict = verify(env, tmp_path, attestation.object, app_id=APP_ID, key_id=b64(attestation.key_id),
                           client_data_hash=b64(CLIENT_DATA_HASH))
    assert (code, verdict["code"]) == (1, "certificate_chain"), verdict


def test_wrong_nonce(env, tmp_path, ca):
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH), client_data_hash=sha256(b"another challenge")),
            "nonce_mismatch")
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, nonce=bytes(32))), "nonce_mismatch")


def test_wrong_app_id(env, tmp_path, ca):
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, app_id="TEAM123456.org.example.other")),
            "app_id_mismatch")


def test_counter_not_zero(env, tmp_path, ca):
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, counter=1)), "counter_not_zero")


def test_key_id_mismatch(env, tmp_path, ca):
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, key_id=sha256(b"another key"))), "key_id_mismatch")
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, credential_id=sha256(b"another key"))),
            "credential_id_mismatch")


def test_development_key_in_production(env, tmp_path, ca):
    attestation = ca.attest(CLIENT_DATA_HASH, aaguid=DEVELOPMENT)
    refused(check(env, tmp_path, ca, attestation), "environment")
    code, verdict = check(env, tmp_path, ca, attestation, development=True)
    assert code == 0 and verdict["environment"] == "development", verdict
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, aaguid=b"notappattest0000")), "environment")


def test_a_chain_to_another_root(env, tmp_path, ca):
    other = AttestCA("another")
    refused(check(env, tmp_path, ca, other.attest(CLIENT_DATA_HASH)), "certificate_chain")


def test_an_expired_or_not_yet_valid_leaf(env, tmp_path, ca):
    expired = ca.attest(CLIENT_DATA_HASH, leaf_not_before=now() - datetime.timedelta(days=100),
                        leaf_not_after=now() - datetime.timedelta(days=10))
    assert "expired" in refused(check(env, tmp_path, ca, expired), "certificate_chain")["message"]
    future = ca.attest(CLIENT_DATA_HASH, leaf_not_before=now() + datetime.timedelta(days=10))
    assert "not yet valid" in refused(check(env, tmp_path, ca, future), "certificate_chain")["message"]


def test_another_format(env, tmp_path, ca):
    refused(check(env, tmp_path, ca, ca.attest(CLIENT_DATA_HASH, fmt="packed")), "unsupported_format")


def test_truncated_oversized_and_trailing_cbor(env, tmp_path, ca):
    attestation = ca.attest(CLIENT_DATA_HASH)
    whole = attestation.object
    cases = {
        "truncated": whole[:-1],
        "half": whole[: len(whole) // 2],
        "trailing garbage": whole + b"\x00",
        "trailing item": whole + cbor2.dumps({"more": 1}),
        # A receipt over the 16 KiB an attestation may take.
        "oversized": ca.attest(CLIENT_DATA_HASH, receipt=bytes(20_000)).object,
        # The map as an indefinite-length one (0xbf ... 0xff) instead of 0xa3.
        "indefinite length": b"\xbf" + whole[1:] + b"\xff",
        # A byte string claiming 2^64-1 bytes.
        "huge length": b"\xa1\x63fmt\x5b" + b"\xff" * 8,
        "deep nesting": b"\x81" * 64 + b"\x00",
        "empty": b"",
    }
    for name, data in cases.items():
        refused(verify(env, tmp_path, data, app_id=APP_ID, key_id=b64(attestation.key_id),
                       client_data_hash=b64(CLIENT_DATA_HASH), root=ca.root_pem()), "malformed_attestation")


def test_usage_errors_exit_2(env, tmp_path):
    path = tmp_path / "x"
    path.write_bytes(b"x")
    for args in (["--key-id", "AA==", "--client-data-hash", "AA==", str(path)],
                 ["--app-id", APP_ID, "--key-id", "not base64!", "--client-data-hash", "AA==", str(path)],
                 ["--app-id", APP_ID, "--key-id", "AA==", "--client-data-hash", "AA==", "--at", "yesterday", str(path)],
                 ["--app-id", APP_ID, "--key-id", "AA==", "--client-data-hash", "AA=="]):
        result = env.run("verify-attestation", *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)


def test_the_cost_of_one_verification_is_printed_with_repeat(env, tmp_path):
    """Not a timing assertion: --repeat verifies N times and prints the mean, the figure docs/attestation.md
    quotes. The test holds only that every repetition gave the same verdict and the mean is reported."""
    vector = real_vectors()[0]
    code, verdict = verify(env, tmp_path, vector["attestation_b64"], app_id=vector["app_id"],
                           key_id=vector["key_id_b64"], client_data_hash=vector["client_data_hash_b64"],
                           at=vector["verify_at"], extra=["--repeat", "50"])
    assert code == 0 and verdict["repeat"] == 50 and verdict["mean_microseconds"] > 0, verdict
    print(f"verify-attestation: {verdict['mean_microseconds']} µs per verification (mean of 50)")
