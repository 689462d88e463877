"""The guarantees against an active attacker, one group of tests per attack of docs/threat-model.md, in its order.

Attackers here use what they would have: plain HTTP as any user, psql as an analyst, and psql with the
service's own `authenticator` login (which can set any setting and switch to the client roles, but
cannot sign tokens). Each test fails on a service that has the weakness it names.
"""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from helpers import (assert_auth_error, assert_postgrest_error, fake_client_ip, jwt_claims, location, mint,
                     new_id, report, wait_until)


def psql_as(env, role_user: str, sql: str, timeout: float = 60) -> subprocess.CompletedProcess:
    """psql over the cluster's socket as `role_user` (no password: peer, through the test cluster's map)."""
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-v", "VERBOSITY=verbose",
                           "-h", env.pghost, "-U", role_user, "-d", "pricesvc"],
                          input="\\set VERBOSITY verbose\n" + sql, capture_output=True, text=True, timeout=timeout)


def token_with(env, session: dict, **claims) -> str:
    """A token signed with the service's secret for `session`'s user and session, with `claims` changed:
    what the service itself could issue (so only the database's own checks can refuse it)."""
    base = jwt_claims(session["access_token"])
    base.update(claims)
    return mint(base, env.secret)


def insert_sql(token: str, loc: str, cents: int = 500, extra: str = "") -> str:
    return (f"begin;\n"
            f"select set_config('role', 'authenticated', true), set_config('request.jwt', '{token}', true);\n"
            f"{extra}"
            f"insert into public.price_reports (location_id, rate_kind, price_cents) values ('{loc}', 'hourly', {cents});\n"
            f"commit;\n")


# ---------------------------------------------------------------- 1. sybils

def test_two_fresh_sybils_cannot_complete_a_threshold_around_one_persons_price(api, db):
    victim, sybil_1, sybil_2 = api.new_session(), api.new_session(), api.new_session()
    loc = location("sybil")
    assert api.submit([report(loc, 1234)], victim["access_token"]).status_code == 201
    assert api.submit([report(loc, 1)], sybil_1["access_token"]).status_code == 201
    assert api.submit([report(loc, 1_000_000)], sybil_2["access_token"]).status_code == 201
    # Three distinct reporters, but two are minutes old: no median, and nothing about the victim leaks.
    assert api.medians([loc], sybil_1["access_token"]) == []
    # A day later (the rule is 24 hours; the test ages the identities instead of waiting) it counts.
    db.age_users([victim["user"]["id"], sybil_1["user"]["id"], sybil_2["user"]["id"]])
    rows = api.medians([loc], sybil_1["access_token"])
    assert [(r["median_cents"], r["reporters"], r["reports"]) for r in rows] == [(1234, 3, 3)]


def test_reports_from_young_identities_do_not_move_counts_or_times(api, db):
    old = [api.new_session() for _ in range(3)]
    loc = location("young")
    for session, cents in zip(old, (300, 400, 500)):
        assert api.submit([report(loc, cents)], session["access_token"]).status_code == 201
    db.age_users([s["user"]["id"] for s in old])
    before = api.medians([loc], old[0]["access_token"])
    assert [(r["median_cents"], r["reporters"], r["reports"]) for r in before] == [(400, 3, 3)]
    newcomer = api.new_session()
    assert api.submit([report(loc, 100_000)], newcomer["access_token"]).status_code == 201
    assert api.medians([loc], old[0]["access_token"]) == before, "a newcomer's arrival must not be visible"


def test_last_reported_at_is_never_finer_than_the_hour(api, db):
    sessions = [api.new_session() for _ in range(3)]
    loc = location("hour")
    for session in sessions:
        assert api.submit([report(loc, 300)], session["access_token"]).status_code == 201
    db.age_users([s["user"]["id"] for s in sessions])
    (row,) = api.medians([loc], sessions[0]["access_token"])
    assert row["last_reported_at"].endswith("00:00+00:00"), row


