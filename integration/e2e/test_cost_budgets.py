"""Cost budgets: one address cannot take the database from everyone else,
a quote's size is capped (locations x days, a 400 naming the limit), and a feed whose values would break
quotes is refused at import, naming the JSON path."""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from helpers import assert_postgrest_error, fake_client_ip, report, retry_after

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cds"
sys.path.insert(0, str(FIXTURES))
import make_fixtures  # noqa: E402

HONEST_DEADLINE = 2.0  # seconds: what "promptly" means for the honest client under the flood
LONGEST_FOR_50 = "P36D"  # 50 locations x 36 days = 1 800 location-days, within the 1 830 a call may price


def import_rates(env, source: str, *files):
    return env.run("import-rates", "--migration-database-url", env.owner_url, "--source", source,
                   *[str(f) for f in files], timeout=300)


def metered_feed(zones: int) -> dict:
    """`zones` zones metered on weekdays 09:00-18:00 with no max_stay or no-parking window, so a long stay is
    priced in full: the most expensive kind of quote there is."""
    policies = [
        {"curb_policy_id": make_fixtures.METERED, "published_date": make_fixtures.T0, "priority": 1,
         "time_spans": [{"days_of_week": ["mon", "tue", "wed", "thu", "fri"], "time_of_day_start": "09:00",
                         "time_of_day_end": "18:00"}],
         "rules": [{"activity": "parking", "rate": [{"rate": 5, "rate_unit": "minute"}]}]},
        {"curb_policy_id": make_fixtures.FREE, "published_date": make_fixtures.T0, "priority": 2,
         "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "day", "rate_unit_period": "calendar"}]}]},
    ]
    zone_list = [make_fixtures.zone({"curb_zone_id": "%08x-0000-4000-8000-%012x" % (i, i), "user_zone_id": str(i),
                                     "curb_policy_ids": [make_fixtures.METERED, make_fixtures.FREE]})
                 for i in range(zones)]
    return make_fixtures.feed(zone_list, policies)


@pytest.fixture
def metered_city(migrated, tmp_path) -> list[str]:
    """A 60-zone feed imported under a fresh source; the location ids of its first 50 zones."""
    source = "cost" + uuid.uuid4().hex[:10]
    path = tmp_path / "metered.json"
    path.write_text(json.dumps(metered_feed(60)))
    result = import_rates(migrated, source, path)
    assert result.returncode == 0, result.stderr
    return [f"{source}:{i}" for i in range(50)]


def test_one_address_flooding_quotes_cannot_starve_another_addresses_reads_and_inserts(start_server, anon_key, db,
                                                                                        metered_city):
    # The defaults under test: the per-address share, the expensive class and its statement timeout.
    server = start_server(TRUSTED_PROXIES="127.0.0.1", RATE_LIMIT_PER_MINUTE=1_000_000, DB_REQUESTS_PER_IP=None,
                          EXPENSIVE_REQUESTS_IN_FLIGHT=None, EXPENSIVE_STATEMENT_TIMEOUT_MS=None)
    attacker = server.api(anon_key, forwarded_for=fake_client_ip())
    honest = server.api(anon_key, forwarded_for=fake_client_ip())
    attacker_token = attacker.new_session()["access_token"]
    honest_token = honest.new_session()["access_token"]
    flood = {"location_ids": metered_city, "starts_at": "2026-03-02T08:00:00-05:00", "duration": LONGEST_FOR_50}
    assert attacker.rpc("price_quotes", {**flood, "location_ids": metered_city[:1]}, attacker_token).status_code == 200

    stop = threading.Event()
    statuses: list[int] = []
    refusals = []
    lock = threading.Lock()

    def flooder():
        while not stop.is_set():
            response = attacker.rpc("price_quotes", flood, attacker_token)
            with lock:
                statuses.append(response.status_code)
                if response.status_code == 429 and len(refusals) < 1:
                    refusals.append(response)
            if response.status_code == 429:
                # Not synchronisation: keeps this test's own CPU use down on a small machine.
                stop.wait(0.02)

    threads = [threading.Thread(target=flooder, daemon=True) for _ in range(8)]
    for thread in threads:
        thread.start()
    try:
        # The flood is on once PostgreSQL is running its quotes.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if int(db.scalar("select count(*) from pg_stat_activity where state = 'active' "
                             "and query like '%price_quotes%' and pid <> pg_backend_pid()")) >= 1:
                break
        else:
            pytest.fail("the flood's quotes never reached PostgreSQL")

        location = f"e2e:cost:{uuid.uuid4().hex[:12]}"
        timings = []
        for _ in range(5):
            for call in (lambda: honest.submit([report(location)], honest_token),
                         lambda: honest.rpc("price_medians", {"location_ids": [location]}, honest_token),
                         lambda: honest.rpc("price_quotes", {"location_ids": metered_city[:2], "duration": "PT2H"},
                                            honest_token)):
                started = time.monotonic()
                response = call()
                seconds = time.monotonic() - started
                timings.append(seconds)
                assert response.status_code in (200, 201), (response.status_code, response.text)
                assert seconds < HONEST_DEADLINE, f"an honest request took {seconds:.2f} s under the flood"
        assert len(timings) == 15
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)

    # The flood was refused, not queued: 429 in PostgREST's shape, naming the limit, with Retry-After.
    assert 429 in statuses, statuses
    assert refusals, statuses
    body = assert_postgrest_error(refusals[0], 429, "PGRST429")
    assert "at most 2 at once" in body["message"], body
    assert retry_after(refusals[0]) >= 1
    # Whatever the attacker's own calls got, it was never a 500.
    assert set(statuses) <= {200, 429, 503}, set(statuses)


