"""`make run`, as a newcomer types it: it prints the URL, the anon key and the analyst's psql line,
serves, and a second `make run` after a hard kill (stale postmaster.pid) reuses the same cluster."""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest
import requests

from helpers import Api, new_id, report, wait_until

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def children_of(pid: int) -> list[int]:
    """Processes whose parent is `pid`, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def is_running(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class MakeRun:
    def __init__(self, state: Path, port: int):
        self.state, self.port = state, port
        self.process: subprocess.Popen | None = None
        self.lines: list[str] = []

    def start(self, timeout: float = 300) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PRICESVC_") and k != "MAKEFLAGS"}
        env.update(RUN_STATE_DIR=str(self.state), PRICESVC_LISTEN=f"127.0.0.1:{self.port}")
        self.process = subprocess.Popen(["make", "-s", "run"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, start_new_session=True)
        deadline = time.monotonic() + timeout
        info: dict = {}
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.lines.append(line)
            if m := re.search(r"pricesvc is starting at\s+(\S+)", line):
                info["url"] = m.group(1)
            if m := re.search(r"anon key \(apikey\):\s+(\S+)", line):
                info["anon_key"] = m.group(1)
            if m := re.search(r"analyst's psql:\s+(.+)$", line):
                info["psql"] = m.group(1).strip()
            if m := re.search(r"superuser's psql:\s+(.+)$", line):
                info["superuser_psql"] = m.group(1).strip()
            if "pricesvc: listening on http://" in line:
                return info
        raise AssertionError("make run did not start serving:\n" + "".join(self.lines[-40:]))

    def kill_hard(self):
        """SIGKILL the service and the postmaster: what a crash or a killed terminal leaves behind."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)
        pid_file = next(self.state.joinpath("pg").resolve().rglob("postmaster.pid"))
        postmaster = int(pid_file.read_text().split()[0])
        children = children_of(postmaster)
        os.kill(postmaster, signal.SIGKILL)
        # Backends notice the dead postmaster and exit; until they have, they keep its shared memory.
        wait_until(lambda: not any(is_running(pid) for pid in children + [postmaster]), timeout=20,
                   message=f"the killed postmaster's processes {children} to exit")
        assert pid_file.exists(), "the stale postmaster.pid this test is about should still be there"

    def stop(self):
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=20)


