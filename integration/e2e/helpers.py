"""Helpers shared by the end-to-end tests: JWTs with the stdlib, superuser SQL via psql, and a thin
HTTP client that always sets a timeout and only ever talks to 127.0.0.1."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import random
import subprocess
import re
import time
import uuid

import requests

REQUEST_TIMEOUT = 10  # seconds, for every HTTP request the suite makes


# ---------------------------------------------------------------- JWT (stdlib only)

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def jwt_segments(token: str) -> tuple[dict, dict, bytes]:
    head, payload, signature = token.split(".")
    return json.loads(b64url_decode(head)), json.loads(b64url_decode(payload)), b64url_decode(signature)


def jwt_claims(token: str) -> dict:
    return jwt_segments(token)[1]


def hs256(signing_input: str, secret: str | bytes) -> str:
    key = secret.encode() if isinstance(secret, str) else secret
    return b64url(hmac.new(key, signing_input.encode(), hashlib.sha256).digest())


def mint(claims: dict, secret: str | bytes, header: dict | None = None) -> str:
    header = header or {"alg": "HS256", "typ": "JWT"}
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(
        json.dumps(claims, separators=(",", ":")).encode())
    return signing_input + "." + hs256(signing_input, secret)


def signature_valid(token: str, secret: str | bytes) -> bool:
    head, payload, signature = token.split(".")
    return hmac.compare_digest(hs256(head + "." + payload, secret), signature)


# ---------------------------------------------------------------- identifiers

def new_id() -> str:
    return str(uuid.uuid4())


def location(tag: str = "e2e") -> str:
    """A location id no other test (or earlier run against the same database) has used."""
    return f"e2e:{tag}:{uuid.uuid4().hex[:12]}"


def fake_client_ip() -> str:
    """A documentation-range IPv6 address, different on every call. It only ever travels inside an
    X-Forwarded-For header to a pricesvc on 127.0.0.1: no traffic goes to it."""
    return "2001:db8:%x:%x::%x" % (random.getrandbits(16), random.getrandbits(16), random.getrandbits(16))


def report(loc: str | None = None, cents: int = 450, kind: str = "hourly", **extra) -> dict:
    row = {"location_id": loc or location(), "rate_kind": kind, "price_cents": cents,
           "client_report_id": new_id()}
    row.update(extra)
    return row


# ---------------------------------------------------------------- the database, as superuser

class Database:
    """psql as the cluster's superuser over its Unix socket (bypasses RLS: the ground truth)."""

    def __init__(self, host: str, user: str, dbname: str = "pricesvc"):
        self.host, self.user, self.dbname = host, user, dbname

    def psql(self, sql: str, timeout: float = 30) -> str:
        result = subprocess.run(
            ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.host, "-U", self.user,
             "-d", self.dbname, "-c", sql],
            capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            raise AssertionError(f"psql failed ({result.returncode}): {result.stderr.strip()}\nSQL: {sql}")
        return result.stdout.strip()

    def scalar(self, sql: str) -> str:
        out = self.psql(sql)
        return out.splitlines()[0] if out else ""

    def count_reports(self, client_report_ids) -> int:
        ids = list(client_report_ids)
        if not ids:
            return 0
        literal = "{" + ",".join(ids) + "}"
        return int(self.psql(
            f"select count(*) from public.price_reports where client_report_id = any('{literal}'::uuid[])"))

    def stored_report_ids(self, client_report_ids) -> set[str]:
        ids = list(client_report_ids)
        if not ids:
            return set()
        literal = "{" + ",".join(ids) + "}"
        out = self.psql(f"select client_report_id from public.price_reports "
                        f"where client_report_id = any('{literal}'::uuid[])")
        return set(out.split()) if out else set()

    def age_users(self, user_ids, by: str = "2 days") -> None:
        """Makes identities older, as time would: a report counts toward a median only once its
        reporter's identity has matured (24 hours). The rule stays; the test moves the clock."""
        ids = list(user_ids)
        assert ids, "no users to age"
        literal = "{" + ",".join(ids) + "}"
        updated = self.psql(f"with aged as (update auth.users set created_at = created_at - interval '{by}' "
                            f"where id = any('{literal}'::uuid[]) returning 1) select count(*) from aged")
        assert int(updated) == len(set(ids)), f"aged {updated} of {len(set(ids))} users"

    def total_reports(self) -> int:
        return int(self.psql("select count(*) from public.price_reports"))

    def is_up(self) -> bool:
        try:
            return self.psql("select 1", timeout=5) == "1"
        except (AssertionError, subprocess.TimeoutExpired):
            return False

    def dump_data(self) -> str:
        """Every row of every table as pg_dump text, to prove what is (not) stored."""
        pg_dump = "pg_dump"
        for candidate in ("/usr/lib/postgresql/15/bin/pg_dump",):
            if os.path.exists(candidate):
                pg_dump = candidate
        result = subprocess.run([pg_dump, "--data-only", "-h", self.host, "-U", self.user, self.dbname],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        return result.stdout


# ---------------------------------------------------------------- HTTP

class Api:
    """One pricesvc, spoken to as the Supabase SDKs do: apikey on every /rest and /auth call."""

    def __init__(self, base_url: str, anon_key: str, forwarded_for: str | None = None):
        assert base_url.startswith("http://127.0.0.1:"), base_url
        self.base = base_url
        self.anon_key = anon_key
        self.forwarded_for = forwarded_for
        self.http = requests.Session()

    def headers(self, token: str | None = None, apikey: str | None | bool = True, extra: dict | None = None,
                forwarded_for: str | None = None) -> dict:
        headers = {}
        if apikey is True:
            headers["apikey"] = self.anon_key
        elif isinstance(apikey, str):
            headers["apikey"] = apikey
        if token:
            headers["Authorization"] = f"Bearer {token}"
        xff = forwarded_for or self.forwarded_for
        if xff:
            headers["X-Forwarded-For"] = xff
        headers.update(extra or {})
        return headers

    def request(self, method: str, path: str, *, token: str | None = None, apikey: str | None | bool = True,
                json_body=None, data=None, headers: dict | None = None, params=None,
                forwarded_for: str | None = None, timeout: float = REQUEST_TIMEOUT) -> requests.Response:
        all_headers = self.headers(token, apikey, headers, forwarded_for)
        if json_body is not None:
            data = json.dumps(json_body)
            all_headers.setdefault("Content-Type", "application/json")
        return self.http.request(method, self.base + path, headers=all_headers, data=data, params=params,
                                 timeout=timeout, allow_redirects=False)

    def get(self, path: str, **kwargs) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> requests.Response:
        return self.request("POST", path, **kwargs)

    # -- the calls the apps make

    def sign_up(self, data: dict | None = None, forwarded_for: str | None = None) -> requests.Response:
        body = {"data": data or {}, "gotrue_meta_security": {"captcha_token": None}}
        return self.post("/auth/v1/signup", json_body=body, forwarded_for=forwarded_for,
                         headers={"X-Supabase-Api-Version": "2024-01-01"})

    def new_session(self, forwarded_for: str | None = None) -> dict:
        response = self.sign_up(forwarded_for=forwarded_for)
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json()

    def refresh(self, refresh_token: str, forwarded_for: str | None = None) -> requests.Response:
        return self.post("/auth/v1/token", params={"grant_type": "refresh_token"},
                         json_body={"refresh_token": refresh_token}, forwarded_for=forwarded_for)

    def logout(self, token: str, scope: str | None = "global") -> requests.Response:
        params = {"scope": scope} if scope else None
        return self.post("/auth/v1/logout", token=token, params=params, data=b"")

    def submit(self, rows, token: str | None, prefer: str | None = None,
               headers: dict | None = None) -> requests.Response:
        extra = {"Prefer": prefer} if prefer else {}
        extra.update(headers or {})
        return self.post("/rest/v1/price_reports", token=token, json_body=rows, headers=extra)

    def submit_raw(self, body: bytes | str, token: str | None,
                   content_type: str | None = "application/json", prefer: str | None = None) -> requests.Response:
        extra = {}
        if content_type is not None:
            extra["Content-Type"] = content_type
        if prefer:
            extra["Prefer"] = prefer
        return self.post("/rest/v1/price_reports", token=token, data=body, headers=extra)

    def rpc(self, name: str, args: dict, token: str | None) -> requests.Response:
        return self.post(f"/rest/v1/rpc/{name}", token=token, json_body=args)

    def medians(self, location_ids: list[str], token: str, **extra) -> list:
        response = self.rpc("price_medians", {"location_ids": location_ids, **extra}, token)
        assert response.status_code == 200, (response.status_code, response.text)
        return response.json()


def wait_until(predicate, timeout: float, interval: float = 0.1, message: str = "condition"):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {message} (last: {last!r})")


def wait_until_ready(process, stderr_path, timeout: float) -> str:
    """The URL of a `pricesvc serve` started with its stderr in `stderr_path`, once its start-up line is there
    and /readyz answers 200. Fails at once if the process exits, and after `timeout` seconds otherwise."""
    def ready():
        if process.poll() is not None:
            raise AssertionError(f"serve exited ({process.returncode}):\n" + stderr_path.read_text()[-2000:])
        match = re.search(r"^pricesvc: listening on (http://\S+)$", stderr_path.read_text(), re.M)
        if not match:
            return None
        try:
            return match.group(1) if requests.get(match.group(1) + "/readyz", timeout=2).status_code == 200 else None
        except requests.RequestException:
            return None
    return wait_until(ready, timeout, message="serve ready (stderr: " + str(stderr_path) + ")")


def assert_postgrest_error(response: requests.Response, status: int, code: str | None = None) -> dict:
    """PostgREST's error body: {code, details, hint, message}, message readable by a person."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"code", "details", "hint", "message"}, body
    assert isinstance(body["message"], str) and body["message"].strip(), body
    if code is not None:
        assert body["code"] == code, body
    return body


def assert_auth_error(response: requests.Response, status: int, error_code: str | None = None) -> dict:
    """Supabase Auth's error body: {code, error_code, msg}."""
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert {"code", "error_code", "msg"} <= set(body), body
    assert body["code"] == status, body
    assert isinstance(body["msg"], str) and body["msg"].strip(), body
    if error_code is not None:
        assert body["error_code"] == error_code, body
    return body


def retry_after(response: requests.Response) -> int:
    value = response.headers.get("Retry-After")
    assert value is not None, f"no Retry-After on {response.status_code}: {dict(response.headers)}"
    assert value.isdigit() and int(value) >= 1, value
    return int(value)