def test_a_quote_over_the_location_days_limit_is_a_400_naming_it(api, token, metered_city):
    flood = {"location_ids": metered_city, "starts_at": "2026-03-02T08:00:00-05:00", "duration": "P365DT23H"}
    body = assert_postgrest_error(api.rpc("price_quotes", flood, token), 400, "22023")
    assert body["message"] == "too many location-days: 50 locations x 366 days = 18300, at most 1830 per call", body
    assert body["hint"]
    within = api.rpc("price_quotes", {**flood, "duration": LONGEST_FOR_50}, token)
    assert within.status_code == 200, within.text
    assert len(within.json()) == 50


def test_a_quote_longer_than_the_expensive_statement_timeout_answers_503_and_frees_the_connection(
        start_server, anon_key, metered_city):
    server = start_server(EXPENSIVE_STATEMENT_TIMEOUT_MS=1)
    api = server.api(anon_key)
    token = api.new_session()["access_token"]
    slow = api.rpc("price_quotes", {"location_ids": metered_city, "duration": LONGEST_FOR_50}, token)
    body = assert_postgrest_error(slow, 503, "57014")
    assert "statement timeout" in body["message"], body
    # Only the expensive call has the lower timeout: reads and inserts keep the connection's own.
    assert api.submit([report()], token).status_code == 201
    assert api.rpc("price_medians", {"location_ids": ["a"]}, token).status_code == 200


@pytest.mark.parametrize("rule,path,words", [
    ({"activity": "parking", "max_stay": 2147483647, "max_stay_unit": "year"},
     "data.policies[0].rules[0].max_stay", "2147483647 years is beyond the 100-year horizon"),
    ({"activity": "parking", "rate": [{"rate": 2147483647, "rate_unit": "second"}]},
     "data.policies[0].rules[0].rate[0].rate", "2^53 - 1"),
])
def test_a_feed_whose_values_would_break_quotes_is_refused_naming_the_json_path(migrated, db, tmp_path, rule, path,
                                                                                 words):
    feed = make_fixtures.feed([make_fixtures.zone({"curb_zone_id": "11111111-1111-4111-8111-111111111111",
                                                   "user_zone_id": "1", "curb_policy_ids": [make_fixtures.METERED]})],
                              [{"curb_policy_id": make_fixtures.METERED, "published_date": make_fixtures.T0,
                                "priority": 1, "rules": [rule]}])
    file = tmp_path / "feed.json"
    file.write_text(json.dumps(feed))
    source = "bad" + uuid.uuid4().hex[:10]
    result = import_rates(migrated, source, file)
    assert result.returncode == 1, (result.returncode, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert f"feed.json: {path}: " in lines[0] and words in lines[0], lines[0]
    assert db.scalar(f"select count(*) from cds.sources where source = '{source}'") == "0"
