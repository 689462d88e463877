"""Anonymous sign-in (Supabase Auth subset): sessions, refresh rotation and reuse, logout, limits."""

import hashlib
import re
import time
import uuid

import pytest

from helpers import (assert_auth_error, b64url_decode, fake_client_ip, jwt_claims, report, retry_after, wait_until,
                     signature_valid)

USER_KEYS = {"id", "aud", "role", "is_anonymous", "app_metadata", "user_metadata", "identities",
             "created_at", "updated_at"}


def assert_session(session: dict, secret: str, ttl: int = 3600):
    assert {"access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user"} <= set(session)
    assert session["token_type"] == "bearer"
    assert session["expires_in"] == ttl
    assert abs(session["expires_at"] - (time.time() + ttl)) < 30
    assert len(b64url_decode(session["refresh_token"])) >= 32
    assert re.fullmatch(r"[A-Za-z0-9_-]+", session["refresh_token"])
    user = session["user"]
    assert USER_KEYS <= set(user), set(user)
    assert uuid.UUID(user["id"])
    assert user["aud"] == "authenticated" and user["role"] == "authenticated"
    assert user["is_anonymous"] is True
    assert isinstance(user["app_metadata"], dict) and isinstance(user["user_metadata"], dict)
    assert user["identities"] == []
    assert user["created_at"] and user["updated_at"]
    claims = jwt_claims(session["access_token"])
    assert claims["sub"] == user["id"] and claims["exp"] == session["expires_at"]
    assert signature_valid(session["access_token"], secret)


# ---------------------------------------------------------------- sign-up

def test_anonymous_sign_up_answers_200_with_supabase_auths_session_shape(start_server, anon_key, env):
    # user_metadata keeps only the keys PRICESVC_USER_METADATA_KEYS lists (test_retention.py).
    api = start_server(USER_METADATA_KEYS="app,n").api(anon_key)
    response = api.sign_up(data={"app": "e2e", "n": 1})
    assert response.status_code == 200, response.text
    session = response.json()
    assert_session(session, env.secret)
    assert session["user"]["user_metadata"] == {"app": "e2e", "n": 1}


def test_sign_up_with_an_empty_body_works_too(api, env):
    response = api.post("/auth/v1/signup", data=b"")
    assert response.status_code == 200, response.text
    assert_session(response.json(), env.secret)


def test_every_sign_up_is_a_new_user(api):
    first, second = api.new_session(), api.new_session()
    assert first["user"]["id"] != second["user"]["id"]
    assert first["refresh_token"] != second["refresh_token"]


@pytest.mark.parametrize("body", [{"email": "a@example.com", "password": "hunter2hunter2"},
                                  {"phone": "+15555550123", "password": "hunter2hunter2"},
                                  {"email": "a@example.com", "data": {}}])
def test_sign_up_with_email_or_phone_is_422_in_supabase_auths_error_shape(api, body):
    response = api.post("/auth/v1/signup", json_body=body)
    error = assert_auth_error(response, 422)
    assert set(error) == {"code", "error_code", "msg"}
    assert error["error_code"]


def test_sign_up_refuses_oversized_user_metadata(api):
    response = api.sign_up(data={"blob": "x" * 5000})
    assert_auth_error(response, 400)


def test_sign_up_refuses_a_body_that_is_not_a_json_object(api):
    for body in (b"[]", b"{", b"42"):
        response = api.post("/auth/v1/signup", data=body, headers={"Content-Type": "application/json"})
        assert_auth_error(response, 400)


def test_the_refresh_token_is_stored_only_as_its_sha256(api, db):
    session = api.new_session()
    dump = db.dump_data()
    assert session["refresh_token"] not in dump
    digest = hashlib.sha256(session["refresh_token"].encode()).hexdigest()
    raw_digest = hashlib.sha256(b64url_decode(session["refresh_token"])).hexdigest()
    assert digest in dump or raw_digest in dump, "the refresh token's SHA-256 is not stored"


def test_no_raw_client_ip_is_stored(start_server, anon_key, db):
    server = start_server(TRUSTED_PROXIES="127.0.0.1", SIGNUP_BURST=100, SIGNUPS_PER_HOUR=100)
    ip = fake_client_ip()
    api = server.api(anon_key, forwarded_for=ip)
    session = api.new_session()
    api.refresh(session["refresh_token"])
    assert ip not in db.dump_data()


# ---------------------------------------------------------------- the session in use

