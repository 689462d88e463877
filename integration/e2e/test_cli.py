"""The pricesvc command line: --help, bad flags, secrets, an unreachable database, migrate, keys, prune."""

import json
import re
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from helpers import REQUEST_TIMEOUT, b64url_decode, jwt_segments, location, report, signature_valid, wait_until
from table_lock import MedianGroupLock

REPO = Path(__file__).resolve().parents[2]


def _stderr_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def test_help_lists_the_commands_and_every_setting(env):
    result = env.run("--help", timeout=10)
    assert result.returncode == 0, result.stderr
    for word in ("serve", "migrate", "keys", "prune", "--older-than", "import-rates", "--source", "PRICESVC_DATABASE_URL",
                 "PRICESVC_JWT_SECRET", "PRICESVC_LISTEN", "PRICESVC_RATE_LIMIT_PER_MINUTE",
                 "PRICESVC_SIGNUPS_PER_HOUR", "PRICESVC_REFRESH_REUSE_SECONDS", "PRICESVC_ACCESS_TOKEN_TTL"):
        assert word in result.stdout, word


def test_an_unknown_flag_exits_2_with_one_line_on_stderr(env):
    result = env.run("serve", "--no-such-flag", "1", timeout=10)
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "--no-such-flag" in lines[0], lines


def test_an_unknown_command_exits_2_with_one_line_on_stderr(env):
    result = env.run("frobnicate", timeout=10)
    assert result.returncode == 2
    assert len(_stderr_lines(result)) == 1


def test_serve_without_a_secret_exits_non_zero_with_one_clear_line(env):
    result = env.run("serve", timeout=15, PRICESVC_JWT_SECRET=None, LISTEN="127.0.0.1:0")
    assert result.returncode != 0
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "secret" in lines[0].lower(), lines


def test_serve_with_a_short_secret_exits_non_zero_with_one_clear_line(env):
    result = env.run("serve", timeout=15, PRICESVC_JWT_SECRET="too-short-a-secret", LISTEN="127.0.0.1:0")
    assert result.returncode != 0
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "secret" in lines[0].lower() and "32" in lines[0], lines


def test_a_secret_file_works_like_the_variable(env, tmp_path):
    secret_file = tmp_path / "secret"
    secret_file.write_text(env.secret + "\n")
    secret_file.chmod(0o600)
    from_file = env.run("keys", timeout=10, PRICESVC_JWT_SECRET=None, JWT_SECRET_FILE=str(secret_file))
    inline = env.run("keys", timeout=10)
    assert from_file.returncode == 0 and from_file.stdout == inline.stdout


@pytest.mark.parametrize("mode, who", [(0o644, "group and others"), (0o640, "its group"), (0o604, "others")])
def test_serve_refuses_a_secret_file_its_group_or_others_may_read(env, tmp_path, mode, who):
    secret_file = tmp_path / "secret"
    secret_file.write_text(env.secret + "\n")
    secret_file.chmod(mode)
    for command in ("serve", "keys"):
        result = env.run(command, timeout=15, PRICESVC_JWT_SECRET=None, JWT_SECRET_FILE=str(secret_file),
                         LISTEN="127.0.0.1:0")
        assert result.returncode == 2, (command, result.returncode, result.stderr)
        lines = _stderr_lines(result)
        assert len(lines) == 1, lines
        assert "PRICESVC_JWT_SECRET_FILE" in lines[0] and str(secret_file) in lines[0], lines
        assert who in lines[0] and oct(mode)[2:] in lines[0] and "chmod 600" in lines[0], lines
    secret_file.chmod(0o400)  # what systemd's LoadCredential= hands over
    accepted = env.run("keys", timeout=10, PRICESVC_JWT_SECRET=None, JWT_SECRET_FILE=str(secret_file))
    assert accepted.returncode == 0 and accepted.stdout == env.run("keys", timeout=10).stdout, accepted.stderr


def test_a_migrations_dir_that_cannot_be_listed_exits_2_naming_the_setting(env):
    for run in (lambda: env.run("serve", timeout=15, MIGRATIONS_DIR="/no/such/dir", LISTEN="127.0.0.1:0"),
                lambda: env.run("migrate", "--migrations-dir", "/no/such/dir", timeout=15)):
        result = run()
        assert result.returncode == 2, result.stderr
        lines = _stderr_lines(result)
        assert len(lines) == 1 and "/no/such/dir" in lines[0], lines
        assert "PRICESVC_MIGRATIONS_DIR" in lines[0] or "--migrations-dir" in lines[0], lines


