"""Places: `pricesvc import-places` and `import-rates` say where location ids are, and
`places_nearby` answers "what does parking cost near here?" in one call, through supabase-py, plain HTTP
(curl's requests) and the GeoJSON media type. The SQL rules (bounds, ties, the KNN plan) are in
integration/pgtap/67_places.sql; here: the commands, the HTTP surface, and a property test against a haversine
reference and price_medians."""

from __future__ import annotations

import json
import math
import random
import subprocess
import uuid
from pathlib import Path

import pytest
from supabase import create_client

from helpers import assert_postgrest_error, report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cds"
EARTH_RADIUS_M = 6371008.8  # PostGIS's mean radius, the sphere distance_m is measured on


def haversine(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lng2 - lng1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(a))


def offset(lat: float, lng: float, north_m: float, east_m: float) -> tuple[float, float]:
    """A point about north_m and east_m metres from (lat, lng)."""
    return (lat + north_m / 111_195.0, lng + east_m / (111_195.0 * math.cos(math.radians(lat))))


def somewhere() -> tuple[float, float]:
    """A spot of its own for one test: places persist in the shared database between tests and runs, and
    a few kilometres around a random point of the globe hold nobody else's."""
    rng = random.SystemRandom()
    return (round(rng.uniform(-55, 55), 4), round(rng.uniform(-170, 170), 4))


def new_source() -> str:
    return "e2eplaces" + uuid.uuid4().hex[:8]


def point(feature_id, lat: float, lng: float, name: str | None = None) -> dict:
    properties = {"id": feature_id}
    if name is not None:
        properties["name"] = name
    return {"type": "Feature", "geometry": {"type": "Point", "coordinates": [lng, lat]}, "properties": properties}


def square(feature_id, lat: float, lng: float, half_m: float, name: str | None = None, multi: bool = False) -> dict:
    south, west = offset(lat, lng, -half_m, -half_m)
    north, east = offset(lat, lng, half_m, half_m)
    ring = [[west, south], [east, south], [east, north], [west, north], [west, south]]
    geometry = {"type": "MultiPolygon", "coordinates": [[ring]]} if multi else {"type": "Polygon", "coordinates": [ring]}
    return {"type": "Feature", "geometry": geometry, "properties": {"id": feature_id, "name": name}}


def import_places(env, source: str, features: list[dict] | str, tmp_path: Path):
    path = tmp_path / f"{source}-{uuid.uuid4().hex[:6]}.geojson"
    path.write_text(features if isinstance(features, str) else json.dumps({"type": "FeatureCollection", "features": features}))
    return env.run("import-places", "--migration-database-url", env.owner_url, "--source", source, str(path), timeout=120)


def places_of(db, source: str) -> str:
    return db.psql(f"select coalesce(string_agg(location_id || ' ' || coalesce(name, '-'), ', ' order by location_id), '')"
                   f" from private.places where source = '{source}'")


@pytest.fixture
def client(server, anon_key):
    made = create_client(server.url, anon_key)
    made.auth.sign_in_anonymously()
    yield made
    made.auth.sign_out()


