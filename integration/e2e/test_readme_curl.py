"""The README's curl flow, run with curl as a person would (URL and KEY pointed at a test server)."""

import json
import re
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def curl(*args: str) -> tuple[int, dict, str]:
    """curl -i; returns (status, headers, body). Every call is bounded by --max-time."""
    result = subprocess.run(["curl", "-s", "-i", "--max-time", "10", *args], capture_output=True, text=True,
                            timeout=20)
    assert result.returncode == 0, result.stderr
    head, _, body = result.stdout.replace("\r\n", "\n").partition("\n\n")
    lines = head.splitlines()
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def test_the_readme_flow_with_curl_sign_up_submit_read_median_refresh_and_sign_out(server, anon_key, db):
    url, key = server.url, anon_key
    loc = f"e2e:readme:{uuid.uuid4().hex[:8]}"
    sessions = []
    for cents in (300, 350, 420):
        status, _, body = curl("-X", "POST", f"{url}/auth/v1/signup", "-H", f"apikey: {key}",
                               "-H", "Content-Type: application/json", "-d", '{"data":{}}')
        assert status == 200, body
        session = json.loads(body)
        sessions.append(session)
        status, _, body = curl("-X", "POST", f"{url}/rest/v1/price_reports", "-H", f"apikey: {key}",
                               "-H", f"Authorization: Bearer {session['access_token']}",
                               "-H", "Content-Type: application/json", "-H", "Prefer: return=minimal",
                               "-d", json.dumps({"location_id": loc, "rate_kind": "hourly", "price_cents": cents,
                                                 "currency": "USD"}))
        assert status == 201 and body == "", (status, body)

    # As the README says: only identities a day old count; the README ages them as the superuser.
    db.age_users([s["user"]["id"] for s in sessions], by="1 day")
    token = sessions[0]["access_token"]
    status, _, body = curl("-X", "POST", f"{url}/rest/v1/rpc/price_medians", "-H", f"apikey: {key}",
                           "-H", f"Authorization: Bearer {token}", "-H", "Content-Type: application/json",
                           "-d", json.dumps({"location_ids": [loc, "sfmta:garage-7-" + uuid.uuid4().hex]}))
    assert status == 200, body
    rows = json.loads(body)
    assert [(r["location_id"], r["median_cents"], r["reporters"], r["reports"]) for r in rows] == [(loc, 350, 3, 3)]

    status, _, body = curl("-X", "POST", f"{url}/auth/v1/token?grant_type=refresh_token", "-H", f"apikey: {key}",
                           "-H", "Content-Type: application/json",
                           "-d", json.dumps({"refresh_token": sessions[0]["refresh_token"]}))
    assert status == 200, body
    assert json.loads(body)["refresh_token"] != sessions[0]["refresh_token"]

    status, _, body = curl("-X", "POST", f"{url}/auth/v1/logout?scope=global", "-H", f"apikey: {key}",
                           "-H", f"Authorization: Bearer {token}")
    assert status == 204, body


def test_the_readme_curl_block_runs_as_written(server, anon_key, tmp_path):
    readme = (REPO / "README.md").read_text()
    match = re.search(r"## The flow with curl\s+```sh\n(.*?)```", readme, re.S)
    if not match:
        pytest.fail("README.md has no '## The flow with curl' sh block")
    script = match.group(1)
    script = re.sub(r"^URL=.*$", f"URL={server.url}", script, flags=re.M)
    script = re.sub(r"^KEY=.*$", f"KEY='{anon_key}'", script, flags=re.M)
    script = script.replace("curl -s", "curl -s --max-time 10")
    path = tmp_path / "readme.sh"
    path.write_text("set -euo pipefail\n" + script)
    result = subprocess.run(["bash", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert re.search(r"HTTP/1\.[01] 201", result.stdout), result.stdout
    assert re.search(r"HTTP/1\.[01] 204", result.stdout), result.stdout
    assert '"refresh_token"' in result.stdout
