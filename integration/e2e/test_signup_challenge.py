"""The optional proof-of-work challenge for anonymous sign-up (PRICESVC_SIGNUP_CHALLENGE): ALTCHA's
challenge format, solved and checked by the independent `altcha` package from PyPI, carried in the
`gotrue_meta_security.captcha_token` field the Supabase SDKs already send.

altcha 2.x names the classic format (SHA-256(salt + number), HMAC-signed challenge, `expires=` in the salt)
`*_v1`; its unprefixed functions speak the newer key-derivation format, which pricesvc does not issue."""

import base64
import datetime
import hashlib
import hmac
import json
import re
import threading
import time

import altcha
import pytest
from supabase import create_client
from supabase_auth.errors import AuthApiError

from conftest import GENERAL_SETTINGS
from helpers import assert_auth_error, fake_client_ip

MAX_NUMBER = 20_000  # keeps the pure-Python solver well under a second
TTL = 300


@pytest.fixture(scope="module")
def challenge_server(session_servers):
    return session_servers.start(**GENERAL_SETTINGS, SIGNUP_CHALLENGE="true",
                                 SIGNUP_CHALLENGE_MAX_NUMBER=MAX_NUMBER, SIGNUP_CHALLENGE_TTL=TTL)


@pytest.fixture
def capi(challenge_server, anon_key):
    return challenge_server.api(anon_key)


@pytest.fixture(scope="module")
def challenge_key(env) -> bytes:
    """The server's ALTCHA HMAC key: HMAC-SHA256(JWT secret, "pricesvc signup-challenge v1")."""
    return hmac.new(env.secret.encode(), b"pricesvc signup-challenge v1", hashlib.sha256).digest()


def fetch_challenge(api) -> dict:
    response = api.get("/auth/v1/challenge")
    assert response.status_code == 200, response.text
    assert response.headers["Cache-Control"] == "no-store"
    return response.json()


def solve(challenge: dict, number_offset: int = 0, **overrides) -> str:
    """The altcha package solves the challenge; the payload is what an ALTCHA widget would submit."""
    solution = altcha.solve_challenge_v1(altcha.ChallengeV1(challenge["algorithm"], challenge["challenge"],
                                                            challenge["maxnumber"], challenge["salt"],
                                                            challenge["signature"]))
    assert solution is not None, "the altcha solver found no number"
    fields = dict(algorithm=challenge["algorithm"], challenge=challenge["challenge"],
                  number=solution.number + number_offset, salt=challenge["salt"], signature=challenge["signature"])
    fields.update(overrides)
    return altcha.PayloadV1(**fields).to_base64()


def sign_up(api, captcha_token, forwarded_for=None):
    body = {"data": {}, "gotrue_meta_security": {"captcha_token": captcha_token}}
    return api.post("/auth/v1/signup", json_body=body, forwarded_for=forwarded_for)


def assert_captcha_failed(response, reason: str) -> dict:
    error = assert_auth_error(response, 400, "captcha_failed")
    assert error["msg"].startswith("captcha protection: request disallowed"), error
    assert re.search(reason, error["msg"]), error
    return error


# ---------------------------------------------------------------- the challenge

def test_the_challenge_is_altchas_format_with_a_signed_expiry(capi, challenge_key):
    challenge = fetch_challenge(capi)
    assert set(challenge) == {"algorithm", "challenge", "maxnumber", "salt", "signature"}
    assert challenge["algorithm"] == "SHA-256" and challenge["maxnumber"] == MAX_NUMBER
    match = re.fullmatch(r"[0-9a-f]{24}\?expires=(\d+)&", challenge["salt"])
    assert match, challenge["salt"]
    assert abs(int(match.group(1)) - (time.time() + TTL)) < 30
    assert re.fullmatch(r"[0-9a-f]{64}", challenge["challenge"]) and re.fullmatch(r"[0-9a-f]{64}", challenge["signature"])
    assert fetch_challenge(capi)["challenge"] != challenge["challenge"], "every challenge is fresh"
    # The altcha package accepts our challenge, solved, as valid under the key we derive.
    assert altcha.verify_solution_v1(solve(challenge), challenge_key) == (True, None)


def test_the_challenge_needs_the_api_key(capi):
    assert_auth_error(capi.get("/auth/v1/challenge", apikey=None), 401, "no_api_key")


# ---------------------------------------------------------------- sign-up with a solution

def test_a_challenge_solved_by_the_altcha_package_signs_up(capi):
    response = sign_up(capi, solve(fetch_challenge(capi)))
    assert response.status_code == 200, response.text
    session = response.json()
    assert session["access_token"] and session["user"]["is_anonymous"] is True


def test_the_same_solution_twice_is_refused_and_only_its_sha256_is_stored(capi, db):
    challenge = fetch_challenge(capi)
    token = solve(challenge)
    assert sign_up(capi, token).status_code == 200
    assert_captcha_failed(sign_up(capi, token), "already used")
    digest = hashlib.sha256(challenge["challenge"].encode()).hexdigest()
    assert db.scalar(f"select count(*) from auth.spent_signup_challenges "
                     f"where challenge_hash = '\\x{digest}'::bytea") == "1"


