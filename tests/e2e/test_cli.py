"""The pricesvc command line: --help, bad flags, secrets, an unreachable database, migrate, keys, prune."""

import json
import subprocess
import time

import requests

from helpers import REQUEST_TIMEOUT, b64url_decode, jwt_segments, report, signature_valid


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
    from_file = env.run("keys", timeout=10, PRICESVC_JWT_SECRET=None, JWT_SECRET_FILE=str(secret_file))
    inline = env.run("keys", timeout=10)
    assert from_file.returncode == 0 and from_file.stdout == inline.stdout


def test_serve_gives_up_on_an_unreachable_database_within_the_startup_timeout(env, tmp_path):
    missing = tmp_path / "no-postgres-here"
    started = time.monotonic()
    result = env.run("serve", timeout=30, STARTUP_TIMEOUT=2, LISTEN="127.0.0.1:0",
                     DATABASE_URL=f"postgresql:///pricesvc?host={missing}&user=authenticator")
    elapsed = time.monotonic() - started
    assert result.returncode != 0
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


def test_prune_rejects_a_malformed_duration(migrated):
    result = migrated.run("prune", "--older-than", "thirty", "--migration-database-url", migrated.owner_url,
                          timeout=30)
    assert result.returncode != 0
    assert len(_stderr_lines(result)) == 1


def test_serve_refuses_a_malformed_setting_with_exit_2(env):
    result = env.run("serve", timeout=10, RATE_LIMIT_PER_MINUTE="lots", LISTEN="127.0.0.1:0")
    assert result.returncode == 2
    assert len(_stderr_lines(result)) == 1


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
