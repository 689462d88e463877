#!/usr/bin/env python3
"""The median rule, differentially: random histories of operations against a real database,
and after every step every median function's answer compared with a reference computed in Python from
the raw rows of public.price_reports.

The reference (`reference()` below) is the documented rule (docs/median-store.md, counted_reports.sql):
at an instant T a report counts when created_at > T - window and reporter_matures_at <= T; each
reporter counts once per (location, rate kind) with their latest counted report; a median needs
`threshold` reporters in one currency; `reports` counts every counted report; the median of an even
count is the mean of the two middle prices rounded half up; last_reported_at is the newest counted
report's time, truncated to the UTC hour; `since` moves the window's start to its UTC day's start
(never earlier than the window), exclusive.

Each history runs in a database of its own (created, migrated with the real `pricesvc migrate`, dropped):
- reports inserted as the service sends them (role authenticated, a signed token, the JSON insert) and as
  the owner names a reporter (identities that do not exist);
- identities of many ages, some attested; maturity edits and identity ageing as an operator does them;
- reports backdated to the window's and retention's edges;
- folds, rebuilds, `pricesvc prune` and `pricesvc forget-user` (the real binary, its session in a zone);
- settings changes (window, threshold, mode, band width, maturity) through `pricesvc migrate` with an
  edited settings.sql, or settings.sql run in an open transaction while another session inserts;
- sessions in UTC, America/New_York, Australia/Sydney and Asia/Kathmandu; a second session holding an
  insert open while another operation runs (and the reverse), so reports are admitted while
  the threshold mode changes, in both orders.
After every step: price_median, price_medians, price_median_overview (whole window and narrowed),
price_quotes, price_vs_published and the store's exact path (private.report_medians_exact, which the
summaries could otherwise hide) each equal the reference at the instant before or after the read;
a rebuild from scratch (in a rolled-back transaction) answers the same; stored maturity follows the
threshold mode. A failure prints the seed, the history and both answers.

Usage: median_rule.py [--seeds 5,6] [--steps N] [--pricesvc BIN] [--migrations DIR]
       (PGHOST/PGUSER: a superuser on a cluster; MEDIAN_RULE_SEEDS=N runs N random seeds more, deeper)
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import json
import os
import random
import re
import selectors
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ZONES = ["UTC", "America/New_York", "Australia/Sydney", "Asia/Kathmandu"]
KINDS = ["hourly", "daily"]
SECRET = b"median-rule-differential-secret-0123456789"
HOUR = 3_600_000_000  # microseconds
DAY = 24 * HOUR
DEADLINE = 60.0


def first_file_follow_up() -> str:
    """MigrationLayout.pricesvc's firstFileFollowUp (Sources/pricesvc/PricesvcMigrationLayout.swift), read
    from its one definition: what `pricesvc migrate` runs in settings.sql's transaction right after it."""
    source = (REPO / "Sources/pricesvc/PricesvcMigrationLayout.swift").read_text()
    found = re.search(r'firstFileFollowUp: """\n(.*?)\n\s*"""', source, re.S)
    assert found, "PricesvcMigrationLayout.swift: no firstFileFollowUp multi-line string"
    return textwrap.dedent(found.group(1)) + "\n"


FIRST_FILE_FOLLOW_UP = first_file_follow_up()


class Failure(Exception):
    pass


# ------------------------------------------------------------------------------------------- sessions

class Session:
    """One psql process: a database session of its own, driven statement batch by statement batch.
    `send` writes without waiting (for an operation that may block on a lock), `collect` waits for it."""

    def __init__(self, url: str, name: str, zone: str):
        self.name = name
        self.proc = subprocess.Popen(
            ["psql", "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=0", "-P", "pager=off", url],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env={**os.environ, "PGAPPNAME": name})
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.buffer = b""
        self.pending: str | None = None
        self.pid = int(self.run("select pg_backend_pid()")[0][0])
        self.zone = zone
        self.run(f"set timezone = '{zone}'")

    def send(self, sql: str) -> None:
        assert self.pending is None, "one batch at a time"
        self.pending = "--end-" + uuid.uuid4().hex
        self.proc.stdin.write((sql.rstrip().rstrip(";") + ";\n\\echo " + self.pending + "\n").encode())
        self.proc.stdin.flush()

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether the pending batch finished (reads what arrived meanwhile)."""
        marker = self.pending.encode() + b"\n"
        end = time.monotonic() + timeout
        while marker not in self.buffer:
            if not self.selector.select(max(end - time.monotonic(), 0)):
                return False
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise Failure(f"session {self.name}: psql exited")
            self.buffer += chunk
        return True

    def collect(self, expect_error: bool = True) -> list[list[str]]:
        if not self.ready(DEADLINE):
            raise Failure(f"session {self.name}: no answer within {DEADLINE} s")
        marker = self.pending.encode() + b"\n"
        out, self.buffer = self.buffer.split(marker, 1)
        self.pending = None
        lines = out.decode().splitlines()
        errors = [line for line in lines if line.startswith(("ERROR:", "psql:", "FATAL:"))]
        if errors and not expect_error:
            raise Failure(f"session {self.name}: {errors}")
        self.last_errors = errors
        return [line.split("\t") for line in lines if line and not line.startswith(("ERROR:", "psql:", "FATAL:",
                                                                                    "DETAIL:", "HINT:", "CONTEXT:",
                                                                                    "LINE ", " ", "WARNING:",
                                                                                    "NOTICE:"))]

    def run(self, sql: str, expect_error: bool = False) -> list[list[str]]:
        self.send(sql)
        return self.collect(expect_error)

    def close(self) -> None:
        try:
            self.proc.stdin.close()
            self.proc.wait(10)
        except Exception:
            self.proc.kill()


def lit(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def token(sub: str, session_id: str) -> str:
    """An access token as the service issues it (HS256, the key this database was given)."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = b64url(json.dumps({"sub": sub, "role": "authenticated", "aud": "authenticated",
                                 "session_id": session_id, "exp": int(time.time()) + 3600}).encode())
    signature = b64url(hmac.new(SECRET, f"{header}.{payload}".encode(), hashlib.sha256).digest())
    return f"{header}.{payload}.{signature}"