# ---------------------------------------------------------------- 2. analysts

def analyst_overview(db, since: str) -> str:
    return db.psql("set role price_analyst; "
                   f"select json_agg(o order by o.location_id, o.rate_kind, o.currency)::text "
                   f"from public.price_median_overview(since => '{since}') o")


def test_an_analyst_cannot_bisect_on_since_or_read_times_finer_than_the_hour(api, db):
    sessions = [api.new_session() for _ in range(3)]
    loc = location("bisect")
    for session in sessions:
        assert api.submit([report(loc, 700)], session["access_token"]).status_code == 201
    db.age_users([s["user"]["id"] for s in sessions])
    today = db.scalar("select to_char(now() at time zone 'UTC', 'YYYY-MM-DD')")
    # Every `since` inside one UTC day gives the same answer: the day is the finest step.
    answers = {analyst_overview(db, f"{today} {t}+00") for t in ("00:00:00", "00:00:01", "12:00:00", "23:59:59.999999")}
    assert len(answers) == 1, "since is not taken to the start of its UTC day"
    rows = [r for r in json.loads(answers.pop()) if r["location_id"] == loc]
    assert len(rows) == 1 and rows[0]["reporters"] == 3
    assert rows[0]["last_reported_at"].endswith(":00:00+00:00"), rows[0]


# ---------------------------------------------------------------- 3. expired tokens in a transaction

def test_a_token_that_expires_while_a_transaction_is_open_is_refused(env, migrated, api):
    session = api.new_session()
    # Valid for `left` more seconds (30 s leeway); the transaction first shows that the token is accepted
    # (else this test would only repeat the plain expired-token one), then sleeps past its expiry. On a
    # busy machine psql may start after the token expired: then it is tried again with a longer life.
    for left in (2, 6, 15):
        token = token_with(env, session, exp=int(time.time()) - 30 + left)
        result = psql_as(env, "authenticator", insert_sql(token, location("expired"), extra=(
            f"select 'valid at start: ' || (auth.uid() is not null)::text;\nselect pg_sleep({left + 1});\n")))
        if "valid at start: true" in result.stdout:
            break
    assert "valid at start: true" in result.stdout, (result.stdout, result.stderr)
    assert result.returncode != 0, "the insert went through with an expired token"
    assert "PT401" in result.stderr and "token expired" in result.stderr, result.stderr


def test_a_token_whose_session_was_revoked_during_a_transaction_is_refused(env, migrated, api, db):
    session = api.new_session()
    token = session["access_token"]
    assert api.logout(token).status_code == 204
    result = psql_as(env, "authenticator", insert_sql(token, location("revoked-tx")))
    assert result.returncode != 0
    assert "PT401" in result.stderr and "session not found" in result.stderr, result.stderr


# ---------------------------------------------------------------- 4. the cap, by commit time

def test_a_transaction_held_open_cannot_slip_reports_into_the_past_of_the_window(env, migrated, api, db):
    """Ten reports inserted, then the transaction stays open as if for two hours (the superuser moves
    their created_at back inside the same transaction), then commits. They count from the commit."""
    session = api.new_session()
    user_id = session["user"]["id"]
    rows = "".join(f"insert into public.price_reports (location_id, rate_kind, price_cents) "
                   f"values ('{location('held')}', 'hourly', {100 + i});\n" for i in range(10))
    sql = ("begin;\n"
           f"set local role authenticated;\nselect set_config('request.jwt', '{session['access_token']}', true);\n"
           f"{rows}reset role;\n"
           f"update public.price_reports set created_at = created_at - interval '2 hours' where reporter_id = '{user_id}';\n"
           "commit;\n")
    result = psql_as(env, env.pguser, sql)
    assert result.returncode == 0, result.stderr
    assert db.scalar(f"select count(*) from public.price_reports where reporter_id = '{user_id}' "
                     f"and created_at < now() - interval '1 hour'") == "10"
    eleventh = api.submit([report()], session["access_token"])
    assert_postgrest_error(eleventh, 429, "PT429")


