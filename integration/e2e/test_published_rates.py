"""Published rates: `pricesvc import-rates` loads a city's CDS Curbs feed; `price_quotes` puts what a stay
costs under it beside what other drivers say they paid. The cost semantics themselves (tiers, DST, ...)
are tested in integration/pgtap/80_published_rates.sql; here: the command, its errors, and the HTTP surface."""

from __future__ import annotations

import json
import sys
import time
import uuid
from pathlib import Path

import csv
import io

import pytest
from postgrest.exceptions import APIError
from supabase import create_client

from helpers import assert_postgrest_error, report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cds"
sys.path.insert(0, str(FIXTURES))

import make_fixtures  # noqa: E402

# Monday 2 March 2026, 17:30 in New York: 30 metered minutes (2 x 15 x 5 cents), then free.
EVENING = "2026-03-02T17:30:00-05:00"
CDS_TABLES = ["sources", "zones", "zone_policies", "policies", "rules", "time_spans", "rates", "imports"]


def new_source() -> str:
    return "e2e" + uuid.uuid4().hex[:10]


def import_rates(env, source: str, *files, timeout: float = 300):
    return env.run("import-rates", "--migration-database-url", env.owner_url, "--source", source,
                   *[str(f) for f in files], timeout=timeout)


def snapshot(db) -> str:
    """Every row of every published-rate table, as one digest."""
    parts = [f"(select coalesce(md5(string_agg(t::text, '|' order by t::text)), '-') from cds.{table} t)"
             for table in CDS_TABLES]
    return db.scalar("select " + " || ':' || ".join(parts))


@pytest.fixture
def city(migrated) -> str:
    """The Example City fixture, imported under a fresh source name."""
    source = new_source()
    result = import_rates(migrated, source, FIXTURES / "example-city.json")
    assert result.returncode == 0, result.stderr
    return source


def test_a_feed_split_across_files_imports_and_the_same_data_in_one_file_changes_nothing(migrated, db):
    source = new_source()
    split = import_rates(migrated, source, FIXTURES / "example-city-zones.json", FIXTURES / "example-city-policies.json")
    assert split.returncode == 0, split.stderr
    assert f"source {source}: imported: 3 zones, 6 policies" in split.stdout, split.stdout
    assert db.scalar(f"select string_agg(location_id, ',' order by location_id) from cds.zones where source = '{source}'") == \
        f"{source}:22222222-2222-4222-8222-222222222222,{source}:401,{source}:L7"
    log = db.psql(f"select author, license_url, last_updated, zones, policies, rules, time_spans, rates, length(checksum) "
                  f"from cds.imports where source = '{source}'")
    assert log == "City of Example|https://example.org/open-data-licence|2026-01-01 00:00:00+00|3|6|6|2|3|64", log

    before = snapshot(db)
    for files in ([FIXTURES / "example-city.json"], [FIXTURES / "example-city-policies.json", FIXTURES / "example-city-zones.json"]):
        again = import_rates(migrated, source, *files)
        assert again.returncode == 0, again.stderr
        assert f"source {source}: unchanged" in again.stdout, again.stdout
        assert snapshot(db) == before, "an identical import must change nothing, not even the log"


def test_a_changed_feed_replaces_the_source_and_is_logged(migrated, db, city, tmp_path):
    smaller = make_fixtures.good()
    smaller["data"]["zones"] = smaller["data"]["zones"][:1]
    smaller["last_updated"] += 86_400_000
    path = tmp_path / "smaller.json"
    path.write_text(json.dumps(smaller))
    result = import_rates(migrated, city, path)
    assert result.returncode == 0, result.stderr
    assert db.scalar(f"select count(*) from cds.zones where source = '{city}'") == "1"
    assert db.scalar(f"select count(*) from cds.imports where source = '{city}'") == "2"
    assert db.scalar(f"select last_updated from cds.sources where source = '{city}'") == "2026-01-02 00:00:00+00"


# Each bad file, and what the one line on stderr must say (file, JSON path, the mistake).
BAD_INPUTS = [
    ("bad-malformed.json", "bad-malformed.json: malformed JSON at line "),
    ("bad-missing-field.json", "bad-missing-field.json: data.policies[1].priority: missing required field"),
    ("bad-unknown-unit.json", 'bad-unknown-unit.json: data.policies[3].rules[0].rate[1].rate_unit: unknown unit "fortnight"'),
    ("bad-unknown-activity.json", 'bad-unknown-activity.json: data.policies[2].rules[0].activity: unknown activity "double parking"'),
    ("bad-time-zone.json", 'bad-time-zone.json: time_zone: unknown IANA time zone "America/Gotham"'),
    ("bad-undefined-policy.json", 'bad-undefined-policy.json: data.zones[2].curb_policy_ids[2]: policy '
                                  '"dead0000-0000-4000-8000-00000000beef" is defined in no file of this import'),
    ("bad-overlapping-tiers.json", "bad-overlapping-tiers.json: data.policies[3].rules[0].rate[1]: overlaps "
                                   "data.policies[3].rules[0].rate[0]"),
]