def test_one_solution_sent_by_four_clients_at_once_creates_one_user(capi):
    token = solve(fetch_challenge(capi))
    statuses = []
    barrier = threading.Barrier(4, timeout=10)

    def attempt():
        barrier.wait()
        statuses.append(sign_up(capi.__class__(capi.base, capi.anon_key), token).status_code)

    threads = [threading.Thread(target=attempt) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert len(statuses) == 4, statuses
    assert sorted(statuses) == [200, 400, 400, 400], statuses


def test_an_expired_challenge_is_refused(capi, challenge_key):
    # Made by the altcha package with the server's key, so only the expiry is wrong.
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=5)
    expired = altcha.create_challenge_v1(hmac_key=challenge_key, max_number=1000, expires=past)
    assert_captcha_failed(sign_up(capi, solve(dict(expired.to_dict(), maxnumber=1000))), "expired")


def test_a_challenge_made_by_the_altcha_package_with_the_servers_key_is_accepted(capi, challenge_key):
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=60)
    made = altcha.create_challenge_v1(hmac_key=challenge_key, max_number=1000, expires=soon)
    response = sign_up(capi, solve(dict(made.to_dict(), maxnumber=1000)))
    assert response.status_code == 200, response.text


def test_a_challenge_made_with_another_key_is_refused(capi):
    soon = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=60)
    foreign = altcha.create_challenge_v1(hmac_key=b"somebody else's key", max_number=1000, expires=soon)
    assert_captcha_failed(sign_up(capi, solve(dict(foreign.to_dict(), maxnumber=1000))), "signature")


def test_a_tampered_signature_is_refused(capi):
    challenge = fetch_challenge(capi)
    signature = challenge["signature"]
    forged = ("0" if signature[0] != "0" else "1") + signature[1:]
    assert_captcha_failed(sign_up(capi, solve(challenge, signature=forged)), "signature")
    # The refusal spent nothing: the honest solution still works.
    assert sign_up(capi, solve(challenge)).status_code == 200


def test_a_wrong_number_is_refused(capi):
    challenge = fetch_challenge(capi)
    assert_captcha_failed(sign_up(capi, solve(challenge, number_offset=1)), "does not solve")
    assert sign_up(capi, solve(challenge)).status_code == 200


def test_a_stretched_expiry_in_the_salt_is_refused(capi):
    challenge = fetch_challenge(capi)
    later = re.sub(r"expires=\d+", f"expires={int(time.time()) + 100}", challenge["salt"])
    assert_captcha_failed(sign_up(capi, solve(challenge, salt=later)), "does not solve")


@pytest.mark.parametrize("body", [{"data": {}, "gotrue_meta_security": {"captcha_token": None}},
                                  {"data": {}}, {"gotrue_meta_security": {}}, None])
def test_a_missing_token_is_refused(capi, body):
    response = capi.post("/auth/v1/signup", json_body=body) if body is not None \
        else capi.post("/auth/v1/signup", data=b"")
    assert_captcha_failed(response, "captcha_token is required")


@pytest.mark.parametrize("token", ["not base64!", base64.b64encode(b"[1,2]").decode(),
                                   base64.b64encode(json.dumps({"algorithm": "SHA-256"}).encode()).decode(),
                                   "A" * 5000])
def test_a_malformed_token_is_refused_never_a_500(capi, token):
    assert_captcha_failed(sign_up(capi, token), "not an ALTCHA solution payload")


def test_a_sign_up_refused_for_another_reason_spends_nothing(start_server, anon_key):
    server = start_server(SIGNUP_CHALLENGE="true", SIGNUP_CHALLENGE_MAX_NUMBER=MAX_NUMBER, TRUSTED_PROXIES="127.0.0.1",
                          SIGNUP_BURST=1, SIGNUPS_PER_HOUR=1, RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key)
    crowded, fresh = fake_client_ip(), fake_client_ip()
    assert sign_up(api, solve(fetch_challenge(api)), forwarded_for=crowded).status_code == 200
    token = solve(fetch_challenge(api))
    assert_auth_error(sign_up(api, token, forwarded_for=crowded), 429, "over_request_rate_limit")
    # The challenge was spent in the refused sign-up's transaction, which rolled back.
    assert sign_up(api, token, forwarded_for=fresh).status_code == 200
    assert_captcha_failed(sign_up(api, token, forwarded_for=fake_client_ip()), "already used")


# ---------------------------------------------------------------- the unmodified SDK

def test_supabase_py_signs_in_anonymously_with_the_solution_as_its_captcha_token(challenge_server, capi, anon_key):
    client = create_client(challenge_server.url, anon_key)
    response = client.auth.sign_in_anonymously({"options": {"captcha_token": solve(fetch_challenge(capi))}})
    assert response.session and response.session.access_token
    assert response.user.is_anonymous is True
    with pytest.raises(AuthApiError) as refused:
        create_client(challenge_server.url, anon_key).auth.sign_in_anonymously()
    assert refused.value.status == 400 and refused.value.code == "captcha_failed"


# ---------------------------------------------------------------- off by default

def test_off_by_default_sign_up_needs_no_token_and_ignores_one(api):
    assert "SIGNUP_CHALLENGE" not in GENERAL_SETTINGS
    assert sign_up(api, None).status_code == 200
    assert sign_up(api, "anything at all").status_code == 200
    assert_auth_error(api.get("/auth/v1/challenge"), 422, "signup_challenge_disabled")