def test_held_open_transactions_from_one_reporter_still_admit_exactly_ten(env, migrated, api, db):
    session = api.new_session()
    first = psql_as(env, "authenticator", insert_sql(session["access_token"], location("held2"),
                                                     extra="select pg_sleep(1);\n").replace(
        "insert into", "insert into public.price_reports (location_id, rate_kind, price_cents) "
        "select 'e2e:held2:' || i, 'hourly', 100 + i from generate_series(1, 5) i;\ninsert into", 1))
    assert first.returncode == 0, first.stderr
    results = [api.submit([report()], session["access_token"]).status_code for _ in range(6)]
    assert results == [201] * 4 + [429] * 2
    assert db.scalar(f"select count(*) from public.price_reports where reporter_id = '{session['user']['id']}'") == "10"


# ---------------------------------------------------------------- 5. advisory locks

@pytest.mark.parametrize("call", ["pg_advisory_lock(1886546275, 1)", "pg_try_advisory_lock(1)",
                                  "pg_advisory_xact_lock(1886546275, hashtext('x'))",
                                  "pg_advisory_lock_shared(1)", "pg_try_advisory_xact_lock_shared(1, 2)"])
def test_the_service_login_cannot_take_advisory_locks(env, migrated, call):
    result = psql_as(env, "authenticator", f"select {call};")
    assert result.returncode != 0 and "42501" in result.stderr, (result.stdout, result.stderr)
    for role in ("anon", "authenticated"):
        result = psql_as(env, "authenticator", f"set role {role}; select {call};")
        assert result.returncode != 0 and "42501" in result.stderr, (role, result.stderr)