@pytest.mark.parametrize("name,expected", BAD_INPUTS, ids=[name for name, _ in BAD_INPUTS])
def test_a_bad_file_fails_with_one_line_naming_file_and_path_and_leaves_the_database_as_it_was(migrated, db, city,
                                                                                                name, expected):
    before = snapshot(db)
    result = import_rates(migrated, city, FIXTURES / name)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert expected in lines[0], lines[0]
    assert snapshot(db) == before


def test_files_that_disagree_on_the_time_zone_are_refused(migrated, db, city, tmp_path):
    paris = make_fixtures.feed(policies=make_fixtures.POLICIES)
    paris["time_zone"] = "Europe/Paris"
    path = tmp_path / "paris-policies.json"
    path.write_text(json.dumps(paris))
    before = snapshot(db)
    result = import_rates(migrated, city, FIXTURES / "example-city-zones.json", path)
    assert result.returncode != 0
    assert 'paris-policies.json: time_zone: "Europe/Paris" differs from "America/New_York"' in result.stderr
    assert snapshot(db) == before


def test_import_rates_needs_a_source_and_files(migrated):
    assert import_rates(migrated, "", FIXTURES / "example-city.json").returncode == 2
    assert import_rates(migrated, "bad:name", FIXTURES / "example-city.json").returncode == 2
    assert import_rates(migrated, new_source()).returncode == 2


def test_an_import_analyzes_every_table_quotes_read(migrated, db, tmp_path):
    """Sessions plan anew with statistics that know what was just imported, instead of keeping a plan made
    when the tables were small (generic plans, kept per session)."""
    path = tmp_path / "feed.json"
    path.write_text(json.dumps(make_fixtures.large_feed(200)))
    before = db.scalar("select clock_timestamp()")
    result = import_rates(migrated, new_source(), path)
    assert result.returncode == 0, result.stderr
    assert "imported: 200 zones" in result.stdout, result.stdout
    stale = db.scalar("select string_agg(relname, ', ' order by relname) from pg_stat_user_tables "
                      f"where schemaname = 'cds' and relname <> 'imports' "
                      f"and (last_analyze is null or last_analyze < '{before}')")
    assert stale in ("", None), f"not analyzed by the import: {stale}"
    assert int(float(db.scalar("select reltuples from pg_class where oid = 'cds.zones'::regclass"))) >= 200


# The same at 20 000 zones: minutes, so in make test-all (nightly), not in make test.
@pytest.mark.nightly
@pytest.mark.timeout(600)
def test_a_feed_of_20000_zones_imports_in_one_run(migrated, db, tmp_path):
    path = tmp_path / "large.json"
    path.write_text(json.dumps(make_fixtures.large_feed(20_000)))
    source = new_source()
    started = time.monotonic()
    result = import_rates(migrated, source, path, timeout=540)
    seconds = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert "imported: 20000 zones" in result.stdout, result.stdout
    assert db.scalar(f"select count(*) from cds.zones where source = '{source}'") == "20000"
    # The import analyzed what quotes read: sessions plan anew with statistics that know the 20 000 zones,
    # instead of keeping a plan made when the tables were small (generic plans, kept per session).
    assert int(float(db.scalar("select reltuples from pg_class where oid = 'cds.zones'::regclass"))) >= 20_000
    assert db.scalar("select count(*) from pg_stat_user_tables where schemaname = 'cds' and last_analyze is null "
                     "and relname <> 'imports'") == "0"
    print(f"\n20 000 zones ({path.stat().st_size / 1e6:.1f} MB) imported in {seconds:.2f} s: {result.stdout.strip()}")


def _aged_reporters(api, db, count=3) -> list[str]:
    sessions = [api.new_session() for _ in range(count)]
    db.age_users([s["user"]["id"] for s in sessions])  # only identities a day old count toward medians
    return [s["access_token"] for s in sessions]


