"""Who may call what: the apikey gate, anon, and forged or expired access tokens."""

import json
import time
import uuid

import pytest
import requests

from helpers import (REQUEST_TIMEOUT, assert_auth_error, assert_postgrest_error, b64url, b64url_decode, jwt_claims, mint,
                     report)

REST_CALLS = [
    ("POST", "/rest/v1/price_reports", {"location_id": "e2e:x", "rate_kind": "hourly", "price_cents": 100}),
    ("POST", "/rest/v1/rpc/price_medians", {"location_ids": ["e2e:x"]}),
    ("POST", "/rest/v1/rpc/price_median", {"location_id": "e2e:x"}),
    ("GET", "/rest/v1/", None),
]
AUTH_CALLS = [
    ("POST", "/auth/v1/signup", {"data": {}}),
    ("POST", "/auth/v1/token?grant_type=refresh_token", {"refresh_token": "x" * 43}),
    ("POST", "/auth/v1/logout", None),
    ("GET", "/auth/v1/user", None),
]


# ---------------------------------------------------------------- the apikey gate

@pytest.mark.parametrize("method,path,body", REST_CALLS + AUTH_CALLS)
def test_every_rest_and_auth_call_without_an_apikey_is_401(api, token, method, path, body):
    response = api.request(method, path, apikey=None, token=token, json_body=body)
    assert response.status_code == 401, (path, response.text)
    if path.startswith("/auth/"):
        assert_auth_error(response, 401)
    else:
        assert_postgrest_error(response, 401)


@pytest.mark.parametrize("method,path,body", REST_CALLS + AUTH_CALLS)
def test_a_wrong_apikey_is_401(api, env, token, method, path, body):
    wrong_keys = [
        "not-a-jwt",
        mint({"role": "anon", "iss": "pricesvc"}, "some-other-secret-that-is-long-enough-1234"),
        token,  # a user's access token is not the anon key
        mint({"role": "service_role", "iss": "pricesvc"}, env.secret),
    ]
    for key in wrong_keys:
        response = api.request(method, path, apikey=key, token=token, json_body=body)
        assert response.status_code == 401, (path, key[:20], response.text)


def test_the_apikey_header_name_is_case_insensitive(api, token):
    response = api.request("POST", "/rest/v1/rpc/price_medians", apikey=None, token=token,
                           json_body={"location_ids": ["e2e:x"]}, headers={"apiKey": api.anon_key})
    assert response.status_code == 200, response.text


def test_ops_endpoints_need_no_apikey(api, server):
    for path in ("/healthz", "/readyz"):
        assert api.get(path, apikey=None).status_code == 200
    assert requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).status_code == 200


# ---------------------------------------------------------------- anon may call nothing

@pytest.mark.parametrize("bearer", ["none", "anon-key"])
def test_anon_cannot_insert_a_report(api, db, anon_key, bearer):
    row = report()
    response = api.submit(row, anon_key if bearer == "anon-key" else None)
    assert_postgrest_error(response, 401, "42501")
    assert db.count_reports([row["client_report_id"]]) == 0


@pytest.mark.parametrize("bearer", ["none", "anon-key"])
@pytest.mark.parametrize("call", [("price_medians", {"location_ids": ["e2e:x"]}),
                                  ("price_median", {"location_id": "e2e:x"})])
def test_anon_cannot_call_the_median_functions(api, anon_key, bearer, call):
    response = api.rpc(call[0], call[1], anon_key if bearer == "anon-key" else None)
    assert_postgrest_error(response, 401, "42501")


def test_anon_cannot_call_the_get_form_either(api):
    response = api.get("/rest/v1/rpc/price_median", params={"location_id": "e2e:x"})
    assert_postgrest_error(response, 401, "42501")


def test_anon_has_no_user(api, anon_key):
    assert_auth_error(api.get("/auth/v1/user"), 401)
    assert_auth_error(api.get("/auth/v1/user", token=anon_key), 401)
    assert_auth_error(api.logout(anon_key), 401)


def test_an_authorization_header_that_is_not_bearer_is_401(api, token):
    response = api.request("POST", "/rest/v1/price_reports", json_body=report(),
                           headers={"Authorization": f"Basic {token}"})
    assert_postgrest_error(response, 401)


# ---------------------------------------------------------------- forged tokens

