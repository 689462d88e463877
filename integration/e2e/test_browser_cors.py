"""CORS proven in a real browser: headless Chromium loads a page from another origin (a static server on
another loopback port), and the page signs in anonymously, submits a report and reads medians with
`fetch`, exactly as a web app using supabase-js would. A page from an origin that is not allowed is
refused by the browser."""

from __future__ import annotations

import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import pytest

from conftest import GENERAL_SETTINGS
from helpers import location, report

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
BROWSER_TIMEOUT = 30  # seconds for a page load or one script in the page

PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>pricesvc from another origin</title></head>
<body><p>pricesvc CORS check</p>
<script>
const parameters = new URLSearchParams(window.location.search);
window.API = parameters.get("api");
window.KEY = parameters.get("key");
async function call(path, options) {
  const response = await fetch(window.API + path, options);
  const text = await response.text();
  return {status: response.status, body: text ? JSON.parse(text) : null,
          contentRange: response.headers.get("Content-Range"), requestId: response.headers.get("X-Request-Id")};
}
window.signUpAndReport = async function (location) {
  const signUp = await call("/auth/v1/signup", {method: "POST", headers: {
      "apikey": window.KEY, "Content-Type": "application/json;charset=UTF-8",
      "X-Supabase-Api-Version": "2024-01-01", "X-Client-Info": "pricesvc-browser-test"},
    body: JSON.stringify({data: {}, gotrue_meta_security: {captcha_token: null}})});
  window.TOKEN = signUp.body.access_token;
  const submitted = await call("/rest/v1/price_reports", {method: "POST", headers: window.restHeaders({"Prefer": "return=minimal"}),
    body: JSON.stringify({location_id: location, rate_kind: "hourly", price_cents: 500, currency: "USD"})});
  return {signUp: signUp.status, userId: signUp.body.user.id, report: submitted.status};
};
window.restHeaders = function (extra) {
  return Object.assign({"apikey": window.KEY, "Authorization": "Bearer " + window.TOKEN,
    "Content-Type": "application/json", "Accept-Profile": "public", "Content-Profile": "public",
    "X-Client-Info": "pricesvc-browser-test"}, extra);
};
window.readMedians = async function (location) {
  return await call("/rest/v1/rpc/price_medians?currency=eq.USD&order=rate_kind",
    {method: "POST", headers: window.restHeaders({"Prefer": "count=exact"}),
     body: JSON.stringify({location_ids: [location], rate_kind: null})});
};
</script></body></html>
"""


class PageServer:
    """A static server for the page on its own 127.0.0.1 port: another origin than pricesvc's."""

    def __init__(self):
        page = PAGE.encode()

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def url(self, api_url: str, anon_key: str) -> str:
        return self.origin + "/?" + urlencode({"api": api_url, "key": anon_key})

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def browser():
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(binary):
            pytest.fail(f"{binary} is missing: scripts/dev/install-deps.sh installs chromium and chromium-driver")
    os.environ["SE_OFFLINE"] = "true"  # never let Selenium Manager look for a browser or driver online
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(BROWSER_TIMEOUT)
    driver.set_script_timeout(BROWSER_TIMEOUT)
    yield driver
    driver.quit()


@pytest.fixture
def pages():
    servers = []

    def start() -> PageServer:
        server = PageServer()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def run(driver, function: str, *args):
    """Calls an async function of the page and returns its result (or the error the page saw)."""
    return driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        window[arguments[0]](...Array.from(arguments).slice(1, -1))
          .then(done, error => done({error: String(error)}));
    """, function, *args)


@pytest.mark.timeout(180)
def test_a_page_on_an_allowed_origin_signs_in_reports_and_reads_medians(start_server, anon_key, db, browser, pages):
    page = pages()
    # Allowing only the page's origin shows that origin is echoed and any other is not (the default is *).
    api_server = start_server(**GENERAL_SETTINGS, CORS_ALLOWED_ORIGINS=page.origin)

    loc = location("browser")
    api = api_server.api(anon_key)
    others = [api.new_session() for _ in range(2)]
    db.age_users([s["user"]["id"] for s in others])
    for index, session in enumerate(others):
        assert api.submit(report(loc, 400 + 200 * index, currency="USD"), session["access_token"]).status_code == 201

    browser.get(page.url(api_server.url, anon_key))
    first = run(browser, "signUpAndReport", loc)
    assert first.get("signUp") == 200 and first.get("report") == 201, first
    db.age_users([first["userId"]])
    medians = run(browser, "readMedians", loc)
    assert medians.get("status") == 200, medians
    assert [(row["location_id"], row["median_cents"], row["reporters"]) for row in medians["body"]] == [(loc, 500, 3)]
    assert medians["contentRange"] == "0-0/1", "Content-Range must be exposed to the page"
    assert medians["requestId"], "X-Request-Id must be exposed to the page"


@pytest.mark.timeout(180)
def test_a_page_on_an_origin_that_is_not_allowed_is_refused_by_the_browser(start_server, anon_key, db, browser, pages):
    api_server = start_server(**GENERAL_SETTINGS, CORS_ALLOWED_ORIGINS="https://app.example.org")
    page = pages()
    users_before = int(db.scalar("select count(*) from auth.users"))
    browser.get(page.url(api_server.url, anon_key))
    refused = run(browser, "signUpAndReport", location("browser"))
    assert "error" in refused and "Failed to fetch" in refused["error"], refused
    assert int(db.scalar("select count(*) from auth.users")) == users_before, "a refused preflight creates nobody"
