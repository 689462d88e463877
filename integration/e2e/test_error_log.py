"""Errors are logged: a 503 from a statement timeout once showed in the access
log as `"status":503` only. Now every 5xx and every failure of the database is one JSON line on stderr
with its route and SQLSTATE, never a token or a body; the error counters exist from the start, at zero;
the pools, the replica pool and the maintenance runs have series."""

import json
import re
import threading
import time

import requests

from helpers import REQUEST_TIMEOUT, report, wait_until
from table_lock import ReportsTableLock


def _metric(text: str, name: str, labels: str = "") -> float | None:
    pattern = re.escape(name + ("{" + labels + "}" if labels else "")) + r" ([0-9.e+-]+)$"
    match = re.search(pattern, text, re.MULTILINE)
    return float(match.group(1)) if match else None


def _error_lines(server) -> list[dict]:
    return [json.loads(line) for line in server.stderr().splitlines() if line.startswith("{")]


def test_error_counters_and_pool_series_exist_from_the_start_at_zero(start_server):
    text = start_server().metrics()
    for kind in ("unavailable", "57", "XX", "other"):
        assert _metric(text, "pricesvc_database_errors_total", f'kind="{kind}"') == 0, kind
    assert _metric(text, "pricesvc_database_client_errors_total", 'class="PT"') == 0
    assert _metric(text, "pricesvc_db_pool_reconnects_total") == 0
    assert _metric(text, "pricesvc_db_pool_connects_total") >= 1
    assert "pricesvc_db_replica_pool_connections" not in text, "no replica configured"


def test_a_replica_pool_has_its_own_series(start_server, migrated):
    text = start_server(READ_DATABASE_URL=migrated.service_url).metrics()
    for state in ("in_use", "idle"):
        assert _metric(text, "pricesvc_db_replica_pool_connections", f'state="{state}"') is not None
    assert _metric(text, "pricesvc_db_replica_pool_size") == 8
    assert _metric(text, "pricesvc_db_replica_pool_waiting") == 0
    assert _metric(text, "pricesvc_db_replica_pool_reconnects_total") == 0


def test_a_statement_timeout_is_logged_with_its_sqlstate_and_route_and_counted(start_server, anon_key, db):
    server = start_server(STATEMENT_TIMEOUT_MS=500)
    api = server.api(anon_key)
    session = api.new_session()
    row = report()
    with ReportsTableLock(db):
        response = api.submit(row, session["access_token"])
    assert response.status_code == 503, response.text
    wait_until(lambda: any(e.get("sqlstate") == "57014" for e in _error_lines(server)), timeout=10,
               message="the error line of the timed-out insert")
    [entry] = [e for e in _error_lines(server) if e.get("sqlstate") == "57014"]
    assert entry["level"] == "error" and entry["route"] == "/rest/v1/price_reports" and entry["status"] == 503, entry
    assert entry["kind"] == "57" and "statement timeout" in entry["message"], entry
    assert entry["request_id"] == response.headers["X-Request-Id"]
    assert _metric(server.metrics(), "pricesvc_database_errors_total", 'kind="57"') == 1
    everything = server.stdout() + server.stderr()
    for secret in (session["access_token"], session["access_token"].split(".")[2], row["location_id"],
                   row["client_report_id"], anon_key):
        assert secret not in everything


def test_a_503_without_a_database_error_is_logged_too(start_server, anon_key, db, blocked_submission):
    """A request that waited too long for the one database worker: 503 PGRST003, logged with its route."""
    server = start_server(POOL_SIZE=1, DATABASE_WORKERS=1, POOL_TIMEOUT_MS=300, STATEMENT_TIMEOUT_MS=30000)
    api = server.api(anon_key)
    session = api.new_session()
    lock, blocked = blocked_submission(api, session["access_token"])
    answers = {}
    queued = threading.Thread(target=lambda: answers.update(median=api.get(
        "/rest/v1/rpc/price_median", params={"location_id": "e2e:x"}, token=session["access_token"])))
    queued.start()
    wait_until(lambda: _metric(server.metrics(), "pricesvc_http_database_jobs") == 2, timeout=10,
               message="the call to be queued behind the blocked insert")
    # Past its queue timeout (0.3 s) by the server's own clock; the worker then answers it 503 at once.
    wait_until(lambda: _metric(server.metrics(), "pricesvc_http_database_queue_oldest_wait_seconds") > 0.3,
               timeout=10, message="the queued call to wait past its queue timeout")
    lock.release()
    queued.join(timeout=15)
    assert not queued.is_alive() and blocked.response().status_code == 201
    assert answers["median"].status_code == 503, answers["median"].text
    wait_until(lambda: any(e.get("sqlstate") == "PGRST003" for e in _error_lines(server)), timeout=10,
               message="the error line of the 503")
    entry = next(e for e in _error_lines(server) if e.get("sqlstate") == "PGRST003")
    assert entry["route"] == "/rest/v1/rpc/price_median" and entry["status"] == 503, entry
    assert entry["request_id"] == answers["median"].headers["X-Request-Id"]
    assert "message" not in entry


def test_client_mistakes_are_not_logged_as_errors(server, anon_key):
    api = server.api(anon_key)
    before = len(_error_lines(server))
    assert api.get("/rest/v1/price_reports", apikey=None).status_code == 401
    assert api.submit({"location_id": "e2e:x", "rate_kind": "nope", "price_cents": 1}, api.new_session()["access_token"]).status_code == 400
    assert len(_error_lines(server)) == before
