"""Never a 500: schemathesis generates requests from the served OpenAPI document (valid, boundary and
invalid bodies, odd headers and query strings) and drives a real pricesvc and PostgreSQL with them."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GENERAL_SETTINGS

VENV_BIN = Path(sys.executable).parent


@pytest.mark.timeout(600)
def test_no_generated_request_gets_a_server_error(start_server, anon_key, tmp_path):
    server = start_server(**GENERAL_SETTINGS, ACCESS_LOG="false")
    api = server.api(anon_key)
    token = api.new_session()["access_token"]
    schema = tmp_path / "openapi.json"
    response = api.get("/rest/v1/")
    assert response.status_code == 200
    schema.write_text(json.dumps(response.json()))

    run = subprocess.run(
        [str(VENV_BIN / "schemathesis"), "run", str(schema), "--url", server.url,
         "-H", f"apikey: {anon_key}", "-H", f"Authorization: Bearer {token}",
         "--checks", "not_a_server_error", "--max-examples", "40", "--seed", "20261129",
         "--request-timeout", "10", "--no-color"],
        capture_output=True, text=True, timeout=540, cwd=tmp_path)
    summary = run.stdout[-3000:]
    assert run.returncode == 0, f"schemathesis found failures:\n{summary}\n{run.stderr[-2000:]}"
    counts = re.search(r"(\d+) generated, (\d+) passed", summary)
    assert counts and int(counts.group(1)) >= 300 and counts.group(1) == counts.group(2), summary
