"""`pricesvc verify-key-attestation`: the Android verifier sign-up runs, on the real chains of Pixel and Sony
devices (integration/fixtures/android-key-attestation, against Google's pinned roots) and on chains these tests
make (key_attestation.py, under a test root given as PRICESVC_ANDROID_ATTESTATION_ROOTS_FILE): every
refusal's code, and exit 1."""

from __future__ import annotations

import base64
import datetime
import json

import pytest

from key_attestation import (FIXTURES, now, PACKAGE, SIGNING_DIGEST, SOFTWARE, STRONG_BOX, UNVERIFIED, AndroidCA, boolean,
                             enumerated, integer, key_description, octets, pem, reference_vectors,
                             sequence, set_of, with_unsupported_public_key, with_unsupported_signature)

CHALLENGE = b"pricesvc test challenge"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def verify(env, tmp_path, chain_pem: bytes, *, challenge: bytes | str, at: str | None = None, roots: bytes | None = None,
           extra=(), stdin: bool = False, **settings) -> tuple[int, dict]:
    path = tmp_path / "chain.pem"
    path.write_bytes(chain_pem)
    if roots is not None:
        (tmp_path / "roots.pem").write_bytes(roots)
        settings["ANDROID_ATTESTATION_ROOTS_FILE"] = str(tmp_path / "roots.pem")
    challenge_text = challenge if isinstance(challenge, str) else b64(challenge)
    args = ["verify-key-attestation", "--challenge", challenge_text, *(["--at", at] if at else []), *extra,
            "-" if stdin else str(path)]
    if stdin:
        import subprocess
        result = subprocess.run([env.bin, *args], env=env.base_env(**settings), input=chain_pem.decode(),
                                capture_output=True, text=True, timeout=60)
    else:
        result = env.run(*args, **settings)
    assert result.stdout.strip(), result.stderr
    verdict = json.loads(result.stdout)
    assert result.returncode == (0 if verdict["ok"] else 1), result
    return result.returncode, verdict


