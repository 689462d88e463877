"""HTTP details a client or a browser relies on: one Content-Type, Allow on 405, X-Request-Id kept,
HEAD with the GET's length, and CORS answered as Supabase answers it."""

from __future__ import annotations

import http.client

import pytest
import requests

from conftest import GENERAL_SETTINGS
from helpers import REQUEST_TIMEOUT, assert_postgrest_error, location

SDK_HEADERS = "apikey, authorization, content-type, prefer, range, x-client-info, accept-profile, content-profile"


def raw(server, method: str, path: str, headers: dict | None = None) -> tuple[int, list[tuple[str, str]], bytes]:
    """One request over http.client, so repeated headers and HEAD's Content-Length are seen as sent."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=REQUEST_TIMEOUT)
    try:
        connection.request(method, path, headers=headers or {})
        response = connection.getresponse()
        return response.status, response.getheaders(), response.read()
    finally:
        connection.close()


def test_the_openapi_document_has_exactly_one_content_type(server, anon_key):
    status, headers, _ = raw(server, "GET", "/rest/v1/", {"apikey": anon_key})
    content_types = [value for name, value in headers if name.lower() == "content-type"]
    assert status == 200 and content_types == ["application/openapi+json; charset=utf-8"]


@pytest.mark.parametrize("method,path,allow", [
    ("TRACE", "/healthz", "GET, HEAD, OPTIONS"),
    ("DELETE", "/readyz", "GET, HEAD, OPTIONS"),
    ("QUERY", "/rest/v1/rpc/price_medians", "GET, HEAD, POST, OPTIONS"),
    ("GET", "/auth/v1/signup", "POST, OPTIONS"),
    ("TRACE", "/rest/v1/price_reports", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
])
def test_405_says_which_methods_are_allowed(api, method, path, allow):
    response = api.request(method, path)
    assert_postgrest_error(response, 405, "PGRST117")
    assert response.headers["Allow"] == allow


def test_a_well_formed_x_request_id_is_kept_and_anything_else_replaced(api, server):
    mine = "0b1e5f4c-7f5a-4c33-9d0e-2f6f1b1c9a10"
    assert api.get("/healthz", headers={"X-Request-Id": mine}).headers["X-Request-Id"] == mine
    replaced = api.get("/healthz", headers={"X-Request-Id": "no spaces allowed"}).headers["X-Request-Id"]
    assert replaced and replaced != "no spaces allowed" and " " not in replaced
    status, headers, _ = raw(server, "GET", "/healthz", {"X-Request-Id": "x" * 129})
    ids = [v for n, v in headers if n.lower() == "x-request-id"]
    assert len(ids) == 1 and ids[0] != "x" * 129 and 0 < len(ids[0]) <= 128, ids


@pytest.mark.parametrize("path,authenticated", [("/healthz", False), ("/rest/v1/", False),
                                                ("/rest/v1/rpc/price_medians", True)])
def test_head_answers_with_the_length_the_get_would_have(server, api, token, path, authenticated):
    headers = {"apikey": api.anon_key}
    if authenticated:
        headers["Authorization"] = f"Bearer {token}"
    query = "?location_ids=%7B" + location() + "%7D" if "rpc" in path else ""
    get_status, get_headers, get_body = raw(server, "GET", path + query, headers)
    head_status, head_headers, head_body = raw(server, "HEAD", path + query, headers)
    assert (head_status, head_body) == (get_status, b"")
    head_length = [v for n, v in head_headers if n.lower() == "content-length"]
    assert head_length == [str(len(get_body))], (head_headers, len(get_body))


def test_options_without_a_preflight_lists_the_methods(api):
    response = api.request("OPTIONS", "/rest/v1/rpc/price_median")
    assert response.status_code == 204 and response.headers["Allow"] == "GET, HEAD, POST, OPTIONS"


# ---------------------------------------------------------------- CORS

def preflight(url: str, path: str, origin: str) -> requests.Response:
    return requests.options(url + path, timeout=REQUEST_TIMEOUT, headers={
        "Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": SDK_HEADERS})


def test_a_preflight_needs_no_apikey_and_allows_what_the_sdks_send(server):
    response = preflight(server.url, "/rest/v1/rpc/price_medians", "http://localhost:5173")
    assert response.status_code == 204
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in response.headers["Access-Control-Allow-Methods"]
    allowed = {h.strip() for h in response.headers["Access-Control-Allow-Headers"].split(",")}
    assert {h.strip() for h in SDK_HEADERS.split(",")} <= allowed
    assert int(response.headers["Access-Control-Max-Age"]) > 0
    signup = preflight(server.url, "/auth/v1/signup", "http://localhost:5173")
    assert signup.status_code == 204 and "x-supabase-api-version" in signup.headers["Access-Control-Allow-Headers"]


def test_answers_expose_content_range_and_the_request_id_to_pages(api, token):
    response = api.post("/rest/v1/rpc/price_medians", token=token, json_body={"location_ids": [location()]},
                        headers={"Origin": "http://localhost:5173", "Prefer": "count=exact"})
    assert response.status_code == 200 and response.headers["Access-Control-Allow-Origin"] == "*"
    exposed = {h.strip().lower() for h in response.headers["Access-Control-Expose-Headers"].split(",")}
    assert {"content-range", "x-request-id"} <= exposed
    # Errors carry the headers too, or the page could not read why it was refused.
    refused = api.post("/rest/v1/rpc/price_medians", apikey=None, json_body={"location_ids": []},
                       headers={"Origin": "http://localhost:5173"})
    assert refused.status_code == 401 and refused.headers["Access-Control-Allow-Origin"] == "*"


def test_a_restricted_allow_list_refuses_other_origins(start_server, anon_key):
    server = start_server(**GENERAL_SETTINGS, CORS_ALLOWED_ORIGINS="https://app.example.org, http://127.0.0.1:1")
    allowed = preflight(server.url, "/rest/v1/rpc/price_medians", "https://app.example.org")
    assert allowed.status_code == 204
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example.org"
    assert allowed.headers["Vary"] == "Origin"
    refused = preflight(server.url, "/rest/v1/rpc/price_medians", "https://evil.example")
    assert_postgrest_error(refused, 403, "PGRST403")
    assert "Access-Control-Allow-Origin" not in refused.headers
    health = requests.get(server.url + "/healthz", headers={"Origin": "https://evil.example"}, timeout=REQUEST_TIMEOUT)
    assert health.status_code == 200 and "Access-Control-Allow-Origin" not in health.headers


def test_a_malformed_allow_list_stops_the_server_with_the_reason(migrated):
    result = migrated.run("serve", CORS_ALLOWED_ORIGINS="https://app.example.org/path", LISTEN="127.0.0.1:0")
    assert result.returncode != 0
    assert "PRICESVC_CORS_ALLOWED_ORIGINS" in result.stderr and "no path" in result.stderr
