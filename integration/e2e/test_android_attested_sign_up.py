"""Attested sign-up on Android: `GET /auth/v1/challenge?type=android_key_attestation`, then
`POST /auth/v1/signup` with `gotrue_meta_security.captcha_token` = {"type":"android_key_attestation",
"chain":[base64 DER, leaf first],"challenge"} as JSON text, as supabase-py's
`sign_in_anonymously(captcha_token=...)` sends it, unmodified. The chains are made by key_attestation.py
under a test root (PRICESVC_ANDROID_ATTESTATION_ROOTS_FILE), the key's challenge the UTF-8 of the
challenge text. Each mode of PRICESVC_SIGNUP_ATTESTATION, either platform under `required`, the refusals
in Supabase Auth's error shape, and the median under the 'attested' threshold mode counting both."""

from __future__ import annotations

import json

import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from supabase import create_client
from supabase_auth.errors import AuthApiError

import app_attest
import test_attested_sign_up as ios
from conftest import GENERAL_SETTINGS
from helpers import assert_auth_error, fake_client_ip, location, report
from key_attestation import PACKAGE, SOFTWARE, UNVERIFIED, AndroidCA, token_chain

PROVIDER = {"provider": "android_key_attestation", "providers": ["android_key_attestation"], "attested": True}


@pytest.fixture(scope="module")
def ca() -> AndroidCA:
    return AndroidCA()


