"""PostgREST's read options on function results: filters, select, order, limit/offset/Range, single
objects, CSV and exact counts, through supabase-py's own builder methods and by raw requests; every
option pricesvc does not implement is a 4xx that names it, never a 200 that ignores it. Also: every
rate kind in one call."""

from __future__ import annotations

import csv
import io

import pytest
from postgrest.exceptions import APIError
from supabase import create_client

from conftest import GENERAL_SETTINGS
from helpers import assert_postgrest_error, location, report

ROW_KEYS = ["location_id", "rate_kind", "currency", "median_cents", "reporters", "reports", "last_reported_at"]


@pytest.fixture(scope="module")
def board(server, anon_key, db):
    """Three aged reporters and four medians over two locations:
    a/hourly/USD 500, a/daily/EUR 1100, b/hourly/EUR 300, b/flat/USD 2000 (b/monthly has 2 reporters only)."""
    from helpers import Api
    api = Api(server.url, anon_key)
    a, b = location("board-a"), location("board-b")
    sessions = [api.new_session() for _ in range(3)]
    db.age_users([s["user"]["id"] for s in sessions])
    for index, session in enumerate(sessions):
        rows = [report(a, 400 + 100 * index, currency="USD"), report(a, 1000 + 100 * index, kind="daily", currency="EUR"),
                report(b, 200 + 100 * index, currency="EUR"), report(b, 1900 + 100 * index, kind="flat", currency="USD")]
        if index < 2:
            rows.append(report(b, 5000, kind="monthly", currency="USD"))
        assert api.submit(rows, session["access_token"]).status_code == 201
    return {"a": a, "b": b, "token": sessions[0]["access_token"], "api": api,
            "session": sessions[0]}


@pytest.fixture
def client(server, anon_key, board):
    """supabase-py, signed in as one of the board's reporters (its refresh token stays unused)."""
    sdk = create_client(server.url, anon_key)
    sdk.postgrest.auth(board["token"])
    return sdk


def all_kinds(board):
    return {"location_ids": [board["a"], board["b"]], "rate_kind": None}


# ---------------------------------------------------------------- every rate kind in one call

def test_rate_kind_null_returns_every_rate_kind_in_one_call_ordered_as_the_function_orders(board):
    api, token = board["api"], board["token"]
    rows = api.medians([board["a"], board["b"]], token, rate_kind=None)
    found = [(r["location_id"], r["rate_kind"], r["currency"], r["median_cents"]) for r in rows]
    expected = sorted([(board["a"], "daily", "EUR", 1100), (board["a"], "hourly", "USD", 500),
                       (board["b"], "flat", "USD", 2000), (board["b"], "hourly", "EUR", 300)])
    assert found == expected
    assert all(r["reporters"] == 3 for r in rows)
    assert [list(r) for r in rows] == [ROW_KEYS] * 4


def test_omitting_rate_kind_still_means_hourly(board):
    rows = board["api"].medians([board["a"], board["b"]], board["token"])
    assert {(r["location_id"], r["rate_kind"]) for r in rows} == {(board["a"], "hourly"), (board["b"], "hourly")}


def test_every_rate_kind_for_one_location_and_by_get(board):
    api, token = board["api"], board["token"]
    one = api.rpc("price_median", {"location_id": board["a"], "rate_kind": None}, token)
    assert one.status_code == 200 and [r["rate_kind"] for r in one.json()] == ["daily", "hourly"]
    # In a query string the SDKs send null as an empty value.
    by_get = api.get("/rest/v1/rpc/price_median", params={"location_id": board["a"], "rate_kind": ""}, token=token)
    assert by_get.status_code == 200 and by_get.json() == one.json()


def test_the_service_list_of_rate_kinds_is_the_database_list(api, db):
    # Since migration 0007 the check constraint and the functions share one list, private.rate_kinds().
    constraint = db.scalar("select pg_get_constraintdef(oid) from pg_constraint where conname = 'price_reports_rate_kind_known'")
    assert "private.rate_kinds()" in constraint, constraint
    in_database = sorted(db.scalar("select array_to_string(private.rate_kinds(), ',')").split(","))
    document = api.get("/rest/v1/").json()
    served = document["components"]["schemas"]["RateKind"]["enum"]
    assert sorted(served) == in_database


# ---------------------------------------------------------------- through supabase-py's builder

