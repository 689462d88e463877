"""POST /rest/v1/price_reports: what is stored, what is refused, and how."""

import json
import uuid

import pytest
import requests

from helpers import REQUEST_TIMEOUT, assert_postgrest_error, location, new_id, report, retry_after


# ---------------------------------------------------------------- storing

def test_a_signed_in_reporter_submits_a_report_and_gets_201_with_an_empty_body(api, token, db, user):
    row = report()
    response = api.submit(row, token)
    assert response.status_code == 201, response.text
    assert response.content == b""
    stored = db.psql(f"select reporter_id, location_id, rate_kind, price_cents, currency from public.price_reports "
                     f"where client_report_id = '{row['client_report_id']}'")
    assert stored == f"{user['user']['id']}|{row['location_id']}|hourly|450|USD"


def test_prefer_return_minimal_also_answers_201_with_an_empty_body(api, token, db):
    row = report()
    response = api.submit(row, token, prefer="return=minimal")
    assert response.status_code == 201, response.text
    assert response.content == b""
    assert db.count_reports([row["client_report_id"]]) == 1


def test_prefer_return_representation_answers_201_with_the_rows_plus_id_and_created_at(api, token, db):
    rows = [report(cents=300, currency="EUR"), report(cents=700, kind="daily", currency="USD")]
    response = api.submit(rows, token, prefer="return=representation")
    assert response.status_code == 201, response.text
    body = response.json()
    assert isinstance(body, list) and len(body) == 2
    for sent, got in zip(rows, body):
        assert isinstance(got["id"], int)
        assert isinstance(got["created_at"], str) and got["created_at"][:2] == "20"
        for key, value in sent.items():
            assert got[key] == value, (key, got)
        assert "reporter_id" not in got
        stored = db.psql(f"select id, price_cents from public.price_reports "
                         f"where client_report_id = '{sent['client_report_id']}'")
        assert stored == f"{got['id']}|{sent['price_cents']}"


def test_representation_shows_the_default_currency_like_the_stored_row(api, token):
    response = api.submit({"location_id": location(), "rate_kind": "hourly", "price_cents": 100}, token,
                          prefer="return=representation")
    assert response.status_code == 201, response.text
    assert response.json()[0]["currency"] == "USD"


def test_representation_of_a_single_object_is_still_an_array(api, token):
    response = api.submit(report(), token, prefer="return=representation")
    assert response.status_code == 201
    assert isinstance(response.json(), list) and len(response.json()) == 1


def test_a_report_without_client_report_id_or_currency_is_stored_with_defaults(api, token, db, user):
    loc = location()
    response = api.submit({"location_id": loc, "rate_kind": "flat", "price_cents": 1200}, token)
    assert response.status_code == 201, response.text
    assert db.psql(f"select currency, reporter_id from public.price_reports where location_id = '{loc}'") \
        == f"USD|{user['user']['id']}"


def test_an_array_of_10_reports_is_stored_whole(api, token, db):
    rows = [report() for _ in range(10)]
    response = api.submit(rows, token)
    assert response.status_code == 201, response.text
    assert db.count_reports(r["client_report_id"] for r in rows) == 10


def test_an_array_of_10_with_one_row_the_database_rejects_stores_nothing(api, token, db):
    rows = [report() for _ in range(10)]
    rows[9]["rate_kind"] = "per-fortnight"  # passes the HTTP layer's type checks, fails the table's CHECK
    response = api.submit(rows, token)
    assert_postgrest_error(response, 400)
    assert db.count_reports(r["client_report_id"] for r in rows) == 0
    # ... and the failed batch did not use up the reporter's cap.
    assert api.submit([report() for _ in range(10)], token).status_code == 201


def test_an_array_with_one_invalid_row_stores_nothing(api, token, db):
    rows = [report() for _ in range(5)]
    rows[2]["price_cents"] = -5
    assert_postgrest_error(api.submit(rows, token), 400)
    assert db.count_reports(r["client_report_id"] for r in rows) == 0


def test_an_array_of_11_reports_is_refused_with_400_and_nothing_stored(api, token, db):
    rows = [report() for _ in range(11)]
    assert_postgrest_error(api.submit(rows, token), 400)
    assert db.count_reports(r["client_report_id"] for r in rows) == 0


def test_an_empty_array_is_refused_with_400(api, token):
    assert_postgrest_error(api.submit([], token), 400)


# ---------------------------------------------------------------- refusing columns

def test_an_unknown_column_is_refused_with_400_pgrst204(api, token, db):
    row = report(colour="blue")
    body = assert_postgrest_error(api.submit(row, token), 400, "PGRST204")
    assert "colour" in body["message"]
    assert db.count_reports([row["client_report_id"]]) == 0


