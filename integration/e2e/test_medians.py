"""POST and GET /rest/v1/rpc/price_median(s): the three-reporter threshold and PostgREST's function rules."""

import pytest

from helpers import assert_postgrest_error, location, report

ROW_KEYS = {"location_id", "rate_kind", "currency", "median_cents", "reporters", "reports", "last_reported_at"}


def test_a_median_appears_only_once_three_distinct_reporters_reported_the_location(api, db):
    loc, quiet = location("threshold"), location("quiet")
    sessions = [api.new_session() for _ in range(3)]
    db.age_users([s["user"]["id"] for s in sessions])  # only identities a day old count toward medians
    reporters = [s["access_token"] for s in sessions]

    assert api.submit([report(loc, 300), report(loc, 310)], reporters[0]).status_code == 201
    assert api.medians([loc, quiet], reporters[0]) == []
    assert api.submit(report(loc, 500), reporters[1]).status_code == 201
    assert api.medians([loc, quiet], reporters[1]) == [], "two reporters must not reveal a median"

    assert api.submit(report(loc, 400), reporters[2]).status_code == 201
    rows = api.medians([loc, quiet], reporters[2])
    assert len(rows) == 1, rows
    row = rows[0]
    assert set(row) == ROW_KEYS, row
    assert row["location_id"] == loc and row["rate_kind"] == "hourly" and row["currency"] == "USD"
    assert row["reporters"] == 3 and row["reports"] == 4
    assert isinstance(row["median_cents"], int) and 300 <= row["median_cents"] <= 500
    assert isinstance(row["last_reported_at"], str)

    # The same through price_median, by POST and by GET.
    single = api.rpc("price_median", {"location_id": loc}, reporters[0])
    assert single.status_code == 200 and single.json() == rows
    by_get = api.get("/rest/v1/rpc/price_median", params={"location_id": loc}, token=reporters[0])
    assert by_get.status_code == 200 and by_get.json() == rows
    many_by_get = api.get("/rest/v1/rpc/price_medians", params={"location_ids": "{%s,%s}" % (loc, quiet)},
                          token=reporters[0])
    assert many_by_get.status_code == 200 and many_by_get.json() == rows


def test_a_location_named_twice_counts_once(api, db):
    """Two mature reporters at X: [X] showed nothing, but [X, X] once showed the
    higher price with reporters 4, because the folded histograms were added once per repeat."""
    loc = location("twice")
    sessions = [api.new_session() for _ in range(2)]
    db.age_users([s["user"]["id"] for s in sessions])
    token = sessions[0]["access_token"]
    assert api.submit(report(loc, 1234), sessions[0]["access_token"]).status_code == 201
    assert api.submit(report(loc, 777), sessions[1]["access_token"]).status_code == 201
    # Folded, as the group's 16th report would fold it: the histograms hold both prices.
    db.psql(f"select private.median_fold('{loc}', 'hourly')")
    assert db.scalar(f"select count(*) from private.median_queue where location_id = '{loc}'") == "0"

    assert api.medians([loc], token) == []
    assert api.medians([loc, loc], token) == [], "a repeated id must not complete the threshold"
    assert api.medians([loc] * 50, token) == []
    by_get = api.get("/rest/v1/rpc/price_medians", params={"location_ids": "{%s,%s}" % (loc, loc)}, token=token)
    assert by_get.status_code == 200 and by_get.json() == [], by_get.text
    quotes = api.rpc("price_quotes", {"location_ids": [loc, loc]}, token)
    assert quotes.status_code == 200 and quotes.json() == [], quotes.text
    # A null rate_kind is no rate kind: refused, never a median.
    no_kind = api.rpc("price_medians", {"location_ids": [loc, loc], "rate_kind": None}, token)
    assert no_kind.status_code == 400 or no_kind.json() == [], no_kind.text

    third = api.new_session()
    db.age_users([third["user"]["id"]])
    assert api.submit(report(loc, 500), third["access_token"]).status_code == 201
    rows = api.medians([loc, loc, loc], token)
    assert rows == api.medians([loc], token)
    assert [(r["median_cents"], r["reporters"], r["reports"]) for r in rows] == [(777, 3, 3)], rows