def iso(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")


def parse(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


HARDWARE = [v for v in reference_vectors() if v["name"].startswith(("blueline", "sony"))]


# ---------------------------------------------------------------- the real chains

@pytest.mark.parametrize("vector", HARDWARE, ids=lambda v: v["name"])
def test_a_real_chain_verifies_at_its_time_with_its_expected_fields(env, tmp_path, vector):
    expected = vector["expected"]
    unlocked = not expected["hardwareEnforced"]["rootOfTrust"]["deviceLocked"]
    code, verdict = verify(env, tmp_path, (FIXTURES / vector["file"]).read_bytes(), challenge=vector["challenge_b64"],
                           at=vector["verify_at"], extra=["--any-boot-state"] if unlocked else [])
    assert code == 0, verdict
    root_of_trust = expected["hardwareEnforced"]["rootOfTrust"]
    application = expected["softwareEnforced"]["attestationApplicationId"]
    assert verdict == {
        "ok": True,
        "security_level": expected["attestationSecurityLevel"],
        "keymint_security_level": expected["keyMintSecurityLevel"],
        "attestation_version": int(expected["attestationVersion"]),
        "challenge_b64": vector["challenge_b64"],
        "verified_boot_state": root_of_trust["verifiedBootState"],
        "device_locked": root_of_trust["deviceLocked"],
        "packages": [{"name": p["name"], "version": int(p["version"])} for p in application["packages"]],
        "signing_cert_digests_b64": application["signatures"],
        "os_version": int(expected["hardwareEnforced"]["osVersion"]),
        "os_patch_level": int(expected["hardwareEnforced"]["osPatchLevel"]),
        "root": "google-rsa-4096",
    }


@pytest.mark.parametrize("vector", HARDWARE, ids=lambda v: v["name"])
def test_a_real_chain_is_refused_outside_its_validity_with_another_challenge_and_for_another_package(env, tmp_path, vector):
    chain = (FIXTURES / vector["file"]).read_bytes()
    common = dict(extra=["--any-boot-state"])
    for moment in (parse(vector["valid_from"]) - datetime.timedelta(days=1),
                   parse(vector["valid_until"]) + datetime.timedelta(days=3 * 365)):
        code, verdict = verify(env, tmp_path, chain, challenge=vector["challenge_b64"], at=iso(moment), **common)
        assert code == 1 and verdict["code"] == "certificate_chain", verdict
    code, verdict = verify(env, tmp_path, chain, challenge=b"another challenge", at=vector["verify_at"], **common)
    assert verdict["code"] == "challenge_mismatch", verdict
    code, verdict = verify(env, tmp_path, chain, challenge=vector["challenge_b64"], at=vector["verify_at"],
                           extra=["--any-boot-state", "--package", "org.example.other"])
    assert verdict["code"] == "package_mismatch", verdict
    # The setting works as the flag does.
    code, verdict = verify(env, tmp_path, chain, challenge=vector["challenge_b64"], at=vector["verify_at"],
                           ANDROID_PACKAGE_NAMES="org.example.other,org.example.third", ANDROID_ALLOW_UNVERIFIED_BOOT="true")
    assert verdict["code"] == "package_mismatch", verdict


def test_the_unlocked_pixel_chains_verify_only_with_any_boot_state(env, tmp_path):
    vector = next(v for v in HARDWARE if v["name"] == "blueline/sdk28/TEE_EC_NONE")
    code, verdict = verify(env, tmp_path, (FIXTURES / vector["file"]).read_bytes(), challenge=vector["challenge_b64"],
                           at=vector["verify_at"])
    assert verdict["code"] == "boot_state", verdict


def test_software_backed_and_non_der_reference_chains_are_refused(env, tmp_path):
    codes = {}
    for vector in reference_vectors():
        if vector in HARDWARE:
            continue
        code, verdict = verify(env, tmp_path, (FIXTURES / vector["file"]).read_bytes(),
                               challenge=vector.get("challenge_b64", b64(b"challenge")), at=vector["verify_at"],
                               extra=["--any-boot-state"])
        codes[vector["name"]] = verdict["code"]
    assert codes == {
        "marlin/sdk29/TEE_EC_NONE": "unknown_root",        # Google's software attestation root, not a hardware one
        "marlin/sdk29/TEE_RSA_NONE": "unknown_root",
        "invalid/malformed_rot_device_locked": "malformed_extension",  # BOOLEAN 0x01 is not DER
        "invalid/tags_not_in_ascending_order": "certificate_chain",    # its leaf's signature does not verify
    }


def test_a_revoked_serial_in_the_status_file_refuses_the_chain(env, tmp_path):
    vector = next(v for v in HARDWARE if v["name"].startswith("sony"))
    status = tmp_path / "status.json"
    # The Sony chain's batch certificate, in the list's spelling (lower-case hex, no leading zeros).
    status.write_text(json.dumps({"entries": {"16580768335559031605": {"status": "REVOKED", "reason": "KEY_COMPROMISE"},
                                              "1234": {"status": "SUSPENDED"}}}))
    chain = (FIXTURES / vector["file"]).read_bytes()
    code, verdict = verify(env, tmp_path, chain, challenge=vector["challenge_b64"], at=vector["verify_at"],
                           extra=["--status-file", str(status)])
    assert verdict["code"] == "revoked_certificate", verdict
    code, verdict = verify(env, tmp_path, chain, challenge=vector["challenge_b64"], at=vector["verify_at"],
                           ANDROID_ATTESTATION_STATUS_FILE=str(status))
    assert verdict["code"] == "revoked_certificate", verdict


def test_a_status_file_that_is_missing_or_not_googles_format_is_a_usage_error(env, tmp_path):
    vector = HARDWARE[0]
    (tmp_path / "chain.pem").write_bytes((FIXTURES / vector["file"]).read_bytes())
    (tmp_path / "bad.json").write_text('{"revoked": []}')
    for status in (tmp_path / "absent.json", tmp_path / "bad.json"):
        result = env.run("verify-key-attestation", "--challenge", vector["challenge_b64"], "--status-file", str(status),
                         str(tmp_path / "chain.pem"))
        assert result.returncode == 2 and "status" in result.stderr, result


def test_usage_errors_exit_2(env, tmp_path):
    (tmp_path / "chain.pem").write_bytes((FIXTURES / HARDWARE[0]["file"]).read_bytes())
    for args in (["verify-key-attestation", str(tmp_path / "chain.pem")],
                 ["verify-key-attestation", "--challenge", "not base64!", str(tmp_path / "chain.pem")],
                 ["verify-key-attestation", "--challenge", "eA==", "--at", "yesterday", str(tmp_path / "chain.pem")],
                 ["verify-key-attestation", "--challenge", "eA==", "--signing-cert-digest", "eA==", str(tmp_path / "chain.pem")],
                 ["verify-key-attestation", "--challenge", "eA=="]):
        result = env.run(*args)
        assert result.returncode == 2, (args, result)


# ---------------------------------------------------------------- chains of a test PKI

@pytest.fixture(scope="module")
def ca() -> AndroidCA:
    return AndroidCA()


def own(env, tmp_path, ca, chain, *, challenge=CHALLENGE, extra=(), **settings):
    return verify(env, tmp_path, pem(chain), challenge=challenge, roots=ca.root_pem(),
                  extra=["--package", PACKAGE, *extra], **settings)


def test_a_test_pki_chain_verifies_through_the_roots_file(env, tmp_path, ca):
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE), extra=["--signing-cert-digest", b64(SIGNING_DIGEST)])
    assert code == 0, verdict
    assert verdict["root"] == "roots-file-1" and verdict["security_level"] == "TRUSTED_ENVIRONMENT"
    assert verdict["packages"] == [{"name": PACKAGE, "version": 7}]
    assert verdict["verified_boot_state"] == "VERIFIED" and verdict["device_locked"] is True
    # From stdin too.
    code, verdict = verify(env, tmp_path, pem(ca.attest(CHALLENGE)), challenge=CHALLENGE, roots=ca.root_pem(), stdin=True)
    assert code == 0, verdict
    # Without the roots file, Google's roots are the only ones.
    code, verdict = verify(env, tmp_path, pem(ca.attest(CHALLENGE)), challenge=CHALLENGE)
    assert verdict["code"] == "unknown_root", verdict


