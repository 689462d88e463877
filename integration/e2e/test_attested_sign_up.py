"""Attested sign-up: `GET /auth/v1/challenge?type=app_attest`, then `POST /auth/v1/signup` with
`gotrue_meta_security.captcha_token` = {"type":"app_attest","key_id","attestation","challenge"} as JSON text,
as supabase-py's `sign_in_anonymously(captcha_token=...)` sends it, unmodified. The attestation objects are
made by app_attest.py under a test root (PRICESVC_APP_ATTEST_ROOT_CA_FILE). Each mode of
PRICESVC_SIGNUP_ATTESTATION, the refusals in Supabase Auth's error shape, and the median under the
database's 'attested' threshold mode."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from supabase import create_client
from supabase_auth.errors import AuthApiError

from app_attest import APP_ID, DEVELOPMENT, AttestCA, sha256
from conftest import GENERAL_SETTINGS
from helpers import assert_auth_error, fake_client_ip, location, new_id, report


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture(scope="module")
def ca() -> AttestCA:
    return AttestCA()


@pytest.fixture(scope="module")
def root_file(ca, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("app-attest") / "root.pem"
    path.write_bytes(ca.root_pem())
    return str(path)


def attest_settings(mode: str, root_file: str) -> dict:
    return dict(GENERAL_SETTINGS, SIGNUP_ATTESTATION=mode, APP_ATTEST_APP_IDS=f"ABCDE12345.org.example.other, {APP_ID}",
                APP_ATTEST_ROOT_CA_FILE=root_file)


@pytest.fixture(scope="module")
def required_api(session_servers, root_file, anon_key):
    return session_servers.start(**attest_settings("required", root_file)).api(anon_key)


@pytest.fixture(scope="module")
def optional_api(session_servers, root_file, anon_key):
    return session_servers.start(**attest_settings("optional", root_file)).api(anon_key)


def fetch_challenge(api) -> str:
    response = api.get("/auth/v1/challenge", params={"type": "app_attest"})
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"challenge", "expires_at"} and isinstance(body["expires_at"], int), body
    return body["challenge"]


def token(ca: AttestCA, challenge: str, **attest) -> str:
    """What an app sends: attestKey(keyId, clientDataHash: SHA256(challenge)), as captcha_token."""
    attestation = ca.attest(sha256(challenge.encode()), **attest)
    return json.dumps({"type": "app_attest", "key_id": b64(attestation.key_id),
                       "attestation": b64(attestation.object), "challenge": challenge})


def sign_up(api, captcha_token: str | None):
    return api.post("/auth/v1/signup", json_body={"data": {}, "gotrue_meta_security": {"captcha_token": captcha_token}},
                    forwarded_for=fake_client_ip())


def assert_attested(user: dict, attested: bool = True):
    if attested:
        assert user["app_metadata"] == {"provider": "app_attest", "providers": ["app_attest"], "attested": True}, user
    else:
        assert user["app_metadata"].get("attested") is None and user["app_metadata"]["provider"] == "anonymous", user


# ---------------------------------------------------------------- required

def test_required_an_unpatched_supabase_client_signs_up_with_an_attestation(required_api, ca, anon_key):
    client = create_client(required_api.base, anon_key)
    response = client.auth.sign_in_anonymously({"options": {"captcha_token": token(ca, fetch_challenge(required_api))}})
    assert response.session and response.session.access_token
    assert response.user.app_metadata["attested"] is True and response.user.app_metadata["provider"] == "app_attest"
    # GET /auth/v1/user says so too, from the database.
    user = required_api.get("/auth/v1/user", token=response.session.access_token)
    assert user.status_code == 200, user.text
    assert_attested(user.json())
    # And so does a refresh's session.
    refreshed = required_api.refresh(response.session.refresh_token)
    assert refreshed.status_code == 200, refreshed.text
    assert_attested(refreshed.json()["user"])
    # Without a token the same client is refused, with a code naming why.
    with pytest.raises(AuthApiError) as refused:
        create_client(required_api.base, anon_key).auth.sign_in_anonymously()
    assert refused.value.status == 400 and refused.value.code == "attestation_required"


@pytest.mark.parametrize("captcha_token", [None, "", "an ALTCHA payload", '{"type":"altcha"}'])
def test_required_refuses_a_sign_up_without_an_attestation(required_api, captcha_token):
    assert_auth_error(sign_up(required_api, captcha_token), 400, "attestation_required")


@pytest.mark.parametrize("captcha_token", ['{"type":"app_attest"}', '{"type":"app_attest","key_id":"AA==",'
                                           '"attestation":"AA==","challenge":"x"}', '{"type":', "{" + "[" * 100])
def test_a_malformed_app_attest_token_is_refused(required_api, captcha_token):
    assert_auth_error(sign_up(required_api, captcha_token), 400, "attestation_malformed")


@pytest.mark.parametrize("attest, code", [
    (dict(counter=1), "attestation_counter_not_zero"),
    (dict(app_id="TEAM123456.org.example.notours"), "attestation_app_id_mismatch"),
    (dict(nonce=bytes(32)), "attestation_nonce_mismatch"),
    (dict(key_id=sha256(b"another key")), "attestation_key_id_mismatch"),
    (dict(aaguid=DEVELOPMENT), "attestation_environment"),
])
def test_an_attestation_that_fails_a_step_is_refused_with_that_step(required_api, ca, attest, code):
    assert_auth_error(sign_up(required_api, token(ca, fetch_challenge(required_api), **attest)), 400, code)


def test_a_chain_to_another_root_is_refused(required_api):
    other = AttestCA("another")
    assert_auth_error(sign_up(required_api, token(other, fetch_challenge(required_api))), 400,
                      "attestation_certificate_chain")


def test_an_attestation_for_another_challenge_is_refused(required_api, ca):
    first, second = fetch_challenge(required_api), fetch_challenge(required_api)
    attestation = ca.attest(sha256(first.encode()))
    mixed = json.dumps({"type": "app_attest", "key_id": b64(attestation.key_id),
                        "attestation": b64(attestation.object), "challenge": second})
    assert_auth_error(sign_up(required_api, mixed), 400, "attestation_nonce_mismatch")


def test_a_replayed_challenge_is_refused(required_api, ca):
    challenge = fetch_challenge(required_api)
    assert sign_up(required_api, token(ca, challenge)).status_code == 200
    # Another key (a new attestation) on the spent challenge: refused by the database.
    assert_auth_error(sign_up(required_api, token(ca, challenge)), 400, "attestation_challenge_used")


def test_the_same_key_twice_is_refused(required_api, ca):
    """One Secure Enclave key attested twice, for two challenges (two attestKey calls): the second
    identity is refused by the database's key table, and the refused sign-up spends nothing."""
    key = ec.generate_private_key(ec.SECP256R1())
    assert sign_up(required_api, token(ca, fetch_challenge(required_api), key=key)).status_code == 200
    challenge = fetch_challenge(required_api)
    assert_auth_error(sign_up(required_api, token(ca, challenge, key=key)), 400, "attestation_key_used")
    assert sign_up(required_api, token(ca, challenge)).status_code == 200


