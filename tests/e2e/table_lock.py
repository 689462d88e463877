"""Holding up database work on purpose: the superuser locks price_reports in an open transaction, so
every insert through pricesvc waits on that lock until the test releases it. Progress is read from
pg_stat_activity, never guessed with sleeps."""

from __future__ import annotations

import subprocess

from helpers import Database, wait_until


class ReportsTableLock:
    """`begin; lock table public.price_reports` in a psql session that stays open until `release()`."""

    def __init__(self, db: Database):
        self.db = db
        self.process = subprocess.Popen(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", db.host, "-U", db.user, "-d", db.dbname],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.process.stdin.write("begin;\nlock table public.price_reports in access exclusive mode;\n")
        self.process.stdin.flush()
        wait_until(lambda: db.psql("select count(*) from pg_locks l join pg_class c on c.oid = l.relation "
                                   "where c.relname = 'price_reports' and l.mode = 'AccessExclusiveLock' "
                                   "and l.granted") == "1", timeout=10, message="the table lock")

    def wait_for_blocked_statements(self, count: int, timeout: float = 10) -> None:
        """Until `count` pricesvc statements wait on a lock (each one holds a database worker)."""
        wait_until(lambda: self.db.psql("select count(*) from pg_stat_activity where application_name = 'pricesvc' "
                                        "and wait_event_type = 'Lock'") == str(count),
                   timeout=timeout, message=f"{count} pricesvc statement(s) waiting on the lock")

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("commit;\n")
            self.process.stdin.close()
        self.process.wait(timeout=10)

    def __enter__(self) -> "ReportsTableLock":
        return self

    def __exit__(self, *_) -> None:
        self.release()


class MedianGroupLock:
    """A psql session that holds a median group's fold lock, as an insert folding it would, in a transaction
    that stays open until `release()`. The key is the store's own (private.median_try_lock_group)."""

    def __init__(self, db: Database, location_id: str, rate_kind: str = "hourly"):
        self.db = db
        self.process = subprocess.Popen(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", db.host, "-U", db.user, "-d", db.dbname],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.process.stdin.write("begin;\n"
                                 f"select private.median_try_lock_group('{location_id}', '{rate_kind}');\n"
                                 "select pg_catalog.set_config('application_name', 'median group lock', false);\n")
        self.process.stdin.flush()
        wait_until(lambda: db.psql("select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid "
                                   "where a.application_name = 'median group lock' and l.locktype = 'advisory' "
                                   "and l.granted") == "1", timeout=10, message="the median group lock")

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("commit;\n")
            self.process.stdin.close()
        self.process.wait(timeout=10)

    def __enter__(self) -> "MedianGroupLock":
        return self

    def __exit__(self, *_) -> None:
        self.release()
