"""Retention and erasure: prune deletes reports past the report window plus a
grace and the median store follows; `pricesvc forget-user ID` erases one person as a login that is only a
member of pricesvc_owner; user_metadata stores only allow-listed keys; maintenance runs show on /metrics."""

import re
import subprocess
import time
import uuid

import pytest

from helpers import location, report, wait_until

OPERATOR = "e2e_erasure_operator"


def _prune(migrated, url=None):
    result = migrated.run("prune", "--migration-database-url", url or migrated.owner_url, timeout=120)
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def _reports_at(db, loc: str) -> int:
    return int(db.scalar(f"select count(*) from public.price_reports where location_id = '{loc}'"))


def _backdate(db, loc: str, reporter_ids, by: str) -> None:
    literal = "{" + ",".join(reporter_ids) + "}"
    db.psql(f"update public.price_reports set created_at = now() - interval '{by}' "
            f"where location_id = '{loc}' and reporter_id = any('{literal}'::uuid[])")


def _store_rows(db, loc: str) -> int:
    return int(db.scalar(
        "select (select count(*) from private.median_latest where location_id = '{0}') "
        "     + (select count(*) from private.median_queue where location_id = '{0}') "
        "     + (select count(*) from private.median_totals where location_id = '{0}')".format(loc)))


@pytest.fixture(scope="module")
def operator_url(migrated, db):
    """A login that is a member of pricesvc_owner, as an operator's would be: no superuser, and
    membership does not carry the owner's BYPASSRLS."""
    db.psql(f"do $$ begin if not exists (select from pg_roles where rolname = '{OPERATOR}') then "
            f"create role {OPERATOR} login inherit; end if; end $$; grant pricesvc_owner to {OPERATOR}")
    migrated.allow_login(OPERATOR)
    return re.sub(r"user=[^&]+", f"user={OPERATOR}", migrated.owner_url)


def test_prune_deletes_reports_past_the_window_plus_grace_and_the_median_store_follows(migrated, db, api):
    """Before: prune kept every report forever. Reports of 190 days (window 180 + grace 7) go, with their
    median store rows; reports of 170 days stay and their median is unchanged."""
    observer = api.new_session()
    old_loc, kept_loc = location("retention-old"), location("retention-kept")
    reporters = [api.new_session() for _ in range(3)]
    ids = [s["user"]["id"] for s in reporters]
    for session, cents in zip(reporters, (300, 400, 500)):
        assert api.submit([report(old_loc, cents), report(kept_loc, cents)], session["access_token"]).status_code == 201
    db.age_users(ids + [observer["user"]["id"]], by="400 days")
    _backdate(db, old_loc, ids, "190 days")
    _backdate(db, kept_loc, ids, "170 days")
    assert [r["median_cents"] for r in api.medians([kept_loc], observer["access_token"])] == [400]
    assert api.medians([old_loc], observer["access_token"]) == []
    assert _reports_at(db, old_loc) == 3 and _store_rows(db, old_loc) > 0

    result = _prune(migrated)
    match = re.search(r"^price reports past retention deleted: (\d+) \(in (\d+) median groups", result.stdout, re.M)
    assert match and int(match.group(1)) >= 3 and int(match.group(2)) >= 1, result.stdout
    assert _reports_at(db, old_loc) == 0
    assert _store_rows(db, old_loc) == 0, "the median store still holds rows of deleted reports"
    assert _reports_at(db, kept_loc) == 3
    rows = api.medians([kept_loc], observer["access_token"])
    assert [(r["median_cents"], r["reporters"]) for r in rows] == [(400, 3)], rows
    # Nothing past retention is left anywhere.
    assert db.scalar("select count(*) from public.price_reports where created_at < now() - interval '187 days'") == "0"


def test_prune_keeps_a_report_just_inside_the_grace(migrated, db, api):
    loc = location("retention-grace")
    session = api.new_session()
    assert api.submit(report(loc), session["access_token"]).status_code == 201
    _backdate(db, loc, [session["user"]["id"]], "186 days")
    _prune(migrated)
    assert _reports_at(db, loc) == 1


def test_a_successful_prune_shows_on_metrics_as_a_timestamp(migrated, start_server):
    """prune runs as its own process: it records its success in the database, and serve reads it from
    there (at start, then every half minute) for the admin /metrics."""
    before = time.time()
    _prune(migrated)
    server = start_server()
    pattern = r'^pricesvc_maintenance_last_success_timestamp_seconds\{task="prune"\} (\d+)$'
    wait_until(lambda: re.search(pattern, server.metrics(), re.M), timeout=10, message="the prune series")
    text = server.metrics()
    assert before - 5 <= int(re.search(pattern, text, re.M).group(1)) <= time.time() + 5
    # import-rates has its series too: 0 until it first succeeds against this database.
    assert re.search(r'^pricesvc_maintenance_last_success_timestamp_seconds\{task="import-rates"\} \d+$', text, re.M)


def test_a_member_of_pricesvc_owner_deletes_nothing_by_hand_row_security_is_forced(db, api, operator_url):
    """`DELETE ... WHERE reporter_id = ...` as a member of pricesvc_owner says DELETE 0: why forget-user exists."""
    session = api.new_session()
    assert api.submit(report(location("erasure-by-hand")), session["access_token"]).status_code == 201
    user_id = session["user"]["id"]
    result = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", operator_url, "-c",
                             f"delete from public.price_reports where reporter_id = '{user_id}'"],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    assert db.scalar(f"select count(*) from public.price_reports where reporter_id = '{user_id}'") == "1"


