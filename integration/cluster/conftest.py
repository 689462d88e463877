"""The replicated topology (scripts/topology/cluster.sh): etcd, two Patroni-managed PostgreSQL nodes, HAProxy and
two pricesvc instances, all on loopback. One cluster serves the whole suite; the tests that break
something run last and `cluster.sh up` repairs what they broke.

Clients are told apart the way HAProxy sees them: each one binds its own source address in
127.0.0.0/8, so the per-address limits apply to it as to a phone on the internet.

Environment (set by scripts/dev/test.sh; standalone runs make their own): PRICESVC_BIN,
PRICESVC_TEST_CLUSTER_DIR (where the cluster lives), PRICESVC_TEST_CLUSTER_REPORT and
PRICESVC_TEST_RESTORE_REPORT (JSON files the failover and restore drills write their measurements to).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from requests.adapters import HTTPAdapter

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "integration/e2e"))

from helpers import Api  # noqa: E402

CLUSTER_SH = REPO / "scripts/topology/cluster.sh"


class SourceAddressAdapter(HTTPAdapter):
    """Connections from one loopback address, so HAProxy counts this client on its own."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


def client_address(group: int, index: int) -> str:
    assert 0 <= group < 250 and 0 <= index < 250
    return f"127.0.{group + 1}.{index + 1}"


@dataclass
class Cluster:
    dir: Path
    info: dict
    ports: dict
    seen_pids: set = None

    def sh(self, action: str, timeout: float = 240) -> dict | None:
        result = subprocess.run([str(CLUSTER_SH), action, str(self.dir)], capture_output=True, text=True,
                                timeout=timeout, env=cluster_env())
        assert result.returncode == 0, f"cluster.sh {action} failed ({result.returncode}):\n{result.stderr[-3000:]}"
        lines = result.stdout.strip().splitlines()
        if lines:
            self.info = json.loads(lines[-1])
            self.seen_pids = (self.seen_pids or set()) | set(self.info["pricesvc_pids"]) | {
                pid for node in self.info["nodes"] for pid in (node["patroni_pid"], node["postmaster_pid"]) if pid}
            return self.info
        return None

    def status(self) -> dict:
        return self.sh("status", timeout=30)

    @property
    def url(self) -> str:
        return self.info["url"]

    @property
    def anon_key(self) -> str:
        return self.info["anon_key"]

    def api(self, address: str) -> Api:
        api = Api(self.url, self.anon_key)
        api.http.mount("http://", SourceAddressAdapter(address))
        return api

    def node(self, role: str) -> dict:
        nodes = [n for n in self.info["nodes"] if n["role"] == role]
        assert len(nodes) == 1, self.info["nodes"]
        return nodes[0]

    def node_role(self, name: str) -> str:
        return next(n["role"] for n in self.info["nodes"] if n["name"] == name)

    def node_url(self, name: str, database: str = "pricesvc") -> str:
        port = self.ports[f"{name.upper()}_PG_PORT"]
        return f"postgresql://postgres@127.0.0.1:{port}/{database}?passfile={self.dir}/secrets/pgpass"

    def psql(self, url: str, sql: str, timeout: float = 20) -> str:
        result = subprocess.run(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url, "-c", sql],
                                capture_output=True, text=True, timeout=timeout,
                                env={**os.environ, "PGCONNECT_TIMEOUT": "3"})
        assert result.returncode == 0, f"psql failed: {result.stderr.strip()}\nSQL: {sql}"
        return result.stdout.strip()

    def on_leader(self, sql: str) -> str:
        return self.psql(self.node_url(self.node("leader")["name"]), sql)

    def instance_urls(self) -> list[str]:
        return [f"http://127.0.0.1:{self.ports['PRICESVC1_PORT']}", f"http://127.0.0.1:{self.ports['PRICESVC2_PORT']}"]

    def admin_url(self, instance_url: str) -> str:
        """The admin listener (/metrics) of the instance serving `instance_url`."""
        for n in (1, 2):
            if instance_url.endswith(f":{self.ports[f'PRICESVC{n}_PORT']}"):
                return f"http://127.0.0.1:{self.ports[f'PRICESVC{n}_ADMIN_PORT']}"
        raise AssertionError(f"{instance_url} is not a pricesvc instance of this cluster")

    def metric(self, instance_url: str, line_prefix: str) -> float:
        text = requests.get(self.admin_url(instance_url) + "/metrics", timeout=5).text
        for line in text.splitlines():
            if line.startswith(line_prefix + " "):
                return float(line.split()[-1])
        return 0.0

    def haproxy_servers(self) -> dict[tuple[str, str], str]:
        """(proxy, server) → status, from HAProxy's admin socket."""
        import socket
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(3)
            sock.connect(str(self.dir / "haproxy/admin.sock"))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        servers = {}
        for line in data.decode().splitlines():
            fields = line.split(",")
            if len(fields) > 17 and not line.startswith("#") and fields[1] not in ("FRONTEND", "BACKEND"):
                servers[(fields[0], fields[1])] = fields[17]
        return servers


def cluster_env() -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRICESVC_") or k == "PRICESVC_BIN"}
    env.setdefault("PRICESVC_BIN", str(REPO / ".build/release/pricesvc"))
    # The restore drill waits for the archive to hold the last acknowledged report: at most this long.
    env.setdefault("CLUSTER_ARCHIVE_TIMEOUT", "5")
    return env


def pids_alive(pids) -> list[int]:
    """The processes still running. An exited one that PID 1 has not reaped yet (a zombie) is gone."""
    alive = []
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def processes_under(paths: list[Path]) -> list[str]:
    """Processes whose working directory or command line is inside one of `paths`."""
    found = []
    roots = [str(p.resolve()) for p in paths]
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(proc / "cwd")
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if any(cwd.startswith(root) or root in cmdline for root in roots):
            found.append(f"{proc.name}: {cmdline[:160]}")
    return found


@pytest.fixture(scope="session")
def cluster(tmp_path_factory) -> Cluster:
    directory = Path(os.environ.get("PRICESVC_TEST_CLUSTER_DIR") or tmp_path_factory.mktemp("cluster"))
    # make test starts the topology in the background while the single-node suites run
    # (PRICESVC_TEST_CLUSTER_STARTED=1): `up` below then waits for it and starts only what is not running.
    if os.environ.get("PRICESVC_TEST_CLUSTER_STARTED") != "1":
        subprocess.run([str(CLUSTER_SH), "down", str(directory)], capture_output=True, timeout=180, env=cluster_env())
    cluster = Cluster(directory, {}, {})
    try:
        started = time.monotonic()
        cluster.sh("up")
        print(f"cluster up in {time.monotonic() - started:.1f}s: {cluster.info}")
        for line in (directory / "cluster.env").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.endswith("_PORT"):
                cluster.ports[key] = int(value)
        yield cluster
    finally:
        nodes_dir = (directory / "nodes").resolve()
        started = time.monotonic()
        result = subprocess.run([str(CLUSTER_SH), "down", str(directory)], capture_output=True, text=True,
                                timeout=180, env=cluster_env())
        assert result.returncode == 0, result.stderr
        assert time.monotonic() - started < 120
        left = processes_under([directory, nodes_dir])
        assert not left, f"cluster.sh down left processes behind: {left}"
        assert not pids_alive(cluster.seen_pids or ()), "a pricesvc, Patroni or postmaster outlived cluster.sh down"
