"""Rolling upgrades (docs/upgrading.md): `migrate` never makes live traffic wait behind it, the
schema records its version, an instance stays ready on a newer schema that accepts it, an older pricesvc
refuses to migrate a newer schema, and the previous release serves beside the new one.

"The next release" is made here: a copy of migrations/ with VERSION bumped, a versioned file that takes
price_reports' ACCESS EXCLUSIVE lock (an expand step: a nullable column) and a changed medians.sql. "The
previous release" is built from git by scripts/dev/previous-release.sh (cached by commit in ~/.cache/pricesvc/previous-release, shared by clones).
Each test makes its own databases in the test cluster and drops them; the shared one is never migrated
to another version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from conftest import GENERAL_SETTINGS, REPO, ServerFactory
from helpers import Database, location, report, wait_until
from table_lock import HeldTransaction

EXPAND_FILE = "9001_upgrade_test_expand.sql"
READER = "upgrade test reader"


def read_version(directory: Path) -> tuple[int, int]:
    text = (directory / "VERSION").read_text()
    return (int(re.search(r"^version\s*=\s*(\d+)", text, re.M).group(1)),
            int(re.search(r"^compatible_from\s*=\s*(\d+)", text, re.M).group(1)))


def write_version(directory: Path, version: int, compatible_from: int) -> None:
    (directory / "VERSION").write_text(f"version = {version}\ncompatible_from = {compatible_from}\n")


class Upgrade:
    """Databases of this test, the migrations of this build, and the next release's."""

    def __init__(self, env, tmp_path: Path, template):
        self.env, self.tmp_path, self.names, self.template = env, tmp_path, [], template
        self.current = Path(env.migrations_dir)
        self.version, _ = read_version(self.current)

    def database(self, label: str) -> Database:
        """An empty database."""
        name = f"upgrade_{label}_{os.getpid()}"
        self.admin(f"drop database if exists {name} with (force)")
        self.admin(f"create database {name}")
        self.names.append(name)
        return Database(self.env.pghost, self.env.pguser, name)

    def current_database(self, label: str) -> Database:
        """A database as `migrate` with this build's migrations leaves an empty one (a copy of the template)."""
        name = f"upgrade_{label}_{os.getpid()}"
        self.template.copy(name)
        self.names.append(name)
        return Database(self.env.pghost, self.env.pguser, name)

    def admin(self, sql: str) -> None:
        Database(self.env.pghost, self.env.pguser, "postgres").psql(sql)

    def drop_all(self) -> None:
        for name in self.names:
            self.admin(f"drop database if exists {name} with (force)")

    def next_release(self, contract: bool = False, versioned_file: bool = True, label: str = "next") -> Path:
        """migrations/ as the next release would ship it: version + 1, compatible with this one (an
        expand step) unless `contract`."""
        directory = self.tmp_path / label
        shutil.copytree(self.current, directory)
        write_version(directory, self.version + 1, self.version + 1 if contract else self.version)
        if versioned_file:
            (directory / EXPAND_FILE).write_text(
                "-- An expand step: a nullable column older instances never name.\n"
                "alter table public.price_reports add column upgrade_test_note text;\n")
        with open(directory / "medians.sql", "a") as medians:
            medians.write("\n-- the next release's medians.sql (integration/e2e/test_upgrade.py)\n")
        return directory

    def url(self, db: Database, user: str | None = None) -> str:
        return f"postgresql:///{db.dbname}?host={self.env.pghost}&user={user or self.env.pguser}"

    def migrate_command(self, db: Database, migrations: Path, *flags: str, binary: str | None = None) -> list[str]:
        return [binary or self.env.bin, "migrate", "--migration-database-url", self.url(db),
                "--migrations-dir", str(migrations), *flags]

    def migrate(self, db: Database, migrations: Path, *flags: str, binary: str | None = None,
                timeout: float = 180) -> subprocess.CompletedProcess:
        return subprocess.run(self.migrate_command(db, migrations, *flags, binary=binary),
                              env=self.env.base_env(), capture_output=True, text=True, timeout=timeout, cwd=str(REPO))

    def migrated(self, db: Database, migrations: Path, binary: str | None = None) -> None:
        result = self.migrate(db, migrations, binary=binary)
        assert result.returncode == 0, f"migrate {db.dbname} with {migrations}:\n{result.stdout}\n{result.stderr}"

    def status(self, db: Database, migrations: Path, flag: str = "--status") -> tuple[int, dict]:
        result = self.migrate(db, migrations, flag, timeout=60)
        assert result.stdout.strip(), f"migrate {flag} printed nothing (exit {result.returncode}): {result.stderr}"
        return result.returncode, json.loads(result.stdout)

    def server_settings(self, db: Database, migrations: Path) -> dict:
        return {**GENERAL_SETTINGS, "DATABASE_URL": self.url(db, "authenticator"), "MIGRATIONS_DIR": str(migrations)}


