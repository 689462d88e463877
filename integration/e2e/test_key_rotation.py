"""Rotating the signing key without breaking anyone, and publishable API keys.

The rotation is the documented one (docs/configuration.md, "Rotation"), run by a login role that is a
member of pricesvc_owner and not a superuser: `pricesvc keys add`, roll the instances, `keys promote`,
`keys retire`. Two instances serve through it, one started with the old secret and one with the new;
a token signed by either, with either key, is accepted by both until the old key is retired. An app's
publishable key made before the rotation works after it, with the unmodified supabase-py client.

The rotation re-keys the shared database, so it runs last (disruptive) and puts the test secret back."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re
import uuid
from pathlib import Path

import pytest
import requests
from supabase import create_client

from helpers import (REQUEST_TIMEOUT, assert_auth_error, assert_postgrest_error, jwt_claims, mint, report,
                     signature_valid, wait_until)

ROLL = {"KEY_REFRESH_SECONDS": 1, "RATE_LIMIT_PER_MINUTE": 1_000_000, "SIGNUPS_PER_HOUR": 1_000_000,
        "SIGNUP_BURST": 1_000_000, "REFRESHES_PER_WINDOW": 1_000_000}
KEY_WAIT = 30  # seconds for every instance to re-read the keys (each reads them every second here)


def secret_file(directory: Path, name: str, secret: str) -> Path:
    path = directory / name
    path.write_text(secret + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def rotator(migrated, db):
    """`pricesvc keys ...` as a login role that is a member of pricesvc_owner, not a superuser."""
    name = "rotator_" + uuid.uuid4().hex[:8]
    db.psql(f"create role {name} login in role pricesvc_owner")
    migrated.allow_login(name)
    assert db.scalar(f"select rolsuper or rolbypassrls from pg_roles where rolname = '{name}'") == "f"
    url = f"postgresql:///pricesvc?host={migrated.pghost}&user={name}"

    def keys(*args, check: bool = True):
        result = migrated.run("keys", *args, timeout=60, MIGRATION_DATABASE_URL=url)
        if check:
            assert result.returncode == 0, f"keys {' '.join(args)}: {result.stdout}\n{result.stderr}"
        return result

    yield keys
    db.psql(f"drop role {name}")


def metric(server, name: str) -> int | None:
    match = re.search(rf"^{name} (\d+)$", server.metrics(), re.MULTILINE)
    return int(match.group(1)) if match else None


def wait_for_keys(server, count: int):
    wait_until(lambda: metric(server, "pricesvc_signing_keys") == count, KEY_WAIT,
               message=f"{server.url} verifying with {count} keys")


def sign_up_with(api, key: str):
    return api.post("/auth/v1/signup", apikey=key, json_body={"data": {}})


def resign(token: str, secret: str) -> str:
    """The same claims (a live session's), signed with another key."""
    return mint(jwt_claims(token), secret)


def accepted_everywhere(apis, tokens):
    """Every token submits a report through every instance: 201, never 401."""
    for api in apis:
        for token in tokens:
            response = api.submit(report(), token)
            assert response.status_code == 201, (api.base, jwt_claims(token)["sub"], response.status_code, response.text)


@pytest.mark.disruptive
def test_three_step_rotation_keeps_every_token_working_on_old_and_new_instances_and_the_old_app_key_after_it(
        migrated, start_server, rotator, anon_key, db, tmp_path, server):
    old_secret = migrated.secret
    new_secret = base64.b64encode(os.urandom(48)).decode()
    old_file, new_file = secret_file(tmp_path, "old", old_secret), secret_file(tmp_path, "new", new_secret)

    # An app ships with a publishable key, made before the rotation, and signs in with supabase-py.
    app_key = rotator("publishable", "create", "--name", "parking-app").stdout.strip()
    assert app_key.startswith("sb_publishable_")
    old = start_server(JWT_SECRET=old_secret, **ROLL)
    wait_until(lambda: old.api(app_key).get("/rest/v1/").status_code == 200, KEY_WAIT, message="the app key known")
    app = create_client(old.url, app_key)
    app.auth.sign_in_anonymously()
    app.table("price_reports").insert(report(), returning="minimal").execute()
    app.auth.sign_out()
    old_api = old.api(app_key)
    before = old_api.new_session()

    try:
        # 1. add: PostgreSQL and every instance verify the next key; nothing signs with it yet.
        added = rotator("add", "--next-secret-file", str(new_file))
        assert "added key" in added.stdout
        wait_for_keys(old, 2)
        # A restarted instance, still told the old key as its previous one: that
        # key must stop working there too once the database retires it.
        new = start_server(JWT_SECRET_FILE=str(new_file), JWT_SECRET=None, JWT_PREVIOUS_SECRET_FILE=str(old_file), **ROLL)
        wait_for_keys(new, 2)
        new_api = new.api(app_key)
        from_new = new_api.new_session()
        assert signature_valid(from_new["access_token"], old_secret), "before promote, every instance signs with the current key"
        tokens = [before["access_token"], from_new["access_token"],
                  resign(before["access_token"], new_secret), resign(from_new["access_token"], new_secret)]
        accepted_everywhere([old_api, new_api], tokens)

        # 2. promote: every instance signs with the new key, and still accepts the old one.
        promoted = rotator("promote")
        assert "is the current key" in promoted.stdout
        for api in (old_api, new_api):
            wait_until(lambda: signature_valid(api.new_session()["access_token"], new_secret), KEY_WAIT,
                       message=f"{api.base} signing with the new key")
        after_old, after_new = old_api.new_session(), new_api.new_session()
        assert not signature_valid(after_old["access_token"], old_secret)
        accepted_everywhere([old_api, new_api], tokens + [after_old["access_token"], after_new["access_token"]])
        refreshed = old_api.refresh(before["refresh_token"])
        assert refreshed.status_code == 200 and signature_valid(refreshed.json()["access_token"], new_secret)

        # 3. retire: the old key is gone. The instance still started with it is no longer ready (its
        #    secret is not a key of the set) ...
        retired = rotator("retire")
        assert "retired the previous key" in retired.stdout
        wait_for_keys(new, 1)
        wait_until(lambda: requests.get(old.admin_url + "/readyz", timeout=REQUEST_TIMEOUT).status_code == 503,
                   KEY_WAIT, message="the old-secret instance not ready")
        reason = requests.get(old.admin_url + "/readyz", timeout=REQUEST_TIMEOUT).json()["reason"]
        assert "not one of the database's signing keys" in reason, reason
        assert requests.get(new.admin_url + "/readyz", timeout=REQUEST_TIMEOUT).status_code == 200
        # ... tokens signed with the old key are refused, by the instance and by PostgreSQL itself ...
        assert_postgrest_error(new_api.submit(report(), before["access_token"]), 401, "PGRST301")
        row = report()
        assert old_api.submit(row, resign(after_old["access_token"], old_secret)).status_code == 401
        assert db.count_reports([row["client_report_id"]]) == 0
        # ... and so is the legacy anon key, signed with the old secret: why apps use publishable keys.
        assert_auth_error(sign_up_with(new_api, anon_key), 401, "invalid_api_key")
        # One key ring, one verdict. The instance still holding the retired key
        # signs nothing (no sign-up, no refresh, with any key) and neither instance lets a token signed
        # with it read or sign out a live session: /auth/v1/user and /logout verify it in PostgreSQL.
        victim = new_api.new_session()
        forged = resign(victim["access_token"], old_secret)
        assert_auth_error(old_api.sign_up(), 503, "service_unavailable")
        assert sign_up_with(old_api, anon_key).status_code in (401, 503)
        assert_auth_error(old_api.refresh(victim["refresh_token"]), 503, "service_unavailable")
        for api in (old_api, new_api):
            assert_auth_error(api.get("/auth/v1/user", token=forged), 401, "bad_jwt")
            assert_auth_error(api.logout(forged), 401, "bad_jwt")
        assert new_api.get("/auth/v1/user", token=victim["access_token"]).status_code == 200, "the victim's session lives on"

        # The app key made before the rotation still works: a session goes on with its refresh token (its
        # access token was signed with the old key), and the app signs in and reports with the same key.
        again = new_api.refresh(refreshed.json()["refresh_token"])
        assert again.status_code == 200, again.text
        accepted_everywhere([new_api], [again.json()["access_token"]])
        fresh = create_client(new.url, app_key)
        fresh.auth.sign_in_anonymously()
        fresh.table("price_reports").insert(report(), returning="minimal").execute()
        assert fresh.rpc("price_medians", {"location_ids": ["e2e:nowhere"]}).execute().data == []

        # An instance started with the retired secret, or any other, refuses to start.
        for secret in (old_secret, base64.b64encode(os.urandom(48)).decode()):
            refused = migrated.run("serve", timeout=30, JWT_SECRET=secret, LISTEN="127.0.0.1:0")
            assert refused.returncode == 1, refused.stderr
            assert "not one of the database's signing keys" in refused.stderr, refused.stderr
        # And migrate with it changes nothing: it says so and exits 1.
        result = migrated.run("migrate", "--migration-database-url", migrated.owner_url, timeout=120)
        assert result.returncode == 1 and "not one of the database's signing keys" in result.stderr, result.stderr
    finally:
        # Back to the test secret alone, the same three steps.
        listed = rotator("list").stdout
        if "next" in listed:
            rotator("retire", "--slot", "next")
        if "previous" in listed:
            rotator("retire")
        if db.scalar(f"select count(*) from auth.signing_keys where secret = convert_to('{old_secret}', 'UTF8') "
                     f"and slot = 'current'") != "1":
            rotator("add", "--next-secret-file", str(old_file))
            # The shared server (started with the test secret, its default key interval of 10 s) reads
            # this ring of two, and so signs with the current key, the one retired next.
            wait_for_keys(server, 2)
            rotator("promote")
            rotator("retire")
        migrated.migrate()
    assert db.scalar("select count(*) from auth.signing_keys") == "1"
    # The shared server's next sign-up is signed with the key just retired: PostgreSQL refuses it (503, retry
    # shortly), and that refusal makes the server read the ring at once instead of at its next interval, so
    # the retry signs with the test secret, within seconds (what CI saw fail: the read waited for the
    # interval, and the test gave up at the first 503).
    shared = server.api(anon_key)

    def signs_with_the_test_secret() -> bool:
        response = shared.sign_up()
        if response.status_code == 503:
            return False
        assert response.status_code == 200, (response.status_code, response.text)
        return signature_valid(response.json()["access_token"], old_secret)

    try:
        wait_until(signs_with_the_test_secret, 6, interval=0.2, message="the shared server signing with the test secret again")
        assert metric(server, "pricesvc_signing_key_problem") == 0
    except AssertionError as error:
        keys = "\n".join(line for line in server.metrics().splitlines() if "signing_key" in line)
        raise AssertionError(f"{error}\nthe shared server's key gauges:\n{keys}\n"
                             f"its log (last lines):\n{server.stderr()[-3000:]}") from None


def test_keys_steps_out_of_order_are_refused_with_the_reason(rotator, tmp_path):
    assert rotator("list").stdout.startswith("current\t")
    promote = rotator("promote", check=False)
    assert promote.returncode == 1 and "no next key to promote" in promote.stderr, promote.stderr
    retire = rotator("retire", check=False)
    assert retire.returncode == 1 and "no previous key to retire" in retire.stderr, retire.stderr
    short = secret_file(tmp_path, "short", "too-short")
    add = rotator("add", "--next-secret-file", str(short), check=False)
    assert add.returncode == 2 and "32 bytes" in add.stderr, add.stderr


def test_authenticator_reads_only_wrapped_keys_and_cannot_change_them(db, migrated):
    """What an attacker holding the service's credentials gets from the key ring: ids, never a key."""
    secret = migrated.secret.encode()
    as_service = "set role authenticator; "
    rows = db.psql(as_service + "select key_id, slot, encode(wrapped, 'hex') from auth.signing_key_ring('0000000000000000')")
    assert rows and all(line.endswith("|") for line in rows.splitlines()), rows  # no key for an unknown holder
    key_id = hmac.new(secret, b"pricesvc signing key id v1", hashlib.sha256).digest()[:8].hex()
    assert db.scalar("select private.signing_key_id(secret) from auth.signing_keys where slot = 'current'") == key_id
    wrapped = bytes.fromhex(db.psql(as_service + f"select encode(wrapped, 'hex') from auth.signing_key_ring('{key_id}')"))
    assert wrapped != secret and len(wrapped) == len(secret)  # wrapped, even for its own holder
    # The wrapping is docs/contracts.md's: XOR with HMAC-SHA256(holder, "pricesvc signing key wrap v1:ID:BLOCK").
    stream = b"".join(hmac.new(secret, f"pricesvc signing key wrap v1:{key_id}:{block}".encode(), hashlib.sha256).digest()
                      for block in range(len(secret) // 32 + 1))
    assert bytes(a ^ b for a, b in zip(wrapped, stream)) == secret
    for statement in ("select * from auth.signing_keys",
                      "select auth.add_signing_key(convert_to(repeat('x', 40), 'UTF8'))",
                      "select auth.promote_signing_key()", "select auth.retire_signing_key()",
                      "select * from auth.signing_key_list()", "select * from auth.publishable_key_list()",
                      "select auth.revoke_publishable_key(gen_random_uuid())",
                      "select * from auth.create_publishable_key('x', sha256('x'), 'x')",
                      "select auth.install_first_signing_key(convert_to(repeat('x', 40), 'UTF8'))"):
        with pytest.raises(AssertionError, match="permission denied"):
            db.psql(as_service + statement)


def test_a_revoked_publishable_key_is_refused_and_the_legacy_anon_key_can_be_turned_off(
        rotator, start_server, anon_key):
    server = start_server(KEY_REFRESH_SECONDS=1, LEGACY_ANON_KEY="false")
    app_key = rotator("publishable", "create", "--name", "revoked-soon").stdout.strip()
    api = server.api(app_key)
    wait_until(lambda: api.get("/rest/v1/").status_code == 200, KEY_WAIT, message="the new key accepted")
    assert api.new_session()["access_token"]
    # The legacy JWT anon key is off on this server, as apikey and as a Bearer token.
    assert_postgrest_error(api.get("/rest/v1/", apikey=anon_key), 401, "PGRST000")
    assert_auth_error(sign_up_with(api, anon_key), 401, "invalid_api_key")
    assert_postgrest_error(api.rpc("price_medians", {"location_ids": ["e2e:x"]}, anon_key), 401)

    key_id = next(line.split("\t")[0] for line in rotator("publishable", "list").stdout.splitlines()
                  if "revoked-soon" in line and line.endswith("live"))
    assert rotator("publishable", "revoke", key_id).returncode == 0
    assert any(line.startswith(key_id) and "\trevoked " in line for line in rotator("publishable", "list").stdout.splitlines())
    wait_until(lambda: api.get("/rest/v1/").status_code == 401, KEY_WAIT, message="the revoked key refused")
    assert_auth_error(api.sign_up(), 401, "invalid_api_key")
    again = rotator("publishable", "revoke", key_id, check=False)
    assert again.returncode == 1 and "no live publishable key" in again.stderr
    # A key of the right form that was never made is refused like any other.
    assert_postgrest_error(api.get("/rest/v1/", apikey="sb_publishable_" + "A" * 43), 401, "PGRST000")