def test_strongbox_verifies_and_software_is_refused(env, tmp_path, ca):
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, security_level=STRONG_BOX))
    assert code == 0 and verdict["security_level"] == "STRONG_BOX", verdict
    for fields in ({"security_level": SOFTWARE}, {"keymint_level": SOFTWARE}):
        code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, **fields))
        assert verdict["code"] == "software_security_level", (fields, verdict)


def test_a_missing_duplicated_or_misplaced_extension_is_refused(env, tmp_path, ca):
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, extensions=[]))
    assert verdict["code"] == "missing_extension", verdict
    # A fake KeyDescription below the genuine one, in a certificate the attested key signed.
    chain = ca.attest(CHALLENGE)
    code, verdict = own(env, tmp_path, ca, ca.extended(chain, [key_description(CHALLENGE)]))
    assert verdict["code"] == "duplicated_extension", verdict
    # A certificate below the attested one, without an extension: its key is not the attested one.
    chain = ca.attest(CHALLENGE)
    code, verdict = own(env, tmp_path, ca, ca.extended(chain, []))
    assert verdict["code"] == "duplicated_extension", verdict


def test_a_wrong_challenge_wrong_package_or_wrong_signer_is_refused(env, tmp_path, ca):
    code, verdict = own(env, tmp_path, ca, ca.attest(b"another challenge"))
    assert verdict["code"] == "challenge_mismatch", verdict
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, packages=[("org.example.other", 1)]))
    assert verdict["code"] == "package_mismatch", verdict
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE), extra=["--signing-cert-digest", b64(bytes(32))])
    assert verdict["code"] == "signing_certificate_mismatch", verdict


@pytest.mark.parametrize("fields", [{"locked": False}, {"boot_state": UNVERIFIED}, {"boot_state": UNVERIFIED, "locked": False}],
                         ids=["unlocked", "unverified", "both"])
def test_an_unlocked_or_unverified_device_is_refused_unless_any_boot_state(env, tmp_path, ca, fields):
    chain = ca.attest(CHALLENGE, **fields)
    code, verdict = own(env, tmp_path, ca, chain)
    assert verdict["code"] == "boot_state", verdict
    code, verdict = own(env, tmp_path, ca, chain, extra=["--any-boot-state"])
    assert code == 0, verdict
    code, verdict = own(env, tmp_path, ca, chain, ANDROID_ALLOW_UNVERIFIED_BOOT="true")
    assert code == 0, verdict


def test_a_revoked_serial_of_the_test_pki_is_refused(env, tmp_path, ca):
    chain = ca.attest(CHALLENGE)
    for certificate in chain:
        status = tmp_path / "status.json"
        status.write_text(json.dumps({"entries": {format(certificate.serial_number, "x"): {"status": "REVOKED"}}}))
        code, verdict = own(env, tmp_path, ca, chain, extra=["--status-file", str(status)])
        assert verdict["code"] == "revoked_certificate", verdict