def test_price_quotes_puts_the_published_cost_of_a_stay_beside_the_community_median(api, db, city):
    main_st, bay, garage = f"{city}:401", f"{city}:L7", f"{city}:22222222-2222-4222-8222-222222222222"
    tokens = _aged_reporters(api, db)
    for token, cents in zip(tokens, (300, 350, 400)):
        assert api.submit(report(main_st, cents), token).status_code == 201

    args = {"location_ids": [main_st, bay, garage, f"{city}:nowhere"], "starts_at": EVENING, "duration": "PT2H"}
    response = api.rpc("price_quotes", args, tokens[0])
    assert response.status_code == 200, response.text
    rows = {row["location_id"]: row for row in response.json()}
    assert set(rows) == {main_st, bay, garage}, "a location with neither kind of data is absent"
    assert rows[main_st] == {"location_id": main_st, "rate_kind": "hourly", "currency": "USD", "median_cents": 350,
                             "reporters": 3, "published_cents": 150, "published_allowed": True, "published_reason": None,
                             "published_source": city, "published_updated_at": "2026-01-01T00:00:00+00:00"}
    assert rows[bay]["published_allowed"] is False and rows[bay]["published_reason"] == "no_parking"
    assert rows[bay]["published_cents"] is None and rows[bay]["median_cents"] is None
    # 200 for the first hour and 400 for the second, capped at 1500 only beyond.
    assert rows[garage]["published_cents"] == 600

    # Defaults: hourly, now, one hour. GET takes PostgREST's array literal.
    default = api.rpc("price_quotes", {"location_ids": [garage]}, tokens[0])
    assert default.status_code == 200 and default.json()[0]["published_cents"] == 200
    by_get = api.get("/rest/v1/rpc/price_quotes", token=tokens[0],
                     params={"location_ids": "{%s}" % main_st, "starts_at": EVENING, "duration": "PT2H"})
    assert by_get.status_code == 200 and by_get.json() == [rows[main_st]]
    # Past the 2-hour limit of the metered rule: 09:00 for 3 hours.
    over = api.rpc("price_quotes", {"location_ids": [main_st], "starts_at": "2026-03-02T09:00:00-05:00",
                                    "duration": "PT3H"}, tokens[0]).json()[0]
    assert (over["published_allowed"], over["published_reason"], over["published_cents"]) == (False, "max_stay", None)


def test_price_quotes_refuses_bad_arguments_like_price_medians(api, token, city):
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": [f"x{i}" for i in range(51)]}, token), 400, "22023")
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"], "duration": "P400D"}, token), 400, "22023")
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"], "duration": "a while"}, token), 400)
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"], "starts_at": "soon"}, token), 400)
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"], "rate_kind": "weekly"}, token), 400, "22023")
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"], "until": "PT1H"}, token), 404, "PGRST202")
    assert_postgrest_error(api.rpc("price_quotes", {"location_ids": ["a"]}, None), 401)


@pytest.fixture
def quotes(server, anon_key, api, db, city):
    """supabase-py signed in as one of three aged reporters, and the arguments of a 2-hour evening stay at three
    locations: Main St (median 350, published 150), the bay (no parking), the garage (published 600)."""
    main_st, bay, garage = f"{city}:401", f"{city}:L7", f"{city}:22222222-2222-4222-8222-222222222222"
    tokens = _aged_reporters(api, db)
    for token, cents in zip(tokens, (300, 350, 400)):
        assert api.submit(report(main_st, cents), token).status_code == 201
    sdk = create_client(server.url, anon_key)
    sdk.postgrest.auth(tokens[0])
    args = {"location_ids": [main_st, bay, garage], "starts_at": EVENING, "duration": "PT2H"}
    return {"sdk": sdk, "args": args, "main_st": main_st, "bay": bay, "garage": garage, "token": tokens[0]}


def test_price_quotes_filters_apply_to_its_columns_booleans_included(quotes, api):
    sdk, args = quotes["sdk"], quotes["args"]
    allowed = sdk.rpc("price_quotes", args).eq("published_allowed", True).execute().data
    assert sorted(r["location_id"] for r in allowed) == sorted([quotes["main_st"], quotes["garage"]])
    refused = sdk.rpc("price_quotes", args).is_("published_allowed", "false").execute().data
    assert [(r["location_id"], r["published_reason"]) for r in refused] == [(quotes["bay"], "no_parking")]
    cheap = sdk.rpc("price_quotes", args).lt("published_cents", 500).not_.is_("median_cents", "null").execute().data
    assert [r["location_id"] for r in cheap] == [quotes["main_st"]]
    # The GET form: arguments and filters share the query string.
    by_get = api.get("/rest/v1/rpc/price_quotes", token=quotes["token"],
                     params={"location_ids": "{%s}" % ",".join(args["location_ids"]), "starts_at": EVENING,
                             "duration": "PT2H", "published_reason": "eq.no_parking", "select": "location_id"})
    assert by_get.status_code == 200 and by_get.json() == [{"location_id": quotes["bay"]}]


