"""The database workers: a request whose plan waits longer than --pool-timeout-ms for a worker is
answered 503 PGRST003 with Retry-After, and refusals never wait for a worker at all."""

import threading
import time

import requests

from helpers import REQUEST_TIMEOUT, wait_until

QUEUE_TIMEOUT_MS = 300


def gauge(server, name: str) -> float:
    text = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
    values = [line.split()[1] for line in text.splitlines() if line.startswith(name + " ")]
    assert len(values) == 1, text
    return float(values[0])


def test_a_request_that_waits_too_long_for_a_database_worker_gets_503_pgrst003_with_retry_after(
        start_server, anon_key, db, blocked_submission):
    server = start_server(DATABASE_WORKERS=1, POOL_SIZE=2, POOL_TIMEOUT_MS=QUEUE_TIMEOUT_MS,
                          STATEMENT_TIMEOUT_MS=30000, RATE_LIMIT_PER_MINUTE=100000,
                          SIGNUP_BURST=100000, SIGNUPS_PER_HOUR=100000)
    api = server.api(anon_key)
    session = api.new_session()
    lock, blocked = blocked_submission(api, session["access_token"])  # the only worker now waits on the lock

    # Refusals and answers that need no database are decided on the event loop: no worker needed.
    assert requests.get(server.url + "/healthz", timeout=2).status_code == 200
    no_key = server.api(anon_key).post("/rest/v1/rpc/price_medians", json_body={"location_ids": ["e2e:x"]},
                                       apikey=None, timeout=2)
    assert no_key.status_code == 401, no_key.text

    answers = {}
    other = server.api(anon_key)
    queued = threading.Thread(target=lambda: answers.update(
        median=other.rpc("price_medians", {"location_ids": ["e2e:x"]}, session["access_token"])))
    queued.start()
    # Once the call is seen in the worker queue (beside the blocked insert), it was queued no later than
    # now: the queue timeout is then the only time left to pass before the worker is freed.
    wait_until(lambda: gauge(server, "pricesvc_http_database_jobs") == 2, timeout=10,
               message="the second call to be queued for the busy worker")
    # The server's own clock says when the queued call has waited past its timeout.
    wait_until(lambda: gauge(server, "pricesvc_http_database_queue_oldest_wait_seconds") > QUEUE_TIMEOUT_MS / 1000,
               timeout=10, message="the queued call to wait past its queue timeout")
    assert queued.is_alive(), "the second request was answered while the only worker was busy"
    lock.release()
    queued.join(timeout=15)
    assert not queued.is_alive()

    busy = answers["median"]
    assert busy.status_code == 503, (busy.status_code, busy.text)
    assert busy.headers.get("Retry-After") == "1"
    body = busy.json()
    assert body["code"] == "PGRST003"
    assert set(body) == {"code", "details", "hint", "message"}
    assert blocked.response().status_code == 201, blocked.response().text
    assert db.count_reports([blocked.row["client_report_id"]]) == 1
    # With the worker free again, the same call is answered normally.
    assert api.medians(["e2e:x"], session["access_token"]) == []


def workers_gauge(server) -> int:
    return gauge(server, "pricesvc_database_workers")


def test_database_workers_default_to_one_per_pool_connection_read_pool_included(start_server, migrated):
    # More workers than connections would only queue on the pool, at a CPU cost per request.
    assert workers_gauge(start_server(POOL_SIZE=3)) == 3
    # A read pool (here the same database) doubles the default: reads and writes each get their own.
    assert workers_gauge(start_server(POOL_SIZE=2, READ_DATABASE_URL=migrated.service_url)) == 4
    assert workers_gauge(start_server(POOL_SIZE=2, DATABASE_WORKERS=5)) == 5