def _forgeries(env, user) -> dict:
    genuine = user["access_token"]
    head, payload, signature = genuine.split(".")
    claims = jwt_claims(genuine)
    other_sub = dict(claims, sub=str(uuid.uuid4()))
    now = int(time.time())
    return {
        "wrong key": mint(claims, "an-attacker-secret-that-is-long-enough-000"),
        "alg none": b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode()) + "." + payload + ".",
        "alg none with signature": b64url(json.dumps({"alg": "none", "typ": "JWT"}).encode()) + "." + payload
        + "." + signature,
        "alg RS256 signed with the secret": mint(claims, env.secret, {"alg": "RS256", "typ": "JWT"}),
        "alg HS512": mint(claims, env.secret, {"alg": "HS512", "typ": "JWT"}),
        "tampered payload (other sub)": head + "." + b64url(json.dumps(other_sub).encode()) + "." + signature,
        "tampered payload (exp pushed out)": head + "." + b64url(json.dumps(dict(claims, exp=now + 10**8)).encode())
        + "." + signature,
        "expired": mint(dict(claims, iat=now - 7200, exp=now - 3600), env.secret),
        "not yet valid": mint(dict(claims, iat=now + 3600, nbf=now + 3600, exp=now + 7200), env.secret),
        "wrong audience": mint(dict(claims, aud="somebody-else"), env.secret),
        "role service_role": mint(dict(claims, role="service_role"), env.secret),
        "truncated signature": head + "." + payload + "." + signature[:-4],
        "two segments": head + "." + payload,
        "garbage": "a.b.c",
        # Signed with the right key, but over the verifier's 8 KiB limit: refused unread.
        "oversize": mint(dict(claims, pad="x" * 6500), env.secret),
    }


def test_forged_tokens_cannot_insert_reports(api, env, user, db):
    for name, forged in _forgeries(env, user).items():
        row = report()
        response = api.submit(row, forged)
        assert response.status_code == 401, (name, response.status_code, response.text)
        assert_postgrest_error(response, 401)
        assert db.count_reports([row["client_report_id"]]) == 0, name


def test_forged_tokens_cannot_read_medians(api, env, user):
    for name, forged in _forgeries(env, user).items():
        response = api.rpc("price_medians", {"location_ids": ["e2e:x"]}, forged)
        assert response.status_code == 401, (name, response.status_code, response.text)


def test_forged_tokens_get_no_user_and_cannot_log_anyone_out(api, env, user):
    for name, forged in _forgeries(env, user).items():
        assert_auth_error(api.get("/auth/v1/user", token=forged), 401)
        assert_auth_error(api.logout(forged), 401)
    assert api.refresh(user["refresh_token"]).status_code == 200


def test_an_expired_token_is_answered_with_pgrst303(api, env, user):
    now = int(time.time())
    expired = mint(dict(jwt_claims(user["access_token"]), iat=now - 7200, exp=now - 3600), env.secret)
    body = assert_postgrest_error(api.submit(report(), expired), 401)
    assert body["code"] == "PGRST303", body


def test_a_token_minted_with_the_secret_for_a_made_up_user_is_checked_by_the_database(api, env, db):
    """Holding the secret is holding the keys; without it (above) nothing works. With it, the database
    still decides: the claims that reach it are the verified ones."""
    now = int(time.time())
    claims = {"sub": str(uuid.uuid4()), "role": "authenticated", "aud": "authenticated", "iat": now,
              "exp": now + 600, "iss": "pricesvc", "session_id": str(uuid.uuid4()), "is_anonymous": True}
    row = report()
    response = api.submit(row, mint(claims, env.secret))
    assert response.status_code in (201, 400, 401, 403, 409), response.text
    if response.status_code == 201:
        assert db.psql(f"select reporter_id from public.price_reports "
                       f"where client_report_id = '{row['client_report_id']}'") == claims["sub"]


def test_an_access_token_is_hs256_with_the_documented_claims(api, env, user):
    header, payload = (json.loads(b64url_decode(part)) for part in user["access_token"].split(".")[:2])
    assert header["alg"] == "HS256"
    assert payload["sub"] == user["user"]["id"]
    assert payload["role"] == "authenticated" and payload["aud"] == "authenticated"
    assert payload["iss"] == "pricesvc" and payload["is_anonymous"] is True
    assert uuid.UUID(payload["session_id"])
    assert payload["exp"] - payload["iat"] == 3600


def test_headers_beyond_the_connection_memory_get_431_and_the_server_carries_on(api, env, user):
    huge = mint(dict(jwt_claims(user["access_token"]), pad="x" * 40000), env.secret)
    response = api.submit(report(), huge)
    assert response.status_code == 431
    assert "header" in response.text.lower()
    assert api.get("/healthz").status_code == 200
    assert api.submit(report(), user["access_token"]).status_code == 201
