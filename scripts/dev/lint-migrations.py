#!/usr/bin/env python3
"""Holds migrations/ to its layout (docs/contracts.md, "migrations/ layout"):

- every versioned file (NNNN_name.sql) holds tables, types and data changes only: no function, no GRANT
  or REVOKE, no ownership change;
- so does every after-step (NNNN_name.after.sql, run once after the repeatable files): its backfills,
  checks and triggers use the repeatable files' functions, it defines none;
- a repeatable file other than policies.sql grants nothing and changes no owner; the one revoke it may
  hold is `revoke all on function ... from public` for a function it creates (closed from its commit on;
  policies.sql re-declares it);
- nor does it change data or tables: no INSERT, UPDATE, DELETE or TRUNCATE, no DO block, no CREATE
  TRIGGER, no ALTER TABLE or ALTER DOMAIN (it re-runs whenever a function in it changes: what must run
  once after its functions exist is an after-step);
- policies.sql creates no function;
- with a database (PGHOST/PGDATABASE or --database), every function in pricesvc's schemas is created by
  a repeatable file: a function only a versioned file defines cannot be fixed without copying it whole.

Versioned files applied in deployed databases cannot change, but for a text migrations/superseded.txt
records (MigrationPlanner accepts the old checksum and migrate records the new one): that is how the files
up to 0014, written before these rules, lost their functions and grants.

Usage: scripts/dev/lint-migrations.py [--migrations DIR] [--database NAME | --no-database]
       scripts/dev/lint-migrations.py --repeatable-functions   (schema.name,... for integration/pgtap/06_layout.sql)
Exit status 1 with one line per finding, 0 when the tree keeps the rules.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

FINAL = "policies.sql"
# Statements a repeatable file other than FINAL may not hold: it defines functions, and re-runs whenever
# one of them changes.
NOT_DEFINITIONS = (
    (re.compile(r"(?:with\b.*?\b)?(insert|update|delete|truncate)\b"), "changes data"),
    (re.compile(r"do\b"), "runs a DO block"),
    (re.compile(r"create\s+(?:or\s+replace\s+)?(?:constraint\s+)?trigger\b"), "creates a trigger"),
    (re.compile(r"alter\s+(?:table|domain)\b"), "alters a table or domain"),
)
# Exceptions, each a file and how many statements of a kind it may still hold.
ALLOWED: dict[tuple[str, str], int] = {}
# Schemas whose every function, but an extension's, must come from a repeatable file. public counts
# whole: in the test database nothing but pricesvc puts functions there (policies.sql, which may run
# beside other software, names pricesvc's own).
PROJECT_SCHEMAS = ("auth", "private", "pricesvc_meta", "cds", "public")
# Made by `pricesvc migrate` itself before any file runs (MigrationRunner.bookkeepingSQL).
RUNNER_FUNCTIONS = {"pricesvc_meta.applied_migrations"}

VERSIONED = re.compile(r"^(\d+)_[a-z0-9_]+\.sql$")
AFTER_STEP = re.compile(r"^(\d+)_[a-z0-9_]+\.after\.sql$")
REPEATABLE = re.compile(r"^[a-z][a-z0-9_]*\.sql$")
CREATE_FUNCTION = re.compile(
    r"\bcreate\s+(?:or\s+replace\s+)?(?:function|procedure)\s+((?:\"?[\w]+\"?\s*\.\s*)?\"?[\w]+\"?)\s*\(", re.I)
IDENT = r"\"?[\w]+\"?(?:\s*\.\s*\"?[\w]+\"?)?"


def strip_sql(text: str, keep_dollar_bodies: bool, keep_strings: bool = False) -> str:
    """The SQL without comments and string literals (replaced by ''); dollar-quoted bodies are kept
    (with their strings, which is where dynamic SQL hides) or blanked. Enough of the lexer to find
    statements, not to parse them."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("--", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            out.append(" ")
        elif c == "'":
            j = i + 1
            while j < n:
                if text[j] == "'" and j + 1 < n and text[j + 1] == "'":
                    j += 2
                elif text[j] == "'":
                    break
                else:
                    j += 1
            out.append(text[i:j + 1] if keep_strings else "''")
            i = j + 1
        elif c == "$" and (m := re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", text[i:])):
            tag = m.group(0)
            j = text.find(tag, i + len(tag))
            end = n if j < 0 else j + len(tag)
            if keep_dollar_bodies:
                out.append(" " + strip_sql(text[i + len(tag):end - len(tag)], True, keep_strings=True) + " ")
            else:
                out.append(" $body$ ")
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def normalise(name: str) -> str:
    return re.sub(r"[\s\"]", "", name).lower()


def functions_created(sql: str) -> set[str]:
    return {normalise(m.group(1)) for m in CREATE_FUNCTION.finditer(strip_sql(sql, keep_dollar_bodies=False))}


def statements(sql: str) -> list[str]:
    return [" ".join(s.split()) for s in sql.split(";") if s.strip()]


def lint_files(directory: Path) -> tuple[list[str], set[str]]:
    """Findings, and the functions the repeatable files create (schema.name)."""
    findings: list[str] = []
    repeatable_functions: set[str] = set()
    for path in sorted(directory.glob("*.sql")):
        name, text = path.name, path.read_text(encoding="utf-8")
        if VERSIONED.match(name) or AFTER_STEP.match(name):
            kind = "an after-step" if AFTER_STEP.match(name) else "a versioned file"
            # DO blocks are searched too, strings in them included: neither kind has function bodies to
            # excuse, so any dollar-quoted text is searched as SQL.
            flat = strip_sql(text, keep_dollar_bodies=True)
            for pattern, what in ((CREATE_FUNCTION, "defines a function"),
                                  (re.compile(r"\bgrant\b", re.I), "grants"),
                                  (re.compile(r"\brevoke\b", re.I), "revokes"),
                                  (re.compile(r"\bowner\s+to\b", re.I), "changes an owner"),
                                  (re.compile(r"\bsecurity\s+definer\b", re.I), "defines a SECURITY DEFINER routine")):
                if pattern.search(flat):
                    findings.append(f"{name}: {kind} {what}; functions go in a repeatable file named for "
                                    f"their concern, grants, revokes and owners in {FINAL} (docs/contracts.md)")
        elif REPEATABLE.match(name):
            created = functions_created(text)
            if name == FINAL:
                if created:
                    findings.append(f"{name}: creates {', '.join(sorted(created))}; functions go in the repeatable "
                                    f"file of their concern")
                continue
            repeatable_functions |= created
            held: dict[str, int] = {}
            for statement in statements(strip_sql(text, keep_dollar_bodies=False)):
                lowered = statement.lower()
                for pattern, what in NOT_DEFINITIONS:
                    if pattern.match(lowered):
                        held[what] = held.get(what, 0) + 1
                        if held[what] > ALLOWED.get((name, what), 0):
                            findings.append(f"{name}: `{statement[:80]}`: a repeatable file {what}; it holds "
                                            f"functions only (backfills, checks and triggers go in an after-step, "
                                            f"NNNN_name.after.sql)")
                        break
                if re.match(r"grant\b", lowered) or re.search(r"\bowner\s+to\b", lowered) \
                        or re.match(r"alter\s+default\s+privileges\b", lowered):
                    findings.append(f"{name}: `{statement[:80]}`: grants and owners belong in {FINAL}")
                elif re.match(r"revoke\b", lowered):
                    m = re.fullmatch(rf"revoke\s+all\s+on\s+function\s+({IDENT})\s*\(.*\)\s+from\s+public", lowered)
                    if not m or normalise(m.group(1)) not in created:
                        findings.append(f"{name}: `{statement[:80]}`: the only revoke outside {FINAL} is "
                                        f"`revoke all on function f(...) from public` for a function this file creates")
        else:
            findings.append(f"{name}: neither NNNN_name.sql (versioned), NNNN_name.after.sql (after-step) nor "
                            f"name.sql (repeatable)")
    return findings, repeatable_functions


def catalog_functions(database: str | None) -> list[str]:
    query = f"""
        select n.nspname || '.' || p.proname || '|' || p.oid::regprocedure::text
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname in ({", ".join(f"'{s}'" for s in PROJECT_SCHEMAS)})
          and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass
                          and d.objid = p.oid and d.deptype = 'e')
        order by 1"""
    command = ["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", query]
    if database:
        command[1:1] = ["-d", database]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"lint-migrations: cannot read the catalog: {result.stderr.strip()}")
    return [line for line in result.stdout.splitlines() if line]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    root = Path(__file__).resolve().parents[2]
    parser.add_argument("--migrations", type=Path, default=root / "migrations")
    parser.add_argument("--database", help="database to check the functions of (default: PGDATABASE)")
    parser.add_argument("--no-database", action="store_true", help="check the files only")
    parser.add_argument("--repeatable-functions", action="store_true",
                        help="print the functions the repeatable files create, comma-separated, and nothing else")
    args = parser.parse_args()

    findings, repeatable_functions = lint_files(args.migrations)
    if args.repeatable_functions:
        print(",".join(sorted(repeatable_functions | RUNNER_FUNCTIONS)))
        return 0
    database = args.database or os.environ.get("PGDATABASE")
    checked = 0
    if not args.no_database:
        if not database:
            sys.exit("lint-migrations: no database (set PGDATABASE, pass --database, or --no-database)")
        for line in catalog_functions(database):
            name, signature = line.split("|", 1)
            checked += 1
            if name not in repeatable_functions and name not in RUNNER_FUNCTIONS:
                findings.append(f"{signature}: in the database but created by no repeatable file in "
                                f"{args.migrations.name}/ (a versioned file's function must be redefined in the "
                                f"repeatable file of its concern)")
    for finding in findings:
        print(finding)
    if findings:
        return 1
    where = f", {checked} functions in database {database}" if not args.no_database else ""
    print(f"lint-migrations: {args.migrations.name}/ keeps the layout ({len(repeatable_functions)} functions "
          f"in repeatable files{where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
