"""GET /rest/v1/ is the OpenAPI 3 document of exactly the surface the server answers."""

import pytest
import requests

from helpers import REQUEST_TIMEOUT, location

METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "trace"}

# What pricesvc serves (docs/api.md), as (path, method): the document lists exactly these. GET
# /auth/v1/challenge is listed only where sign-up challenges are on (test_fuzz_openapi.py).
EXPECTED_SURFACE = {
    ("/rest/v1/", "get"),
    ("/rest/v1/price_reports", "post"), ("/rest/v1/price_reports", "get"), ("/rest/v1/price_reports", "patch"),
    ("/rest/v1/price_reports", "put"), ("/rest/v1/price_reports", "delete"),
    ("/rest/v1/rpc/price_median", "post"), ("/rest/v1/rpc/price_median", "get"),
    ("/rest/v1/rpc/price_medians", "post"), ("/rest/v1/rpc/price_medians", "get"),
    ("/rest/v1/rpc/price_quotes", "post"), ("/rest/v1/rpc/price_quotes", "get"),
    ("/rest/v1/rpc/places_nearby", "post"), ("/rest/v1/rpc/places_nearby", "get"),
    ("/rest/v1/rpc/places_match", "post"), ("/rest/v1/rpc/places_match", "get"),
    ("/auth/v1/signup", "post"), ("/auth/v1/token", "post"), ("/auth/v1/logout", "post"),
    ("/auth/v1/user", "get"),
    ("/healthz", "get"), ("/readyz", "get"),
}


@pytest.fixture
def document(api):
    response = api.get("/rest/v1/")
    assert response.status_code == 200, response.text
    assert "json" in response.headers["Content-Type"]
    return response.json()


def listed(document) -> set[tuple[str, str]]:
    return {(path, method) for path, item in document["paths"].items() for method in item if method in METHODS}


def test_the_openapi_document_is_openapi_3(document):
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"]
    assert document["paths"]


def test_the_openapi_document_lists_exactly_the_served_paths_and_methods(document):
    assert listed(document) == EXPECTED_SURFACE


def _example_request(api, session, path, method):
    """A well-formed call of one documented operation, as a client following the document would make it."""
    token = session["access_token"]
    loc = location()
    if path == "/rest/v1/price_reports" and method == "post":
        return api.submit({"location_id": loc, "rate_kind": "hourly", "price_cents": 250}, token)
    if path == "/rest/v1/rpc/price_median":
        args = {"location_id": loc}
        return api.rpc("price_median", args, token) if method == "post" else api.get(path, params=args, token=token)
    if path == "/rest/v1/rpc/price_medians":
        if method == "post":
            return api.rpc("price_medians", {"location_ids": [loc]}, token)
        return api.get(path, params={"location_ids": "{%s}" % loc}, token=token)
    if path == "/rest/v1/rpc/price_quotes":
        args = {"location_ids": [loc], "duration": "PT2H"}
        if method == "post":
            return api.rpc("price_quotes", args, token)
        return api.get(path, params={"location_ids": "{%s}" % loc, "duration": "PT2H"}, token=token)
    if path == "/rest/v1/rpc/places_nearby":
        if method == "post":
            return api.rpc("places_nearby", {"lat": 37.7955, "lng": -122.3937}, token)
        return api.get(path, params={"lat": "37.7955", "lng": "-122.3937"}, token=token)
    if path == "/rest/v1/rpc/places_match":
        if method == "post":
            return api.rpc("places_match", {"name": "Ferry Garage", "lat": 37.7955, "lng": -122.3937}, token)
        return api.get(path, params={"name": "Ferry Garage", "lat": "37.7955", "lng": "-122.3937"}, token=token)
    if path == "/auth/v1/signup":
        return api.sign_up()
    if path == "/auth/v1/token":
        return api.refresh(session["refresh_token"])
    if path == "/auth/v1/logout":
        return api.logout(api.new_session()["access_token"], scope="local")
    return api.request(method.upper(), path, token=token)


def test_every_listed_path_and_method_is_answered_with_something_other_than_404_or_405(api, document):
    session = api.new_session()
    for path, method in sorted(listed(document)):
        response = _example_request(api, session, path, method)
        assert response.status_code not in (404, 405), (method, path, response.status_code, response.text)
        assert response.status_code < 500, (method, path, response.status_code)
        documented = set(document["paths"][path][method].get("responses", {}))
        assert str(response.status_code) in documented, (method, path, response.status_code, documented)


@pytest.mark.parametrize("method,path", [
    ("GET", "/"), ("GET", "/rest/v1/other_table"), ("GET", "/rest/v1/rpc/"), ("GET", "/auth/v1/authorize"),
    ("POST", "/auth/v1/otp"), ("GET", "/rest/v1/price_reports/1"), ("GET", "/storage/v1/object"),
    ("POST", "/healthz"), ("DELETE", "/metrics"), ("PUT", "/rest/v1/rpc/price_median"),
    ("GET", "/auth/v1/signup"), ("GET", "/auth/v1/token"), ("DELETE", "/auth/v1/user"),
    ("POST", "/rest/v1/"), ("TRACE", "/rest/v1/price_reports"), ("PATCH", "/auth/v1/logout"),
])
def test_paths_and_methods_that_are_not_listed_get_404_or_405(api, token, method, path):
    response = api.request(method, path, token=token)
    assert response.status_code in (404, 405), (method, path, response.status_code, response.text)


def test_unknown_paths_are_404_even_without_an_apikey(server):
    response = requests.get(server.url + "/no/such/thing", timeout=REQUEST_TIMEOUT)
    assert response.status_code == 404
    assert set(response.json()) == {"code", "details", "hint", "message"}
