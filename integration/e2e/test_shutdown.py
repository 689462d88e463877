"""Shutdown with a request still in flight when the grace period ends: the database workers are
drained and joined before the server stops, so the request gets its answer and the process exits 0."""

import signal

from helpers import wait_until


def test_a_request_still_in_flight_when_the_grace_period_ends_is_answered_before_the_server_stops(
        start_server, anon_key, db, blocked_submission):
    server = start_server(SHUTDOWN_GRACE=1, STATEMENT_TIMEOUT_MS=30000, RATE_LIMIT_PER_MINUTE=100000,
                          SIGNUP_BURST=100000, SIGNUPS_PER_HOUR=100000)
    api = server.api(anon_key)
    session = api.new_session()
    lock, blocked = blocked_submission(api, session["access_token"])
    server.process.send_signal(signal.SIGTERM)
    wait_until(lambda: "shutdown grace period over: waiting for 1 database job(s)" in server.stderr(),
               timeout=10, message="the end of the grace period")
    assert server.process.poll() is None, "the process exited with a database job still running"
    lock.release()
    assert blocked.response().status_code == 201, blocked.response().text
    assert server.process.wait(timeout=10) == 0, server.stderr()
    assert db.count_reports([blocked.row["client_report_id"]]) == 1
