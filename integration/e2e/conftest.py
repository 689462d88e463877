"""End-to-end fixtures: a real PostgreSQL, `pricesvc migrate`, and real `pricesvc serve` processes.

Under `make test` (scripts/dev/test.sh) the environment names everything:
  PRICESVC_BIN, PGHOST, PGUSER, PGDATABASE, PRICESVC_OWNER_URL, PRICESVC_TEST_PG_DIR,
  PRICESVC_TEST_JWT_SECRET.
Standalone (`.venv/bin/pytest integration/e2e`), whatever is unset is made here: a private cluster in
var/e2e/pg (scripts/dev/pg-cluster.sh), a random secret, and .build/release/pricesvc (never built here).
PRICESVC_E2E_MIGRATIONS_DIR points the suite at another migrations folder (default: migrations/).
PRICESVC_TEST_FUZZ_SEED replays a seed of the OpenAPI fuzz test (test_fuzz_openapi.py) that failed.

Every server runs on a free 127.0.0.1 port with its settings given as PRICESVC_* variables, its
stdout/stderr in files, and is always terminated (SIGTERM, then SIGKILL) when its test ends. Each also
has an admin listener (/metrics, /healthz, /readyz) on another free port: `server.admin_url`.
"""

from __future__ import annotations

import base64
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent))

from helpers import Api, Database  # noqa: E402
from table_lock import BlockedSubmission, ReportsTableLock  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SERVER_START_TIMEOUT = 40  # seconds until /healthz answers
STOP_TIMEOUT = 15


# ---------------------------------------------------------------- environment