def test_eq_filters_the_rows_of_an_rpc(client, board):
    rows = client.rpc("price_medians", all_kinds(board)).eq("currency", "EUR").execute().data
    assert {(r["location_id"], r["rate_kind"]) for r in rows} == {(board["a"], "daily"), (board["b"], "hourly")}
    assert all(r["currency"] == "EUR" for r in rows)


def test_in_gt_and_not_filters_combine_with_and(client, board):
    rows = (client.rpc("price_medians", all_kinds(board)).in_("rate_kind", ["hourly", "flat"])
            .gt("median_cents", 400).execute().data)
    assert [(r["rate_kind"], r["median_cents"]) for r in rows] == [("hourly", 500), ("flat", 2000)]
    rows = client.rpc("price_medians", all_kinds(board)).not_.eq("location_id", board["a"]).execute().data
    assert {r["location_id"] for r in rows} == {board["b"]} and len(rows) == 2


def test_order_and_limit_pick_the_cheapest(client, board):
    response = client.rpc("price_medians", all_kinds(board)).order("median_cents").limit(1).execute()
    assert [r["median_cents"] for r in response.data] == [300]
    rows = client.rpc("price_medians", all_kinds(board)).order("median_cents", desc=True).execute().data
    assert [r["median_cents"] for r in rows] == [2000, 1100, 500, 300]
    page = client.rpc("price_medians", all_kinds(board)).order("median_cents").range(1, 2).execute().data
    assert [r["median_cents"] for r in page] == [500, 1100]


def test_select_returns_only_the_named_columns(client, board):
    rows = client.rpc("price_medians", all_kinds(board)).select("rate_kind,median_cents").eq("currency", "USD").execute().data
    assert rows == [{"rate_kind": "hourly", "median_cents": 500}, {"rate_kind": "flat", "median_cents": 2000}]


def test_single_returns_one_object_and_refuses_many(client, board):
    row = client.rpc("price_medians", all_kinds(board)).eq("rate_kind", "flat").single().execute().data
    assert isinstance(row, dict) and row["median_cents"] == 2000
    with pytest.raises(APIError) as error:
        client.rpc("price_medians", all_kinds(board)).single().execute()
    assert error.value.code == "PGRST116"


def test_csv_is_csv(client, board):
    text = client.rpc("price_medians", all_kinds(board)).eq("location_id", board["b"]).csv().execute().data
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ROW_KEYS
    assert [(r[1], r[2], r[3]) for r in rows[1:]] == [("flat", "USD", "2000"), ("hourly", "EUR", "300")]
    assert rows[1][6].endswith("+00") and " " in rows[1][6]  # PostgreSQL's text form, as PostgREST gives


def test_count_exact_gives_the_total_beside_a_page(client, board):
    response = client.rpc("price_medians", all_kinds(board), count="exact").limit(2).execute()
    assert response.count == 4 and len(response.data) == 2


def test_the_get_form_takes_arguments_and_options_from_one_query_string(client, board):
    rows = (client.rpc("price_medians", all_kinds(board), get=True).eq("currency", "EUR")
            .order("median_cents").execute().data)
    assert [(r["location_id"], r["median_cents"]) for r in rows] == [(board["b"], 300), (board["a"], 1100)]


def test_head_with_count_gives_the_count_and_no_body(client, board):
    response = client.rpc("price_medians", all_kinds(board), count="exact", head=True).execute()
    assert response.count == 4


# ---------------------------------------------------------------- raw requests: PostgREST's exact answers

def rpc_post(board, args=None, params=None, headers=None):
    return board["api"].post("/rest/v1/rpc/price_medians", token=board["token"], json_body=args or all_kinds(board),
                             params=params, headers=headers)


def test_content_range_and_partial_content(board):
    plain = rpc_post(board, params={"limit": "2"})
    assert plain.status_code == 200 and plain.headers["Content-Range"] == "0-1/*"
    counted = rpc_post(board, params={"limit": "2", "offset": "1"}, headers={"Prefer": "count=exact"})
    assert counted.status_code == 206 and counted.headers["Content-Range"] == "1-2/4"
    assert counted.headers["Preference-Applied"] == "count=exact"
    everything = rpc_post(board, headers={"Prefer": "count=exact"})
    assert everything.status_code == 200 and everything.headers["Content-Range"] == "0-3/4"
    none = rpc_post(board, params={"currency": "eq.JPY"}, headers={"Prefer": "count=exact"})
    assert none.status_code == 200 and none.json() == [] and none.headers["Content-Range"] == "*/0"