@pytest.fixture
def upgrade(migrated, tmp_path, database_template):
    made = Upgrade(migrated, tmp_path, database_template)
    yield made
    made.drop_all()


def applied_checksum(db: Database, name: str) -> str:
    return db.scalar(f"select checksum from pricesvc_meta.schema_migrations where name = '{name}'")


def file_checksum(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recorded_version(db: Database) -> str:
    return db.scalar("select checksum from pricesvc_meta.schema_migrations where name = 'schema-version'")


class Reader(HeldTransaction):
    """A reader in a long transaction: ACCESS SHARE on price_reports, as any open SELECT holds it. Every
    insert runs beside it; only a statement that wants the table to itself (ALTER TABLE) waits."""

    def __init__(self, db: Database):
        super().__init__(
            db, f"select pg_catalog.set_config('application_name', '{READER}', false);\n"
                "lock table public.price_reports in access share mode;\n",
            lambda: db.psql("select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid "
                            f"where a.application_name = '{READER}' and l.granted "
                            "and l.relation = 'public.price_reports'::regclass") == "1",
            "the reader's lock")
        self.pid = db.scalar(f"select pid from pg_stat_activity where application_name = '{READER}'")


def readyz(server) -> requests.Response:
    return requests.get(server.admin_url + "/readyz", timeout=10)


def submit_and_read(api, token: str) -> None:
    """One report (201) and one price_medians call (200) through `api`."""
    row = report(location("upgrade"))
    response = api.submit(row, token, prefer="return=minimal")
    assert response.status_code == 201, (response.status_code, response.text)
    api.medians([row["location_id"]], token)


# ---------------------------------------------------------------- lock waits

def test_migrate_waits_for_a_reader_in_short_steps_while_inserts_and_medians_keep_answering(upgrade, start_server, anon_key):
    db = upgrade.current_database("lockwait")
    server = start_server(**upgrade.server_settings(db, upgrade.current))
    api = server.api(anon_key)
    next_release = upgrade.next_release()
    stderr_path = upgrade.tmp_path / "migrate.stderr"
    with Reader(db) as reader, open(stderr_path, "w") as stderr:
        process = subprocess.Popen(
            upgrade.migrate_command(db, next_release, "--migrate-lock-timeout", "1s", "--migrate-wait-limit", "120s"),
            env=upgrade.env.base_env(), stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=str(REPO))
        try:
            wait_until(lambda: "(attempt 1)" in stderr_path.read_text(), timeout=30,
                       message="migrate's first lock wait to end and be logged")
            # While migrate keeps trying, the service keeps answering: no insert queues behind it for long.
            answered = 0
            for _ in range(3):
                session = api.new_session()
                submit_and_read(api, session["access_token"])
                answered += 1
            wait_until(lambda: "(attempt 2)" in stderr_path.read_text(), timeout=30,
                       message="migrate's second attempt")
            submit_and_read(api, api.new_session()["access_token"])
            answered += 1
            assert answered == 4
            assert process.poll() is None, "migrate finished while the reader still held its lock"
            reader.release()
            stdout, _ = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
    log = stderr_path.read_text()
    assert process.returncode == 0, f"migrate failed after the reader left:\n{stdout}\n{log}"
    assert EXPAND_FILE in stdout
    line = next(line for line in log.splitlines() if "(attempt 1)" in line)
    assert line.startswith(f"pricesvc: migrate: {EXPAND_FILE} waited 1 s for a lock"), line
    assert f"pid {reader.pid} " in line and f'application_name "{READER}"' in line, line
    assert 'state "idle in transaction"' in line and "transaction started 20" in line, line
    assert "lock table" not in log, "a blocker's query text was logged"
    assert recorded_version(db) == f"version {upgrade.version + 1} compatible-from {upgrade.version}"


def test_migrate_gives_up_after_its_wait_limit_naming_the_blocker_and_status_shows_the_half_applied_schema(upgrade):
    db = upgrade.current_database("waitlimit")
    next_release = upgrade.next_release()
    with Reader(db) as reader:
        result = upgrade.migrate(db, next_release, "--migrate-lock-timeout", "1s", "--migrate-wait-limit", "3s",
                                 timeout=60)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert f"migrate gave up on {EXPAND_FILE} after waiting" in result.stderr, result.stderr
    assert f"pid {reader.pid} " in result.stderr, result.stderr
    # The version was recorded first; the expand file is still to come: what --status shows.
    code, status = upgrade.status(db, next_release)
    assert code == 0
    assert status["database_schema_version"] == {"version": upgrade.version + 1, "compatible_from": upgrade.version}
    assert status["pending_versioned"] == [EXPAND_FILE]
    assert status["compatible"] is False and EXPAND_FILE in status["problem"]
    # This build's own files are all there: it may still serve the half-upgraded schema.
    code, status = upgrade.status(db, upgrade.current)
    assert status["database_is_newer"] is True and status["compatible"] is True, status


def test_policies_sql_runs_again_without_locking_price_reports(upgrade):
    """A release that changes only a function file re-applies it and policies.sql; neither may wait for
    a reader of price_reports (before: policies.sql's ALTER TABLE and CREATE POLICY waited for it, and
    every insert waited behind them)."""
    db = upgrade.current_database("policies")
    next_release = upgrade.next_release(versioned_file=False)
    with Reader(db):
        result = upgrade.migrate(db, next_release, "--migrate-lock-timeout", "1s", "--migrate-wait-limit", "20s",
                                 timeout=60)
    assert result.returncode == 0, (result.stdout, result.stderr)
    assert "applied medians.sql, policies.sql" in result.stdout, result.stdout
    assert "waited" not in result.stderr, result.stderr


# ---------------------------------------------------------------- versions, status, refusal

def test_migrate_status_and_dry_run_print_json_and_change_nothing(upgrade):
    db = upgrade.current_database("status")
    current = {"version": upgrade.version, "compatible_from": read_version(upgrade.current)[1]}
    code, status = upgrade.status(db, upgrade.current)
    assert code == 0
    assert status == {"database_schema_version": current, "migrations_schema_version": current,
                      "database_is_newer": False, "compatible": True, "problem": None, "pending_versioned": [],
                      "changed_repeatable": [], "changed_versioned": [], "unknown_applied": [],
                      "superseded_versioned": []}

    next_release = upgrade.next_release()
    code, status = upgrade.status(db, next_release)
    assert code == 0
    assert status["migrations_schema_version"] == {"version": upgrade.version + 1, "compatible_from": upgrade.version}
    assert status["pending_versioned"] == [EXPAND_FILE]
    assert status["changed_repeatable"] == ["medians.sql"]
    assert status["compatible"] is False and "steps" not in status

    code, plan = upgrade.status(db, next_release, "--dry-run")
    assert code == 0, plan
    assert plan["would_migrate"] is True and plan["records_version"] is True and plan["refusal"] is None
    files = [step["file"] for step in plan["steps"]]
    assert files[0] == EXPAND_FILE and files[-1] == "policies.sql" and "medians.sql" in files, files
    assert recorded_version(db) == f"version {upgrade.version} compatible-from {current['compatible_from']}"
    assert db.scalar(f"select count(*) from pricesvc_meta.schema_migrations where name = '{EXPAND_FILE}'") == "0"

    upgrade.migrated(db, next_release)
    code, plan = upgrade.status(db, upgrade.current, "--dry-run")
    assert code == 1, plan
    assert plan["would_migrate"] is False and plan["steps"] == []
    assert f"version {upgrade.version + 1}" in plan["refusal"] and f"(version {upgrade.version})" in plan["refusal"]
    assert plan["database_is_newer"] is True and plan["compatible"] is True


def test_an_older_pricesvc_refuses_to_migrate_a_newer_schema_and_names_both_versions(upgrade):
    db = upgrade.database("older")
    next_release = upgrade.next_release()
    upgrade.migrated(db, next_release)
    medians = applied_checksum(db, "medians.sql")
    assert medians == file_checksum(next_release / "medians.sql")

    result = upgrade.migrate(db, upgrade.current)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert (f"the database schema is version {upgrade.version + 1}, newer than this pricesvc's migrations "
            f"(version {upgrade.version})") in result.stderr, result.stderr
    assert "applied" not in result.stdout
    # Its older medians.sql was not put back.
    assert applied_checksum(db, "medians.sql") == medians
    assert recorded_version(db) == f"version {upgrade.version + 1} compatible-from {upgrade.version}"


def test_an_instance_stays_ready_on_a_newer_compatible_schema_and_not_on_an_incompatible_one(upgrade, start_server,
                                                                                              anon_key):
    expand = upgrade.current_database("expand")
    old = start_server(**upgrade.server_settings(expand, upgrade.current))
    assert readyz(old).status_code == 200
    upgrade.migrated(expand, upgrade.next_release())
    new = start_server(**upgrade.server_settings(expand, upgrade.tmp_path / "next"))
    for server in (old, new):
        response = readyz(server)
        assert response.status_code == 200, response.text
        api = server.api(anon_key)
        submit_and_read(api, api.new_session()["access_token"])

    contract = upgrade.database("contract")
    upgrade.migrated(contract, upgrade.next_release(contract=True, label="contract"))
    older = start_server(**upgrade.server_settings(contract, upgrade.current))
    response = readyz(older)
    assert response.status_code == 503, response.text
    assert response.json()["reason"] == (
        f"the database schema is version {upgrade.version + 1}, which needs pricesvc of schema version "
        f"{upgrade.version + 1} or later; this one is {upgrade.version}")
    newer = start_server(**upgrade.server_settings(contract, upgrade.tmp_path / "contract"))
    assert readyz(newer).status_code == 200


# ---------------------------------------------------------------- the previous release

@pytest.fixture(scope="session")
def previous_release() -> Path:
    """The previous release's pricesvc and migrations/ (scripts/dev/previous-release.sh builds it once)."""
    result = subprocess.run([str(REPO / "scripts/dev/previous-release.sh")], capture_output=True, text=True,
                            timeout=1800, cwd=str(REPO))
    assert result.returncode == 0, f"scripts/dev/previous-release.sh failed:\n{result.stderr[-4000:]}"
    return Path(result.stdout.strip().splitlines()[-1])


# The first run builds the previous release (minutes; `make test` builds it in its build step).
@pytest.mark.timeout(2400)
def test_the_previous_release_serves_beside_the_new_one_and_its_migrate_is_refused(upgrade, previous_release,
                                                                                    start_server, tmp_path, anon_key):
    old_binary, old_migrations = str(previous_release / "pricesvc"), previous_release / "migrations"
    db = upgrade.database("previous")
    upgrade.migrated(db, old_migrations, binary=old_binary)
    (tmp_path / "old").mkdir()
    old_servers = ServerFactory(dataclasses.replace(upgrade.env, bin=old_binary), tmp_path / "old")
    try:
        old = old_servers.start(**upgrade.server_settings(db, old_migrations))
        old_api = old.api(anon_key)
        old_session = old_api.new_session()
        submit_and_read(old_api, old_session["access_token"])

        # The upgrade: migrate with the new release while the old one serves, then start the new one.
        upgrade.migrated(db, upgrade.current)
        new = start_server(**upgrade.server_settings(db, upgrade.current))
        assert readyz(new).status_code == 200
        new_api = new.api(anon_key)
        for api in (old_api, new_api):
            submit_and_read(api, api.new_session()["access_token"])
        # A session the old instance made keeps working on the new one.
        submit_and_read(new_api, old_session["access_token"])
        if (old_migrations / "VERSION").exists():
            # A release that knows schema versions stays ready on the newer, compatible schema.
            assert readyz(old).status_code == 200

        # The old release's migrate would put its older files back: the schema refuses it. (A superseded
        # file keeps its old checksum recorded, so the old release reads no file as changed and reaches
        # the bookkeeping's check constraint.)
        policies = applied_checksum(db, "policies.sql")
        result = upgrade.migrate(db, old_migrations, binary=old_binary)
        assert result.returncode != 0, (result.stdout, result.stderr)
        assert f"schema_version_{upgrade.version}_needs_a_migrator_of_version_{upgrade.version}_or_later" \
            in result.stderr, result.stderr
        assert applied_checksum(db, "policies.sql") == policies == file_checksum(upgrade.current / "policies.sql")
        submit_and_read(old_api, old_api.new_session()["access_token"])
    finally:
        old_servers.stop_all()


def test_migrations_changed_since_the_previous_release_carry_a_higher_schema_version(previous_release):
    """Readiness and the older-migrator refusal tell releases apart by VERSION alone: a release whose
    migrations/ differs from the previous release's must declare a higher version."""
    old, new = previous_release / "migrations", REPO / "migrations"
    differs = sorted(name for name in {p.name for p in old.glob("*.sql")} | {p.name for p in new.glob("*.sql")}
                     if not (old / name).exists() or not (new / name).exists()
                     or file_checksum(old / name) != file_checksum(new / name))
    previous_version = read_version(old)[0] if (old / "VERSION").exists() else 0
    version, compatible_from = read_version(new)
    if differs:
        assert version > previous_version, (
            f"migrations/ changed since the previous release ({', '.join(differs)}) but VERSION still says "
            f"{version}: bump it (docs/upgrading.md)")
    assert compatible_from <= version
