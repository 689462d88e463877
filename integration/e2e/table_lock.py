"""Holding up database work on purpose: the superuser locks price_reports in an open transaction, so
every insert through pricesvc waits on that lock until the test releases it. Progress is read from
pg_stat_activity, never guessed with sleeps."""

from __future__ import annotations

import subprocess
import threading
from typing import Callable

from helpers import Database, report, wait_until


class HeldTransaction:
    """A psql session that runs `statements` in a transaction left open until `release()`; the
    constructor returns once `held()` says the lock is taken (read from the catalogs, never guessed)."""

    def __init__(self, db: Database, statements: str, held: Callable[[], bool], what: str):
        self.db = db
        self.process = subprocess.Popen(
            ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", db.host, "-U", db.user, "-d", db.dbname],
            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.process.stdin.write("begin;\n" + statements)
        self.process.stdin.flush()
        wait_until(held, timeout=10, message=what)

    def release(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("commit;\n")
            self.process.stdin.close()
        self.process.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *_) -> None:
        self.release()


class ReportsTableLock(HeldTransaction):
    """`lock table public.price_reports` in a transaction that stays open until `release()`."""

    def __init__(self, db: Database):
        super().__init__(
            db, "lock table public.price_reports in access exclusive mode;\n",
            lambda: db.psql("select count(*) from pg_locks l join pg_class c on c.oid = l.relation "
                            "where c.relname = 'price_reports' and l.mode = 'AccessExclusiveLock' "
                            "and l.granted") == "1",
            "the table lock")

    def wait_for_blocked_statements(self, count: int, timeout: float = 10) -> None:
        """Until `count` pricesvc statements wait on a lock (each one holds a database worker)."""
        wait_until(lambda: self.db.psql("select count(*) from pg_stat_activity where application_name = 'pricesvc' "
                                        "and wait_event_type = 'Lock'") == str(count),
                   timeout=timeout, message=f"{count} pricesvc statement(s) waiting on the lock")


class MedianGroupLock(HeldTransaction):
    """A median group's fold lock, held as an insert folding the group would hold it. The key is the
    store's own (private.median_try_lock_group)."""

    def __init__(self, db: Database, location_id: str, rate_kind: str = "hourly"):
        super().__init__(
            db,
            f"select private.median_try_lock_group('{location_id}', '{rate_kind}');\n"
            "select pg_catalog.set_config('application_name', 'median group lock', false);\n",
            lambda: db.psql("select count(*) from pg_locks l join pg_stat_activity a on a.pid = l.pid "
                            "where a.application_name = 'median group lock' and l.locktype = 'advisory' "
                            "and l.granted") == "1",
            "the median group lock")


class BlockedSubmission:
    """A report submitted through pricesvc while `lock` holds price_reports: the constructor returns once
    its insert waits on the lock inside PostgreSQL, so it holds a database worker and a pool
    connection until the lock is released. The `blocked_submission` fixture (conftest.py) makes one."""

    def __init__(self, api, token: str, lock: ReportsTableLock):
        self.row = report()
        self._answer: dict = {}
        self._thread = threading.Thread(target=lambda: self._answer.update(response=api.submit(self.row, token)))
        self._thread.start()
        lock.wait_for_blocked_statements(1)

    def response(self, timeout: float = 15):
        """Its answer, once the lock is gone (fails if none came within `timeout`)."""
        self._thread.join(timeout=timeout)
        assert not self._thread.is_alive(), f"no answer to the blocked submission within {timeout} s"
        return self._answer["response"]