def test_price_quotes_order_and_limit_pick_the_cheapest_published_stay(quotes):
    sdk, args = quotes["sdk"], quotes["args"]
    rows = sdk.rpc("price_quotes", args).order("published_cents").limit(2).execute().data
    assert [(r["location_id"], r["published_cents"]) for r in rows] == [(quotes["main_st"], 150), (quotes["garage"], 600)]
    dearest = (sdk.rpc("price_quotes", args).select("location_id,published_cents")
               .order("published_cents", desc=True, nullsfirst=False).limit(1).execute().data)
    assert dearest == [{"location_id": quotes["garage"], "published_cents": 600}]


def test_price_quotes_single_returns_one_object_and_refuses_many(quotes):
    sdk, args = quotes["sdk"], quotes["args"]
    row = sdk.rpc("price_quotes", args).eq("location_id", quotes["garage"]).single().execute().data
    assert isinstance(row, dict) and row["published_cents"] == 600 and row["median_cents"] is None
    with pytest.raises(APIError) as error:
        sdk.rpc("price_quotes", args).single().execute()
    assert error.value.code == "PGRST116"


def test_price_quotes_as_csv(quotes):
    text = (quotes["sdk"].rpc("price_quotes", quotes["args"]).select("location_id,median_cents,published_cents,published_allowed")
            .order("location_id").csv().execute().data)
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["location_id", "median_cents", "published_cents", "published_allowed"]
    # PostgreSQL's text forms, as PostgREST gives them: NULL empty, booleans t and f.
    expected = {quotes["main_st"]: ["350", "150", "t"], quotes["bay"]: ["", "", "f"], quotes["garage"]: ["", "600", "t"]}
    assert [r[0] for r in rows[1:]] == sorted(expected)
    assert {r[0]: r[1:] for r in rows[1:]} == expected


def test_price_quotes_count_exact_gives_the_total_beside_a_page(quotes, api):
    response = quotes["sdk"].rpc("price_quotes", quotes["args"], count="exact").order("location_id").limit(1).execute()
    assert response.count == 3 and len(response.data) == 1
    raw = api.post("/rest/v1/rpc/price_quotes", token=quotes["token"], json_body=quotes["args"],
                   params={"limit": "1", "offset": "1"}, headers={"Prefer": "count=exact"})
    assert raw.status_code == 206 and raw.headers["Content-Range"] == "1-1/3"


@pytest.mark.parametrize("params,code,named", [
    ({"reports": "eq.3"}, "42703", "reports"),                      # a column of price_medians, not of price_quotes
    ({"select": "location_id,zone"}, "42703", "zone"),
    ({"order": "last_reported_at"}, "42703", "last_reported_at"),
    ({"published_allowed": "eq.maybe"}, "22P02", "maybe"),
    ({"published_cents": "like.1*"}, "PGRST127", "like"),
])
def test_price_quotes_refuses_options_it_cannot_apply_by_name(quotes, api, params, code, named):
    response = api.post("/rest/v1/rpc/price_quotes", token=quotes["token"], json_body=quotes["args"], params=params)
    assert 400 <= response.status_code < 500, response.text
    body = response.json()
    assert body["code"] == code and named in json.dumps(body), body


def test_analysts_read_the_published_tables_and_the_comparison_but_still_no_reports(api, db, city):
    main_st = f"{city}:401"
    tokens = _aged_reporters(api, db)
    for token in tokens:
        assert api.submit(report(main_st, 500), token).status_code == 201
    as_analyst = "set role price_analyst; "
    assert db.scalar(as_analyst + f"select count(*) from cds.zones where source = '{city}'") == "3"
    # 2026-03-02 10:00 New York: one metered hour is 60 x 5 = 300; drivers report 500.
    row = db.scalar(as_analyst + "select median_cents || ',' || published_cents || ',' || difference_cents || ',' || "
                    f"difference_percent from public.price_vs_published('2026-03-02 10:00-05') where location_id = '{main_st}'")
    assert row == "500,300,200,66.7", row
    with pytest.raises(AssertionError, match="permission denied"):
        db.psql(as_analyst + "select count(*) from public.price_reports")