def test_an_offset_past_the_end_of_a_counted_result_is_416(board):
    response = rpc_post(board, params={"offset": "9"}, headers={"Prefer": "count=exact"})
    body = assert_postgrest_error(response, 416, "PGRST103")
    assert body["details"] == "An offset of 9 was requested, but there are only 4 rows."


def test_the_range_header_pages_the_get_form(board):
    params = {"location_ids": "{%s,%s}" % (board["a"], board["b"]), "rate_kind": "", "order": "median_cents"}
    response = board["api"].get("/rest/v1/rpc/price_medians", token=board["token"], params=params,
                                headers={"Range": "1-2", "Prefer": "count=exact"})
    assert response.status_code == 206 and response.headers["Content-Range"] == "1-2/4"
    assert [r["median_cents"] for r in response.json()] == [500, 1100]
    backwards = board["api"].get("/rest/v1/rpc/price_medians", token=board["token"], params=params, headers={"Range": "3-1"})
    assert_postgrest_error(backwards, 416, "PGRST103")


def test_timestamp_and_is_filters(board):
    assert len(rpc_post(board, params={"last_reported_at": "gt.2000-01-01T00:00:00Z"}).json()) == 4
    assert rpc_post(board, params={"last_reported_at": "lt.2000-01-01"}).json() == []
    assert len(rpc_post(board, params={"currency": "not.is.null"}).json()) == 4
    assert rpc_post(board, params={"currency": "is.null"}).json() == []


# The grammar's edge cases are unit tests of the pure parser (Tests/PostgRESTDialectTests/
# ReadOptionEdgeCaseTests.swift); the wire keeps one refusal of each kind, to show it reaches a client unchanged.
@pytest.mark.parametrize("params,code,status,named", [
    ({"currency": "like.E*"}, "PGRST127", 400, "like"),
    ({"select": "nope"}, "42703", 400, "nope"),
    ({"median_cents": "eq.cheap"}, "22P02", 400, "cheap"),
    ({"limit": "-1"}, "PGRST103", 416, "Limit"),
])
def test_options_pricesvc_does_not_implement_or_cannot_read_are_refused_by_name(board, params, code, status, named):
    body = assert_postgrest_error(rpc_post(board, params=params), status, code)
    assert named.lower() in (body["message"] + " " + (body["details"] or "")).lower(), body


def test_a_preference_pricesvc_does_not_implement_is_refused_by_name(board):
    prefer = "tx=rollback"
    body = assert_postgrest_error(rpc_post(board, headers={"Prefer": f"count=exact, {prefer}"}), 400, "PGRST122")
    assert body["details"] == f"Invalid preferences: {prefer}"


def test_media_types_pricesvc_does_not_produce_are_406(board):
    body = assert_postgrest_error(rpc_post(board, headers={"Accept": "application/xml"}), 406, "PGRST107")
    assert "application/xml" in body["message"]
    # Negotiation follows the quality values.
    response = rpc_post(board, headers={"Accept": "application/xml, text/csv;q=0.5, application/json;q=0.1"})
    assert response.status_code == 200 and response.headers["Content-Type"].startswith("text/csv")
    stripped = rpc_post(board, headers={"Accept": "application/vnd.pgrst.array+json;nulls=stripped"})
    assert stripped.status_code == 200 and len(stripped.json()) == 4


def test_an_object_requested_of_zero_rows_is_406(board):
    response = rpc_post(board, params={"currency": "eq.JPY"}, headers={"Accept": "application/vnd.pgrst.object+json"})
    body = assert_postgrest_error(response, 406, "PGRST116")
    assert body["details"] == "The result contains 0 rows"


def test_in_the_get_form_a_parameter_that_is_no_operator_is_an_argument(board):
    response = board["api"].get("/rest/v1/rpc/price_medians", token=board["token"],
                                params={"location_ids": "{%s}" % board["a"], "currency": "EUR"})
    assert_postgrest_error(response, 404, "PGRST202")
    filtered = board["api"].get("/rest/v1/rpc/price_medians", token=board["token"],
                                params={"location_ids": "{%s}" % board["a"], "rate_kind": "daily", "currency": "eq.EUR"})
    assert filtered.status_code == 200 and [r["median_cents"] for r in filtered.json()] == [1100]


# ---------------------------------------------------------------- numbers and sizes a client controls

INT64_MAX = "9223372036854775807"