def test_a_reporter_cannot_be_blocked_by_someone_elses_lock(env, migrated, api, db):
    session = api.new_session()
    holder = subprocess.Popen(["psql", "-X", "-q", "-h", env.pghost, "-U", "authenticator", "-d", "pricesvc",
                               "-c", f"select pg_advisory_lock(1886546275, hashtext('{session['user']['id']}')), "
                                     "pg_sleep(60)"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Either the lock was refused and psql is gone, or it holds the reporter's lock and sleeps.
        wait_until(lambda: holder.poll() is not None or db.scalar(
            "select count(*) from pg_stat_activity where usename = 'authenticator' "
            "and query like '%pg_advisory_lock(1886546275%' and wait_event = 'PgSleep'") == "1",
            timeout=10, message="the lock holder to fail or to hold the lock")
        # Were the lock held, this insert would wait for it far past the client's 10 s request timeout
        # (the holder sleeps 60 s) and fail here.
        assert api.submit([report()], session["access_token"]).status_code == 201
        _, err = holder.communicate(timeout=15)
        assert "permission denied for function pg_advisory_lock" in err, err
    finally:
        holder.kill()


# ---------------------------------------------------------------- 6. planted role defaults

@pytest.mark.disruptive
def test_planted_role_defaults_change_nothing_and_migrate_clears_them(env, migrated, start_server, anon_key, db):
    planted = psql_as(env, "authenticator", "alter role authenticator set default_transaction_isolation = 'serializable';"
                                            "alter role authenticator set bytea_output = 'escape';"
                                            "alter role authenticator in database pricesvc set role = 'anon';")
    assert planted.returncode == 0, planted.stderr
    try:
        server = start_server(RATE_LIMIT_PER_MINUTE=100000, TRUSTED_PROXIES="127.0.0.1")
        api = server.api(anon_key, forwarded_for=fake_client_ip())
        session = api.new_session()
        assert api.refresh(session["refresh_token"]).status_code == 200
        assert api.submit([report()], session["access_token"]).status_code == 201
        result = migrated.migrate()
        assert "cleared planted settings" in result.stdout, result.stdout
        assert "default_transaction_isolation=serializable" in result.stdout
        assert "role=anon in database pricesvc" in result.stdout
        settings = db.psql("select array_to_string(setconfig, ',') from pg_db_role_setting "
                           "where setrole = 'authenticator'::regrole")
        assert settings == "log_parameter_max_length=0,log_parameter_max_length_on_error=0", settings
        assert "cleared" not in migrated.migrate().stdout, "a second migrate has nothing to clear"
    finally:
        db.psql("alter role authenticator reset default_transaction_isolation; "
                "alter role authenticator reset bytea_output; "
                "alter role authenticator in database pricesvc reset all")


def test_the_service_login_cannot_undo_its_log_settings(env, migrated):
    result = psql_as(env, "authenticator", "alter role authenticator reset log_parameter_max_length;")
    assert result.returncode != 0 and "42501" in result.stderr, result.stderr
    result = psql_as(env, "authenticator", "set log_parameter_max_length = -1;")
    assert result.returncode != 0 and "42501" in result.stderr, result.stderr


# ---------------------------------------------------------------- 7. secrets in the server log

def server_log(env) -> Path:
    base = Path(env.pg_dir)
    for candidate in (base / "postgres.log", base / "cluster" / "postgres.log"):
        if candidate.exists():
            return candidate
    raise AssertionError(f"no postgres.log under {base}")


@pytest.mark.disruptive
def test_neither_the_signing_secret_nor_tokens_reach_the_server_log(env, migrated, start_server, anon_key, db):
    log = server_log(env)
    offset = log.stat().st_size
    db.psql("alter system set log_statement = 'all'")
    db.psql("alter system set log_min_duration_statement = 0")
    db.psql("select pg_reload_conf()")
    try:
        wait_until(lambda: db.scalar("show log_statement") == "all", 10, message="log_statement = all")
        migrated.migrate()
        server = start_server(RATE_LIMIT_PER_MINUTE=100000, TRUSTED_PROXIES="127.0.0.1")
        api = server.api(anon_key, forwarded_for=fake_client_ip())
        session = api.new_session()
        refreshed = api.refresh(session["refresh_token"]).json()
        assert api.submit([report()], refreshed["access_token"]).status_code == 201
        api.medians([location()], refreshed["access_token"])
        assert api.get("/auth/v1/user", token=refreshed["access_token"]).status_code == 200
    finally:
        db.psql("alter system reset log_statement")
        db.psql("alter system reset log_min_duration_statement")
        db.psql("select pg_reload_conf()")
        # The reload is asynchronous: the next test's sessions must not start under log_statement = all
        # (`pricesvc keys` refuses to run where its statements would be logged).
        wait_until(lambda: db.scalar("show log_statement") == "none", 10, message="log_statement back to none")
    text = log.read_bytes()[offset:].decode(errors="replace")
    # The log was really on: the service's statements are there (so this test can fail).
    assert "pricesvc_identity" in text and "install_first_signing_key" not in text.split("set local log_statement")[-1]
    secret = env.secret.encode()
    for needle in (env.secret, secret.hex(), "\\x" + secret.hex(), session["access_token"],
                   refreshed["access_token"], session["refresh_token"], refreshed["refresh_token"]):
        assert needle not in text, f"found a secret in the server log: {needle[:12]}..."


# ---------------------------------------------------------------- 8. refresh tokens do not fork

def test_a_refresh_token_presented_twice_in_the_window_returns_the_same_child(api):
    session = api.new_session()
    first = api.refresh(session["refresh_token"])
    second = api.refresh(session["refresh_token"])
    assert first.status_code == second.status_code == 200
    assert first.json()["refresh_token"] == second.json()["refresh_token"]


def test_concurrent_presentations_converge_on_one_child(api, db):
    session = api.new_session()
    with concurrent.futures.ThreadPoolExecutor(5) as pool:
        responses = list(pool.map(lambda _: api.refresh(session["refresh_token"]), range(5)))
    assert [r.status_code for r in responses] == [200] * 5
    assert len({r.json()["refresh_token"] for r in responses}) == 1
    tokens = db.scalar(f"select count(*) from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id "
                       f"where s.user_id = '{session['user']['id']}'")
    assert tokens == "2", "the session forked"


def test_within_the_window_an_old_token_answers_with_the_live_one(api):
    session = api.new_session()
    child = api.refresh(session["refresh_token"]).json()["refresh_token"]
    grandchild = api.refresh(child).json()["refresh_token"]
    again = api.refresh(session["refresh_token"])
    assert again.status_code == 200 and again.json()["refresh_token"] == grandchild
    assert api.refresh(grandchild).status_code == 200


# ---------------------------------------------------------------- 9. revoked sessions

@pytest.mark.parametrize("how", ["logout", "reuse"])
def test_a_revoked_sessions_access_token_stops_working_at_once(start_server, anon_key, how):
    server = start_server(REFRESH_REUSE_SECONDS=1, RATE_LIMIT_PER_MINUTE=100000, TRUSTED_PROXIES="127.0.0.1")
    api = server.api(anon_key, forwarded_for=fake_client_ip())
    session = api.new_session()
    token = session["access_token"]
    assert api.submit([report()], token).status_code == 201
    if how == "logout":
        assert api.logout(token).status_code == 204
    else:
        assert api.refresh(session["refresh_token"]).status_code == 200
        # The reuse window is 1 s; past it, presenting the rotated token revokes the session. Inside it
        # the answer is 200 (the live token again); anything else fails at once.
        answers = []

        def refused_after_the_window():
            answers.append(api.refresh(session["refresh_token"]))
            assert answers[-1].status_code in (200, 400), (answers[-1].status_code, answers[-1].text)
            return answers[-1].status_code == 400

        wait_until(refused_after_the_window, timeout=10, interval=0.2,
                   message="the rotated token to be refused once the reuse window is over")
        assert_auth_error(answers[-1], 400, "refresh_token_already_used")
    assert_postgrest_error(api.submit([report()], token), 401, "PT401")
    assert_postgrest_error(api.rpc("price_medians", {"location_ids": [location()]}, token), 401, "PT401")
    assert_auth_error(api.get("/auth/v1/user", token=token), 403, "session_not_found")


# ---------------------------------------------------------------- 10. honest replays

def test_a_replay_with_a_different_body_is_409_and_stores_nothing(api, token, db):
    row = report(cents=450)
    first = api.submit([row], token, prefer="return=representation")
    assert first.status_code == 201
    changed = dict(row, price_cents=999, location_id=location("other"))
    conflict = api.submit([changed], token, prefer="return=representation")
    body = assert_postgrest_error(conflict, 409, "23505")
    assert row["client_report_id"] in body["message"]
    assert db.psql(f"select location_id || ':' || price_cents from public.price_reports "
                   f"where client_report_id = '{row['client_report_id']}'") == f"{row['location_id']}:450"
    same = api.submit([row], token, prefer="return=representation")
    assert same.status_code == 201 and same.json() == first.json()


# ---------------------------------------------------------------- 11. the owner

def test_functions_and_tables_belong_to_a_non_superuser_owner(db):
    attributes = db.scalar("select rolsuper::text || rolcanlogin::text || rolbypassrls::text "
                           "from pg_roles where rolname = 'pricesvc_owner'")
    assert attributes == "falsefalsetrue"
    owners = db.psql("select distinct p.proowner::regrole::text from pg_proc p "
                     "where p.prosecdef and p.pronamespace::regnamespace::text in ('public', 'auth', 'private', 'pricesvc_meta')")
    assert owners == "pricesvc_owner"
    assert db.scalar("select relowner::regrole::text from pg_class where oid = 'public.price_reports'::regclass") \
        == "pricesvc_owner"