@pytest.fixture(scope="module")
def roots_file(ca, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("android") / "roots.pem"
    path.write_bytes(ca.root_pem())
    return str(path)


@pytest.fixture(scope="module")
def apple_ca() -> app_attest.AttestCA:
    return app_attest.AttestCA()


@pytest.fixture(scope="module")
def apple_root_file(apple_ca, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("app-attest") / "root.pem"
    path.write_bytes(apple_ca.root_pem())
    return str(path)


def android_settings(mode: str, roots_file: str) -> dict:
    return dict(GENERAL_SETTINGS, SIGNUP_ATTESTATION=mode, ANDROID_PACKAGE_NAMES=f"org.example.other, {PACKAGE}",
                ANDROID_ATTESTATION_ROOTS_FILE=roots_file)


@pytest.fixture(scope="module")
def required_api(session_servers, roots_file, anon_key):
    return session_servers.start(**android_settings("required", roots_file)).api(anon_key)


@pytest.fixture(scope="module")
def both_api(session_servers, roots_file, apple_root_file, anon_key):
    """Required, taking either platform."""
    return session_servers.start(**dict(android_settings("required", roots_file), APP_ATTEST_APP_IDS=app_attest.APP_ID,
                                        APP_ATTEST_ROOT_CA_FILE=apple_root_file)).api(anon_key)


@pytest.fixture(scope="module")
def optional_api(session_servers, roots_file, anon_key):
    return session_servers.start(**android_settings("optional", roots_file)).api(anon_key)


def fetch_challenge(api) -> str:
    response = api.get("/auth/v1/challenge", params={"type": "android_key_attestation"})
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    body = response.json()
    assert set(body) == {"challenge", "expires_at"} and isinstance(body["expires_at"], int), body
    return body["challenge"]


def token(ca: AndroidCA, challenge: str, **attest) -> str:
    """What an app sends: setAttestationChallenge(challenge.toByteArray()), then the key's chain."""
    return json.dumps({"type": "android_key_attestation", "chain": token_chain(ca.attest(challenge.encode(), **attest)),
                       "challenge": challenge})


def sign_up(api, captcha_token: str | None):
    return ios.sign_up(api, captcha_token)


# ---------------------------------------------------------------- required

def test_required_an_unpatched_supabase_client_signs_up_with_a_key_attestation(required_api, ca, anon_key):
    client = create_client(required_api.base, anon_key)
    response = client.auth.sign_in_anonymously({"options": {"captcha_token": token(ca, fetch_challenge(required_api))}})
    assert response.session and response.session.access_token
    assert response.user.app_metadata == PROVIDER
    # GET /auth/v1/user says so too, from the database, and so does a refresh's session.
    user = required_api.get("/auth/v1/user", token=response.session.access_token)
    assert user.status_code == 200 and user.json()["app_metadata"] == PROVIDER, user.text
    refreshed = required_api.refresh(response.session.refresh_token)
    assert refreshed.status_code == 200 and refreshed.json()["user"]["app_metadata"] == PROVIDER, refreshed.text
    with pytest.raises(AuthApiError) as refused:
        create_client(required_api.base, anon_key).auth.sign_in_anonymously()
    assert refused.value.status == 400 and refused.value.code == "attestation_required"


def test_required_takes_either_platform(both_api, ca, apple_ca):
    android = sign_up(both_api, token(ca, fetch_challenge(both_api)))
    assert android.status_code == 200 and android.json()["user"]["app_metadata"] == PROVIDER, android.text
    apple = sign_up(both_api, ios.token(apple_ca, ios.fetch_challenge(both_api)))
    assert apple.status_code == 200, apple.text
    assert apple.json()["user"]["app_metadata"]["provider"] == "app_attest"
    assert_auth_error(sign_up(both_api, None), 400, "attestation_required")


def test_a_server_without_android_packages_refuses_android(start_server, apple_root_file, ca, anon_key):
    api = start_server(**dict(GENERAL_SETTINGS, SIGNUP_ATTESTATION="required", APP_ATTEST_APP_IDS=app_attest.APP_ID,
                              APP_ATTEST_ROOT_CA_FILE=apple_root_file)).api(anon_key)
    assert_auth_error(api.get("/auth/v1/challenge", params={"type": "android_key_attestation"}), 422, "attestation_disabled")
    challenge = ios.fetch_challenge(api)
    assert_auth_error(sign_up(api, token(ca, challenge)), 400, "attestation_disabled")


@pytest.mark.parametrize("captcha_token", [
    '{"type":"android_key_attestation"}',
    '{"type":"android_key_attestation","chain":[],"challenge":"x"}',
    '{"type":"android_key_attestation","chain":["not base64!"],"challenge":"x"}',
    '{"type":"android_key_attestation","chain":"AA==","challenge":"x"}',
    '{"type":"android_key_attestation","chain":["AA=="],"challenge":"x","extra":1}',
    json.dumps({"type": "android_key_attestation", "chain": ["AA=="] * 9, "challenge": "x"}),
])
def test_a_malformed_android_token_is_refused(required_api, captcha_token):
    assert_auth_error(sign_up(required_api, captcha_token), 400, "attestation_malformed")


@pytest.mark.parametrize("attest, code", [
    (dict(security_level=SOFTWARE), "attestation_software_security_level"),
    (dict(locked=False), "attestation_boot_state"),
    (dict(boot_state=UNVERIFIED), "attestation_boot_state"),
    (dict(packages=[("org.example.notours", 1)]), "attestation_package_mismatch"),
    (dict(extensions=[]), "attestation_missing_extension"),
])
def test_a_key_attestation_that_fails_the_policy_is_refused_with_its_code(required_api, ca, attest, code):
    assert_auth_error(sign_up(required_api, token(ca, fetch_challenge(required_api), **attest)), 400, code)


def test_a_chain_to_another_root_or_for_another_challenge_is_refused(required_api, ca):
    other = AndroidCA("other")
    assert_auth_error(sign_up(required_api, token(other, fetch_challenge(required_api))), 400, "attestation_unknown_root")
    first, second = fetch_challenge(required_api), fetch_challenge(required_api)
    mixed = json.dumps({"type": "android_key_attestation", "chain": token_chain(ca.attest(first.encode())),
                        "challenge": second})
    assert_auth_error(sign_up(required_api, mixed), 400, "attestation_challenge_mismatch")
    assert_auth_error(sign_up(required_api, token(ca, "not a challenge")), 400, "attestation_challenge_invalid")


def test_a_replayed_challenge_is_refused(required_api, ca):
    challenge = fetch_challenge(required_api)
    assert sign_up(required_api, token(ca, challenge)).status_code == 200
    assert_auth_error(sign_up(required_api, token(ca, challenge)), 400, "attestation_challenge_used")


def test_one_key_makes_one_identity(required_api, ca, db):
    """One Keystore key attested twice, for two challenges: the second identity is refused by the
    database's key table, and the refused sign-up spends nothing."""
    key = ec.generate_private_key(ec.SECP256R1())
    first = sign_up(required_api, token(ca, fetch_challenge(required_api), key=key))
    assert first.status_code == 200, first.text
    challenge = fetch_challenge(required_api)
    assert_auth_error(sign_up(required_api, token(ca, challenge, key=key)), 400, "attestation_key_used")
    assert sign_up(required_api, token(ca, challenge)).status_code == 200
    row = db.scalar("select package_name || ' ' || security_level || ' ' || verified_boot_state || ' ' || device_locked "
                    f"from auth.android_attested_keys where user_id = '{first.json()['user']['id']}'")
    assert row == f"{PACKAGE} TRUSTED_ENVIRONMENT VERIFIED true", row


def test_the_accepted_package_is_recorded_when_the_app_shares_its_uid(required_api, ca, db):
    response = sign_up(required_api, token(ca, fetch_challenge(required_api),
                                           packages=[("org.example.shared.first", 3), (PACKAGE, 7)]))
    assert response.status_code == 200, response.text
    recorded = db.scalar(f"select package_name from auth.android_attested_keys where user_id = '{response.json()['user']['id']}'")
    assert recorded == PACKAGE


def test_the_address_limit_applies_to_android_sign_ups(start_server, roots_file, ca, anon_key):
    api = start_server(**dict(android_settings("required", roots_file), SIGNUP_BURST=1, SIGNUPS_PER_HOUR=1)).api(anon_key)
    crowded = fake_client_ip()
    body = lambda captcha: {"data": {}, "gotrue_meta_security": {"captcha_token": captcha}}  # noqa: E731
    assert api.post("/auth/v1/signup", json_body=body(token(ca, fetch_challenge(api))), forwarded_for=crowded).status_code == 200
    refused = api.post("/auth/v1/signup", json_body=body(token(ca, fetch_challenge(api))), forwarded_for=crowded)
    assert_auth_error(refused, 429, "over_request_rate_limit")


def test_metrics_count_android_sign_ups_and_verdicts_as_attested(start_server, roots_file, ca, anon_key):
    server = start_server(**android_settings("optional", roots_file))
    api = server.api(anon_key)
    assert sign_up(api, token(ca, fetch_challenge(api))).status_code == 200
    assert sign_up(api, None).status_code == 200
    assert sign_up(api, token(ca, fetch_challenge(api), security_level=SOFTWARE)).status_code == 400
    metrics = server.metrics()
    for line in ('pricesvc_sign_ups_total{kind="attested"} 1', 'pricesvc_sign_ups_total{kind="anonymous"} 1',
                 'pricesvc_attestations_total{result="verified"} 1', 'pricesvc_attestations_total{result="refused"} 1'):
        assert line + "\n" in metrics, (line, [l for l in metrics.splitlines() if "sign_ups" in l or "attestations" in l])


# ---------------------------------------------------------------- optional

def test_optional_attested_when_sent_plain_when_not_refused_when_bad(optional_api, ca, anon_key):
    client = create_client(optional_api.base, anon_key)
    attested = client.auth.sign_in_anonymously({"options": {"captcha_token": token(ca, fetch_challenge(optional_api))}})
    assert attested.user.app_metadata == PROVIDER
    plain = create_client(optional_api.base, anon_key).auth.sign_in_anonymously()
    assert plain.user.app_metadata["provider"] == "anonymous" and "attested" not in plain.user.app_metadata
    assert_auth_error(sign_up(optional_api, token(ca, fetch_challenge(optional_api), security_level=SOFTWARE)), 400,
                      "attestation_software_security_level")


def test_off_ignores_android_attestations_and_offers_no_challenge(api, ca, optional_api, anon_key):
    assert "SIGNUP_ATTESTATION" not in GENERAL_SETTINGS
    assert_auth_error(api.get("/auth/v1/challenge", params={"type": "android_key_attestation"}), 422,
                      "attestation_disabled")
    client = create_client(api.base, anon_key)
    response = client.auth.sign_in_anonymously({"options": {"captcha_token": token(ca, fetch_challenge(optional_api))}})
    assert response.user.app_metadata["provider"] == "anonymous", response.user.app_metadata


def test_unverified_boot_is_accepted_only_when_allowed(start_server, roots_file, ca, anon_key):
    api = start_server(**dict(android_settings("required", roots_file), ANDROID_ALLOW_UNVERIFIED_BOOT="true")).api(anon_key)
    response = sign_up(api, token(ca, fetch_challenge(api), locked=False, boot_state=UNVERIFIED))
    assert response.status_code == 200, response.text


# ---------------------------------------------------------------- the threshold counts devices of both platforms

def test_under_attested_android_and_ios_identities_both_count(both_api, optional_api, ca, apple_ca, db, anon_key):
    db.psql("create or replace function private.threshold_counts() returns text language sql immutable "
            "parallel safe return 'attested'; select private.median_rule_reconcile()")
    try:
        sessions = [sign_up(both_api, token(ca, fetch_challenge(both_api))).json() for _ in range(2)]
        sessions.append(sign_up(both_api, ios.token(apple_ca, ios.fetch_challenge(both_api))).json())
        plain = [sign_up(optional_api, None).json() for _ in range(2)]
        db.age_users([s["user"]["id"] for s in sessions + plain])
        devices, mixed = location("android-and-ios"), location("android-and-plain")
        for session in sessions:
            client = create_client(both_api.base, anon_key)
            client.auth.set_session(session["access_token"], session["refresh_token"])
            client.table("price_reports").insert(report(devices, 400), returning="minimal").execute()
        for session in sessions[:1] + plain:
            assert both_api.submit(report(mixed, 300), token=session["access_token"],
                                   prefer="return=minimal").status_code == 201
        medians = both_api.medians([devices, mixed], sessions[0]["access_token"])
        assert [(m["location_id"], m["reporters"], m["median_cents"]) for m in medians] == [(devices, 3, 400)], medians
    finally:
        db.psql("create or replace function private.threshold_counts() returns text language sql immutable "
                "parallel safe return 'mature'; select private.median_rule_reconcile()")


# ---------------------------------------------------------------- settings

@pytest.mark.parametrize("settings, message", [
    ({"SIGNUP_ATTESTATION": "required", "ANDROID_PACKAGE_NAMES": PACKAGE,
      "ANDROID_ATTESTATION_ROOTS_FILE": "/nonexistent/roots.pem"}, "cannot read PRICESVC_ANDROID_ATTESTATION_ROOTS_FILE"),
    ({"SIGNUP_ATTESTATION": "required", "ANDROID_PACKAGE_NAMES": PACKAGE, "ANDROID_ATTESTATION_ROOTS_FILE": __file__},
     "PRICESVC_ANDROID_ATTESTATION_ROOTS_FILE must be a PEM file"),
    ({"SIGNUP_ATTESTATION": "required", "ANDROID_PACKAGE_NAMES": PACKAGE,
      "ANDROID_ATTESTATION_STATUS_FILE": "/nonexistent/status.json"}, "cannot read PRICESVC_ANDROID_ATTESTATION_STATUS_FILE"),
    ({"SIGNUP_ATTESTATION": "required", "ANDROID_PACKAGE_NAMES": PACKAGE, "ANDROID_ATTESTATION_STATUS_FILE": __file__},
     "is not an attestation status list"),
    ({"SIGNUP_ATTESTATION": "required", "ANDROID_PACKAGE_NAMES": PACKAGE, "ANDROID_SIGNING_CERT_DIGESTS": "AA=="},
     "PRICESVC_ANDROID_SIGNING_CERT_DIGESTS must be base64 SHA-256 digests"),
])
def test_serve_refuses_incomplete_android_settings(migrated, settings, message):
    result = migrated.run("serve", timeout=30, LISTEN="127.0.0.1:0", **settings)
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert message in result.stderr, result.stderr