def test_a_chain_to_an_unknown_root_is_refused(env, tmp_path, ca):
    other = AndroidCA("other")
    code, verdict = own(env, tmp_path, ca, other.attest(CHALLENGE))
    assert verdict["code"] == "unknown_root", verdict
    # The chain without its root ends at the intermediate, whose key is pinned by no one.
    code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE)[:-1])
    assert verdict["code"] == "unknown_root", verdict
    # A chain whose order is broken does not verify.
    chain = ca.attest(CHALLENGE)
    code, verdict = own(env, tmp_path, ca, [chain[0], chain[2], chain[1], chain[3]])
    assert verdict["code"] == "certificate_chain", verdict


def test_a_truncated_or_garbage_chain_is_malformed(env, tmp_path, ca):
    whole = pem(ca.attest(CHALLENGE))
    for text in (b"", b"garbage", whole[: len(whole) // 2], whole.replace(b"MII", b"MIJ", 1),
                 pem(ca.attest(CHALLENGE)[:1])):
        code, verdict = verify(env, tmp_path, text, challenge=CHALLENGE, roots=ca.root_pem())
        assert code == 1 and verdict["code"] == "malformed_chain", (text[:40], verdict)


def test_a_key_description_that_is_not_der_is_malformed(env, tmp_path, ca):
    good_list = [(702, integer(0)), (704, sequence(octets(bytes(32)), boolean(True), enumerated(0)))]
    cases = {
        "garbage": b"\x30\x03\x02\x01",
        "trailing byte": key_description(CHALLENGE) + b"\x00",
        "boolean 0x01": key_description(CHALLENGE, hardware_tags=[(704, sequence(octets(bytes(32)), b"\x01\x01\x01", enumerated(0)))]),
        "tags out of order": key_description(CHALLENGE, hardware_tags=list(reversed(good_list))),
        "repeated tag": key_description(CHALLENGE, hardware_tags=[good_list[0], good_list[0], good_list[1]]),
        "unknown security level": key_description(CHALLENGE, security_level=7),
        "unknown boot state": key_description(CHALLENGE, hardware_tags=[(704, sequence(octets(bytes(32)), boolean(True), enumerated(9)))]),
        "no root of trust": key_description(CHALLENGE, root_of_trust=False),
    }
    for name, value in cases.items():
        code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, description=value))
        assert verdict["code"] == "malformed_extension", (name, verdict)


def test_an_algorithm_openssl_cannot_verify_has_its_own_code(env, tmp_path, ca):
    leaf, *rest = ca.attest(CHALLENGE)
    code, verdict = own(env, tmp_path, ca, [with_unsupported_public_key(leaf, ca.batch_key), *rest])
    assert code == 1 and verdict["code"] == "unsupported_algorithm", verdict
    # An ML-DSA signature on the batch certificate, the leaf's issuer.
    batch, intermediate, root = rest
    code, verdict = own(env, tmp_path, ca, [leaf, with_unsupported_signature(batch), intermediate, root])
    assert code == 1 and verdict["code"] == "unsupported_algorithm", verdict


def test_the_leafs_validity_is_the_devices_clock_and_is_not_checked(env, tmp_path, ca):
    """As in Google's verifier: the device writes its leaf's validity from its own clock, so a leaf "not
    yet valid" (a clock ahead of the server's) or expired proves nothing; every other certificate's
    validity does count."""
    for not_before, not_after in ((now() + datetime.timedelta(hours=1), now() + datetime.timedelta(days=3650)),
                                  (datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc),
                                   datetime.datetime(2021, 1, 1, tzinfo=datetime.timezone.utc))):
        code, verdict = own(env, tmp_path, ca, ca.attest(CHALLENGE, not_before=not_before, not_after=not_after))
        assert code == 0, (not_before, verdict)
    expired = AndroidCA("expired", start=datetime.datetime(2015, 1, 1, tzinfo=datetime.timezone.utc),
                        end=datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc))
    code, verdict = verify(env, tmp_path, pem(expired.attest(CHALLENGE)), challenge=CHALLENGE, roots=expired.root_pem())
    assert verdict["code"] == "certificate_chain", verdict
    code, verdict = verify(env, tmp_path, pem(expired.attest(CHALLENGE)), challenge=CHALLENGE, roots=expired.root_pem(),
                           at="2019-06-01T00:00:00Z")
    assert code == 0, verdict