def test_help_texts_say_what_the_commands_really_need_and_do(env, api):
    migrate = env.run("migrate", "--help", timeout=10)
    assert migrate.returncode == 0
    assert "superuser" in migrate.stdout and "as the owning role" not in migrate.stdout, migrate.stdout
    ttl = env.run("serve", "--help", timeout=10).stdout.split("--access-token-ttl")[1].split("\n  --")[0]
    assert "refused at once" in ttl and "stay valid" not in ttl, ttl
    # What the help says: a signed-out session's access token is refused before it expires.
    session = api.new_session()
    assert api.submit(report(), session["access_token"]).status_code == 201
    assert api.logout(session["access_token"], scope="local").status_code == 204
    assert api.submit(report(), session["access_token"]).status_code == 401


def test_every_install_deps_flag_a_script_suggests_exists():
    install_deps = (REPO / "scripts/dev/install-deps.sh").read_text()
    known = set(re.findall(r'"\$\{1:-\}" = "(--[a-z-]+)"', install_deps))
    suggested = set()
    for script in [*(REPO / "scripts").rglob("*.sh"), *(REPO / "packaging").glob("*.sh")]:
        suggested |= set(re.findall(r"install-deps\.sh (--[a-z-]+)", script.read_text()))
    assert known == {"--bench"}, known
    assert suggested <= known, suggested - known


def test_serve_gives_up_on_an_unreachable_database_within_the_startup_timeout(env, tmp_path):
    missing = tmp_path / "no-postgres-here"
    started = time.monotonic()
    result = env.run("serve", timeout=30, STARTUP_TIMEOUT=2, LISTEN="127.0.0.1:0",
                     DATABASE_URL=f"postgresql:///pricesvc?host={missing}&user=authenticator")
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    # The bound STARTUP_TIMEOUT promises: it gives up after about 2 s, not after the default 30 s.
    # 15 s leaves a loaded machine room and still tells the setting apart from the default.
    assert elapsed < 15, elapsed
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "database" in lines[0].lower(), lines


def test_migrate_twice_says_already_up_to_date_the_second_time(migrated):
    result = migrated.migrate()
    assert "already up to date" in result.stdout, result.stdout


def test_keys_prints_a_three_segment_jwt_whose_payload_is_the_anon_role(env, anon_key):
    result = env.run("keys", timeout=10)
    assert result.returncode == 0
    key = result.stdout.strip()
    assert key == anon_key and len(key.split(".")) == 3
    header, payload, _ = jwt_segments(key)
    assert header["alg"] == "HS256"
    assert payload == {"role": "anon", "iss": "pricesvc"}
    assert json.loads(b64url_decode(key.split(".")[1])) == {"role": "anon", "iss": "pricesvc"}
    assert signature_valid(key, env.secret)


def test_openapi_command_prints_the_document_the_server_serves(env, api):
    result = env.run("openapi", timeout=10)
    assert result.returncode == 0
    served = api.get("/rest/v1/")
    assert served.status_code == 200
    assert json.loads(result.stdout) == served.json()
    assert "/auth/v1/challenge" not in served.json()["paths"]


def test_openapi_command_follows_the_signup_challenge_setting(env, start_server, anon_key):
    server = start_server(SIGNUP_CHALLENGE="true")
    served = server.api(anon_key).get("/rest/v1/")
    assert served.status_code == 200 and "/auth/v1/challenge" in served.json()["paths"]
    by_flag = env.run("openapi", "--signup-challenge", "true", timeout=10)
    by_environment = env.run("openapi", timeout=10, SIGNUP_CHALLENGE="true")
    for result in (by_flag, by_environment):
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout) == served.json()


def test_prune_older_than_30_days_runs_and_keeps_every_report(migrated, db, api, user):
    assert api.submit(report(), user["access_token"]).status_code == 201
    before = db.total_reports()
    result = migrated.run("prune", "--older-than", "30d", "--migration-database-url", migrated.owner_url,
                          timeout=60)
    assert result.returncode == 0, result.stderr
    assert "pruned" in result.stdout
    assert db.total_reports() >= before
    # A live session survives pruning: its refresh token still rotates.
    assert api.refresh(user["refresh_token"]).status_code == 200