@pytest.mark.parametrize("column", ["reporter_id", "id", "created_at"])
def test_a_client_may_never_send_reporter_id_id_or_created_at(api, token, db, column):
    row = report(**{column: str(uuid.uuid4()) if column == "reporter_id" else 1})
    assert_postgrest_error(api.submit(row, token), 400, "PGRST204")
    assert db.count_reports([row["client_report_id"]]) == 0


def test_a_missing_required_column_is_400(api, token):
    assert_postgrest_error(api.submit({"location_id": location(), "rate_kind": "hourly"}, token), 400)


def test_array_elements_with_different_keys_are_400(api, token, db):
    rows = [report(), {"location_id": location(), "rate_kind": "hourly", "price_cents": 100}]
    assert_postgrest_error(api.submit(rows, token), 400)
    assert db.count_reports([rows[0]["client_report_id"]]) == 0


# ---------------------------------------------------------------- refusing bodies

@pytest.mark.parametrize("body", [b"{", b"{\"location_id\": }", b"not json", b"{'a': 1}", b"[1,2",
                                  b"{\"a\":1}}", b"\xff\xfe{}", b""])
def test_malformed_json_is_400_with_a_readable_message(api, token, body):
    body_json = assert_postgrest_error(api.submit_raw(body, token), 400)
    assert body_json["code"] in ("PGRST102", "22P02")


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/jsonx"])
def test_a_content_type_other_than_json_is_400(api, token, content_type, db):
    row = report()
    response = api.submit_raw(json.dumps(row), token, content_type=content_type)
    assert_postgrest_error(response, 400)
    assert db.count_reports([row["client_report_id"]]) == 0


def test_json_content_type_with_a_charset_is_accepted(api, token):
    assert api.submit_raw(json.dumps(report()), token, content_type="application/json; charset=utf-8") \
        .status_code == 201


@pytest.mark.parametrize("body", ["42", "\"a string\"", "null", "true", "[1, 2]", "[[{}]]", "[\"x\"]"])
def test_a_body_that_is_not_an_object_or_array_of_objects_is_400(api, token, body):
    assert_postgrest_error(api.submit_raw(body, token), 400)


@pytest.mark.parametrize("field,value", [
    ("price_cents", "450"), ("price_cents", True), ("price_cents", [450]), ("price_cents", {"v": 1}),
    ("location_id", 17), ("location_id", ["a"]), ("rate_kind", 1), ("currency", 840),
    ("client_report_id", 12345), ("client_report_id", "not-a-uuid"), ("client_report_id", True),
])
def test_wrong_json_types_are_400(api, token, db, field, value):
    row = report()
    crid = row["client_report_id"]
    row[field] = value
    body = assert_postgrest_error(api.submit(row, token), 400)
    assert field in body["message"] or field in (body["details"] or ""), body
    if field != "client_report_id":
        assert db.count_reports([crid]) == 0


@pytest.mark.parametrize("raw_cents", ["0", "-1", "1000001", "4.5", "1e3", "450.0000001", "1e400",
                                       "9223372036854775808", "-9223372036854775809", "2147483648",
                                       "99999999999999999999999999999999"])
def test_prices_out_of_range_or_not_whole_cents_are_400(api, token, db, raw_cents):
    crid = new_id()
    body = ('{"location_id":"%s","rate_kind":"hourly","price_cents":%s,"client_report_id":"%s"}'
            % (location(), raw_cents, crid))
    response = api.submit_raw(body, token)
    if raw_cents == "1e3":
        # 1e3 is exactly 1000 cents: PostgREST accepts it; so may we. Either way, never a 500.
        assert response.status_code in (201, 400), response.text
        return
    assert_postgrest_error(response, 400)
    assert db.count_reports([crid]) == 0


@pytest.mark.parametrize("field", ["location_id", "rate_kind", "currency"])
def test_strings_with_nul_bytes_are_400(api, token, db, field):
    row = report()
    row[field] = "ab\u0000cd"
    assert_postgrest_error(api.submit(row, token), 400)
    assert db.count_reports([row["client_report_id"]]) == 0


def test_a_body_over_64_kib_is_413(api, token, db):
    rows = [report(location_id="x" * 70_000)]
    response = api.submit(rows, token)
    assert response.status_code == 413, response.status_code
    assert db.count_reports([rows[0]["client_report_id"]]) == 0


