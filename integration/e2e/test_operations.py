"""Operations: /healthz, /readyz, /metrics, the access log, and shutting down on SIGTERM."""

import json
import re
import shutil
import signal
import time

import requests

from helpers import REQUEST_TIMEOUT, report, wait_until


def test_healthz_answers_200_while_the_process_is_up(server):
    response = requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response.headers.get("X-Request-Id")


def test_healthz_and_readyz_need_no_api_key_and_answer_head(server):
    for path in ("/healthz", "/readyz"):
        response = requests.head(server.url + path, timeout=REQUEST_TIMEOUT)
        assert response.status_code == 200, path
        assert response.content == b""


def test_readyz_answers_200_when_the_database_is_reachable_and_migrations_are_current(server):
    response = requests.get(server.url + "/readyz", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "ready"


def test_readyz_answers_503_when_a_shipped_migration_is_not_applied(start_server, migrated, tmp_path):
    shipped = tmp_path / "migrations"
    shutil.copytree(migrated.migrations_dir, shipped)
    (shipped / "9999_e2e_not_applied.sql").write_text("select 1;\n")
    server = start_server(MIGRATIONS_DIR=str(shipped))
    response = requests.get(server.url + "/readyz", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["status"] != "ready" and "9999_e2e_not_applied.sql" in body.get("reason", ""), body
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200


def _access_log_entries(server) -> list[dict]:
    """The access log so far: complete JSON lines on stdout (a line still being written is left out)."""
    text = server.stdout()
    return [json.loads(line) for line in text[:text.rfind("\n") + 1].splitlines() if line.startswith("{")]


def _metric(text: str, name: str, labels: str = "") -> float | None:
    pattern = re.escape(name + ("{" + labels + "}" if labels else "")) + r" ([0-9.e+-]+)$"
    match = re.search(pattern, text, re.MULTILINE)
    return float(match.group(1)) if match else None


def test_metrics_count_requests_by_route_and_status_with_a_latency_histogram_and_pool_gauges(
        start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key)
    before = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
    healthz_before = _metric(before, "pricesvc_http_requests_total", 'route="/healthz",status="200"') or 0
    for _ in range(3):
        assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    for _ in range(2):
        assert requests.get(server.url + "/no/such/path", timeout=REQUEST_TIMEOUT).status_code == 404
    assert api.get("/rest/v1/price_reports", apikey=None).status_code == 401
    session = api.new_session()
    assert api.submit(report(), session["access_token"]).status_code == 201

    response = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    text = response.text
    assert "# TYPE pricesvc_http_requests_total counter" in text
    assert _metric(text, "pricesvc_http_requests_total", 'route="/healthz",status="200"') == healthz_before + 3
    assert _metric(text, "pricesvc_http_requests_total", 'route="other",status="404"') == 2
    assert _metric(text, "pricesvc_http_requests_total", 'route="/rest/v1/price_reports",status="401"') == 1
    assert _metric(text, "pricesvc_http_requests_total", 'route="/rest/v1/price_reports",status="201"') == 1
    assert _metric(text, "pricesvc_http_requests_total", 'route="/auth/v1/signup",status="200"') == 1
    assert _metric(text, "pricesvc_http_requests_total", 'route="/metrics",status="200"') >= 1

    assert "# TYPE pricesvc_http_request_duration_seconds histogram" in text
    for route, at_least in (("/healthz", 3), ("/rest/v1/price_reports", 2), ("other", 2)):
        buckets = re.findall(r'^pricesvc_http_request_duration_seconds_bucket\{route="' + re.escape(route)
                             + r'",le="([^"]+)"\} (\d+)$', text, re.M)
        assert buckets and buckets[-1][0] == "+Inf", route
        counts = [int(count) for _, count in buckets]
        assert counts == sorted(counts), "histogram buckets must be cumulative"
        assert counts[-1] == _metric(text, "pricesvc_http_request_duration_seconds_count", f'route="{route}"') >= at_least
        assert _metric(text, "pricesvc_http_request_duration_seconds_sum", f'route="{route}"') > 0
    assert re.search(r'^pricesvc_build_info\{version="[^"]+",commit="[0-9a-z.+-]+",swift="[^"]+"\} 1$', text, re.M), text[-600:]

    assert _metric(text, "pricesvc_db_pool_connections", 'state="in_use"') is not None
    assert _metric(text, "pricesvc_db_pool_connections", 'state="idle"') is not None
    assert _metric(text, "pricesvc_db_pool_waiting") is not None
    assert _metric(text, "pricesvc_rate_limited_total") == 0
    assert "pricesvc_database_errors_total" in text


def test_metrics_route_labels_stay_bounded_whatever_paths_are_requested(start_server):
    server = start_server()
    for index in range(5):
        requests.get(f"{server.url}/random-{index}", timeout=REQUEST_TIMEOUT)
        requests.post(f"{server.url}/rest/v1/rpc/nope_{index}", timeout=REQUEST_TIMEOUT)
    text = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
    assert "random-" not in text and "nope_" not in text


def test_access_log_lines_are_json_with_time_request_id_method_route_status_and_duration_and_never_hold_a_token_or_body(
        start_server, anon_key):
    server = start_server(ACCESS_LOG="true", RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key)
    session = api.new_session()
    row = report()
    secret_location = row["location_id"]
    submitted = api.submit(row, session["access_token"], prefer="return=representation")
    assert submitted.status_code == 201
    refreshed = api.refresh(session["refresh_token"])
    assert refreshed.status_code == 200
    api.rpc("price_medians", {"location_ids": [secret_location]}, session["access_token"])
    api.get("/rest/v1/rpc/price_median", params={"location_id": secret_location}, token=session["access_token"])
    api.logout(refreshed.json()["access_token"], scope="local")
    wait_until(lambda: any(e["route"].endswith("/logout") for e in _access_log_entries(server)), timeout=10,
               message="the access log line of the last request (logout)")

    lines = [line for line in server.stdout().splitlines() if line.strip()]
    entries = []
    for line in lines:
        entry = json.loads(line)  # every stdout line is one JSON object: start-up lines go to stderr
        entries.append(entry)
        assert {"time", "request_id", "method", "route", "status"} <= set(entry), entry
        assert any(key.startswith("duration") for key in entry), entry
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", entry["time"]), entry
        assert isinstance(entry["status"], int)
    assert len(entries) >= 6
    assert submitted.headers["X-Request-Id"] in {entry["request_id"] for entry in entries}
    assert {"POST /auth/v1/signup", "POST /rest/v1/price_reports", "POST /auth/v1/token",
            "GET /rest/v1/rpc/price_median"} <= {f"{e['method']} {e['route']}" for e in entries}

    everything = server.stdout() + server.stderr()
    for secret in (session["access_token"], session["refresh_token"], refreshed.json()["access_token"],
                   refreshed.json()["refresh_token"], secret_location, row["client_report_id"], anon_key):
        assert secret not in everything, f"the log holds {secret[:12]}..."
    # Pieces of a JWT (its signature) are just as bad as the whole token.
    assert session["access_token"].split(".")[2] not in everything


def test_client_mistakes_are_counted_apart_from_database_failures(start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key)
    token = api.new_session()["access_token"]
    assert api.submit([report() for _ in range(10)], token).status_code == 201
    # The 11th report in the hour: the database's cap trigger refuses it (PT429), the client's doing.
    refused = api.submit(report(), token)
    assert refused.status_code == 429 and refused.json()["code"] == "PT429", refused.text
    text = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
    assert "# TYPE pricesvc_database_client_errors_total counter" in text
    assert _metric(text, "pricesvc_database_client_errors_total", 'class="PT"') == 1
    errors = re.findall(r"^pricesvc_database_errors_total\{kind=\"[^\"]+\"\} (\d+)$", text, re.M)
    assert errors and all(count == "0" for count in errors), "a refused report is no database failure"


def test_access_log_can_be_turned_off(start_server):
    server = start_server(ACCESS_LOG="false")

    def healthz_count() -> float:
        text = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
        return _metric(text, "pricesvc_http_requests_total", 'route="/healthz",status="200"') or 0

    before = healthz_count()
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    # A request is counted in /metrics where it is logged (before its answer goes out): once /metrics
    # counts this /healthz, its log line would already be on stdout.
    wait_until(lambda: healthz_count() >= before + 1, timeout=10, message="/metrics to count the /healthz request")
    assert server.stdout() == "", "with the access log off, nothing at all is written to stdout"
    assert "listening on http://" in server.stderr()


def test_sigterm_makes_the_process_exit_0_promptly(start_server):
    server = start_server()
    requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT)
    started = time.monotonic()
    code = server.stop(signal.SIGTERM, timeout=8)
    assert code == 0, server.stderr()
    assert time.monotonic() - started < 8


def test_sigint_also_shuts_down_cleanly(start_server):
    server = start_server()
    started = time.monotonic()
    assert server.stop(signal.SIGINT, timeout=8) == 0, server.stderr()
    assert time.monotonic() - started < 8


def test_after_sigterm_the_port_is_closed(start_server):
    server = start_server()
    assert server.stop(signal.SIGTERM, timeout=8) == 0
    try:
        requests.get(server.url + "/healthz", timeout=2)
        raise AssertionError("a stopped pricesvc still answered")
    except requests.ConnectionError:
        pass


# ---------------------------------------------------------------- the admin listener

def test_metrics_are_on_the_admin_listener_only(server):
    # Per-route counters would let anyone watch reports arrive: the public listener does not serve them.
    assert requests.get(server.url + "/metrics", timeout=REQUEST_TIMEOUT).status_code == 404
    response = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 200 and "pricesvc_http_requests_total" in response.text
    for path in ("/healthz", "/readyz"):
        assert requests.get(server.admin_url + path, timeout=REQUEST_TIMEOUT).status_code == 200, path
    # Nothing of the API is served there.
    assert requests.get(server.admin_url + "/rest/v1/", timeout=REQUEST_TIMEOUT).status_code == 404
    assert requests.post(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).status_code == 405


def test_there_is_no_admin_listener_unless_it_is_set(start_server):
    server = start_server(ADMIN_LISTEN=None)
    assert server.admin_url == "" and "admin listening" not in server.stderr()
    assert requests.get(server.url + "/metrics", timeout=REQUEST_TIMEOUT).status_code == 404


def test_a_flood_of_public_readyz_costs_at_most_one_database_check_a_second(start_server):
    server = start_server()

    def checks() -> float:
        return _metric(server.metrics(), "pricesvc_readiness_checks_total")

    before = checks()
    # The admin listener's /readyz checks every time: the counter counts real checks.
    for _ in range(3):
        assert requests.get(server.admin_url + "/readyz", timeout=REQUEST_TIMEOUT).status_code == 200
    assert checks() == before + 3

    before = checks()
    session = requests.Session()
    # A fixed flood, not a fixed time: on a busy machine the same 100 requests take longer, and the bound
    # (one check a second) grows with the time they took, never with their number.
    started = time.monotonic()
    answered = 0
    for _ in range(100):
        response = session.get(server.url + "/readyz", timeout=REQUEST_TIMEOUT)
        assert response.status_code == 200, response.text
        answered += 1
    elapsed = time.monotonic() - started
    made = checks() - before
    assert 1 <= made <= int(elapsed) + 1, (made, answered, elapsed)