def test_forget_user_erases_identity_sessions_and_reports_and_medians_follow(migrated, db, api, operator_url):
    observer = api.new_session()
    loc, other_loc = location("erasure"), location("erasure-other")
    reporters = [api.new_session() for _ in range(3)]
    ids = [s["user"]["id"] for s in reporters]
    for session, cents in zip(reporters, (300, 400, 500)):
        assert api.submit(report(loc, cents), session["access_token"]).status_code == 201
    forgotten = reporters[0]
    forgotten_id = forgotten["user"]["id"]
    assert api.submit(report(other_loc, 999), forgotten["access_token"]).status_code == 201
    db.age_users(ids + [observer["user"]["id"]], by="3 days")
    assert [(r["median_cents"], r["reporters"]) for r in api.medians([loc], observer["access_token"])] == [(400, 3)]

    result = migrated.run("forget-user", forgotten_id.upper(), "--migration-database-url", operator_url, timeout=60)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert forgotten_id in result.stdout
    assert "1 identity" in result.stdout and "2 price reports" in result.stdout, result.stdout
    # The log of an erasure names none of what was erased.
    # (The erased id is named; a random UUID may hold the digits 999, so it is taken out before looking.)
    logged = (result.stdout + result.stderr).replace(forgotten_id, "<id>")
    for secret in (loc, other_loc, "999"):
        assert secret not in logged, logged

    for table, column in (("auth.users", "id"), ("auth.sessions", "user_id"), ("public.price_reports", "reporter_id"),
                          ("private.median_latest", "reporter_id"), ("private.median_queue", "reporter_id")):
        assert db.scalar(f"select count(*) from {table} where {column} = '{forgotten_id}'") == "0", table
    assert db.scalar(f"select count(*) from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id "
                     f"where s.user_id = '{forgotten_id}'") == "0"
    # Two reporters left: below the threshold of three, the median is gone.
    assert api.medians([loc], observer["access_token"]) == []
    # The forgotten session can do nothing any more.
    assert api.refresh(forgotten["refresh_token"]).status_code in (400, 401, 403)
    assert api.submit(report(loc), forgotten["access_token"]).status_code == 401
    # Others are untouched.
    assert db.scalar(f"select count(*) from public.price_reports where reporter_id = '{ids[1]}'") == "1"


def test_forget_user_erases_the_reports_of_an_identity_already_pruned(migrated, db, api):
    session = api.new_session()
    user_id = session["user"]["id"]
    assert api.submit(report(location("erasure-pruned")), session["access_token"]).status_code == 201
    db.psql(f"delete from auth.users where id = '{user_id}'")
    result = migrated.run("forget-user", user_id, "--migration-database-url", migrated.owner_url, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "0 identity" in result.stdout and "1 price reports" in result.stdout, result.stdout
    assert db.scalar(f"select count(*) from public.price_reports where reporter_id = '{user_id}'") == "0"


def test_forget_user_of_an_unknown_id_says_nothing_was_stored_and_a_malformed_id_is_a_usage_error(migrated):
    result = migrated.run("forget-user", str(uuid.uuid4()), "--migration-database-url", migrated.owner_url, timeout=60)
    assert result.returncode == 0 and "nothing stored" in result.stdout, (result.stdout, result.stderr)
    for args in (("not-a-uuid",), (), (str(uuid.uuid4()), str(uuid.uuid4()))):
        result = migrated.run("forget-user", *args, "--migration-database-url", migrated.owner_url, timeout=30)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert "forget-user" in result.stderr


def test_client_roles_cannot_call_the_erasure_and_retention_functions(db):
    for role in ("authenticator", "authenticated", "anon", "price_analyst"):
        for function in ("auth.forget_user(uuid)", "private.prune_reports(integer)",
                         "private.record_maintenance_run(text)"):
            assert db.scalar(f"select has_function_privilege('{role}', '{function}', 'execute')") == "f", (role, function)
    assert db.scalar("select has_function_privilege('authenticator', 'pricesvc_meta.maintenance_runs()', 'execute')") == "t"


# ---------------------------------------------------------------- user_metadata

def test_sign_up_stores_no_user_metadata_by_default(start_server, anon_key, db):
    """Before: user_metadata stored whatever JSON a client sent, an email address included."""
    api = start_server().api(anon_key)
    response = api.sign_up(data={"email_address": "someone@example.org", "app": "parking"})
    assert response.status_code == 200, response.text
    user = response.json()["user"]
    assert user["user_metadata"] == {}
    assert db.scalar(f"select user_metadata::text from auth.users where id = '{user['id']}'") == "{}"


def test_sign_up_stores_only_the_allow_listed_user_metadata_keys(start_server, anon_key, db):
    api = start_server(USER_METADATA_KEYS="app, version").api(anon_key)
    response = api.sign_up(data={"email_address": "someone@example.org", "app": "parking", "version": 3})
    assert response.status_code == 200, response.text
    user = response.json()["user"]
    assert user["user_metadata"] == {"app": "parking", "version": 3}
    stored = db.scalar(f"select user_metadata::text from auth.users where id = '{user['id']}'")
    assert "someone@example.org" not in stored and '"app": "parking"' in stored