@dataclass
class Env:
    bin: str
    pg_dir: str
    pghost: str
    pguser: str
    owner_url: str
    service_url: str
    secret: str
    migrations_dir: str
    state: Path

    def base_env(self, **settings) -> dict:
        """The process environment for a pricesvc command: no PRICESVC_* leaks in from outside."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRICESVC_")}
        env.update({
            "PRICESVC_DATABASE_URL": self.service_url,
            "PRICESVC_JWT_SECRET": self.secret,
            "PRICESVC_MIGRATIONS_DIR": self.migrations_dir,
        })
        for key, value in settings.items():
            name = key if key.startswith("PRICESVC_") else "PRICESVC_" + key.upper()
            if value is None:
                env.pop(name, None)
            else:
                env[name] = str(value)
        return env

    def run(self, *args, timeout: float = 60, env: dict | None = None, **settings) -> subprocess.CompletedProcess:
        return subprocess.run([self.bin, *args], env=env if env is not None else self.base_env(**settings),
                              capture_output=True, text=True, timeout=timeout, cwd=str(REPO))

    def migrate(self, previous_secret: str | None = None, secret: str | None = None) -> subprocess.CompletedProcess:
        settings = {"PRICESVC_JWT_PREVIOUS_SECRET": previous_secret}
        if secret:
            settings["PRICESVC_JWT_SECRET"] = secret
        result = self.run("migrate", "--migration-database-url", self.owner_url, timeout=120, **settings)
        assert result.returncode == 0, f"pricesvc migrate failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
        return result

    def allow_login(self, *roles: str) -> None:
        """Lets this OS user log in over the cluster's socket as `roles` (peer with a map: scripts/dev/pg-cluster.sh)."""
        result = subprocess.run([str(REPO / "scripts/dev/pg-cluster.sh"), "allow", self.pg_dir, *roles],
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr


def _start_cluster(directory: Path) -> tuple[str, str]:
    result = subprocess.run([str(REPO / "scripts/dev/pg-cluster.sh"), "start", str(directory)],
                            capture_output=True, text=True, timeout=180)
    if result.returncode != 0:
        pytest.exit(f"cannot start PostgreSQL in {directory}: {result.stderr}", returncode=3)
    values = dict(part.split("=", 1) for part in result.stdout.strip().splitlines()[-1].split())
    return values["PGHOST"], values["PGUSER"]


@pytest.fixture(scope="session")
def env(tmp_path_factory) -> Env:
    binary = os.environ.get("PRICESVC_BIN") or str(REPO / ".build/release/pricesvc")
    if not os.access(binary, os.X_OK):
        pytest.exit(f"pricesvc binary not found at {binary}: run `make build` (scripts/dev/build.sh) "
                    f"or set PRICESVC_BIN", returncode=3)
    pg_dir = os.environ.get("PRICESVC_TEST_PG_DIR")
    pghost, pguser = os.environ.get("PGHOST"), os.environ.get("PGUSER")
    if not pg_dir:
        pg_dir = str(REPO / "var/e2e/pg")
        pghost, pguser = _start_cluster(Path(pg_dir))
    elif not (pghost and pguser):
        pghost, pguser = _start_cluster(Path(pg_dir))
    os.environ["PGHOST"], os.environ["PGUSER"], os.environ["PGDATABASE"] = pghost, pguser, "pricesvc"
    owner_url = os.environ.get("PRICESVC_OWNER_URL") or f"postgresql:///pricesvc?host={pghost}&user={pguser}"
    secret = os.environ.get("PRICESVC_TEST_JWT_SECRET") or base64.b64encode(os.urandom(48)).decode()
    state = tmp_path_factory.mktemp("pricesvc")
    return Env(bin=binary, pg_dir=pg_dir, pghost=pghost, pguser=pguser, owner_url=owner_url,
               service_url=f"postgresql:///pricesvc?host={pghost}&user=authenticator", secret=secret,
               migrations_dir=os.environ.get("PRICESVC_E2E_MIGRATIONS_DIR") or str(REPO / "migrations"),
               state=state)


@pytest.fixture(scope="session")
def db(env) -> Database:
    return Database(env.pghost, env.pguser)


@pytest.fixture(scope="session")
def migrated(env) -> Env:
    """`pricesvc migrate` with the test secret: idempotent, and installs the DB's signing keys."""
    if not any(Path(env.migrations_dir).glob("*.sql")):
        pytest.exit(f"no migrations in {env.migrations_dir} yet", returncode=3)
    env.migrate()
    return env


class DatabaseTemplate:
    """A database migrated once, from nothing, with this tree's migrations, and copied for each test that needs
    a fresh migrated database of its own: `create database … template …` copies files, a migration from empty
    runs every file again. Tests about migrating from empty or from an earlier layout keep doing that."""

    def __init__(self, env: Env):
        self.env = env
        self.name = f"e2e_template_{os.getpid()}"
        self._admin(f"drop database if exists {self.name} with (force)")
        self._admin(f"create database {self.name}")
        url = f"postgresql:///{self.name}?host={env.pghost}&user={env.pguser}"
        result = env.run("migrate", "--migration-database-url", url, timeout=180)
        assert result.returncode == 0, f"migrate {self.name}:\n{result.stdout}\n{result.stderr}"

    def _admin(self, sql: str) -> None:
        Database(self.env.pghost, self.env.pguser, "postgres").psql(sql, timeout=120)

    def copy(self, name: str) -> None:
        """A new database `name` identical to a fresh migration (a template must have no other session)."""
        self._admin(f"drop database if exists {name} with (force)")
        self._admin(f"create database {name} template {self.name}")

    def drop(self) -> None:
        self._admin(f"drop database if exists {self.name} with (force)")


@pytest.fixture(scope="session")
def database_template(migrated):
    template = DatabaseTemplate(migrated)
    yield template
    template.drop()


@pytest.fixture(scope="session")
def anon_key(migrated) -> str:
    result = migrated.run("keys")
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


# ---------------------------------------------------------------- servers

@dataclass
class Server:
    process: subprocess.Popen
    url: str
    port: int
    stdout_path: Path
    stderr_path: Path
    settings: dict = field(default_factory=dict)
    admin_url: str = ""

    def metrics(self) -> str:
        """The Prometheus text from the admin listener (the public one does not serve /metrics)."""
        response = requests.get(self.admin_url + "/metrics", timeout=10)
        assert response.status_code == 200, response.text
        return response.text

    def stdout(self) -> str:
        return self.stdout_path.read_text(errors="replace")

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def api(self, anon_key: str, forwarded_for: str | None = None) -> Api:
        return Api(self.url, anon_key, forwarded_for)

    def stop(self, sig=signal.SIGTERM, timeout: float = STOP_TIMEOUT) -> int | None:
        """SIGTERM (or `sig`), wait, then SIGKILL. Returns the exit code."""
        if self.process.poll() is None:
            try:
                self.process.send_signal(sig)
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        return self.process.returncode


# General-purpose limits: every test comes from 127.0.0.1, so the per-IP limits are raised here
# and tested on dedicated servers (with their own fake client addresses via a trusted proxy).
GENERAL_SETTINGS = {
    "RATE_LIMIT_PER_MINUTE": 1_000_000,
    "SIGNUPS_PER_HOUR": 1_000_000,
    "SIGNUP_BURST": 1_000_000,
    "REFRESHES_PER_WINDOW": 1_000_000,
    "TRUSTED_PROXIES": "127.0.0.1",
}


class ServerFactory:
    def __init__(self, env: Env, directory: Path):
        self.env = env
        self.directory = directory
        self.servers: list[Server] = []

    def start(self, wait: bool = True, **settings) -> Server:
        index = len(self.servers) + len(list(self.directory.glob("*.stdout")))
        stdout_path = self.directory / f"server-{index}.stdout"
        stderr_path = self.directory / f"server-{index}.stderr"
        settings.setdefault("LISTEN", "127.0.0.1:0")
        settings.setdefault("ADMIN_LISTEN", "127.0.0.1:0")
        # Every test comes from 127.0.0.1: the per-address database share is off unless a test sets it
        # (integration/e2e/test_cost_budgets.py tests it, with its default, from addresses of its own).
        settings.setdefault("DB_REQUESTS_PER_IP", 0)
        process_env = self.env.base_env(**settings)
        with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
            process = subprocess.Popen([self.env.bin, "serve"], env=process_env, stdout=out, stderr=err,
                                       stdin=subprocess.DEVNULL, cwd=str(REPO), start_new_session=True)
        server = Server(process, "", 0, stdout_path, stderr_path, settings)
        self.servers.append(server)
        if not wait:
            return server
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        port = None
        while time.monotonic() < deadline:
            # The start-up line is on stderr: stdout carries only the access log's JSON lines.
            match = re.search(r"^pricesvc: listening on http://127\.0\.0\.1:(\d+)", server.stderr(), re.MULTILINE)
            admin = re.search(r"^pricesvc: admin listening on (http://\S+)", server.stderr(), re.MULTILINE)
            if match and (admin or settings.get("ADMIN_LISTEN") is None):
                port = int(match.group(1))
                server.admin_url = admin.group(1) if admin else ""
                break
            if process.poll() is not None:
                break
            time.sleep(0.05)
        if port is None:
            server.stop()
            raise AssertionError(f"pricesvc serve did not start (exit {process.returncode}):\n"
                                 f"stdout: {server.stdout()[-2000:]}\nstderr: {server.stderr()[-2000:]}")
        server.port, server.url = port, f"http://127.0.0.1:{port}"
        while time.monotonic() < deadline:
            try:
                if requests.get(server.url + "/healthz", timeout=2).status_code == 200:
                    return server
            except requests.RequestException:
                pass
            if process.poll() is not None:
                break
            time.sleep(0.05)
        server.stop()
        raise AssertionError(f"pricesvc serve never answered /healthz:\n{server.stderr()[-2000:]}")

    def stop_all(self):
        for server in self.servers:
            server.stop()
        self.servers.clear()


@pytest.fixture(scope="session")
def session_servers(migrated, tmp_path_factory):
    factory = ServerFactory(migrated, tmp_path_factory.mktemp("servers"))
    yield factory
    factory.stop_all()


@pytest.fixture
def start_server(migrated, tmp_path):
    """Starts dedicated pricesvc processes for one test; all are stopped when the test ends."""
    factory = ServerFactory(migrated, tmp_path)
    yield factory.start
    factory.stop_all()


@pytest.fixture(scope="session")
def server(session_servers) -> Server:
    """The general-purpose server shared by most tests."""
    return session_servers.start(**GENERAL_SETTINGS)


@pytest.fixture
def api(server, anon_key) -> Api:
    return server.api(anon_key)


@pytest.fixture
def user(api) -> dict:
    """A fresh anonymous user's session (each reporter may submit only 10 reports an hour)."""
    return api.new_session()


@pytest.fixture
def token(user) -> str:
    return user["access_token"]


# ---------------------------------------------------------------- ordering

@pytest.fixture
def blocked_submission(db):
    """`blocked_submission(api, token)`: price_reports locked, and a report submitted through pricesvc
    waiting on that lock in PostgreSQL (it holds a database worker and a pool connection). Returns
    (lock, submission): `lock.release()` lets it finish, `submission.response()` is its answer. The lock
    is released at the end of the test in any case."""
    locks: list[ReportsTableLock] = []

    def start(api: Api, token: str) -> tuple[ReportsTableLock, BlockedSubmission]:
        lock = ReportsTableLock(db)
        locks.append(lock)
        return lock, BlockedSubmission(api, token, lock)

    yield start
    for lock in locks:
        lock.release()


def pytest_collection_modifyitems(config, items):
    """Tests that stop, restart or re-key the shared database run last, so nothing else sees it."""
    items.sort(key=lambda item: 1 if item.get_closest_marker("disruptive") else 0)
