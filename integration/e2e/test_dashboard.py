"""docs/grafana-dashboard.json, the Grafana dashboard: valid against a JSON schema of what Grafana
needs to import it (integration/dashboard/grafana-dashboard.schema.json, checked with jsonschema from PyPI: no
Grafana is packaged in Debian or on PyPI), every query valid PromQL (promtool), and every pricesvc series
the dashboard and docs/alerts.yml name served on /metrics by a running instance."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import jsonschema
import requests

from helpers import wait_until

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "docs/grafana-dashboard.json"
SCHEMA = REPO / "integration/dashboard/grafana-dashboard.schema.json"
RULES = REPO / "docs/alerts.yml"
SERIES = re.compile(r"\b((?:pricesvc|patroni)_[a-z_]+)\b")
# Series no pricesvc serves, named by the alert rules: Patroni's REST API exports them (job "patroni").
NOT_PRICESVC = {
    "patroni_primary": "Patroni: 1 on the leader",
    "patroni_sync_standby": "Patroni: 1 on the synchronous standby",
    "patroni_replica": "Patroni: 1 on a replica",
    "patroni_xlog_location": "Patroni: the leader's WAL position",
    "patroni_xlog_replayed_location": "Patroni: a replica's replayed WAL position",
}


def _dashboard() -> dict:
    return json.loads(DASHBOARD.read_text())


def _queries(dashboard: dict) -> list[tuple[str, str]]:
    """(panel title, expression) of every target, rows' nested panels included."""
    found = []
    def walk(panels):
        for panel in panels:
            found.extend((panel["title"], target["expr"]) for target in panel.get("targets", []))
            walk(panel.get("panels", []))
    walk(dashboard["panels"])
    return found


def test_the_dashboard_is_valid_against_the_schema_of_what_grafana_imports():
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    dashboard = _dashboard()
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(dashboard), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors)
    # The schema cannot say these: ids unique, refIds unique within a panel, no two panels on one cell of
    # the 24-column grid, and every $variable a query uses defined (or one of Grafana's own).
    panels = dashboard["panels"]
    ids = [panel["id"] for panel in panels]
    assert len(ids) == len(set(ids)) and len(ids) > 15, ids
    cells: dict[tuple[int, int], str] = {}
    for panel in panels:
        refs = [target["refId"] for target in panel.get("targets", [])]
        assert len(refs) == len(set(refs)), panel["title"]
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24, panel["title"]
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps {cells[(x, y)]}"
                cells[(x, y)] = panel["title"]
    defined = {variable["name"] for variable in dashboard["templating"]["list"]} | {"__rate_interval", "__interval"}
    used = set(re.findall(r"\$\{?(\w+)", json.dumps(panels)))
    assert used and used <= defined, used - defined


def test_every_query_is_valid_promql(tmp_path):
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: scripts/dev/install-deps.sh installs Debian's prometheus package"
    queries = _queries(_dashboard())
    # Each expression as a recording rule, Grafana's variables replaced as Grafana would.
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{index}",
         "expr": expr.replace("$__rate_interval", "5m").replace("$instance", ".*")}
        for index, (_, expr) in enumerate(queries)]}]}
    path = tmp_path / "dashboard-rules.yml"
    path.write_text(json.dumps(rules))  # JSON is YAML
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(queries)} rules found" in result.stdout, result.stdout


def _served(metrics: str) -> set[str]:
    """Every series name /metrics serves: each family, and a histogram's _bucket, _sum and _count."""
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)", metrics, re.M):
        names.add(name)
        if kind == "histogram":
            names.update(name + suffix for suffix in ("_bucket", "_sum", "_count"))
    return names


def _sample(metrics: str, series: str) -> float | None:
    match = re.search(rf"^{re.escape(series)} (\S+)$", metrics, re.M)
    return float(match.group(1)) if match else None


def test_every_series_the_dashboard_and_the_alert_rules_name_is_served(migrated, start_server, anon_key):
    # A replica pool (the primary, named as the read URL) so the replica panels' series are served too;
    # the admin listener reads the maintenance runs.
    server = start_server(READ_DATABASE_URL=migrated.service_url, SIGNUPS_PER_HOUR=1_000, SIGNUP_BURST=100)
    before = server.metrics()
    assert _sample(before, 'pricesvc_sign_ups_total{kind="anonymous"}') == 0, before
    api = server.api(anon_key)
    token = api.new_session()["access_token"]
    assert api.medians(["dashboard:nowhere"], token) == []
    assert api.get("/auth/v1/user", token=token).status_code == 200
    # The maintenance runs are read on a thread of their own: wait (bounded) for the first read.
    def maintenance_read() -> str | None:
        text = server.metrics()
        return text if "pricesvc_maintenance_last_success_timestamp_seconds" in text else None

    metrics = wait_until(maintenance_read, 20, interval=0.2, message="the maintenance runs on /metrics")
    assert _sample(metrics, 'pricesvc_sign_ups_total{kind="anonymous"}') == 1, metrics
    assert _sample(metrics, 'pricesvc_sign_ups_total{kind="attested"}') == 0, metrics
    assert (_sample(metrics, 'pricesvc_db_reads_total{pool="replica"}') or 0) >= 1, metrics

    served = _served(metrics)
    in_dashboard = {name for _, expr in _queries(_dashboard()) for name in SERIES.findall(expr)}
    in_rules = set(SERIES.findall(RULES.read_text()))
    assert len(in_dashboard) > 25 and in_rules, (in_dashboard, in_rules)
    # Every row docs/operations.md describes has its series.
    for family in ("pricesvc_http_requests_total", "pricesvc_http_request_duration_seconds_bucket",
                   "pricesvc_db_pool_connections", "pricesvc_rate_limited_total", "pricesvc_token_cache_lookups_total",
                   "pricesvc_sign_ups_total", "pricesvc_attestations_total",
                   "pricesvc_maintenance_last_success_timestamp_seconds", "pricesvc_db_reads_total",
                   "pricesvc_db_replica_pool_connections"):
        assert family in in_dashboard, family
    missing = {name for name in in_dashboard | in_rules if name not in served and name not in NOT_PRICESVC}
    assert not missing, f"named but not served: {sorted(missing)}"
    assert set(NOT_PRICESVC) <= in_rules, "an allow-listed series no rule names any more"
    assert not {name for name in NOT_PRICESVC if name in served}, "an allow-listed series is pricesvc's after all"
    assert not in_dashboard & set(NOT_PRICESVC), "the dashboard is for pricesvc's own series"
    assert requests.get(server.admin_url + "/metrics", timeout=10).headers["Content-Type"].startswith("text/plain")