def test_get_user_returns_the_signed_in_user(api, user):
    response = api.get("/auth/v1/user", token=user["access_token"])
    assert response.status_code == 200, response.text
    body = response.json()
    assert USER_KEYS <= set(body)
    assert body["id"] == user["user"]["id"] and body["is_anonymous"] is True
    assert body["user_metadata"] == user["user"]["user_metadata"]


def test_sign_up_then_submit_then_read_a_median_over_http(api, db):
    loc = f"e2e:flow:{uuid.uuid4().hex[:8]}"
    sessions = [api.new_session() for _ in range(3)]
    db.age_users([s["user"]["id"] for s in sessions])  # only identities a day old count toward medians
    for index, session in enumerate(sessions):
        assert api.submit(report(loc, 200 + 100 * index), session["access_token"]).status_code == 201
    rows = api.medians([loc], sessions[0]["access_token"])
    assert [(r["location_id"], r["median_cents"], r["reporters"]) for r in rows] == [(loc, 300, 3)]


# ---------------------------------------------------------------- refresh rotation

def test_refresh_rotates_the_refresh_token_and_issues_a_working_access_token(api, env, user):
    response = api.refresh(user["refresh_token"])
    assert response.status_code == 200, response.text
    rotated = response.json()
    assert_session(rotated, env.secret)
    assert rotated["refresh_token"] != user["refresh_token"]
    assert rotated["user"]["id"] == user["user"]["id"]
    assert jwt_claims(rotated["access_token"])["session_id"] == jwt_claims(user["access_token"])["session_id"]
    assert api.submit(report(), rotated["access_token"]).status_code == 201
    # The new refresh token rotates again.
    assert api.refresh(rotated["refresh_token"]).status_code == 200


def test_an_old_refresh_token_presented_again_inside_the_reuse_window_is_200(api, user):
    first = api.refresh(user["refresh_token"])
    assert first.status_code == 200
    again = api.refresh(user["refresh_token"])  # the client lost the first response
    assert again.status_code == 200, again.text
    assert again.json()["user"]["id"] == user["user"]["id"]
    assert api.refresh(again.json()["refresh_token"]).status_code == 200


def test_an_old_refresh_token_outside_the_reuse_window_is_400_already_used_and_revokes_the_session(
        start_server, anon_key, db):
    server = start_server(REFRESH_REUSE_SECONDS=1, RATE_LIMIT_PER_MINUTE=100000, TRUSTED_PROXIES="127.0.0.1",
                          SIGNUP_BURST=100, SIGNUPS_PER_HOUR=100)
    api = server.api(anon_key, forwarded_for=fake_client_ip())
    session = api.new_session()
    rotated = api.refresh(session["refresh_token"])
    assert rotated.status_code == 200
    # auth.refresh_session() compares the rotation time with its own clock: wait until, by that clock,
    # the rotation is more than the 1 s reuse window ago.
    wait_until(lambda: db.scalar(
        "select clock_timestamp() - max(t.rotated_at) > interval '1.2 seconds' from auth.refresh_tokens t "
        f"join auth.sessions s on s.id = t.session_id where s.user_id = '{session['user']['id']}'") == "t",
        timeout=10, interval=0.2, message="the reuse window to pass by the database's clock")
    reused = api.refresh(session["refresh_token"])
    assert_auth_error(reused, 400, "refresh_token_already_used")
    # The whole session is revoked: the newest refresh token fails too, now and later.
    newest = api.refresh(rotated.json()["refresh_token"])
    assert_auth_error(newest, 400)
    assert newest.json()["error_code"] in ("refresh_token_not_found", "refresh_token_already_used")
    assert_auth_error(api.refresh(session["refresh_token"]), 400)


def test_an_unknown_refresh_token_is_400_refresh_token_not_found(api):
    for token in ("A" * 43, "not base64 !!", "x"):
        assert_auth_error(api.refresh(token), 400, "refresh_token_not_found")


def test_refresh_needs_grant_type_refresh_token_and_a_token(api, user):
    response = api.post("/auth/v1/token", params={"grant_type": "password"},
                        json_body={"email": "a@example.com", "password": "x"})
    assert_auth_error(response, 400)
    response = api.post("/auth/v1/token", params={"grant_type": "refresh_token"}, json_body={})
    assert_auth_error(response, 400)
    response = api.post("/auth/v1/token", json_body={"refresh_token": user["refresh_token"]})
    assert_auth_error(response, 400)


# ---------------------------------------------------------------- logout