def run_demo(state: Path, port: int) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRICESVC_") and k != "MAKEFLAGS"}
    env.update(RUN_STATE_DIR=str(state), PRICESVC_LISTEN=f":{port}")
    result = subprocess.run(["make", "-s", "demo"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.timeout(900)
def test_make_run_prints_url_key_and_psql_serves_and_survives_a_hard_kill():
    state = REPO / "var/e2e-make-run"
    subprocess.run([str(REPO / "scripts/dev/pg-cluster.sh"), "destroy", str(state / "pg")], capture_output=True)
    run = MakeRun(state, free_port())
    try:
        info = run.start()
        assert info["url"] == f"http://127.0.0.1:{run.port}"
        assert info["anon_key"].count(".") == 2
        assert requests.get(info["url"] + "/readyz", timeout=5).status_code == 200

        api = Api(info["url"], info["anon_key"])
        session = api.new_session()
        receipt = new_id()
        assert api.submit(report(client_report_id=receipt), session["access_token"]).status_code == 201

        # The printed analyst line runs as printed and shows the overview's columns; that login is a
        # real analyst, who cannot read raw reports.
        analyst = subprocess.run(info["psql"], shell=True, capture_output=True, text=True, timeout=30)
        assert analyst.returncode == 0, analyst.stderr
        assert "median_cents" in analyst.stdout
        analyst_url = shlex.split(info["psql"])[1]
        assert "user=analyst" in analyst_url
        raw = subprocess.run(["psql", "-X", "-At", analyst_url, "-c", "select count(*) from public.price_reports"],
                             capture_output=True, text=True, timeout=30)
        assert raw.returncode != 0 and "permission denied" in raw.stderr, (raw.stdout, raw.stderr)
        # An analyst's session is bounded, and has no statistics of the median store and no
        # large objects.
        limits = subprocess.run(["psql", "-X", "-At", analyst_url, "-c", "show statement_timeout", "-c", "show temp_file_limit"],
                                capture_output=True, text=True, timeout=30)
        assert limits.stdout.split() == ["1min", "512MB"], (limits.stdout, limits.stderr)
        for probe in ("select n_tup_ins from pg_catalog.pg_stat_user_tables",
                      "select pg_catalog.pg_stat_get_tuples_inserted('private.median_prices'::regclass)",
                      "select pg_catalog.lo_from_bytea(0, '\\x00')"):
            denied = subprocess.run(["psql", "-X", "-At", analyst_url, "-c", probe], capture_output=True, text=True, timeout=30)
            assert denied.returncode != 0 and "permission denied" in denied.stderr, (probe, denied.stdout, denied.stderr)

        # make demo: the README's median example now answers with rows; a second run adds nothing.
        demo = run_demo(state, run.port)
        assert "5 reporters signed up" in demo.stdout, demo.stdout
        medians = api.medians(["sfmta:garage-123", "sfmta:garage-7", "sfmta:garage-19"], session["access_token"])
        assert [(m["location_id"], m["median_cents"], m["reporters"]) for m in medians] == [
            ("sfmta:garage-123", 350, 5), ("sfmta:garage-7", 275, 4)], medians
        # ...and so does the README's "find car parks near a destination": the demo's places, nearest first.
        assert "demo: import-places: source sfmta: 6 places" in demo.stdout, demo.stdout
        nearby = api.rpc("places_nearby", {"lat": 37.7955, "lng": -122.3937, "radius_m": 500}, session["access_token"])
        assert nearby.status_code == 200, nearby.text
        assert [(p["location_id"], p["distance_m"], p["median_cents"]) for p in nearby.json()][:2] == [
            ("sfmta:garage-7", 108, 275), ("sfmta:lot-44", nearby.json()[1]["distance_m"], None)], nearby.json()
        assert [p["location_id"] for p in nearby.json()][2:] == ["sfmta:garage-123", "sfmta:garage-19", "sfmta:garage-88"]
        # The demo's community place: where three reporters' apps put a lot no import places (docs/api.md).
        pier = api.rpc("places_nearby", {"lat": 37.8035, "lng": -122.4010, "radius_m": 200}, session["access_token"])
        assert [(p["location_id"], p["source"], p["lat"], p["lng"], p["median_cents"]) for p in pier.json()] == [
            ("mapkit:pier-23-lot", "community", 37.80352, -122.40101, 500)], pier.json()
        again = run_demo(state, run.port)
        assert "nothing added" in again.stdout, again.stdout
        assert api.medians(["sfmta:garage-123", "sfmta:garage-7"], session["access_token"]) == medians[:2]
        overview = subprocess.run(info["psql"], shell=True, capture_output=True, text=True, timeout=30)
        assert "sfmta:lot-44" in overview.stdout and "sfmta:garage-19" not in overview.stdout, overview.stdout

        # The README's local analyst, as written (pointed at this test's cluster instead of var/dev).
        block = re.search(r"```sh\n(eval \"\$\(scripts/dev/pg-cluster\.sh start var/dev/pg.*?)```",
                          (REPO / "README.md").read_text(), re.S)
        assert block, "README.md lost its local analyst block"
        script = block.group(1).replace("var/dev/pg", shlex.quote(str(state / "pg")))
        local = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=REPO, capture_output=True, text=True,
                               timeout=60, env={k: v for k, v in os.environ.items() if not k.startswith("PG")})
        assert local.returncode == 0, local.stderr
        assert "sfmta:garage-123" in local.stdout, local.stdout

        run.kill_hard()
        second = MakeRun(state, run.port)
        try:
            again = second.start()
            assert again["anon_key"] == info["anon_key"], "the secret (and so the anon key) is kept between runs"
            wait_until(lambda: requests.get(again["url"] + "/readyz", timeout=5).status_code == 200, 20)
            # Same cluster: the report from the first run is still there.
            url = shlex.split(info["superuser_psql"])[1]
            count = subprocess.run(["psql", "-X", "-At", url, "-c",
                                    f"select count(*) from public.price_reports where client_report_id = '{receipt}'"],
                                   capture_output=True, text=True, timeout=30)
            assert count.stdout.strip() == "1", count.stderr
            assert "migrations: already up to date" in "".join(second.lines)
        finally:
            second.stop()
    finally:
        run.stop()
        subprocess.run([str(REPO / "scripts/dev/pg-cluster.sh"), "destroy", str(state / "pg")], capture_output=True)
