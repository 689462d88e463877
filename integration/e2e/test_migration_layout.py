"""The SQL layout (docs/contracts.md, "migrations/ layout"): a database migrated from an earlier layout
ends with the same catalog as a fresh one, and scripts/dev/lint-migrations.py refuses what the layout forbids.

Each test makes its own databases in the test cluster (`make test` reuses one cluster: the names carry
this process's id) and drops them. The earlier layouts come from git history (`git archive`), which a
clone has.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from conftest import GENERAL_SETTINGS

REPO = Path(__file__).resolve().parents[2]
DUMP = Path(__file__).resolve().parent / "catalog_dump.sql"
LINT = REPO / "scripts/dev/lint-migrations.py"
# Earlier layouts a deployed database may be at: before the published-rates engine left 0010 (08deb3b),
# main before settings.sql and the generic revoke in policies.sql (d0da0f8), and main before the versioned
# files up to 0014 lost their functions and grants (820e789: migrations/superseded.txt lists its texts).
EARLIER_LAYOUTS = ["08deb3b", "d0da0f8", "820e789"]
SUPERSEDED_FROM = "820e789"


def psql(env, database: str, *args: str, timeout: float = 60) -> str:
    result = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-h", env.pghost, "-U", env.pguser,
                             "-d", database, *args], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"psql -d {database} {args}: {result.stderr}"
    return result.stdout


def superseded_texts() -> dict[tuple[str, str], str]:
    """(file, old checksum) -> new checksum, from migrations/superseded.txt."""
    lines = (REPO / "migrations/superseded.txt").read_text().splitlines()
    return {(name, old): new for name, old, new in
            (line.split() for line in lines if line.strip() and not line.startswith("#"))}


def catalog(env, database: str) -> list[str]:
    """The catalog dump, with a recorded superseded checksum read as the text that supersedes it: an
    upgraded database keeps the old checksum on purpose (the release before stays ready), a fresh one
    records the new; the objects are what must be the same."""
    lines = psql(env, database, "-f", str(DUMP)).splitlines()
    assert len(lines) > 500, f"the catalog dump of {database} is too short to mean anything:\n" + "\n".join(lines)
    superseded = superseded_texts()
    normalized = []
    for line in lines:
        words = line.split()
        if len(words) == 3 and words[0] == "migration" and (words[1], words[2]) in superseded:
            line = f"migration {words[1]} {superseded[(words[1], words[2])]}"
        normalized.append(line)
    return normalized


def migrate(env, database: str, migrations: Path) -> None:
    url = f"postgresql:///{database}?host={env.pghost}&user={env.pguser}"
    result = env.run("migrate", "--migration-database-url", url, timeout=180, migrations_dir=str(migrations))
    assert result.returncode == 0, f"migrate {database} with {migrations}:\n{result.stdout}\n{result.stderr}"


def lint(env, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["python3", str(LINT), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PGHOST": env.pghost, "PGUSER": env.pguser})


class Databases:
    def __init__(self, env):
        self.env, self.names = env, []

    def create(self, label: str) -> str:
        name = f"layout_{label}_{os.getpid()}"
        psql(self.env, "postgres", "-c", f"drop database if exists {name} with (force)")
        psql(self.env, "postgres", "-c", f"create database {name}")
        self.names.append(name)
        return name

    def drop_all(self) -> None:
        for name in self.names:
            psql(self.env, "postgres", "-c", f"drop database if exists {name} with (force)")


@pytest.fixture(scope="module")
def databases(env):
    made = Databases(env)
    yield made
    made.drop_all()


@pytest.fixture(scope="module")
def fresh(env, databases) -> str:
    """A database migrated once, from nothing, with migrations/."""
    name = databases.create("fresh")
    migrate(env, name, REPO / "migrations")
    return name


@pytest.mark.parametrize("commit", EARLIER_LAYOUTS)
def test_a_database_migrated_from_an_earlier_layout_has_the_catalog_of_a_fresh_one(env, databases, fresh, commit,
                                                                                   tmp_path):
    upgraded = databases.create(f"from_{commit}")
    migrate(env, upgraded, earlier_migrations(commit, tmp_path))
    before = catalog(env, upgraded)
    migrate(env, upgraded, REPO / "migrations")

    after, expected = catalog(env, upgraded), catalog(env, fresh)
    assert after != before, "the upgrade changed nothing: the comparison below would prove nothing"
    assert after == expected, "upgraded (-) and fresh (+) catalogs differ:\n" + "\n".join(
        difflib.unified_diff(after, expected, lineterm="", n=0))

    # The dump sees privileges: one stray grant is a difference.
    psql(env, upgraded, "-c", "grant execute on function private.reporter_cap() to anon")
    assert catalog(env, upgraded) != expected


def earlier_migrations(commit: str, tmp_path: Path) -> Path:
    archive = subprocess.run(f"git -C {REPO} archive {commit} migrations | tar -x -C {tmp_path}", shell=True,
                             capture_output=True, text=True, timeout=60)
    assert archive.returncode == 0, f"cannot read migrations/ at {commit} from git history: {archive.stderr}"
    return tmp_path / "migrations"


def recorded(env, database: str) -> dict[str, str]:
    rows = psql(env, database, "-c", "select name, checksum from pricesvc_meta.schema_migrations "
                                     "where name like '%.sql'").splitlines()
    return dict(row.split("|", 1) for row in rows)


def migrate_json(env, database: str, flag: str) -> dict:
    url = f"postgresql:///{database}?host={env.pghost}&user={env.pguser}"
    result = env.run("migrate", "--migration-database-url", url, flag, timeout=60, migrations_dir=str(REPO / "migrations"))
    assert result.returncode == 0, f"migrate {flag}: {result.stdout}\n{result.stderr}"
    return json.loads(result.stdout)


def test_a_database_of_the_superseded_texts_migrates_keeps_the_old_checksums_and_both_releases_are_ready(
        env, databases, fresh, tmp_path, start_server):
    """Today's main (820e789) applied 0004-0014 with their functions and grants, and 0001 with its roles
    and its copy of the bookkeeping table (the one text 0001 had until schema version 7); migrate accepts
    those checksums through superseded.txt, runs none of those files again and leaves them recorded, so
    this release and the one before (which knows only the old texts) both read the database as ready."""
    old = earlier_migrations(SUPERSEDED_FROM, tmp_path)
    upgraded = databases.create("superseded")
    migrate(env, upgraded, old)
    listed = [line.split() for line in (REPO / "migrations/superseded.txt").read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    assert listed, "superseded.txt lists nothing: this test would prove nothing"
    applied_before = recorded(env, upgraded)
    for name, old_sum, new_sum in listed:
        assert applied_before[name] == old_sum == hashlib.sha256((old / name).read_bytes()).hexdigest(), name
        assert new_sum == hashlib.sha256((REPO / "migrations" / name).read_bytes()).hexdigest(), (
            f"superseded.txt: {name}'s new checksum is not the file's: update the line")

    # Before migrate: the old checksums are accepted (nothing changed, nothing refused), and listed.
    dry = migrate_json(env, upgraded, "--dry-run")
    assert dry["would_migrate"] and dry["refusal"] is None, dry
    assert dry["changed_versioned"] == [], dry
    assert sorted(dry["superseded_versioned"]) == sorted(n for n, _, _ in listed), dry
    assert "records_checksums" not in dry, dry
    assert not {step["file"] for step in dry["steps"]} & {n for n, _, _ in listed}, "a superseded file would run again"

    url = f"postgresql:///{upgraded}?host={env.pghost}&user={env.pguser}"
    result = env.run("migrate", "--migration-database-url", url, timeout=180, migrations_dir=str(REPO / "migrations"))
    assert result.returncode == 0, f"migrate: {result.stdout}\n{result.stderr}"
    applied_after = recorded(env, upgraded)
    for name, old_sum, _ in listed:
        assert applied_after[name] == old_sum, f"{name}: the old checksum must stay recorded"

    status = migrate_json(env, upgraded, "--status")
    assert status["compatible"] and status["problem"] is None, status
    assert status["changed_versioned"] == status["pending_versioned"] == [], status
    assert sorted(status["superseded_versioned"]) == sorted(n for n, _, _ in listed), status
    assert migrate_json(env, upgraded, "--dry-run")["steps"] == [], "migrated: nothing left to run"
    assert catalog(env, upgraded) == catalog(env, fresh)

    database_url = f"postgresql:///{upgraded}?host={env.pghost}&user=authenticator"
    server = start_server(**GENERAL_SETTINGS, DATABASE_URL=database_url)
    response = requests.get(server.admin_url + "/readyz", timeout=10)
    assert response.status_code == 200, response.text
    # The release before compares the record with its own files (the old texts): still ready beside it.
    before = start_server(**GENERAL_SETTINGS, DATABASE_URL=database_url, MIGRATIONS_DIR=str(old))
    response = requests.get(before.admin_url + "/readyz", timeout=10)
    assert response.status_code == 200, response.text


def test_any_other_change_of_a_versioned_file_is_still_refused(env, databases, tmp_path):
    """superseded.txt names exact texts: a database that recorded another text of a listed file is refused."""
    upgraded = databases.create("edited")
    migrate(env, upgraded, earlier_migrations(SUPERSEDED_FROM, tmp_path))
    # As a migrator of the recorded schema version (the bookkeeping table refuses rows from older ones).
    psql(env, upgraded, "-c", "set pricesvc.migrator_schema_version = '1'; "
                              "update pricesvc_meta.schema_migrations set checksum = repeat('0', 64) "
                              "where name = '0004_settings.sql'")
    url = f"postgresql:///{upgraded}?host={env.pghost}&user={env.pguser}"
    result = env.run("migrate", "--migration-database-url", url, timeout=180, migrations_dir=str(REPO / "migrations"))
    assert result.returncode != 0, result.stdout
    assert "0004_settings.sql was changed after it was applied" in result.stderr, result.stderr
    assert recorded(env, upgraded)["0004_settings.sql"] == "0" * 64


def test_the_tree_keeps_the_layout(env, fresh):
    result = lint(env, "--database", fresh)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "keeps the layout" in result.stdout


def test_a_function_no_repeatable_file_creates_is_refused(env, fresh):
    psql(env, fresh, "-c", "create function private.stray() returns integer language sql return 1")
    try:
        result = lint(env, "--database", fresh)
    finally:
        psql(env, fresh, "-c", "drop function private.stray()")
    assert result.returncode == 1
    assert "private.stray()" in result.stdout


@pytest.fixture
def migrations_copy(tmp_path) -> Path:
    copy = tmp_path / "migrations"
    shutil.copytree(REPO / "migrations", copy)
    return copy


@pytest.mark.parametrize("statement", [
    "create function private.later() returns integer language sql return 1;",
    "create or replace procedure private.later() language sql begin atomic select 1; end;",
    "grant select on table public.price_reports to anon;",
    "revoke all on function private.reporter_cap() from public;",
    "alter table public.price_reports owner to postgres;",
    "do $$ begin execute 'grant usage on schema private to anon'; end $$;",
])
def test_a_new_versioned_file_that_defines_a_function_or_changes_privileges_is_refused(env, migrations_copy,
                                                                                       statement):
    (migrations_copy / "0015_later.sql").write_text(f"alter table public.price_reports add column x integer;\n"
                                                    f"{statement}\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 1, result.stdout
    assert "0015_later.sql: a versioned file" in result.stdout


def test_a_new_versioned_file_may_change_tables_and_data(env, migrations_copy):
    (migrations_copy / "0015_later.sql").write_text(
        "-- Words in comments and strings are not statements: grant, revoke, owner to.\n"
        "alter table public.price_reports add column note text default 'grant revoke owner to';\n"
        "update public.price_reports set note = 'create function f() ...' where false;\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("statement", [
    "grant execute on function private.reporter_cap() to anon;",
    "alter function private.reporter_cap() owner to postgres;",
    "revoke all on function private.reporter_cap() from anon;",
])
def test_grants_and_owners_outside_policies_sql_are_refused(env, migrations_copy, statement):
    with (migrations_copy / "medians.sql").open("a") as medians:
        medians.write(statement + "\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 1, result.stdout
    assert "medians.sql:" in result.stdout


@pytest.mark.parametrize("statement", [
    "create or replace function private.later() returns integer language sql return 1;",
    "grant execute on function private.reporter_cap() to anon;",
    "revoke all on function private.reporter_cap() from public;",
    "alter function private.reporter_cap() owner to postgres;",
    "do $$ begin execute 'grant usage on schema private to anon'; end $$;",
])
def test_an_after_step_that_defines_a_function_or_changes_privileges_is_refused(env, migrations_copy, statement):
    (migrations_copy / "0099_later.after.sql").write_text(f"update public.price_reports set rate_kind = rate_kind "
                                                          f"where false;\n{statement}\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 1, result.stdout
    assert "0099_later.after.sql: an after-step" in result.stdout


def test_an_after_step_may_backfill_check_and_create_triggers(env, migrations_copy):
    (migrations_copy / "0099_later.after.sql").write_text(
        "create or replace trigger later after insert on public.price_reports\n"
        "    for each row execute function private.median_enqueue();\n"
        "update public.price_reports set rate_kind = rate_kind where false;\n"
        "do $$ begin perform private.median_rebuild(null); end $$;\n"
        "alter table public.price_reports validate constraint price_reports_rate_kind_known;\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("statement", [
    "insert into private.median_queue select 1 where false;",
    "update public.price_reports set rate_kind = rate_kind where false;",
    "with gone as (delete from private.median_queue where false returning 1) select count(*) from gone;",
    "truncate private.median_queue;",
    "do $$ begin perform private.median_rule_reconcile(); end $$;",
    "create or replace trigger later after insert on public.price_reports for each row execute function private.median_enqueue();",
    "alter table public.price_reports add column later integer;",
    "alter domain private.rate_kind add constraint later check (value <> '');",
])
def test_a_repeatable_file_that_changes_data_or_tables_is_refused(env, migrations_copy, statement):
    with (migrations_copy / "medians.sql").open("a") as medians:
        medians.write(statement + "\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 1, result.stdout
    assert "medians.sql:" in result.stdout and "after-step" in result.stdout


def test_no_repeatable_file_is_allowed_a_do_block(env, migrations_copy):
    """No exceptions are left: the CDS engine's first compile is after-step 0032 now, so a DO block in any
    of its files (or published_rates.sql) is refused like anywhere else."""
    for name in ("published_rates.sql", "cds_3_compile.sql"):
        with (migrations_copy / name).open("a") as file:
            file.write("do $$ begin perform 1; end $$;\n")
    result = lint(env, "--no-database", "--migrations", str(migrations_copy))
    assert result.returncode == 1, result.stdout
    assert "published_rates.sql:" in result.stdout and "cds_3_compile.sql:" in result.stdout


def test_the_first_compile_after_step_compiles_every_source_imported_before_compiled_schedules(env, databases):
    """0032_cds_first_compile.after.sql, on a database whose sources have no compiled schedule (as one
    imported before 0019 has): the one migrate that applies it compiles every zone, and quotes then take the
    compiled path with the same costs."""
    name = databases.create("first_compile")
    migrate(env, name, REPO / "migrations")
    url = f"postgresql:///{name}?host={env.pghost}&user={env.pguser}"
    imported = env.run("import-rates", "--migration-database-url", url, "--source", "first-compile",
                       str(REPO / "integration/fixtures/cds/example-city.json"), timeout=120)
    assert imported.returncode == 0, imported.stderr
    cost = ("select string_agg(format('%s %s %s', q.location_id, q.published_cents, q.published_allowed), ';' "
            "order by q.location_id) from public.price_quotes((select array_agg(z.location_id) from cds.zones z "
            "where z.source = 'first-compile'), 'hourly', '2026-03-03 10:00 America/Los_Angeles', '2 hours') q")
    compiled_cost = psql(env, name, "-c", cost).strip()
    # What a database from before 0019 holds: zones without schedules, and no record of the step.
    psql(env, name, "-c", "update cds.zones set schedule_id = null where source = 'first-compile'",
         "-c", "delete from cds.schedules where source = 'first-compile'",
         "-c", "delete from pricesvc_meta.schema_migrations where name = '0032_cds_first_compile.after.sql'")
    assert psql(env, name, "-c", "select count(*) from cds.zones where source = 'first-compile' "
                                 "and schedule_id is null").strip() != "0"
    migrate(env, name, REPO / "migrations")
    assert psql(env, name, "-c", "select count(*) from cds.zones where source = 'first-compile' "
                                 "and schedule_id is null").strip() == "0"
    assert psql(env, name, "-c", cost).strip() == compiled_cost
