"""Community places: a report may carry lat and lng, both or neither, in
range; a location id no import places appears in places_nearby once three counted (aged) reporters gave
coordinates, at their per-coordinate median, and never after two. The SQL rules (bounds, moving, imported
places, forget-user, rebuild, the KNN plan) are in integration/pgtap/69_community_places.sql; here: the HTTP
surface, through plain HTTP and supabase-py."""

from __future__ import annotations

import uuid

import pytest
from supabase import create_client

from helpers import assert_postgrest_error, fake_client_ip, report
from test_places import offset, somewhere


def reporters(api, db, count: int) -> list[str]:
    """`count` fresh anonymous sessions, aged past the reporter maturity (as time would age them)."""
    sessions = [api.new_session(forwarded_for=fake_client_ip()) for _ in range(count)]
    db.age_users([s["user"]["id"] for s in sessions])
    return [s["access_token"] for s in sessions]


def community_id() -> str:
    return f"mapkit:e2e-{uuid.uuid4().hex[:12]}"


def test_a_report_with_lat_and_lng_is_201_and_only_one_or_out_of_range_is_a_400_naming_field_and_bound(api, db, token):
    lat, lng = somewhere()
    row = report(community_id(), lat=lat, lng=lng)
    response = api.submit(row, token)
    assert response.status_code == 201, response.text
    assert db.scalar(f"select lat || ' ' || lng from public.price_reports where client_report_id = '{row['client_report_id']}'") \
        == f"{lat} {lng}", "stored as sent"

    # return=representation echoes the report, never its coordinates.
    shown = api.submit(report(community_id(), lat=lat, lng=lng), token, prefer="return=representation")
    assert shown.status_code == 201, shown.text
    assert "lat" not in shown.json()[0] and "lng" not in shown.json()[0], shown.text

    for extra, message, details in [
        ({"lat": lat}, "lat and lng go together: give both or neither", "Got lat without lng"),
        ({"lng": lng}, "lat and lng go together: give both or neither", "Got lng without lat"),
        ({"lat": 90.5, "lng": lng}, "lat must be between -90 and 90", "Got 90.5"),
        ({"lat": lat, "lng": -180.25}, "lng must be between -180 and 180", "Got -180.25"),
    ]:
        error = assert_postgrest_error(api.submit(report(community_id(), **extra), token), 400, "23514")
        assert error["message"] == message and error["details"] == details, (extra, error)
    error = assert_postgrest_error(api.submit(report(community_id(), lat="37.7", lng=lng), token), 400, "22P02")
    assert error["message"].startswith("lat must be a number of degrees"), error
    # No coordinates is both keys left out; null is refused, so the document can say which bodies are valid.
    error = assert_postgrest_error(api.submit(report(community_id(), lat=lat, lng=None), token), 400, "22P02")
    assert error["message"] == "lng must be a number of degrees", error
    # A batch is all or nothing: one row out of range stores none.
    rows = [report(community_id(), lat=lat, lng=lng), report(community_id(), lat=lat, lng=200)]
    assert_postgrest_error(api.submit(rows, token), 400, "23514")
    assert db.count_reports(r["client_report_id"] for r in rows) == 0


def test_a_community_place_appears_after_three_aged_reporters_and_not_after_two(api, db, server, anon_key):
    lat, lng = somewhere()
    place = community_id()
    # Three apps that know the place a few metres apart (MapKit, say).
    spots = [offset(lat, lng, 0, 0), offset(lat, lng, 4, -3), offset(lat, lng, -5, 6)]
    tokens = reporters(api, db, 3)

    def nearby():
        response = api.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": 200}, tokens[0])
        assert response.status_code == 200, response.text
        return [r for r in response.json() if r["location_id"] == place]

    for token, (plat, plng) in zip(tokens[:2], spots[:2]):
        assert api.submit(report(place, cents=300, lat=plat, lng=plng), token).status_code == 201
    assert nearby() == [], "two reporters never make a place visible"
    matched = api.rpc("places_match", {"name": "anything", "lat": lat, "lng": lng}, tokens[0]).json()
    assert place not in [m["location_id"] for m in matched]

    assert api.submit(report(place, cents=360, lat=spots[2][0], lng=spots[2][1]), tokens[2]).status_code == 201
    [row] = nearby()
    assert (row["source"], row["kind"], row["name"]) == ("community", "parking", None)
    assert row["lat"] == pytest.approx(sorted(s[0] for s in spots)[1], abs=1e-9), "the median latitude"
    assert row["lng"] == pytest.approx(sorted(s[1] for s in spots)[1], abs=1e-9), "the median longitude"
    assert row["distance_m"] <= 8
    assert (row["median_cents"], row["reporters"]) == (300, 3), "the median columns, as price_medians"

    # Through supabase-py too, as an app calls it.
    client = create_client(server.url, anon_key)
    client.auth.sign_in_anonymously()
    rows = client.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": 200}).execute().data
    assert [r["location_id"] for r in rows if r["source"] == "community"] == [place]

    # Two more apps, 300 m away, do not carry it off: each coordinate stays within what the three gave.
    far = offset(lat, lng, 300, 300)
    for token in reporters(api, db, 2):
        assert api.submit(report(place, cents=300, lat=far[0], lng=far[1]), token).status_code == 201
    [moved] = nearby()
    assert min(s[0] for s in spots) <= moved["lat"] <= max(s[0] for s in spots)
    assert min(s[1] for s in spots) <= moved["lng"] <= max(s[1] for s in spots)
    assert moved["distance_m"] <= 8


def test_a_fresh_reporter_completes_no_community_place(api, db):
    lat, lng = somewhere()
    place = community_id()
    aged = reporters(api, db, 2)
    fresh = api.new_session(forwarded_for=fake_client_ip())["access_token"]
    for token in aged + [fresh]:
        assert api.submit(report(place, lat=lat, lng=lng), token).status_code == 201
    rows = api.rpc("places_nearby", {"lat": lat, "lng": lng}, aged[0]).json()
    assert place not in [r["location_id"] for r in rows], "an identity under a day old is not counted"