def assert_alive(server):
    assert server.process.poll() is None, f"pricesvc exited ({server.process.returncode}):\n{server.stderr()[-2000:]}"
    assert server.api("").get("/healthz").status_code == 200


RANGES_BEYOND_INT64 = [
    (f"0-{INT64_MAX}", None, 200),                      # this once killed the process
    (f"{INT64_MAX}-", "count=exact", 416),
    (f"{'9' * 400}-{INT64_MAX}", None, 416),            # backwards, decided on the exact values
]


def test_a_range_up_to_and_beyond_int64_is_an_answer_and_the_server_lives_on(start_server, anon_key, user):
    server = start_server(**GENERAL_SETTINGS)
    api = server.api(anon_key)
    for range_header, prefer, status in RANGES_BEYOND_INT64:
        headers = {"Range": range_header, **({"Prefer": prefer} if prefer else {})}
        response = api.get("/rest/v1/rpc/price_median", token=user["access_token"], params={"location_id": "x"},
                           headers=headers)
        assert response.status_code == status, (range_header, response.status_code, response.text)
        if status == 200:
            assert response.json() == []
        else:
            assert_postgrest_error(response, 416, "PGRST103")
        assert_alive(server)


def test_the_range_header_beyond_int64_still_pages_real_rows(board):
    params = {"location_ids": "{%s,%s}" % (board["a"], board["b"]), "rate_kind": "", "order": "median_cents"}
    response = board["api"].get("/rest/v1/rpc/price_medians", token=board["token"], params=params,
                                headers={"Range": f"2-{INT64_MAX}", "Prefer": "count=exact"})
    assert response.status_code == 206 and response.headers["Content-Range"] == "2-3/4"
    assert [r["median_cents"] for r in response.json()] == [1100, 2000]


@pytest.mark.parametrize("name,value", [("limit", INT64_MAX), ("offset", "9" * 400)])
def test_limit_and_offset_outside_their_domain_are_400_naming_them(board, name, value):
    body = assert_postgrest_error(rpc_post(board, params={name: value}), 400, "PGRST100")
    assert name in body["message"] and "2147483647" in body["details"]


def test_a_select_item_repeated_is_400_naming_it(board):
    body = assert_postgrest_error(rpc_post(board, params={"select": "location_id,*"}), 400, "PGRST100")
    assert "'*'" in body["message"], body


def test_the_amplification_request_is_refused_at_once(board):
    # 7 000 stars over 50 locations once made a 55 MB answer from a 15 KB request.
    ids = [location("amp") for _ in range(50)]
    stars = ",".join(["*"] * 7000)
    response = board["api"].post("/rest/v1/rpc/price_quotes?select=" + stars, token=board["token"],
                                 json_body={"location_ids": ids})
    body = assert_postgrest_error(response, 400, "PGRST100")
    assert "1024 bytes" in body["details"], body
    assert len(response.content) < 2000


def test_read_options_past_their_limits_are_400_naming_the_limit(board):
    params = {"order": ",".join(["median_cents"] * 17)}
    body = assert_postgrest_error(rpc_post(board, params=params), 400, "PGRST100")
    assert "at most 16 terms" in body["details"], body


def test_an_answer_over_max_response_bytes_is_400_pgrst190_and_a_small_one_is_unaffected(start_server, anon_key, board):
    server = start_server(**GENERAL_SETTINGS, MAX_RESPONSE_BYTES=1024)
    api = server.api(anon_key)
    wide = ",".join(["*"] + [f"a{i}:location_id" for i in range(8)])
    call = {"location_ids": [board["a"], board["b"]], "rate_kind": None}
    for accept in ["application/json", "text/csv"]:
        response = api.post("/rest/v1/rpc/price_medians", token=board["token"], params={"select": wide},
                            json_body=call, headers={"Accept": accept})
        body = assert_postgrest_error(response, 400, "PGRST190")
        assert "1024 bytes" in body["message"] and body["hint"], body
    narrow = api.post("/rest/v1/rpc/price_medians", token=board["token"], params={"select": "median_cents"},
                      json_body=call)
    assert narrow.status_code == 200 and sorted(r["median_cents"] for r in narrow.json()) == [300, 500, 1100, 2000]
    # The shared server has the default cap (1 MiB): the same wide read is answered there.
    assert board["api"].post("/rest/v1/rpc/price_medians", token=board["token"], params={"select": wide},
                             json_body=call).status_code == 200
    assert_alive(server)
