"""The per-IP request limit (in-process token bucket): 429 with Retry-After, trusted proxies only."""

import requests

from helpers import REQUEST_TIMEOUT, assert_auth_error, assert_postgrest_error, fake_client_ip, retry_after


def _metric(server, name):
    text = requests.get(server.url + "/metrics", timeout=REQUEST_TIMEOUT).text
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return None


def test_over_the_per_ip_request_limit_rest_calls_get_429_with_retry_after(start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=5)
    api = server.api(anon_key)
    statuses = [api.get("/rest/v1/").status_code for _ in range(5)]
    assert statuses == [200] * 5
    limited = api.get("/rest/v1/")
    body = assert_postgrest_error(limited, 429)
    assert body["code"] == "PGRST429"
    seconds = retry_after(limited)
    assert seconds <= 60
    # Auth calls are limited by the same bucket, in Supabase Auth's error shape.
    auth_limited = api.sign_up()
    assert_auth_error(auth_limited, 429, "over_request_rate_limit")
    retry_after(auth_limited)
    # Operations endpoints stay reachable for probes, and the rejections are counted.
    assert requests.get(server.url + "/healthz", timeout=REQUEST_TIMEOUT).status_code == 200
    assert _metric(server, "pricesvc_rate_limited_total") == 2


def test_the_limit_is_per_client_address_behind_a_trusted_proxy(start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=3, TRUSTED_PROXIES="127.0.0.1")
    api = server.api(anon_key)
    first, second = fake_client_ip(), fake_client_ip()
    assert [api.get("/rest/v1/", forwarded_for=first).status_code for _ in range(3)] == [200] * 3
    assert api.get("/rest/v1/", forwarded_for=first).status_code == 429
    assert api.get("/rest/v1/", forwarded_for=second).status_code == 200
    # Entries left of the right-most untrusted hop are the client's own claims and are not believed.
    assert api.get("/rest/v1/", forwarded_for=f"{fake_client_ip()}, {first}").status_code == 429


def test_x_forwarded_for_from_an_untrusted_peer_is_ignored(start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=3)
    api = server.api(anon_key)
    statuses = [api.get("/rest/v1/", forwarded_for=fake_client_ip()).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429], statuses


def test_a_rate_limit_of_0_turns_the_limit_off(start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=0)
    api = server.api(anon_key)
    assert {api.get("/rest/v1/").status_code for _ in range(150)} == {200}