def test_a_chunked_body_over_64_kib_is_413_too(api, token):
    def chunks():
        yield b"["
        for index in range(2000):
            yield (b"," if index else b"") + json.dumps(report()).encode()
        yield b"]"
    response = api.http.post(api.base + "/rest/v1/price_reports", data=chunks(), timeout=REQUEST_TIMEOUT,
                             headers=api.headers(token, extra={"Content-Type": "application/json"}))
    assert response.status_code == 413


def test_a_body_just_under_the_limit_is_not_413(api, token):
    padding = "y" * (60_000)
    response = api.submit(report(location_id=padding), token)
    assert response.status_code != 413 and response.status_code < 500, response.status_code


HOSTILE_BODIES = [
    b"[" * 100_00 + b"]" * 100_00,
    b"{\"a\":" * 5000 + b"1" + b"}" * 5000,
    b'{"location_id":"\\ud800","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"\\u0000","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"a","location_id":"b","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"\xc3\x28","rate_kind":"hourly","price_cents":1}',
    b'\xef\xbb\xbf{"location_id":"a","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":NaN}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":Infinity}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":-0}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":01}',
    b'{"location_id":"' + b"\\\\" * 20000 + b'","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"' + "\u00e9".encode() * 300 + b'","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1,"currency":"usd"}',
    b'{"location_id":"","rate_kind":"hourly","price_cents":1}',
    b'{"location_id":"a","rate_kind":"","price_cents":1}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1,"client_report_id":"00000000-0000-0000-0000-00000000000g"}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1}garbage',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1e-400}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1.0}',
    b'{"location_id":null,"rate_kind":null,"price_cents":null}',
    b'{"location_id":"a","rate_kind":"hourly","price_cents":1,"currency":null}',
    b'{"":1}',
    b'{"location_id\\u0000":"a"}',
    b"\x00\x00\x00",
    b"[{}]",
    b"{}",
    b'{"location_id":"a"}' * 3,
]


@pytest.mark.parametrize("body", HOSTILE_BODIES, ids=range(len(HOSTILE_BODIES)))
def test_hostile_bodies_never_get_a_500(api, token, body):
    response = api.submit_raw(body, token)
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400 and response.content:
        assert set(response.json()) == {"code", "details", "hint", "message"}


def test_hostile_bodies_on_rpc_and_auth_never_get_a_500(api, token):
    for path in ("/rest/v1/rpc/price_medians", "/rest/v1/rpc/price_median", "/auth/v1/signup",
                 "/auth/v1/token?grant_type=refresh_token"):
        for body in HOSTILE_BODIES[:12] + [b'{"location_ids":' + b"[" * 3000 + b"]" * 3000 + b"}",
                                           b'{"refresh_token":' + b'"' + b"a" * 5000 + b'"}',
                                           b'{"data":' + b"[" * 3000 + b"]" * 3000 + b"}"]:
            response = api.post(path, token=token, data=body, headers={"Content-Type": "application/json"})
            assert response.status_code < 500, (path, response.status_code, response.text[:300])


# ---------------------------------------------------------------- the hourly cap, as a client sees it

def test_a_reporter_may_submit_10_reports_and_the_11th_is_429_pt429_with_retry_after(api, token, db):
    rows = [report() for _ in range(10)]
    for row in rows[:4]:
        assert api.submit(row, token).status_code == 201
    assert api.submit(rows[4:], token).status_code == 201
    extra = report()
    response = api.submit(extra, token)
    body = assert_postgrest_error(response, 429, "PT429")
    seconds = retry_after(response)
    assert 1 <= seconds <= 3600
    assert body["hint"] == f"Retry after {seconds} seconds" or str(seconds) in (body["hint"] or ""), body
    assert db.count_reports([extra["client_report_id"]]) == 0
    assert db.count_reports(r["client_report_id"] for r in rows) == 10


# The cap's other properties (a statement crossing it is refused whole, another reporter is unaffected,
# replays are not counted) are proven in integration/pgtap/40_cap.sql and its races in integration/concurrency; the wire
# keeps the one above, the answer an SDK sees.


# ---------------------------------------------------------------- idempotent replays

def test_replaying_a_client_report_id_answers_201_stores_no_extra_row_and_is_not_counted(api, token, db):
    first = report()
    assert api.submit(first, token).status_code == 201
    for _ in range(3):
        replay = api.submit(first, token)
        assert replay.status_code == 201, replay.text
    assert db.count_reports([first["client_report_id"]]) == 1
    # Replays did not count against the cap: 9 more distinct reports still fit.
    more = [report() for _ in range(9)]
    assert api.submit(more, token).status_code == 201, "replays were counted against the cap"
    assert api.submit(report(), token).status_code == 429