def test_import_places_loads_points_polygons_and_multipolygons_and_supabase_py_finds_them_nearest_first(
        migrated, db, tmp_path, client):
    lat, lng = somewhere()
    source = new_source()
    features = [
        point(7, *offset(lat, lng, 120, 0), name="North Garage"),
        point("east", *offset(lat, lng, 0, 300)),
        square("around", lat, lng, 40, name="Around"),
        square("far", *offset(lat, lng, -2000, 0), 30, multi=True),
    ]
    result = import_places(migrated, source, features, tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"source {source}: 4 places (before: 0)" in result.stdout
    assert places_of(db, source) == f"{source}:7 North Garage, {source}:around Around, {source}:east -, {source}:far -"

    rows = client.rpc("places_nearby", {"lat": lat, "lng": lng}).execute().data
    assert [(r["location_id"], r["distance_m"]) for r in rows][:1] == [(f"{source}:around", 0)], "0 inside a polygon"
    assert [r["location_id"] for r in rows] == [f"{source}:around", f"{source}:7", f"{source}:east"], \
        "nearest first, nothing past 500 m"
    north = rows[1]
    assert north["name"] == "North Garage" and north["kind"] == "parking" and north["source"] == source
    assert abs(north["distance_m"] - 120) <= 1
    assert north["median_cents"] is None and north["published_cents"] is None
    wide = client.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": 2100, "max_results": 3}).execute().data
    assert [r["location_id"] for r in wide] == [f"{source}:around", f"{source}:7", f"{source}:east"], "max_results"
    farther = client.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": 2100}).execute().data
    assert farther[-1]["location_id"] == f"{source}:far"


def test_a_re_import_replaces_the_source_and_a_bad_file_changes_nothing_naming_the_json_path(migrated, db, tmp_path):
    lat, lng = somewhere()
    source = new_source()
    assert import_places(migrated, source, [point(1, lat, lng), point(2, lat, lng + 0.001)], tmp_path).returncode == 0
    replaced = import_places(migrated, source, [point(3, lat, lng, name="Only")], tmp_path)
    assert replaced.returncode == 0, replaced.stderr
    assert "1 places (before: 2)" in replaced.stdout
    before = places_of(db, source)
    assert before == f"{source}:3 Only"

    open_ring = square("s", lat, lng, 20)
    open_ring["geometry"]["coordinates"][0][4] = [lng, lat]
    bad_files = {
        "features[1].properties.id: missing required field": [point(4, lat, lng), {"type": "Feature", "geometry": point(0, lat, lng)["geometry"], "properties": {"name": "x"}}],
        "features[0].geometry.coordinates[1]: latitude must be between -90 and 90": [point(5, 91, lng)],
        "features[0].geometry.coordinates[0]: a linear ring ends where it starts": [open_ring],
        "features[0].geometry.type: unsupported geometry \"LineString\"": [{"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}, "properties": {"id": 1}}],
        "features[1].properties.id: \"4\" is also features[0].properties.id": [point(4, lat, lng), point("4", lat, lng)],
        "features[0].properties.name: must be at most 200 characters": [point(6, lat, lng, name="x" * 201)],
        "features[0].properties.id: must be a string or an integer": [{**point(1, lat, lng), "properties": {"id": [1]}}],
    }
    for expected, features in bad_files.items():
        result = import_places(migrated, source, features, tmp_path)
        assert result.returncode != 0, expected
        assert expected in result.stderr, (expected, result.stderr)
        assert places_of(db, source) == before, f"a refused file changed the places ({expected})"
    malformed = import_places(migrated, source, "{\"type\": \"FeatureCollection\", \"features\": [", tmp_path)
    assert malformed.returncode != 0 and "malformed JSON" in malformed.stderr
    not_a_collection = import_places(migrated, source, json.dumps({"type": "Feature"}), tmp_path)
    assert not_a_collection.returncode != 0 and "type: must be \"FeatureCollection\"" in not_a_collection.stderr
    assert places_of(db, source) == before


def test_geojson_accept_answers_a_feature_collection_and_bad_arguments_are_400s_that_name_their_bound(
        migrated, tmp_path, api, token):
    lat, lng = somewhere()
    source = new_source()
    assert import_places(migrated, source, [point("a", *offset(lat, lng, 50, 0), name="A"),
                                            square("b", *offset(lat, lng, 0, 200), 10, name="B")], tmp_path).returncode == 0
    # curl -H 'Accept: application/geo+json' .../rpc/places_nearby?lat=..&lng=..
    response = api.get("/rest/v1/rpc/places_nearby", token=token, params={"lat": str(lat), "lng": str(lng)},
                       headers={"Accept": "application/geo+json"})
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/geo+json")
    collection = response.json()
    assert collection["type"] == "FeatureCollection"
    assert [f["properties"]["location_id"] for f in collection["features"]] == [f"{source}:a", f"{source}:b"]
    first = collection["features"][0]
    assert first["type"] == "Feature" and first["geometry"]["type"] == "Point"
    assert first["geometry"]["coordinates"] == pytest.approx(list(reversed(offset(lat, lng, 50, 0))), abs=1e-9)
    assert "lat" not in first["properties"] and "lng" not in first["properties"]
    assert set(first["properties"]) == {"location_id", "name", "source", "kind", "distance_m", "median_cents", "reporters",
                                        "currency", "last_reported_at", "published_cents", "published_allowed",
                                        "published_reason"}
    # POST, read options included.
    picked = api.post("/rest/v1/rpc/places_nearby?select=location_id,distance_m&distance_m=gt.100", token=token,
                      json_body={"lat": lat, "lng": lng}, headers={"Accept": "application/geo+json"}).json()
    assert [f["properties"] for f in picked["features"]] == [{"location_id": f"{source}:b", "distance_m": picked["features"][0]["properties"]["distance_m"]}]
    csv = api.get("/rest/v1/rpc/places_nearby", token=token, params={"lat": str(lat), "lng": str(lng), "select": "location_id,lat"},
                  headers={"Accept": "text/csv"})
    assert csv.status_code == 200 and csv.text.splitlines()[0] == "location_id,lat"
    one = api.post("/rest/v1/rpc/places_nearby?limit=1", token=token, json_body={"lat": lat, "lng": lng},
                   headers={"Accept": "application/vnd.pgrst.object+json"})
    assert one.status_code == 200 and one.json()["location_id"] == f"{source}:a"
    assert api.post("/rest/v1/rpc/price_medians", token=token, json_body={"location_ids": []},
                    headers={"Accept": "application/geo+json"}).status_code == 406, "GeoJSON only where rows have a point"

    for body, message in [
        ({"lat": 91, "lng": 0}, "lat must be between -90 and 90"),
        ({"lat": 0, "lng": -180.5}, "lng must be between -180 and 180"),
        ({"lat": 0, "lng": 0, "radius_m": 0}, "radius_m must be between 1 and 5000"),
        ({"lat": 0, "lng": 0, "radius_m": 5001}, "radius_m must be between 1 and 5000"),
        ({"lat": 0, "lng": 0, "max_results": 101}, "max_results must be between 1 and 100"),
        ({"lat": 0, "lng": 0, "starts_at": "2026-03-02T17:30:00-05:00"}, "starts_at and duration go together"),
        ({"lat": 0, "lng": 0, "duration": "PT2H"}, "starts_at and duration go together"),
    ]:
        error = assert_postgrest_error(api.rpc("places_nearby", body, token), 400, "22023")
        assert message in error["message"], (body, error)
    assert_postgrest_error(api.rpc("places_nearby", {"lat": "north", "lng": 0}, token), 400, "22P02")
    assert_postgrest_error(api.rpc("places_nearby", {"lat": 0, "lng": 0, "radius_m": 2.5}, token), 400, "22P02")
    assert_postgrest_error(api.rpc("places_nearby", {"lat": 0, "lng": 0, "radius_m": 99999999999}, token), 400, "22003")
    assert_postgrest_error(api.rpc("places_nearby", {"lat": 0}, token), 404, "PGRST202")
    assert_postgrest_error(api.get("/rest/v1/rpc/places_nearby", token=token, params={"lat": "NaN", "lng": "0"}), 400, "22P02")
    anonymous = api.rpc("places_nearby", {"lat": lat, "lng": lng}, None)
    assert anonymous.status_code in (401, 403), "signed-in callers only, as the median functions"


def test_import_rates_keeps_each_zone_polygon_as_the_place_of_its_location_id(migrated, db, api, token, tmp_path):
    source = "e2ezones" + uuid.uuid4().hex[:8]
    # Example City, moved to a spot of this test's own (other tests import it where it is, many times).
    lat, lng = somewhere()
    feed = json.loads((FIXTURES / "example-city.json").read_text())
    for zone in feed["data"]["zones"]:
        for ring in zone["geometry"]["coordinates"]:
            for position in ring:
                position[0] += lng + 73.985
                position[1] += lat - 40.755
    moved = tmp_path / "example-city-moved.json"
    moved.write_text(json.dumps(feed))
    result = migrated.run("import-rates", "--migration-database-url", migrated.owner_url, "--source", source,
                          str(moved), timeout=300)
    assert result.returncode == 0, result.stderr
    zones = db.psql(f"select string_agg(location_id, ',' order by location_id) from cds.zones where source = '{source}'").split(",")
    assert db.psql(f"select string_agg(location_id || ':' || kind || ':' || extensions.geometrytype(geom), ',' order by location_id)"
                   f" from private.places where source = '{source}'") \
        == ",".join(f"{zone}:curb_zone:POLYGON" for zone in sorted(set(zones)))
    # Inside Example City's square (0.01 degrees a side, around its centre): every zone at 0 m, with its
    # published cost.
    stay = {"starts_at": "2026-03-02T17:30:00-05:00", "duration": "PT2H"}
    rows = api.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": 50, "max_results": 100, **stay}, token).json()
    mine = [r for r in rows if r["source"] == source]
    assert sorted(r["location_id"] for r in mine) == sorted(set(zones)) and all(r["distance_m"] == 0 for r in mine)
    quotes = {q["location_id"]: q for q in api.rpc("price_quotes", {"location_ids": sorted(set(zones)), **stay}, token).json()}
    for row in mine:
        quote = quotes[row["location_id"]]
        assert (row["published_cents"], row["published_allowed"], row["published_reason"]) \
            == (quote["published_cents"], quote["published_allowed"], quote["published_reason"]), row
    assert any(r["published_cents"] is not None for r in mine), "the fixture prices a stay somewhere"


def test_property_order_and_distance_agree_with_haversine_and_medians_equal_price_medians(
        migrated, db, tmp_path, server, anon_key):
    rng = random.Random(20261202)  # the places and the searches; the spot is the run's own
    lat0, lng0 = somewhere()
    source = new_source()
    features = [point(i, *offset(lat0, lng0, rng.uniform(-1500, 1500), rng.uniform(-1500, 1500))) for i in range(400)]
    assert import_places(migrated, source, features, tmp_path).returncode == 0
    coordinates = {f"{source}:{f['properties']['id']}": tuple(reversed(f["geometry"]["coordinates"])) for f in features}
    # Medians at 30 places (three mature reporters each), two reporters at 10 more (no median). A reporter
    # may send 10 reports an hour, so each group of three covers ten places.
    ids = sorted(coordinates)
    groups = [(ids[10 * g:10 * g + 10], 3) for g in range(3)] + [(ids[30:40], 2)]
    reporters = []
    for places, count in groups:
        for index in range(count):
            client = create_client(server.url, anon_key)
            session = client.auth.sign_in_anonymously()
            reporters.append((client, session.user.id, [report(loc, cents=150 + 40 * index + len(loc) % 7) for loc in places]))
    db.age_users([user for _, user, _ in reporters])
    for client, _, rows in reporters:
        client.table("price_reports").insert(rows, returning="minimal").execute()
    caller = reporters[0][0]

    checked = with_median = 0
    for _ in range(25):
        lat, lng = offset(lat0, lng0, rng.uniform(-1200, 1200), rng.uniform(-1200, 1200))
        radius, limit = rng.choice([150, 300, 500, 900]), rng.choice([5, 20, 100])
        rows = caller.rpc("places_nearby", {"lat": lat, "lng": lng, "radius_m": radius, "max_results": limit}).execute().data
        reference = sorted((haversine(lat, lng, *coordinates[loc]), loc) for loc in ids)
        inside = [(d, loc) for d, loc in reference if d <= radius * 0.995]
        assert len(rows) <= limit
        assert len(rows) == limit or len(rows) >= len(inside), (lat, lng, radius, limit)
        for row in rows:
            expected = haversine(lat, lng, *coordinates[row["location_id"]])
            assert abs(row["distance_m"] - expected) <= max(0.005 * expected, 1.0), (row, expected)
            assert row["distance_m"] <= radius
        assert [(r["distance_m"], r["location_id"]) for r in rows] == sorted((r["distance_m"], r["location_id"]) for r in rows)
        # Nothing nearer was left out: every place clearly nearer than the last one returned is in.
        if rows:
            last = rows[-1]["distance_m"]
            returned = {r["location_id"] for r in rows}
            assert all(loc in returned for d, loc in reference if d < last * 0.995 - 1), (lat, lng)
            medians = {m["location_id"]: m for m in caller.rpc("price_medians", {"location_ids": [r["location_id"] for r in rows][:50]}).execute().data}
            medians.update({m["location_id"]: m for m in caller.rpc("price_medians", {"location_ids": [r["location_id"] for r in rows][50:]}).execute().data}
                           if len(rows) > 50 else {})
            for row in rows:
                median = medians.get(row["location_id"])
                assert (row["median_cents"], row["reporters"], row["currency"], row["last_reported_at"]) == (
                    (median["median_cents"], median["reporters"], median["currency"], median["last_reported_at"])
                    if median else (None, None, None, None)), row
                checked += 1
                with_median += median is not None
    assert checked >= 200, f"only {checked} rows compared"
    assert with_median >= 5, f"only {with_median} rows had a median"
    assert db.scalar(f"select count(*) from private.places where source = '{source}'") == "400"


def test_places_match_maps_an_apps_candidate_to_the_place_everyone_reports_under(migrated, tmp_path, client, api, token):
    lat, lng = somewhere()
    source = new_source()
    assert import_places(migrated, source, [
        point("ferry", *offset(lat, lng, 30, 0), name="Ferry Building Garage"),
        point("pier", *offset(lat, lng, 10, 10), name="Pier 1 Lot"),
        point("far", *offset(lat, lng, 400, 0), name="Ferry Building Garage"),
    ], tmp_path).returncode == 0
    # A MapKit point of interest, named its own way, a little off.
    rows = client.rpc("places_match", {"name": "Ferry-Building garage", "lat": lat, "lng": lng}).execute().data
    assert [r["location_id"] for r in rows] == [f"{source}:ferry", f"{source}:pier"], "best first; nothing past 150 m"
    assert rows[0]["similarity"] == 1 and rows[0]["name"] == "Ferry Building Garage" and abs(rows[0]["distance_m"] - 30) <= 1
    assert 0 <= rows[1]["similarity"] < 0.3
    wider = api.get("/rest/v1/rpc/places_match", token=token,
                    params={"name": "ferry building garage", "lat": str(lat), "lng": str(lng), "radius_m": "500"}).json()
    assert [r["location_id"] for r in wider] == [f"{source}:ferry", f"{source}:far", f"{source}:pier"]
    for body, code, message in [
        ({"name": "--", "lat": lat, "lng": lng}, "22023", "name must contain a letter or a digit"),
        ({"name": "x" * 201, "lat": lat, "lng": lng}, "22023", "name must be 1 to 200 characters"),
        ({"name": "x", "lat": lat, "lng": lng, "radius_m": 1001}, "22023", "radius_m must be between 1 and 1000"),
        ({"name": "x", "lat": 95, "lng": lng}, "22023", "lat must be between -90 and 90"),
    ]:
        error = assert_postgrest_error(api.rpc("places_match", body, token), 400, code)
        assert message in error["message"], (body, error)
    assert_postgrest_error(api.rpc("places_match", {"name": "x", "lat": lat}, token), 404, "PGRST202")