# ------------------------------------------------------------------------------------------ reference

@dataclass(frozen=True)
class Report:
    id: int
    location_id: str
    rate_kind: str
    reporter_id: str
    currency: str
    price_cents: int
    created: int  # epoch microseconds
    matures: float  # epoch microseconds, inf for never
    lat: float | None = None  # the place's coordinates as the report gave them, or none
    lng: float | None = None


def reference(reports: list[Report], window: int, threshold: int, at: int, locations=None, kinds=None,
              since: int | None = None) -> list[tuple]:
    """The documented rule at instant `at`, over the raw reports."""
    start = at - window
    if since is not None:
        start = max(start, since // DAY * DAY)
    counted = [r for r in reports if r.created > start and r.matures <= at
               and (locations is None or r.location_id in locations) and (kinds is None or r.rate_kind in kinds)]
    latest: dict[tuple, Report] = {}
    for r in counted:
        key = (r.location_id, r.rate_kind, r.reporter_id)
        if key not in latest or (r.created, r.id) > (latest[key].created, latest[key].id):
            latest[key] = r
    prices: dict[tuple, list[int]] = {}
    for r in latest.values():
        prices.setdefault((r.location_id, r.rate_kind, r.currency), []).append(r.price_cents)
    rows = []
    for group, values in prices.items():
        if len(values) < threshold:
            continue
        values.sort()
        n = len(values)
        low, high = values[(n - 1) // 2], values[n // 2]
        median = (low + high + 1) // 2  # the mean, rounded half up (prices are positive)
        mine = [r for r in counted if (r.location_id, r.rate_kind, r.currency) == group]
        newest = max(r.created for r in mine) // HOUR * HOUR
        rows.append((*group, median, n, len(mine), newest))
    return sorted(rows)


def median_of(values: list[float]) -> float:
    """percentile_cont(0.5) of doubles, as PostgreSQL interpolates it: low + 0.5 * (high - low)."""
    values = sorted(values)
    n = len(values)
    low, high = values[(n - 1) // 2], values[n // 2]
    return low + 0.5 * (high - low)


def positions_reference(reports: list[Report], window: int, threshold: int, at: int) -> list[tuple]:
    """Community places at `at` (the rule of private.counted_positions and
    community_places_refresh): per location, each counted reporter's latest counted report with
    coordinates, of any rate kind; the per-coordinate median once `threshold` reporters gave them."""
    latest: dict[tuple, Report] = {}
    for r in reports:
        if r.lat is None or not (r.created > at - window and r.matures <= at):
            continue
        key = (r.location_id, r.reporter_id)
        if key not in latest or (r.created, r.id) > (latest[key].created, latest[key].id):
            latest[key] = r
    by_location: dict[str, list[Report]] = {}
    for r in latest.values():
        by_location.setdefault(r.location_id, []).append(r)
    return sorted((loc, round(median_of([r.lat for r in rs]), 9), round(median_of([r.lng for r in rs]), 9), len(rs))
                  for loc, rs in by_location.items() if len(rs) >= threshold)


# -------------------------------------------------------------------------------------------- history

class History:
    def __init__(self, seed: int, steps: int, pricesvc: str, admin_url_base: str, migrations: Path):
        self.seed, self.steps, self.pricesvc = seed, steps, pricesvc
        self.rng = random.Random(seed)
        # The reads' own choices: adding a check does not change the histories a seed makes.
        self.read_rng = random.Random(-seed)
        # The coordinates' own choices too: the histories of the seeds before them stay the same.
        self.place_rng = random.Random(seed * 7919 + 1)
        self.log: list[str] = []
        self.database = f"median_rule_{seed}_{os.getpid()}"
        self.base = admin_url_base
        self.url = admin_url_base.replace("/postgres?", f"/{self.database}?")
        self.settings = {"report_window": "interval '180 days'", "median_min_reporters": "3",
                         "threshold_counts": "'mature'", "median_band_cents": "64",
                         "reporter_maturity": "interval '24 hours'"}
        self.migrations = Path(tempfile.mkdtemp(prefix="median-rule-")) / "migrations"
        shutil.copytree(migrations, self.migrations)
        self.reads = 0
        self.placed = 0  # community place rows compared: a history that places none checks little

    def note(self, text: str) -> None:
        self.log.append(text)

    # -- setup
    def setup(self) -> None:
        subprocess.run(["psql", "-X", "-q", self.base, "-c", f"create database {self.database}"], check=True)
        self.migrate(check=True, zone="UTC")
        self.owner = Session(self.url, "owner", self.rng.choice(ZONES))
        self.other = Session(self.url, "other", self.rng.choice(ZONES))
        self.observer = Session(self.url, "observer", "UTC")
        self.owner.run(f"delete from auth.signing_keys; select auth.install_first_signing_key({lit(SECRET.decode())}::bytea)")
        self.owner.run("select 1")
        subprocess.run([self.pricesvc, "import-rates", "--source", "dif", str(REPO / "integration/fixtures/cds/example-city.json"),
                        "--migration-database-url", self.url], check=True, capture_output=True)
        published = [row[0] for row in self.owner.run("select location_id from cds.zones order by 1")]
        # Few places, so that most reach the threshold and every edge case meets a published median.
        self.locations = published + ["plain:a"]
        ages = [300 * 24, 30 * 24, 25, 24 + 1 / 30, 24 - 1 / 60, 23, 1]
        self.reporters = []
        for n in range(14):
            rid = str(uuid.UUID(hashlib.md5(f"rule-{self.seed}-{n}".encode()).hexdigest()))
            if n >= 12:  # no identity: only the owner can report for them
                self.reporters.append({"id": rid, "session": None})
                continue
            age = self.rng.choice(ages)
            session = self.owner.run(
                f"insert into auth.users (id, created_at) values ('{rid}', clock_timestamp() - interval '{age * 3600} seconds');"
                f"insert into auth.sessions (user_id) values ('{rid}') returning id")[0][0]
            if n % 3 == 0:
                self.owner.run(
                    f"insert into auth.attested_keys (key_id_hash, user_id, app_id, environment, public_key, receipt) "
                    f"values (sha256('{rid}'::bytea), '{rid}', 'TEAM.app', 'production', "
                    f"'\\x04'::bytea || sha256('a'::bytea) || sha256('b'::bytea), '\\x00')")
            self.reporters.append({"id": rid, "session": session})
            self.note(f"identity {n} {rid[:8]} age {age:.2f} h{' attested' if n % 3 == 0 else ''}")

    def teardown(self) -> None:
        for s in (getattr(self, "owner", None), getattr(self, "other", None), getattr(self, "observer", None)):
            if s:
                s.close()
        subprocess.run(["psql", "-X", "-q", self.base, "-c", f"drop database if exists {self.database} with (force)"],
                       capture_output=True)
        shutil.rmtree(self.migrations.parent, ignore_errors=True)

    # -- operations
    def session(self) -> Session:
        return self.rng.choice([self.owner, self.other])

    def read_session(self) -> Session:
        return self.read_rng.choice([self.owner, self.other])

    def service_insert_sql(self, reporter: dict, rows: list[dict]) -> str:
        tok = token(reporter["id"], reporter["session"])
        return ("begin;"
                f"select set_config('request.jwt', {lit(tok)}, true), set_config('pricesvc.hint_jwt', {lit(tok)}, true),"
                f" set_config('pricesvc.hint_uid', '{reporter['id']}', true);"
                "select set_config('role', 'authenticated', true);"
                "insert into public.price_reports (location_id, rate_kind, price_cents, currency, client_report_id, lat, lng) "
                "select r.location_id, r.rate_kind, r.price_cents, r.currency, r.client_report_id, r.lat, r.lng "
                "from rows from (jsonb_to_recordset(" + lit(json.dumps(rows)) + "::jsonb) as (location_id text, "
                "rate_kind text, price_cents integer, currency text, client_report_id uuid, lat double precision, "
                "lng double precision)) "
                "with ordinality as r(location_id, rate_kind, price_cents, currency, client_report_id, lat, lng, n) order by r.n;")

    def new_rows(self) -> list[dict]:
        rows = [{"location_id": self.rng.choice(self.locations), "rate_kind": self.rng.choice(KINDS + ["hourly"] * 2),
                 "price_cents": self.rng.choice([100, 150, 190, 200, 250, 310, 370, 450, 1000, 64 * self.rng.randint(1, 20)]),
                 "currency": self.rng.choice(["USD"] * 5 + ["EUR"]), "client_report_id": str(uuid.UUID(int=self.rng.getrandbits(128)))}
                for _ in range(self.rng.choice([1, 1, 1, 2, 3]))]
        # Most of them with coordinates, a few metres around one point per location.
        for row in rows:
            if self.place_rng.random() < 0.8:
                base = 37.0 + self.locations.index(row["location_id"]) * 0.01
                row["lat"] = round(base + self.place_rng.uniform(-0.0003, 0.0003), 6)
                row["lng"] = round(-122.0 + self.place_rng.uniform(-0.0003, 0.0003), 6)
        return rows

    def with_identity(self) -> dict:
        return self.rng.choice([r for r in self.reporters if r["session"]])

    def op_insert(self) -> None:
        reporter, rows = self.with_identity(), self.new_rows()
        s = self.session()
        s.run(self.service_insert_sql(reporter, rows) + "commit;", expect_error=True)
        self.note(f"[{s.name} {s.zone}] service insert {reporter['id'][:8]} {[(r['location_id'], r['rate_kind'], r['price_cents'], r['currency']) for r in rows]} {s.last_errors or ''}")

    def op_owner_insert(self) -> None:
        reporter = self.rng.choice(self.reporters)
        row = self.new_rows()[0]
        self.owner.run("insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, lat, lng) "
                       f"values ('{reporter['id']}', {lit(row['location_id'])}, '{row['rate_kind']}', {row['price_cents']}, '{row['currency']}', "
                       f"{row.get('lat', 'null')}, {row.get('lng', 'null')})",
                       expect_error=True)
        self.note(f"[owner] owner insert {reporter['id'][:8]} {row['location_id']} {row['rate_kind']} {row['price_cents']} {row['currency']} {self.owner.last_errors or ''}")

    def some_report(self) -> str | None:
        """Any report, or (half the time) the newest: a reporter's newer report whose maturity or time
        changes while an older one counts."""
        ids = [row[0] for row in self.owner.run("select id from public.price_reports order by id")]
        if not ids:
            return None
        return ids[-1] if self.rng.random() < 0.5 else self.rng.choice(ids)

    def op_backdate(self) -> None:
        rid = self.some_report()
        if rid is None:
            return
        window = int(float(self.owner.run("select date_part('epoch', private.report_window())")[0][0]))
        retention = window + 7 * 86400
        back = self.rng.choice([window - 20, window + 20, window - 1800, window + 1800, retention - 1800,
                                retention + 1800, retention - 20, 60 * 86400, 3 * 86400, 3600])
        s = self.session()
        s.run(f"update public.price_reports set created_at = clock_timestamp() - interval '{back} seconds' where id = {rid}")
        self.note(f"[{s.name} {s.zone}] backdate report {rid} by {back} s")

    def op_maturity(self) -> None:
        rid = self.some_report()
        if rid is None:
            return
        shift = self.rng.choice([-3600, -120, 20, 86400])
        self.owner.run(f"update public.price_reports set reporter_matures_at = clock_timestamp() + interval '{shift} seconds' "
                       f"where id = {rid} and reporter_matures_at <> 'infinity'")
        self.note(f"[owner] report {rid} matures in {shift} s")

    def op_age(self) -> None:
        reporter = self.with_identity()
        hours = self.rng.choice([300 * 24, 25, 24 + 1 / 30, 23, 2])
        self.owner.run(f"update auth.users set created_at = clock_timestamp() - interval '{hours * 3600} seconds' "
                       f"where id = '{reporter['id']}'")
        self.note(f"[owner] identity {reporter['id'][:8]} aged to {hours:.2f} h")

    def op_fold(self) -> None:
        s = self.session()
        if self.rng.random() < 0.5:
            s.run("select private.median_fold_stale(interval '0')")
            self.note(f"[{s.name} {s.zone}] median_fold_stale(0)")
        else:
            location = self.rng.choice(self.locations)
            s.run(f"begin; select private.median_fold({lit(location)}, 'hourly') where private.median_try_lock_group({lit(location)}, 'hourly'); commit")
            self.note(f"[{s.name} {s.zone}] median_fold {location} hourly")

    def op_rebuild(self) -> None:
        s = self.session()
        if self.rng.random() < 0.5:
            s.run("select private.median_rebuild(null)")
            self.note(f"[{s.name} {s.zone}] median_rebuild(null)")
        else:
            location = self.rng.choice(self.locations)
            s.run(f"select private.median_rebuild(array[{lit(location)}])")
            self.note(f"[{s.name} {s.zone}] median_rebuild({location})")

    def binary(self, *args: str, zone: str) -> subprocess.Popen:
        url = self.url
        env = {**os.environ, "PGTZ": zone, "PRICESVC_JWT_SECRET": SECRET.decode(),
               "PRICESVC_MIGRATION_DATABASE_URL": url, "PRICESVC_MIGRATIONS_DIR": str(self.migrations)}
        return subprocess.Popen([self.pricesvc, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def finish(self, proc: subprocess.Popen, what: str, check: bool = True) -> None:
        out, _ = proc.communicate(timeout=120)
        if check and proc.returncode != 0:
            raise Failure(f"{what} exited {proc.returncode}: {out.decode()[-2000:]}")

    def op_prune(self) -> None:
        zone = self.rng.choice(ZONES)
        self.finish(self.binary("prune", "--older-than", "30d", zone=zone), "prune")
        self.note(f"[pricesvc prune, PGTZ={zone}] prune --older-than 30d")

    def op_forget(self) -> None:
        reporter = self.rng.choice(self.reporters)
        zone = self.rng.choice(ZONES)
        self.finish(self.binary("forget-user", reporter["id"], zone=zone), "forget-user")
        self.note(f"[pricesvc forget-user, PGTZ={zone}] {reporter['id'][:8]}")

    def change_setting(self) -> str:
        choices = {"report_window": ["interval '180 days'", "interval '30 days'", "interval '4320 hours'"],
                   "median_min_reporters": ["3", "2"], "threshold_counts": ["'mature'", "'attested'"],
                   "median_band_cents": ["64", "100"], "reporter_maturity": ["interval '24 hours'", "interval '2 hours'"]}
        name = self.rng.choice(sorted(choices))
        self.settings[name] = self.rng.choice([v for v in choices[name] if v != self.settings[name]])
        self.change_setting_to()
        return f"{name} = {self.settings[name]}"

    def migrate(self, check: bool = True, zone: str | None = None) -> None:
        zone = zone or self.rng.choice(ZONES)
        self.finish(self.binary("migrate", zone=zone), "migrate", check)

    def op_migrate(self) -> None:
        change = self.change_setting()
        zone = self.rng.choice(ZONES)
        self.finish(self.binary("migrate", zone=zone), "migrate")
        self.note(f"[pricesvc migrate, PGTZ={zone}] {change}")

    def wait_blocked_or_done(self, done, pid_sql: str, what: str) -> None:
        """Until `done()` or the backend `pid_sql` selects waits on a lock; fails past the deadline."""
        end = time.monotonic() + DEADLINE
        while time.monotonic() < end:
            if done():
                return
            waiting = self.observer.run(f"select count(*) from pg_stat_activity where wait_event_type = 'Lock' and {pid_sql}")
            if waiting[0][0] != "0":
                return
            time.sleep(0.005)
        raise Failure(f"{what}: neither finished nor waiting on a lock within {DEADLINE} s")

    def op_concurrent(self) -> None:
        """Another session's insert is open (uncommitted) while an operation runs, then commits."""
        reporter, rows = self.with_identity(), self.new_rows()
        b = self.other
        b.run(self.service_insert_sql(reporter, rows), expect_error=True)
        kind = self.rng.choice(["migrate", "prune", "fold", "forget", "read"])
        zone = self.rng.choice(ZONES)
        label = kind
        if kind == "migrate":
            label += " " + self.change_setting()
        if kind in ("migrate", "prune", "forget"):
            args = {"migrate": ["migrate"], "prune": ["prune", "--older-than", "30d"],
                    "forget": ["forget-user", reporter["id"]]}[kind]
            proc = self.binary(*args, zone=zone)
            self.wait_blocked_or_done(lambda: proc.poll() is not None,
                                      f"datname = current_database() and pid not in ({self.owner.pid}, {b.pid}, {self.observer.pid})",
                                      kind)
            b.run("commit", expect_error=True)
            self.finish(proc, kind)
        else:
            a = self.owner
            a.send("select private.median_fold_stale(interval '0')" if kind == "fold"
                   else "select count(*) from public.price_median_overview()")
            self.wait_blocked_or_done(lambda: a.ready(), f"pid = {a.pid}", kind)
            b.run("commit", expect_error=True)
            a.collect(expect_error=True)
        self.note(f"[other {b.zone}] open insert {reporter['id'][:8]} {[(r['location_id'], r['rate_kind'], r['price_cents']) for r in rows]} "
                  f"{b.last_errors or ''} while [{kind}, PGTZ={zone}] {label}, then commit")

    def op_settings_in_transaction(self) -> None:
        """settings.sql, edited, in an open transaction (as migrate runs it) while another session
        inserts: the insert waits for the commit and is admitted under the new settings."""
        change = self.change_setting()
        a, b = self.owner, self.other
        a.run("begin;\n" + self.settings_sql(), expect_error=True)
        reporter, rows = self.with_identity(), self.new_rows()
        b.send(self.service_insert_sql(reporter, rows) + "commit;")
        self.wait_blocked_or_done(lambda: b.ready(), f"pid = {b.pid}", "insert during settings.sql")
        a.run("commit")
        b.collect(expect_error=True)
        # `pricesvc migrate` would have recorded the file; let it do the rest (policies.sql) now.
        self.migrate()
        self.note(f"[owner {a.zone}] settings.sql in a transaction: {change}; meanwhile [other {b.zone}] insert "
                  f"{reporter['id'][:8]} {[(r['location_id'], r['rate_kind'], r['price_cents']) for r in rows]} {b.last_errors or ''}; commit")

    def op_zone(self) -> None:
        s = self.session()
        s.zone = self.rng.choice(ZONES)
        s.run(f"set timezone = '{s.zone}'")
        self.note(f"[{s.name}] set timezone = '{s.zone}'")

    OPS = [("op_insert", 30), ("op_owner_insert", 4), ("op_backdate", 14), ("op_maturity", 8), ("op_age", 4),
           ("op_fold", 8), ("op_rebuild", 3), ("op_prune", 3), ("op_forget", 1), ("op_migrate", 3),
           ("op_concurrent", 4), ("op_settings_in_transaction", 2), ("op_zone", 6)]

    # -- checks
    def raw(self) -> tuple[list[Report], int, int]:
        rows = self.observer.run(
            "select id, location_id, rate_kind, reporter_id, currency, price_cents,"
            " (extract(epoch from created_at) * 1000000)::bigint,"
            " case when reporter_matures_at = 'infinity' then 'inf' else ((extract(epoch from reporter_matures_at) * 1000000)::bigint)::text end,"
            " coalesce(lat::text, ''), coalesce(lng::text, '')"
            " from public.price_reports")
        reports = [Report(int(r[0]), r[1], r[2], r[3], r[4], int(r[5]), int(r[6]), float(r[7]),
                          float(r[8]) if r[8] else None, float(r[9]) if r[9] else None) for r in rows]
        window, threshold = self.observer.run(
            "select (date_part('epoch', private.report_window()) * 1000000)::bigint, private.median_min_reporters()")[0]
        return reports, int(window), int(threshold)

    def timed(self, s: Session, sql: str) -> tuple[int, list[tuple], int]:
        rows = s.run("select (extract(epoch from clock_timestamp()) * 1000000)::bigint;\n" + sql +
                     ";\nselect (extract(epoch from clock_timestamp()) * 1000000)::bigint")
        return int(rows[0][0]), rows[1:-1], int(rows[-1][0])

    def check(self, step: int) -> None:
        reports, window, threshold = self.raw()
        median_cols = ("location_id, rate_kind, currency, median_cents, reporters, reports,"
                       " (extract(epoch from last_reported_at) * 1000000)::bigint")

        def as_rows(rows):
            return sorted((r[0], r[1], r[2], int(r[3]), int(r[4]), int(r[5]), int(r[6])) for r in rows)

        def compare(what, answer, at0, at1, make):
            self.reads += 1
            expected = [make(at0), make(at1)]
            if answer not in expected:
                raise Failure(f"step {step}: {what}\n  answer:    {answer}\n  reference: {expected[0]}\n"
                              f"  (at the read's end: {expected[1]})")

        s = self.read_session()
        kind = self.read_rng.choice(KINDS)
        location = self.read_rng.choice(self.locations)
        t0, rows, t1 = self.timed(s, f"select {median_cols} from public.price_median({lit(location)}, '{kind}')")
        compare(f"[{s.name} {s.zone}] price_median({location}, {kind})", as_rows(rows), t0, t1,
                lambda at: reference(reports, window, threshold, at, {location}, {kind}))
        s = self.read_session()
        ids = "array[" + ",".join(lit(l) for l in self.locations) + "]"
        t0, rows, t1 = self.timed(s, f"select {median_cols} from public.price_medians({ids}, '{kind}')")
        compare(f"[{s.name} {s.zone}] price_medians(all, {kind})", as_rows(rows), t0, t1,
                lambda at: reference(reports, window, threshold, at, set(self.locations), {kind}))
        s = self.read_session()
        t0, rows, t1 = self.timed(s, f"select {median_cols} from public.price_median_overview()")
        compare(f"[{s.name} {s.zone}] price_median_overview()", as_rows(rows), t0, t1,
                lambda at: reference(reports, window, threshold, at))
        s = self.read_session()
        days = self.read_rng.choice([1, 10, 29, 31, 179, 181])
        since = int(float(s.run(f"select (extract(epoch from now() - interval '{days} days') * 1000000)::bigint")[0][0]))
        t0, rows, t1 = self.timed(s, f"select {median_cols} from public.price_median_overview(to_timestamp({since} / 1e6))")
        compare(f"[{s.name} {s.zone}] price_median_overview(now() - {days} days)", as_rows(rows), t0, t1,
                lambda at: reference(reports, window, threshold, at, since=since))
        s = self.read_session()
        t0, rows, t1 = self.timed(s, f"select location_id, rate_kind, currency, median_cents, reporters from "
                                     f"public.price_quotes({ids}, '{kind}', now(), interval '1 hour') where median_cents is not null")
        # One row per location: the median in the published currency where the city publishes rates,
        # else the one with the most reporters (then by currency).
        published_currency = dict(tuple(r) for r in self.observer.run(
            "select location_id, currency from private.cds_published_cost(array(select location_id from cds.zones), now(), interval '1 hour')"))

        def quotes(at):
            medians = reference(reports, window, threshold, at, set(self.locations), {kind})
            chosen = []
            for place in self.locations:
                candidates = [m for m in medians if m[0] == place and m[2] == published_currency.get(place, m[2])]
                if candidates:
                    chosen.append(min(candidates, key=lambda m: (-m[4], m[2]))[:5])
            return sorted(chosen)
        compare(f"[{s.name} {s.zone}] price_quotes(all, {kind})", sorted((r[0], r[1], r[2], int(r[3]), int(r[4])) for r in rows),
                t0, t1, quotes)
        s = self.read_session()
        published = {(r[0], r[1]) for r in self.observer.run(
            "select location_id, currency from private.cds_published_cost(array(select location_id from cds.zones), now(), interval '1 hour') where allowed")}
        t0, rows, t1 = self.timed(s, "select location_id, currency, median_cents, reporters from public.price_vs_published(now())")
        compare(f"[{s.name} {s.zone}] price_vs_published()", sorted((r[0], r[1], int(r[2]), int(r[3])) for r in rows), t0, t1,
                lambda at: sorted((m[0], m[2], m[3], m[4]) for m in reference(reports, window, threshold, at, kinds={"hourly"})
                                  if (m[0], m[2]) in published))
        # The store's exact path on its own (a summary, where one is used, must not hide it).
        s = self.read_session()
        pairs = [(l, k) for l in self.locations for k in KINDS]
        t0, rows, t1 = self.timed(s, "select location_id, rate_kind, currency, median_cents, reporters, reports,"
                                     " (extract(epoch from date_trunc('hour', last_reported_at, 'UTC')) * 1000000)::bigint"
                                     " from private.report_medians_exact(array[" + ",".join(lit(l) for l, _ in pairs) + "],"
                                     " array[" + ",".join(lit(k) for _, k in pairs) + "], clock_timestamp())")
        compare(f"[{s.name} {s.zone}] report_medians_exact(all, hourly and daily)", as_rows(rows), t0, t1,
                lambda at: reference(reports, window, threshold, at, set(self.locations), set(KINDS)))
        # A rebuild from the reports alone answers the same (rolled back: the incremental state goes on).
        s = self.read_session()
        rows = s.run("begin; select private.median_rebuild(null) \\g /dev/null\n"
                     "select (extract(epoch from clock_timestamp()) * 1000000)::bigint;\n"
                     f"select {median_cols} from public.price_median_overview();\n"
                     "select (extract(epoch from clock_timestamp()) * 1000000)::bigint; rollback")
        compare(f"[{s.name} {s.zone}] price_median_overview() after a rebuild", as_rows(rows[1:-1]), int(rows[0][0]), int(rows[-1][0]),
                lambda at: reference(reports, window, threshold, at))
        # Community places: a rebuild from the reports alone places each location where the rule
        # says, at its instant (taken between the two clocks, as above).
        s = self.read_session()
        place_cols = "location_id, round(lat::numeric, 9), round(lng::numeric, 9), reporters"
        rows = s.run("begin; select (extract(epoch from clock_timestamp()) * 1000000)::bigint;\n"
                     "select private.median_rebuild(null) \\g /dev/null\n"
                     f"select {place_cols} from private.community_places where lat is not null;\n"
                     "select (extract(epoch from clock_timestamp()) * 1000000)::bigint; rollback")
        self.placed += len(rows) - 2
        compare(f"[{s.name} {s.zone}] community_places after a rebuild",
                sorted((r[0], float(r[1]), float(r[2]), int(r[3])) for r in rows[1:-1]), int(rows[0][0]), int(rows[-1][0]),
                lambda at: positions_reference(reports, window, threshold, at))
        # And the searches themselves, with no rebuild: places_within, which places_nearby and
        # places_match read, at this instant and at one ahead, when reporters have matured and reports left
        # the window with no write in between. Imported ids are placed by their import, not here.
        imported = {r[0] for r in self.observer.run("select location_id from private.places")}
        ahead = self.read_rng.choice([0, 3600, 86400, window // 1000000 - 3600, window // 1000000 + 3600])
        s = self.read_session()
        search = ("select w.location_id, round(w.lat::numeric, 9), round(w.lng::numeric, 9) from private.places_within("
                  "extensions.st_setsrid(extensions.st_makepoint(-122.0, 37.05), 4326)::extensions.geography, 200000, "
                  "clock_timestamp() + interval '" + str(ahead) + " seconds') w where w.source = 'community'")
        t0, rows, t1 = self.timed(s, search)
        self.placed += len(rows)
        compare(f"[{s.name} {s.zone}] places_within(community, {ahead} s ahead)",
                sorted((r[0], float(r[1]), float(r[2])) for r in rows), t0 + ahead * 1000000, t1 + ahead * 1000000,
                lambda at: [p[:3] for p in positions_reference(reports, window, threshold, at) if p[0] not in imported])
        # Stored maturity follows the threshold mode.
        self.check_mode(f"step {step}")

    def mode_changes_during_open_inserts(self) -> None:
        """Reports admitted while the threshold mode changes, both orders.
        Unattested reporters' inserts are open in another session when `pricesvc migrate` switches to
        'attested'; then settings.sql switching back runs in an open transaction while they insert."""
        b = self.other
        plain = [r for n, r in enumerate(self.reporters) if r["session"] and n % 3 != 0][:1]
        for reporter in plain:
            b.run(self.service_insert_sql(reporter, [{"location_id": "plain:a", "rate_kind": "hourly", "price_cents": 100,
                                                      "currency": "USD", "client_report_id": str(uuid.uuid4())}]))
            self.settings["threshold_counts"] = "'attested'"
            change = self.change_setting_to()
            proc = self.binary("migrate", zone="UTC")
            self.wait_blocked_or_done(lambda: proc.poll() is not None,
                                      f"datname = current_database() and pid not in ({self.owner.pid}, {b.pid}, {self.observer.pid})",
                                      "migrate")
            b.run("commit")
            self.finish(proc, "migrate")
            self.note(f"open insert {reporter['id'][:8]} while migrate {change}, then commit")
            self.check_mode("an insert open while migrate switched to 'attested'")
            self.settings["threshold_counts"] = "'mature'"
            change = self.change_setting_to()
            self.owner.run("begin;\n" + self.settings_sql())
            b.send(self.service_insert_sql(reporter, [{"location_id": "plain:b", "rate_kind": "hourly", "price_cents": 100,
                                                       "currency": "USD", "client_report_id": str(uuid.uuid4())}]) + "commit;")
            self.wait_blocked_or_done(lambda: b.ready(), f"pid = {b.pid}", "insert during settings.sql")
            self.owner.run("commit")
            b.collect(expect_error=False)
            self.migrate(zone="UTC")
            self.note(f"settings.sql {change} in a transaction while {reporter['id'][:8]} inserts, then commit")
            self.check_mode("an insert made while settings.sql switched back to 'mature'")

    def settings_sql(self) -> str:
        """settings.sql as `pricesvc migrate` runs it: the file, then the layout's follow-up (the median
        rule's reconcile) in the same transaction."""
        return (self.migrations / "settings.sql").read_text() + "\n" + FIRST_FILE_FOLLOW_UP

    def change_setting_to(self) -> str:
        """Writes self.settings into the copy of settings.sql."""
        path = self.migrations / "settings.sql"
        text = path.read_text()
        for fn, value in self.settings.items():
            text, count = re.subn(rf"(create or replace function private\.{fn}\(\) returns \w+\n\s+language sql immutable parallel safe\n\s+return ).*?;",
                                  lambda m: m.group(1) + value + ";", text)
            assert count == 1, fn
        path.write_text(text)
        return ", ".join(f"{k} = {v}" for k, v in self.settings.items() if k == "threshold_counts")

    def check_mode(self, what: str) -> None:
        wrong = self.observer.run(
            "select count(*) from public.price_reports where case when private.threshold_counts() = 'attested'"
            " then not reporter_attested and reporter_matures_at <> 'infinity' else reporter_matures_at = 'infinity' end")[0][0]
        if wrong != "0":
            raise Failure(f"{what}: {wrong} reports keep a maturity of the other threshold mode")

    def run(self) -> None:
        names, weights = zip(*self.OPS)
        self.check(0)
        for step in range(1, self.steps + 1):
            getattr(self, self.rng.choices(names, weights)[0])()
            self.check(step)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", default="5,6")
    parser.add_argument("--steps", type=int, default=int(os.environ.get("MEDIAN_RULE_STEPS", "40")))
    parser.add_argument("--migrations", type=Path, default=REPO / "migrations",
                        help="the migrations to test (another tree's, to see this test fail on it)")
    parser.add_argument("--pricesvc", default=os.environ.get("PRICESVC_BIN", str(REPO / ".build/release/pricesvc")))
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s]
    extra = int(os.environ.get("MEDIAN_RULE_SEEDS", "0"))
    seeds += [random.SystemRandom().randrange(1, 1 << 31) for _ in range(extra)]
    host = os.environ.get("PGHOST", "/var/run/postgresql")
    user = os.environ.get("PGUSER", "postgres")
    base = f"postgresql:///postgres?host={host}&user={user}"
    failed = 0
    print(f"1..{len(seeds) + 1}")
    history = History(0, 0, args.pricesvc, base, args.migrations)
    try:
        history.setup()
        history.mode_changes_during_open_inserts()
        print("ok 1 - reports admitted while the threshold mode changes follow the new mode, both orders")
    except Failure as failure:
        failed += 1
        print("not ok 1 - reports admitted while the threshold mode changes follow the new mode, both orders")
        print(f"# {failure}".replace("\n", "\n# "))
        for line in history.log:
            print("#   " + line)
    finally:
        history.teardown()
    for n, seed in enumerate(seeds, 2):
        history = History(seed, args.steps, args.pricesvc, base, args.migrations)
        started = time.monotonic()
        try:
            history.setup()
            history.run()
            print(f"ok {n} - seed {seed}: {args.steps} steps, {history.reads} reads equal the reference "
                  f"({history.placed} community places among them; {time.monotonic() - started:.1f} s)")
        except Failure as failure:
            failed += 1
            print(f"not ok {n} - seed {seed}")
            print(f"# {failure}".replace("\n", "\n# "))
            print("# history (rerun: integration/differential/median_rule.py --seeds " + str(seed) + f" --steps {args.steps}):")
            for line in history.log:
                print("#   " + line)
        finally:
            history.teardown()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