def test_a_replay_with_return_representation_shows_the_original_id(api, token):
    first = report()
    original = api.submit(first, token, prefer="return=representation")
    assert original.status_code == 201
    replay = api.submit(first, token, prefer="return=representation")
    assert replay.status_code == 201, replay.text
    assert replay.json()[0]["id"] == original.json()[0]["id"]


def test_replaying_a_report_after_the_cap_is_reached_still_answers_201(api, token, db):
    rows = [report() for _ in range(10)]
    assert api.submit(rows, token).status_code == 201
    # The client lost the 201 of its 10th report and retries: it must not be told 429.
    replay = api.submit(rows[-1], token)
    assert replay.status_code == 201, replay.text
    assert db.count_reports([rows[-1]["client_report_id"]]) == 1


def test_another_reporter_cannot_replay_someone_elses_client_report_id_into_their_row(api, token, db, user):
    row = report()
    assert api.submit(row, token).status_code == 201
    other = api.new_session()
    response = api.submit(row, other["access_token"])
    assert response.status_code < 500, response.text
    # The replay may store a row of the other reporter's own; the first row stored (lowest id) stays the
    # first reporter's. Without the order the two rows came back in either order.
    assert db.psql(f"select reporter_id from public.price_reports "
                   f"where client_report_id = '{row['client_report_id']}' order by id").splitlines()[0] == user["user"]["id"]


# ---------------------------------------------------------------- nobody reads or changes reports

@pytest.mark.parametrize("method", ["GET", "PATCH", "PUT", "DELETE"])
def test_reading_or_changing_reports_is_403_42501_for_a_signed_in_reporter(api, token, method):
    kwargs = {"json_body": {"price_cents": 1}} if method in ("PATCH", "PUT") else {}
    response = api.request(method, "/rest/v1/price_reports", token=token, **kwargs)
    assert_postgrest_error(response, 403, "42501")


@pytest.mark.parametrize("method", ["GET", "PATCH", "PUT", "DELETE"])
def test_reading_or_changing_reports_is_401_42501_for_anon(api, anon_key, method):
    for token in (None, anon_key):
        response = api.request(method, "/rest/v1/price_reports", token=token)
        assert_postgrest_error(response, 401, "42501")


def test_reading_reports_with_filters_is_still_denied(api, token):
    response = api.get("/rest/v1/price_reports", token=token, params={"select": "*", "id": "gt.0"})
    assert_postgrest_error(response, 403, "42501")


def test_delete_really_deletes_nothing(api, token, db):
    row = report()
    assert api.submit(row, token).status_code == 201
    api.request("DELETE", "/rest/v1/price_reports", token=token,
                params={"client_report_id": f"eq.{row['client_report_id']}"})
    assert db.count_reports([row["client_report_id"]]) == 1


def test_an_unknown_table_is_404(api, token):
    response = api.get("/rest/v1/users", token=token)
    assert_postgrest_error(response, 404)
    response = requests.post(api.base + "/rest/v1/auth.users", headers=api.headers(token), timeout=REQUEST_TIMEOUT)
    assert response.status_code == 404


# ---------------------------------------------------------------- what an insert does not silently ignore

@pytest.mark.parametrize("prefer", ["resolution=merge-duplicates", "resolution=ignore-duplicates", "count=planned",
                                    "tx=rollback", "return=headers-only"])
def test_an_insert_refuses_preferences_it_does_not_act_on(api, token, db, prefer):
    row = report()
    body = assert_postgrest_error(api.submit(row, token, prefer=f"return=minimal,{prefer}"), 400, "PGRST122")
    assert prefer in body["details"]
    assert db.count_reports([row["client_report_id"]]) == 0


def test_an_insert_refuses_query_parameters_other_than_the_sdks(api, token, db):
    row = report()
    for params in ({"on_conflict": "client_report_id"}, {"columns": "location_id"}, {"select": "id"},
                   {"location_id": "eq.x"}):
        response = api.post("/rest/v1/price_reports", token=token, json_body=row, params=params)
        assert_postgrest_error(response, 400, "PGRST127")
    assert db.count_reports([row["client_report_id"]]) == 0


def test_supabase_py_batch_insert_with_count_gets_the_rows_stored(server, anon_key, db):
    from supabase import create_client
    client = create_client(server.url, anon_key)
    client.auth.sign_in_anonymously()
    rows = [report(), report()]
    result = client.table("price_reports").insert(rows, count="exact", returning="minimal").execute()
    assert result.count == 2
    again = client.table("price_reports").insert(rows, count="exact", returning="minimal").execute()
    assert again.count == 0, "a retry with the same client_report_ids stores nothing new"
    assert db.count_reports([r["client_report_id"] for r in rows]) == 2
    client.auth.sign_out()