@pytest.mark.parametrize("scope", ["global", "local", None])
def test_logout_global_or_local_answers_204_and_the_refresh_token_dies(api, scope):
    session, bystander = api.new_session(), api.new_session()
    response = api.logout(session["access_token"], scope=scope)
    assert response.status_code == 204, response.text
    assert response.content == b""
    assert_auth_error(api.refresh(session["refresh_token"]), 400, "refresh_token_not_found")
    assert api.refresh(bystander["refresh_token"]).status_code == 200


def test_logout_others_answers_204_and_keeps_this_sessions_refresh_token(api):
    session, bystander = api.new_session(), api.new_session()
    response = api.logout(session["access_token"], scope="others")
    assert response.status_code == 204, response.text
    assert api.refresh(session["refresh_token"]).status_code == 200
    assert api.refresh(bystander["refresh_token"]).status_code == 200


def test_logout_after_a_refresh_kills_the_rotated_token_too(api):
    session = api.new_session()
    rotated = api.refresh(session["refresh_token"]).json()
    assert api.logout(session["access_token"], scope="global").status_code == 204
    assert_auth_error(api.refresh(rotated["refresh_token"]), 400, "refresh_token_not_found")


@pytest.mark.parametrize("scope", ["global", "local", "others"])
def test_logout_with_a_revoked_sessions_token_is_403_session_not_found_like_user(api, scope):
    # The second logout once answered 204 as if it had signed something out, while /user said 403.
    session = api.new_session()
    assert api.logout(session["access_token"], scope="local").status_code == 204
    assert_auth_error(api.get("/auth/v1/user", token=session["access_token"]), 403, "session_not_found")
    again = api.logout(session["access_token"], scope=scope)
    body = assert_auth_error(again, 403, "session_not_found")
    assert body["msg"] == "Session from the access token no longer exists"


def test_logout_with_an_unknown_scope_is_400(api, user):
    assert_auth_error(api.logout(user["access_token"], scope="everyone"), 400)
    assert api.refresh(user["refresh_token"]).status_code == 200


def test_logout_without_an_access_token_is_401(api):
    assert_auth_error(api.post("/auth/v1/logout", data=b""), 401)


# ---------------------------------------------------------------- token lifetime

def test_the_access_token_lifetime_is_a_setting(start_server, anon_key, env):
    server = start_server(ACCESS_TOKEN_TTL=60, TRUSTED_PROXIES="127.0.0.1", SIGNUP_BURST=100, SIGNUPS_PER_HOUR=100)
    api = server.api(anon_key, forwarded_for=fake_client_ip())
    session = api.new_session()
    assert_session(session, env.secret, ttl=60)
    claims = jwt_claims(session["access_token"])
    assert claims["exp"] - claims["iat"] == 60
    refreshed = api.refresh(session["refresh_token"])
    assert refreshed.status_code == 200 and refreshed.json()["expires_in"] == 60


# ---------------------------------------------------------------- abuse limits

def test_the_per_ip_sign_up_limit_holds_across_two_pricesvc_processes_sharing_one_database(start_server, anon_key):
    settings = dict(TRUSTED_PROXIES="127.0.0.1", SIGNUP_BURST=3, SIGNUPS_PER_HOUR=3, RATE_LIMIT_PER_MINUTE=100000)
    first, second = start_server(**settings), start_server(**settings)
    ip = fake_client_ip()
    a, b = first.api(anon_key, forwarded_for=ip), second.api(anon_key, forwarded_for=ip)
    for api in (a, b, a):
        response = api.sign_up()
        assert response.status_code == 200, response.text
    for api in (b, a):
        response = api.sign_up()
        assert_auth_error(response, 429, "over_request_rate_limit")
        seconds = retry_after(response)
        assert seconds <= 3600
    # Another client address behind the same proxy is not affected.
    assert b.sign_up(forwarded_for=fake_client_ip()).status_code == 200


def test_the_per_ip_refresh_limit_answers_429_over_request_rate_limit(start_server, anon_key):
    server = start_server(TRUSTED_PROXIES="127.0.0.1", REFRESHES_PER_WINDOW=3, REFRESH_WINDOW_SECONDS=300,
                          SIGNUP_BURST=100, SIGNUPS_PER_HOUR=100, RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key, forwarded_for=fake_client_ip())
    token = api.new_session()["refresh_token"]
    for _ in range(3):
        response = api.refresh(token)
        assert response.status_code == 200, response.text
        token = response.json()["refresh_token"]
    limited = api.refresh(token)
    assert_auth_error(limited, 429, "over_request_rate_limit")
    retry_after(limited)
    # Another address may still refresh the same (unrotated) token.
    assert api.refresh(token, forwarded_for=fake_client_ip()).status_code == 200