def _median_groups_folded(stdout: str) -> int:
    match = re.search(r"^median groups folded: (\d+)", stdout, re.MULTILINE)
    assert match, stdout
    return int(match.group(1))


def _group_queued_two_hours_ago(db, api) -> str:
    """A group whose one report, from a mature reporter, has waited two hours for a fold: the kind of group
    no insert folds any more."""
    loc = location("stale")
    session = api.new_session()
    db.age_users([session["user"]["id"]])  # before the insert, which records when the reporter matures
    # The report's id is then no multiple of median_fold_every() (16): its insert does not fold the group.
    db.psql("select setval('public.price_reports_id_seq', (nextval('public.price_reports_id_seq') / 16 + 1) * 16)")
    assert api.submit(report(loc), session["access_token"]).status_code == 201
    db.psql("set session_replication_role = replica; "
            f"update public.price_reports set created_at = created_at - interval '2 hours' where location_id = '{loc}'; "
            f"update private.median_queue set created_at = created_at - interval '2 hours' where location_id = '{loc}'")
    assert db.scalar(f"select count(*) from private.median_queue where location_id = '{loc}'") == "1"
    return loc


def test_prune_folds_median_groups_that_waited_over_an_hour_skipping_one_being_folded(migrated, db, api):
    def prune():
        result = migrated.run("prune", "--migration-database-url", migrated.owner_url, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[0].startswith("pruned: "), result.stdout
        return _median_groups_folded(result.stdout)

    prune()  # whatever earlier tests left waiting, so the counts below are this test's groups
    quiet, busy = _group_queued_two_hours_ago(db, api), _group_queued_two_hours_ago(db, api)
    # Reported by an identity made just now: nothing to fold until it matures, in a day.
    young = location("young")
    assert api.submit(report(young), api.new_session()["access_token"]).status_code == 201

    def queued(loc: str) -> str:
        return db.scalar(f"select count(*) from private.median_queue where location_id = '{loc}'")

    # An insert folding `busy` holds its lock: prune skips it rather than wait.
    with MedianGroupLock(db, busy):
        assert prune() == 1
    assert (queued(quiet), queued(busy), queued(young)) == ("0", "1", "1")
    assert db.scalar(f"select count(*) from private.median_groups where location_id = '{quiet}'") == "1"

    assert prune() == 1
    assert (queued(busy), queued(young)) == ("0", "1")
    assert prune() == 0


def _users_left(db, ids) -> int:
    literal = "{" + ",".join(ids) + "}"
    return int(db.scalar(f"select count(*) from auth.users where id = any('{literal}'::uuid[])"))


def test_prune_refuses_an_age_below_maturity_and_pruned_sybils_never_count(migrated, db, api):
    """Three fresh identities reported and signed out, `prune --older-than 1s` once
    deleted them, and price_medians then showed their median with reporters 3 (a missing identity read
    as an old one). Prune now refuses any age below the maturity plus the fold margin, and each report
    keeps when its reporter matures, so even identities deleted by hand never count early."""
    observer = api.new_session()
    db.age_users([observer["user"]["id"]])
    loc = location("pruned-sybils")
    sybils = [api.new_session() for _ in range(3)]
    ids = [s["user"]["id"] for s in sybils]
    for session, cents in zip(sybils, (1000, 1100, 1200)):
        assert api.submit(report(loc, cents), session["access_token"]).status_code == 201
        assert api.logout(session["access_token"]).status_code == 204

    for age in ("1s", "0s", "12h", "24h", "1444m"):
        result = migrated.run("prune", "--older-than", age, "--migration-database-url", migrated.owner_url, timeout=60)
        assert result.returncode == 2, (age, result.returncode, result.stdout, result.stderr)
        lines = _stderr_lines(result)
        assert len(lines) == 1 and f"--older-than {age} refused" in lines[0] and "24:05:00" in lines[0], lines
        assert "pruned" not in result.stdout
    assert _users_left(db, ids) == 3, "a refused prune deletes nothing"

    # The shortest age taken: the identities are minutes old, so they stay.
    result = migrated.run("prune", "--older-than", "1445m", "--migration-database-url", migrated.owner_url, timeout=60)
    assert result.returncode == 0, result.stderr
    assert _users_left(db, ids) == 3
    assert api.medians([loc], observer["access_token"]) == []

    # What the old prune did: the identities are gone. Their reports still say they are a day from counting.
    literal = "{" + ",".join(ids) + "}"
    db.psql(f"delete from auth.users where id = any('{literal}'::uuid[])")
    assert api.medians([loc], observer["access_token"]) == [], "pruned sybils must not count"
    assert api.medians([loc, loc], observer["access_token"]) == []


def test_prune_of_old_identities_keeps_their_reports_counting(migrated, db, api):
    observer = api.new_session()
    loc = location("pruned-old")
    reporters = [api.new_session() for _ in range(3)]
    ids = [s["user"]["id"] for s in reporters]
    for session, cents in zip(reporters, (300, 400, 500)):
        assert api.submit(report(loc, cents), session["access_token"]).status_code == 201
        assert api.logout(session["access_token"]).status_code == 204
    db.age_users(ids + [observer["user"]["id"]], by="3 days")
    literal = "{" + ",".join(ids) + "}"
    db.psql(f"update auth.sessions set revoked_at = now() - interval '3 days' where user_id = any('{literal}'::uuid[])")
    assert [r["median_cents"] for r in api.medians([loc], observer["access_token"])] == [400]

    result = migrated.run("prune", "--older-than", "2d", "--migration-database-url", migrated.owner_url, timeout=60)
    assert result.returncode == 0, result.stderr
    assert _users_left(db, ids) == 0
    rows = api.medians([loc], observer["access_token"])
    assert [(r["median_cents"], r["reporters"]) for r in rows] == [(400, 3)], rows


def test_prune_bounds_its_age(migrated):
    for age, words in (("99999999999999999999d", "must look like"), ("9223372036854775807d", "must look like"),
                       ("36501d", "at most 36500d")):
        result = migrated.run("prune", "--older-than", age, "--migration-database-url", migrated.owner_url, timeout=30)
        assert result.returncode == 2, (age, result.returncode, result.stderr)
        lines = _stderr_lines(result)
        assert len(lines) == 1 and words in lines[0], lines


def test_prune_rejects_a_malformed_duration(migrated):
    result = migrated.run("prune", "--older-than", "thirty", "--migration-database-url", migrated.owner_url,
                          timeout=30)
    assert result.returncode != 0
    assert len(_stderr_lines(result)) == 1


def test_serve_refuses_a_malformed_setting_with_exit_2(env):
    result = env.run("serve", timeout=10, RATE_LIMIT_PER_MINUTE="lots", LISTEN="127.0.0.1:0")
    assert result.returncode == 2
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "PRICESVC_RATE_LIMIT_PER_MINUTE" in lines[0], lines


def test_a_listen_address_already_in_use_is_one_clear_line(env, server):
    process = subprocess.Popen([env.bin, "serve"], env=env.base_env(LISTEN=f"127.0.0.1:{server.port}"),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        stdout, stderr = process.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate(timeout=10)
        raise AssertionError(f"a second pricesvc is serving on port {server.port}, which another pricesvc "
                             f"already listens on (stdout: {stdout.strip()!r})")
    assert process.returncode != 0
    assert len([line for line in stderr.splitlines() if line.strip()]) == 1, stderr
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200


def test_no_arguments_prints_usage_and_exits_2(env):
    result = subprocess.run([env.bin], capture_output=True, text=True, timeout=10)
    assert result.returncode == 2
    assert "usage" in (result.stdout + result.stderr).lower()


# ---------------------------------------------------------------- version and per-command help

def test_version_prints_one_line_with_the_version_and_exits_0(env):
    for flag in ("--version", "version"):
        result = env.run(flag, timeout=10)
        assert result.returncode == 0, result.stderr
        assert re.fullmatch(r"pricesvc \d+\.\d+\.\d+\S* \(commit [0-9a-z.+-]+, Swift [\d.+]+\)\n", result.stdout), result.stdout


def test_every_command_answers_help_with_its_usage_and_its_settings(env):
    for command in ("serve", "migrate", "keys", "prune", "import-rates", "openapi", "statements"):
        result = env.run(command, "--help", timeout=10)
        assert result.returncode == 0, (command, result.stderr)
        assert result.stdout.startswith(f"usage: pricesvc {command}"), result.stdout
        assert env.run("help", command, timeout=10).stdout == result.stdout
    serve = env.run("serve", "--help", timeout=10).stdout
    assert "PRICESVC_LISTEN" in serve and "PRICESVC_POOL_SIZE" in serve
    keys = env.run("keys", "-h", timeout=10).stdout
    assert "PRICESVC_JWT_SECRET_FILE" in keys and "PRICESVC_LISTEN" not in keys
    prune = env.run("prune", "--help", timeout=10).stdout
    assert "--older-than" in prune and "PRICESVC_MIGRATION_DATABASE_URL" in prune
    import_rates = env.run("import-rates", "--help", timeout=10).stdout
    assert "--source NAME FILE..." in import_rates and "PRICESVC_MIGRATION_DATABASE_URL" in import_rates


def test_help_for_an_unknown_command_exits_2(env):
    result = env.run("frobnicate", "--help", timeout=10)
    assert result.returncode == 2 and len(_stderr_lines(result)) == 1


# ---------------------------------------------------------------- listen forms and named errors

@pytest.mark.parametrize("listen", [":0", "localhost:0", "127.0.0.1:0"])
def test_listen_accepts_a_bare_port_and_localhost_which_mean_the_loopback_address(start_server, listen):
    server = start_server(LISTEN=listen)
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    assert f"listening on {server.url}" in server.stderr()


def _ipv6_loopback_available() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback_available(), reason="no IPv6 loopback in this environment")
def test_listen_accepts_a_bracketed_ipv6_address(env, tmp_path):
    err_path = tmp_path / "stderr"
    with open(err_path, "wb") as err:
        process = subprocess.Popen([env.bin, "serve"], env=env.base_env(LISTEN="[::1]:0", ACCESS_LOG="false"),
                                   stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        port = wait_until(lambda: (m := re.search(r"listening on http://\[::1\]:(\d+)", err_path.read_text()))
                          and int(m.group(1)), 30)
        assert requests.get(f"http://[::1]:{port}/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=15)


def test_a_bad_listen_variable_is_reported_under_the_variable(env):
    result = env.run("serve", timeout=10, LISTEN="8080")
    assert result.returncode == 2
    lines = _stderr_lines(result)
    assert len(lines) == 1 and lines[0].startswith("pricesvc: PRICESVC_LISTEN must be HOST:PORT"), lines
    assert "'8080'" in lines[0]


def test_a_bad_listen_flag_is_reported_under_the_flag_even_when_the_variable_is_set(env):
    result = env.run("serve", "--listen", "example.com:80", timeout=10, LISTEN="127.0.0.1:0")
    assert result.returncode == 2
    lines = _stderr_lines(result)
    assert len(lines) == 1 and lines[0].startswith("pricesvc: --listen must be"), lines
    assert "PRICESVC_LISTEN" not in lines[0]


def test_every_setting_names_its_source_in_errors(env):
    from_variable = env.run("serve", timeout=10, POOL_SIZE="0", LISTEN="127.0.0.1:0")
    assert from_variable.returncode == 2
    assert "PRICESVC_POOL_SIZE must be an integer ≥ 1, got '0'" in from_variable.stderr
    from_flag = env.run("serve", "--ipv6-prefix=200", timeout=10, LISTEN="127.0.0.1:0")
    assert from_flag.returncode == 2
    assert "--ipv6-prefix must be an integer from 1 to 128, got '200'" in from_flag.stderr


# ---------------------------------------------------------------- refused logins fail fast

@pytest.mark.parametrize("url_tail, sqlstate, words", [
    ("pricesvc?user=no_such_role_e2e", "28000", "role does not exist"),
    ("no_such_database_e2e?user=authenticator", "3D000", "database does not exist"),
])
def test_serve_fails_fast_with_one_line_when_the_login_is_refused(env, url_tail, sqlstate, words):
    database, _, query = url_tail.partition("?")
    env.allow_login("no_such_role_e2e")  # past peer's map, so the server's refusal is about the role
    url = f"postgresql:///{database}?host={env.pghost}&{query}"
    started = time.monotonic()
    result = env.run("serve", timeout=30, STARTUP_TIMEOUT=30, LISTEN="127.0.0.1:0", DATABASE_URL=url)
    elapsed = time.monotonic() - started
    assert result.returncode == 1, result.stderr
    assert elapsed < 10, f"a refused login must not be retried for the whole start-up timeout ({elapsed:.1f} s)"
    lines = _stderr_lines(result)
    assert len(lines) == 1, lines
    assert sqlstate in lines[0] and words in lines[0] and "retrying will not help" in lines[0], lines
    assert "unreachable" not in lines[0]


def test_migrate_errors_are_sentences_without_internal_names(env):
    url = f"postgresql:///no_such_database_e2e?host={env.pghost}&user={env.pguser}"
    result = env.run("migrate", "--migration-database-url", url, timeout=30)
    assert result.returncode == 1
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "database does not exist" in lines[0], lines
    missing_dir = env.run("migrate", "--migration-database-url", env.owner_url, "--migrations-dir", "/no/such/dir",
                          timeout=30)
    assert missing_dir.returncode == 2, missing_dir.stderr  # a bad setting, as configuration.md says
    internal_names = ("connectFailed", "migrationFailed", "migrationChecksumMismatch", "connectionLost", "DatabaseError")
    for output in (result.stderr, missing_dir.stderr):
        assert not any(name in output for name in internal_names), output
    assert "/no/such/dir" in missing_dir.stderr


# PostgreSQL's names (format_type) for the SQL types `pricesvc statements` declares.
_FORMAT_TYPE = {"timestamptz": "timestamp with time zone"}


def _describe(migrated, statement) -> list[tuple[str, str]]:
    """The statement's result columns as PostgreSQL describes them (psql's \\gdesc: planned, never run),
    each $n replaced by a NULL of the type the statement declares for it."""
    sql = statement["sql"]
    for number in range(len(statement["parameters"]), 0, -1):
        sql = sql.replace(f"${number}", f"(null::{statement['parameters'][number - 1]['type']})")
    result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", migrated.pghost,
                             "-U", migrated.pguser, "-d", "pricesvc"],
                            input=sql + " \\gdesc\n", capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, f"{statement['name']}: {result.stderr}\n{sql}"
    lines = [line for line in result.stdout.splitlines() if "|" in line]
    return [tuple(line.split("|", 1)) for line in lines]


def test_statements_json_lists_every_statement_as_the_database_describes_it(migrated):
    result = migrated.run("statements", "--json", "--statement-timeout-ms", "4321", timeout=10)
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    statements = listing["statements"]
    names = [statement["name"] for statement in statements]
    assert len(names) == len(set(names))
    # The service's statements (the pool prepares them all), the quote variants, and the owner tasks'.
    assert {"pricesvc_identity", "pricesvc_insert_reports", "pricesvc_medians_rows", "pricesvc_quotes_rows",
            "pricesvc_quotes_rows_0", "owner_prune", "owner_cds_replace_source"} <= set(names)
    assert {statement["sender"] for statement in statements} == {"service", "owner"}
    assert {"name": "statement_timeout", "value": "4321"} in listing["session_settings"]
    described = 0
    for statement in statements:
        highest = max([int(n) for n in re.findall(r"\$(\d+)", statement["sql"])] or [0])
        assert len(statement["parameters"]) == highest, statement["name"]
        columns = _describe(migrated, statement)
        declared = [(column["name"], _FORMAT_TYPE.get(column["type"], column["type"])) for column in statement["columns"]]
        # Column count and types are what the rows decode by; names are the statement's own (PostgreSQL
        # calls an unnamed expression ?column? or after its function).
        assert [kind for _, kind in columns] == [kind for _, kind in declared], statement["name"]
        described += 1
    assert described == len(statements) >= 30


def test_statements_prints_each_statement_with_its_parameters(env):
    result = env.run("statements", timeout=10)
    assert result.returncode == 0, result.stderr
    assert "-- pricesvc_submitter_identity (service): ($1 role text, $2 token text, $3 sub text)" in result.stdout
    assert "from auth.prune(make_interval(secs => $1::double precision));" in result.stdout


@pytest.mark.parametrize("arguments", [[], ["list"], ["list", "--", "pgbackrest"], ["last", "--"], ["forget", "--", "x"]])
def test_backup_info_misused_prints_its_usage_and_exits_2(arguments):
    # An operator's tool: a missing `--`, command or pgbackrest command line is told how to call it, not
    # shown a Python traceback.
    result = subprocess.run(["python3", str(REPO / "scripts/ops/backup-info.py"), *arguments],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 2, result
    assert "backup-info.py list REPO -- PGBACKREST" in result.stderr
    assert "Traceback" not in result.stderr


def test_backup_info_help_prints_the_usage():
    result = subprocess.run(["python3", str(REPO / "scripts/ops/backup-info.py"), "--help"],
                            capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result
    assert "backup-info.py plan [--to TIME EPOCH]" in result.stdout
