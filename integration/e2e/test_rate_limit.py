"""The per-IP request limit (in-process token bucket): 429 with Retry-After, trusted proxies only; IPv6
clients counted per network (PRICESVC_IPV6_PREFIX, /64 by default), for this limit and the sign-up limit."""

import random

import requests

from helpers import REQUEST_TIMEOUT, assert_auth_error, assert_postgrest_error, fake_client_ip, retry_after


def _metric(server, name):
    text = requests.get(server.admin_url + "/metrics", timeout=REQUEST_TIMEOUT).text
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


# ---------------------------------------------------------------- IPv6 clients count per network

def _random_slash_64() -> str:
    """A documentation-range /64 no earlier run against the same database has used."""
    return "2001:db8:%x:%x" % (random.getrandbits(16), random.getrandbits(16))


def test_two_ipv6_addresses_in_one_slash_64_share_the_request_limit_and_another_slash_64_does_not(
        start_server, anon_key):
    server = start_server(RATE_LIMIT_PER_MINUTE=4, TRUSTED_PROXIES="127.0.0.1")
    api = server.api(anon_key)
    network = _random_slash_64()
    first, second = f"{network}::1", f"{network}:ffff:ffff:ffff:fffe"
    assert [api.get("/rest/v1/", forwarded_for=ip).status_code for ip in (first, second, first, second)] == [200] * 4
    assert api.get("/rest/v1/", forwarded_for=second).status_code == 429
    assert api.get("/rest/v1/", forwarded_for=f"{network}:1234::99").status_code == 429
    assert api.get("/rest/v1/", forwarded_for=f"{_random_slash_64()}::1").status_code == 200


def test_two_ipv6_addresses_in_one_slash_64_share_the_sign_up_limit(start_server, anon_key):
    server = start_server(TRUSTED_PROXIES="127.0.0.1", SIGNUP_BURST=2, SIGNUPS_PER_HOUR=2, RATE_LIMIT_PER_MINUTE=100000)
    api = server.api(anon_key)
    network = _random_slash_64()
    assert api.sign_up(forwarded_for=f"{network}::1").status_code == 200
    assert api.sign_up(forwarded_for=f"{network}:1:2:3:4").status_code == 200
    assert_auth_error(api.sign_up(forwarded_for=f"{network}:aaaa:bbbb:cccc:dddd"), 429, "over_request_rate_limit")
    assert api.sign_up(forwarded_for=f"{_random_slash_64()}::1").status_code == 200


def test_the_ipv6_prefix_is_a_setting(start_server, anon_key):
    per_address = start_server(RATE_LIMIT_PER_MINUTE=1, TRUSTED_PROXIES="127.0.0.1", IPV6_PREFIX=128).api(anon_key)
    network = _random_slash_64()
    assert [per_address.get("/rest/v1/", forwarded_for=f"{network}::{n}").status_code for n in (1, 2, 3)] == [200] * 3
    per_48 = start_server(RATE_LIMIT_PER_MINUTE=1, TRUSTED_PROXIES="127.0.0.1", IPV6_PREFIX=48).api(anon_key)
    assert per_48.get("/rest/v1/", forwarded_for="2001:db8:48:1::1").status_code == 200
    assert per_48.get("/rest/v1/", forwarded_for="2001:db8:48:2::1").status_code == 429


def test_an_ipv4_mapped_address_is_the_ipv4_address(start_server, anon_key):
    api = start_server(RATE_LIMIT_PER_MINUTE=1, TRUSTED_PROXIES="127.0.0.1").api(anon_key)
    assert api.get("/rest/v1/", forwarded_for="198.51.100.7").status_code == 200
    assert api.get("/rest/v1/", forwarded_for="::ffff:198.51.100.7").status_code == 429
    assert api.get("/rest/v1/", forwarded_for="198.51.100.8").status_code == 200


def test_a_forwarded_value_that_is_no_address_counts_as_the_proxy_and_never_a_fresh_bucket(start_server, anon_key):
    api = start_server(RATE_LIMIT_PER_MINUTE=3, TRUSTED_PROXIES="127.0.0.1").api(anon_key)
    statuses = [api.get("/rest/v1/", forwarded_for=value).status_code
                for value in ("unknown", "198.51.100.7:4711", "[2001:db8::1]")]
    assert statuses == [200] * 3
    assert api.get("/rest/v1/", forwarded_for="garbage-%d" % random.getrandbits(32)).status_code == 429
    assert api.get("/rest/v1/").status_code == 429, "the proxy's own bucket took them"


def test_setting_an_ipv6_prefix_outside_1_to_128_is_refused(env):
    for value in ("0", "129", "x"):
        result = env.run("serve", IPV6_PREFIX=value, LISTEN="127.0.0.1:0", timeout=30)
        assert result.returncode == 2, (value, result.returncode, result.stderr)
        assert "PRICESVC_IPV6_PREFIX" in result.stderr, "the error names the variable that was set"