def test_expired_and_forged_challenges_are_refused(required_api, ca, env):
    key = hmac.new(env.secret.encode(), b"pricesvc app-attest-challenge v1", hashlib.sha256).digest()
    signed = "aa1.1000000000.00112233445566778899aabbccddeeff"
    expired = signed + "." + hmac.new(key, signed.encode(), hashlib.sha256).hexdigest()
    assert_auth_error(sign_up(required_api, token(ca, expired)), 400, "attestation_challenge_expired")
    issued = fetch_challenge(required_api)
    forged = issued[:-1] + ("0" if issued[-1] != "0" else "1")
    assert_auth_error(sign_up(required_api, token(ca, forged)), 400, "attestation_challenge_invalid")
    assert_auth_error(sign_up(required_api, token(ca, "not a challenge")), 400, "attestation_challenge_invalid")


def test_the_address_limit_applies_to_attested_sign_ups(start_server, root_file, ca, anon_key):
    api = start_server(**dict(attest_settings("required", root_file), SIGNUP_BURST=1, SIGNUPS_PER_HOUR=1)).api(anon_key)
    crowded = fake_client_ip()
    body = lambda captcha: {"data": {}, "gotrue_meta_security": {"captcha_token": captcha}}  # noqa: E731
    assert api.post("/auth/v1/signup", json_body=body(token(ca, fetch_challenge(api))), forwarded_for=crowded).status_code == 200
    refused = api.post("/auth/v1/signup", json_body=body(token(ca, fetch_challenge(api))), forwarded_for=crowded)
    assert_auth_error(refused, 429, "over_request_rate_limit")


# ---------------------------------------------------------------- optional and off