def test_one_reporter_submitting_many_times_never_reveals_a_median(api):
    loc = location()
    token = api.new_session()["access_token"]
    assert api.submit([report(loc, 100 + i) for i in range(10)], token).status_code == 201
    assert api.medians([loc], token) == []


def test_medians_are_per_rate_kind(api, db):
    loc = location()
    sessions = [api.new_session() for _ in range(3)]
    db.age_users([s["user"]["id"] for s in sessions])
    tokens = [s["access_token"] for s in sessions]
    for index, token in enumerate(tokens):
        assert api.submit(report(loc, 1000 + index, kind="daily"), token).status_code == 201
    assert api.medians([loc], tokens[0]) == []  # the default rate_kind is hourly
    daily = api.medians([loc], tokens[0], rate_kind="daily")
    assert len(daily) == 1 and daily[0]["rate_kind"] == "daily" and daily[0]["median_cents"] == 1001
    by_get = api.get("/rest/v1/rpc/price_median", params={"location_id": loc, "rate_kind": "daily"},
                     token=tokens[0])
    assert by_get.status_code == 200 and by_get.json() == daily


def test_price_medians_answers_an_empty_array_for_unknown_locations(api, token):
    assert api.medians([location(), location()], token) == []
    response = api.rpc("price_median", {"location_id": location()}, token)
    assert response.status_code == 200 and response.json() == []


def test_price_medians_takes_50_ids_and_refuses_51_with_400(api, token):
    assert api.medians([location() for _ in range(50)], token) == []
    response = api.rpc("price_medians", {"location_ids": [location() for _ in range(51)]}, token)
    assert_postgrest_error(response, 400)
    by_get = api.get("/rest/v1/rpc/price_medians", token=token,
                     params={"location_ids": "{" + ",".join(f"e2e:{i}" for i in range(51)) + "}"})
    assert_postgrest_error(by_get, 400)


def test_an_unknown_function_is_404_pgrst202(api, token):
    for name in ("price_reports", "pg_sleep", "sign_up_anonymous", "price_median_overview", "nope"):
        assert_postgrest_error(api.rpc(name, {}, token), 404, "PGRST202")
        assert_postgrest_error(api.get(f"/rest/v1/rpc/{name}", token=token), 404, "PGRST202")


@pytest.mark.parametrize("name,args", [
    ("price_median", {"location": "x"}),
    ("price_median", {"location_id": "x", "since": "2020-01-01"}),
    ("price_median", {}),
    ("price_medians", {"location_id": "x"}),
    ("price_medians", {"location_ids": ["x"], "limit": 5}),
])
def test_unknown_or_missing_arguments_are_404_pgrst202(api, token, name, args):
    assert_postgrest_error(api.rpc(name, args, token), 404, "PGRST202")


def test_unknown_arguments_in_the_get_form_are_404(api, token):
    response = api.get("/rest/v1/rpc/price_median", params={"location_id": "x", "evil": "1"}, token=token)
    assert_postgrest_error(response, 404, "PGRST202")


@pytest.mark.parametrize("args", [
    {"location_ids": "not-an-array"}, {"location_ids": [1, 2]}, {"location_ids": [None]},
    {"location_ids": ["a"], "rate_kind": 7}, {"location_ids": ["a"], "rate_kind": "weekly-ish"},
    {"location_ids": ["a\u0000b"]},
])
def test_badly_typed_arguments_are_400(api, token, args):
    assert_postgrest_error(api.rpc("price_medians", args, token), 400)


def test_malformed_rpc_bodies_are_400(api, token):
    for body in (b"{", b"[]", b"42"):
        response = api.post("/rest/v1/rpc/price_medians", token=token, data=body,
                            headers={"Content-Type": "application/json"})
        assert_postgrest_error(response, 400)


def test_a_malformed_array_literal_in_the_get_form_is_400(api, token):
    response = api.get("/rest/v1/rpc/price_medians", params={"location_ids": "a,b"}, token=token)
    assert_postgrest_error(response, 400)
