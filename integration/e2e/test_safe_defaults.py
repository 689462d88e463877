"""Safe defaults: serve refuses a login that bypasses row security unless told
otherwise, and a misspelled PRICESVC_* variable is an error naming the setting it was probably meant to be."""

import re

import pytest
import requests

from helpers import REQUEST_TIMEOUT


def _stderr_lines(result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.strip()]


def test_serve_refuses_a_superuser_login_and_names_the_role_and_the_flag(migrated):
    """Before: serve ran as the cluster's superuser without a word, bypassing every row policy."""
    result = migrated.run("serve", timeout=30, DATABASE_URL=migrated.owner_url, LISTEN="127.0.0.1:0")
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = _stderr_lines(result)
    assert len(lines) == 1, lines
    assert "PRICESVC_DATABASE_URL" in lines[0] and "superuser or BYPASSRLS" in lines[0], lines
    assert "PRICESVC_ALLOW_PRIVILEGED_ROLE" in lines[0], lines


def test_serve_refuses_a_bypassrls_login(migrated, db):
    db.psql("do $$ begin if not exists (select from pg_roles where rolname = 'e2e_bypassrls') then "
            "create role e2e_bypassrls login bypassrls; end if; end $$")
    migrated.allow_login("e2e_bypassrls")
    url = re.sub(r"user=[^&]+", "user=e2e_bypassrls", migrated.owner_url)
    result = migrated.run("serve", timeout=30, DATABASE_URL=url, LISTEN="127.0.0.1:0")
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "e2e_bypassrls" in result.stderr


def test_serve_runs_as_a_superuser_only_when_the_flag_says_so_and_warns(start_server, migrated):
    server = start_server(DATABASE_URL=migrated.owner_url, ALLOW_PRIVILEGED_ROLE="true")
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    assert "warning:" in server.stderr() and "every row policy would be bypassed" in server.stderr()


def test_serve_as_authenticator_says_nothing_about_privileges(server):
    assert "BYPASSRLS" not in server.stderr()


@pytest.mark.parametrize("command", ["serve", "migrate", "prune", "keys"])
def test_a_misspelled_variable_is_an_error_naming_the_closest_setting(env, command):
    """Before: PRICESVC_POOLSIZE was silently ignored and the pool kept its default size."""
    result = env.run(command, timeout=15, PRICESVC_POOLSIZE="32", LISTEN="127.0.0.1:0")
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = _stderr_lines(result)
    assert len(lines) == 1 and "PRICESVC_POOLSIZE" in lines[0] and "PRICESVC_POOL_SIZE" in lines[0], lines


@pytest.mark.parametrize("name,closest", [("PRICESVC_DATABSE_URL", "PRICESVC_DATABASE_URL"),
                                          ("PRICESVC_JWT_SECRETFILE", "PRICESVC_JWT_SECRET_FILE"),
                                          ("PRICESVC_LISTEN_ADDRESS", "PRICESVC_LISTEN")])
def test_the_closest_setting_is_named(env, name, closest):
    result = env.run("keys", timeout=15, **{name: "x"})
    assert result.returncode == 2
    assert f"did you mean {closest}?" in result.stderr, result.stderr


def test_the_test_suites_own_variables_are_not_settings_and_are_ignored(env):
    result = env.run("keys", timeout=15, PRICESVC_TEST_ANYTHING="1", PRICESVC_E2E_MIGRATIONS_DIR="/x",
                     PRICESVC_BIN="/x", PRICESVC_OWNER_URL="postgresql:///x")
    assert result.returncode == 0, result.stderr


def test_the_dev_and_test_cluster_is_private_to_its_owner(env, db):
    """scripts/dev/pg-cluster.sh once ran `trust` over a socket mode 0777 in a directory
    anyone could enter, so any local user connected as the superuser (`copy … to program` then runs
    commands as the cluster's owner). Now the socket, its directory and the data directory are the
    owner's alone, and TCP (off by default) needs scram-sha-256."""
    import os
    import shutil
    import stat
    import subprocess
    from pathlib import Path

    socket_dir = Path(env.pghost)
    data = socket_dir / "data"
    for path in (socket_dir, data, socket_dir / ".s.PGSQL.5432"):
        mode = stat.S_IMODE(os.stat(path).st_mode)
        assert mode & 0o077 == 0, f"{path} is mode {mode:o}: readable or reachable by others"
    hba = [line.split() for line in (data / "pg_hba.conf").read_text().splitlines()
           if line.strip() and not line.startswith("#")]
    assert all(fields[-1] == "scram-sha-256" for fields in hba if fields[0].startswith("host")), hba
    # Over the socket: peer through the map, never trust. A login role the map does not name is refused,
    # even for the OS user that may reach the socket; one it names gets in.
    assert [fields[3:] for fields in hba if fields[0] == "local"] == [["peer", "map=pricesvc"]], hba
    db.psql("do $$ begin if not exists (select from pg_roles where rolname = 'e2e_unmapped') then "
            "create role e2e_unmapped login; end if; end $$")
    unmapped = subprocess.run(["psql", "-X", "-h", str(socket_dir), "-U", "e2e_unmapped", "-d", "pricesvc",
                               "-tAc", "select 1"], capture_output=True, text=True, timeout=30)
    assert unmapped.returncode != 0 and 'Peer authentication failed for user "e2e_unmapped"' in unmapped.stderr, \
        (unmapped.stdout, unmapped.stderr)
    service = subprocess.run(["psql", "-X", "-h", str(socket_dir), "-U", "authenticator", "-d", "pricesvc",
                              "-tAc", "select current_user"], capture_output=True, text=True, timeout=30)
    assert service.stdout.strip() == "authenticator", service.stderr
    if os.geteuid() == 0 and shutil.which("runuser"):
        outsider = subprocess.run(["runuser", "-u", "nobody", "--", "psql", "-X", "-h", str(socket_dir), "-U", env.pguser,
                                   "-d", "pricesvc", "-tAc", "select 1"], capture_output=True, text=True, timeout=30)
        assert outsider.returncode != 0 and "Permission denied" in outsider.stderr, (outsider.stdout, outsider.stderr)