def test_optional_attested_when_sent_plain_when_not(optional_api, ca):
    attested = sign_up(optional_api, token(ca, fetch_challenge(optional_api)))
    assert attested.status_code == 200, attested.text
    assert_attested(attested.json()["user"])
    plain = sign_up(optional_api, None)
    assert plain.status_code == 200, plain.text
    assert_attested(plain.json()["user"], attested=False)
    refreshed = optional_api.refresh(plain.json()["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    assert_attested(refreshed.json()["user"], attested=False)
    # A bad attestation is refused rather than silently unattested.
    assert_auth_error(sign_up(optional_api, token(ca, fetch_challenge(optional_api), counter=7)), 400,
                      "attestation_counter_not_zero")


def test_metrics_count_sign_ups_by_kind_and_the_attestation_verdicts(start_server, root_file, ca, anon_key):
    server = start_server(**attest_settings("optional", root_file))
    api = server.api(anon_key)
    assert sign_up(api, token(ca, fetch_challenge(api))).status_code == 200
    assert sign_up(api, None).status_code == 200
    assert sign_up(api, token(ca, fetch_challenge(api), counter=7)).status_code == 400
    replayed = fetch_challenge(api)
    assert sign_up(api, token(ca, replayed)).status_code == 200
    assert sign_up(api, token(ca, replayed)).status_code == 400  # verified here, refused by the database
    metrics = server.metrics()
    for line in ('pricesvc_sign_ups_total{kind="attested"} 2', 'pricesvc_sign_ups_total{kind="anonymous"} 1',
                 'pricesvc_attestations_total{result="verified"} 3', 'pricesvc_attestations_total{result="refused"} 1'):
        assert line + "\n" in metrics, (line, [l for l in metrics.splitlines() if "sign_ups" in l or "attestations" in l])


def test_off_ignores_attestations_and_offers_no_challenge(api, ca, optional_api):
    assert "SIGNUP_ATTESTATION" not in GENERAL_SETTINGS
    assert_auth_error(api.get("/auth/v1/challenge", params={"type": "app_attest"}), 422, "attestation_disabled")
    response = sign_up(api, token(ca, fetch_challenge(optional_api)))
    assert response.status_code == 200, response.text
    assert_attested(response.json()["user"], attested=False)


# ---------------------------------------------------------------- the threshold counts devices

@pytest.fixture
def attested_threshold(db):
    """The owner's switch to the 'attested' threshold mode (what editing settings.sql and `pricesvc migrate`
    do), undone after the test."""
    db.psql("create or replace function private.threshold_counts() returns text language sql immutable "
            "parallel safe return 'attested'; select private.median_rule_reconcile()")
    assert db.scalar("select counts from private.median_rule_state") == "attested"
    try:
        yield
    finally:
        db.psql("create or replace function private.threshold_counts() returns text language sql immutable "
                "parallel safe return 'mature'; select private.median_rule_reconcile()")
        assert db.scalar("select counts from private.median_rule_state") == "mature"


def test_under_attested_only_attested_identities_count(optional_api, ca, db, anon_key, attested_threshold):
    def identity(attested: bool) -> dict:
        response = sign_up(optional_api, token(ca, fetch_challenge(optional_api)) if attested else None)
        assert response.status_code == 200, response.text
        return response.json()

    attested = [identity(True) for _ in range(3)]
    plain = [identity(False) for _ in range(3)]
    db.age_users([s["user"]["id"] for s in attested + plain])
    devices, mixed = location("attested"), location("mixed")
    # supabase-py reports for the attested identities, as an app would.
    for session in attested:
        client = create_client(optional_api.base, anon_key)
        client.auth.set_session(session["access_token"], session["refresh_token"])
        client.table("price_reports").insert(report(devices, 500), returning="minimal").execute()
    ids = []
    for session in attested[:2] + plain:
        row = report(mixed, 300, client_report_id=new_id())
        ids.append(row["client_report_id"])
        assert optional_api.submit(row, token=session["access_token"], prefer="return=minimal").status_code == 201
    # Unattested reports are stored (and capped like any other)...
    assert db.count_reports(ids) == 5
    # ...and never counted: mixed has 2 attested and 3 unattested reporters.
    medians = optional_api.medians([devices, mixed], attested[0]["access_token"])
    assert [(m["location_id"], m["reporters"], m["median_cents"]) for m in medians] == [(devices, 3, 500)], medians
    # Back under 'mature' (the fixture's teardown does it for the database; here only to show the contrast).
    db.psql("create or replace function private.threshold_counts() returns text language sql immutable "
            "parallel safe return 'mature'; select private.median_rule_reconcile()")
    medians = optional_api.medians([devices, mixed], attested[0]["access_token"])
    assert sorted((m["location_id"], m["reporters"]) for m in medians) == sorted([(devices, 3), (mixed, 5)]), medians


# ---------------------------------------------------------------- settings

@pytest.mark.parametrize("settings, message", [
    ({"SIGNUP_ATTESTATION": "maybe"}, "PRICESVC_SIGNUP_ATTESTATION must be off, optional or required"),
    ({"SIGNUP_ATTESTATION": "required"}, "--app-attest-app-ids or --android-package-names must name at least one app"),  # unset: named by flag
    ({"SIGNUP_ATTESTATION": "optional", "APP_ATTEST_APP_IDS": APP_ID, "APP_ATTEST_ROOT_CA_FILE": "/nonexistent/root.pem"},
     "cannot read PRICESVC_APP_ATTEST_ROOT_CA_FILE"),
    ({"SIGNUP_ATTESTATION": "optional", "APP_ATTEST_APP_IDS": APP_ID, "APP_ATTEST_ROOT_CA_FILE": __file__},
     "PRICESVC_APP_ATTEST_ROOT_CA_FILE must be a PEM certificate"),
])
def test_serve_refuses_incomplete_attestation_settings(migrated, settings, message):
    result = migrated.run("serve", timeout=30, LISTEN="127.0.0.1:0", **settings)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert message in result.stderr, result.stderr
