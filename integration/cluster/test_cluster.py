"""Beyond one machine (docs/deployment.md): what the replicated topology promises, proven on loopback.
In file order: the topology as started, limits that hold across instances, reads on the replica, the
loss of one instance, and last the failover drill (a leader killed as a dying machine would be)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import requests

from conftest import client_address
from helpers import report, wait_until

DRILL_REPORT = os.environ.get("PRICESVC_TEST_CLUSTER_REPORT")


def listening_addresses(pids: list[int]) -> set[str]:
    """Local addresses of the TCP sockets these processes listen on (from /proc)."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    addresses = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                host = fields[1].split(":")[0]
                addresses.add(host)
    return addresses


class Reporters(threading.Thread):
    """Several reporters, each its own phone (sign-up, source address), submitting in turn with a
    client_report_id on every report. Each tries `attempts` reports: more than the cap of 10, so the
    cap is exercised. Records (started, finished, reporter, client_report_id, status, Retry-After)."""

    def __init__(self, cluster, group: int, count: int, attempts: int = 12, pause: float = 0.1):
        super().__init__(daemon=True)
        self.apis = [cluster.api(client_address(group, i)) for i in range(count)]
        self.sessions = [api.new_session() for api in self.apis]
        self.user_ids = [session["user"]["id"] for session in self.sessions]
        self.attempts, self.pause = attempts, pause
        self.tried = [0] * count
        self.results = []
        self.stopping = threading.Event()
        self.deadline = time.monotonic() + 180

    def run(self):
        turn = 0
        while not self.stopping.is_set() and time.monotonic() < self.deadline:
            open_reporters = [i for i in range(len(self.apis)) if self.tried[i] < self.attempts]
            if not open_reporters:
                break
            i = open_reporters[turn % len(open_reporters)]
            turn += 1
            row = report()
            started = time.monotonic()
            try:
                response = self.apis[i].submit(row, self.sessions[i]["access_token"])
                status, retry = response.status_code, "Retry-After" in response.headers
            except requests.RequestException as error:
                status, retry = f"exception: {type(error).__name__}", False
            if status in (201, 429):
                self.tried[i] += 1
            self.results.append((started, time.monotonic(), self.user_ids[i], row["client_report_id"], status, retry))
            self.stopping.wait(self.pause)  # paced like a phone; returns at once when told to stop

    def acknowledged(self) -> list[str]:
        return [r[3] for r in self.results if r[4] == 201]

    def first_201_after(self, moment: float) -> float | None:
        return min((r[1] for r in self.results if r[0] >= moment and r[4] == 201), default=None)


def run_reporters(groups: list[Reporters]):
    for group in groups:
        group.start()


def stop_reporters(groups: list[Reporters]):
    for group in groups:
        group.stopping.set()
    for group in groups:
        group.join(timeout=30)
        assert not group.is_alive(), "a reporter thread did not stop"


def stored_on(cluster, node_name: str, client_report_ids: list[str]) -> set[str]:
    if not client_report_ids:
        return set()
    literal = "{" + ",".join(client_report_ids) + "}"
    out = cluster.psql(cluster.node_url(node_name),
                       f"select client_report_id from public.price_reports where client_report_id = any('{literal}'::uuid[])")
    return set(out.split())


def max_reports_per_reporter(cluster, node_name: str, user_ids: list[str]) -> int:
    literal = "{" + ",".join(user_ids) + "}"
    out = cluster.psql(cluster.node_url(node_name),
                       f"select coalesce(max(n), 0) from (select count(*) n from public.price_reports "
                       f"where reporter_id = any('{literal}'::uuid[]) group by reporter_id) counts")
    return int(out)


# ---------------------------------------------------------------- the topology

def test_up_starts_a_leader_a_synchronous_standby_and_two_instances_on_loopback_only(cluster):
    info = cluster.status()
    assert set(info) == {"url", "anon_key", "owner_url", "nodes", "pricesvc_pids"}
    assert sorted(n["role"] for n in info["nodes"]) == ["leader", "sync_standby"]
    assert len(info["pricesvc_pids"]) == 2
    pids = info["pricesvc_pids"] + [n[key] for n in info["nodes"] for key in ("patroni_pid", "postmaster_pid")]
    pids += [int((cluster.dir / name).read_text()) for name in ("etcd/etcd.pid", "haproxy/haproxy.pid")]
    assert all(isinstance(pid, int) for pid in pids), info
    if os.geteuid() == 0:
        for node in info["nodes"]:
            assert Path(f"/proc/{node['postmaster_pid']}").stat().st_uid != 0, "PostgreSQL must not run as root"
    addresses = listening_addresses(pids)
    assert addresses and addresses <= {"0100007F"}, f"something listens beyond 127.0.0.1: {addresses}"

    settings = cluster.on_leader("select current_setting('track_commit_timestamp') || ' ' || "
                                 "current_setting('synchronous_commit') || ' ' || current_setting('synchronous_standby_names')")
    standby = cluster.node("sync_standby")["name"]
    assert settings.split() == ["on", "remote_apply", standby]
    assert cluster.psql(cluster.node_url(standby), "show track_commit_timestamp") == "on"
    assert requests.get(cluster.url + "/readyz", timeout=5).status_code == 200


def test_patroni_timeouts_are_ones_patroni_3_2_and_later_keep(cluster):
    """Patroni 3.2 raises a ttl below 20 to 20 (a warning in its log, nothing else) and wants
    loop_wait + 2 x retry_timeout <= ttl: an upgrade must not silently change the failover time."""
    config = requests.get(f"http://127.0.0.1:{cluster.ports['NODE1_API_PORT']}/config", timeout=5).json()
    ttl, loop_wait, retry_timeout = config["ttl"], config["loop_wait"], config["retry_timeout"]
    assert ttl >= 20 and loop_wait + 2 * retry_timeout <= ttl, config


# ---------------------------------------------------------------- limits across instances

def test_one_address_gets_120_requests_a_minute_in_total_across_both_instances(cluster):
    api = cluster.api(client_address(200, 1))
    before = [cluster.metric(url, 'pricesvc_http_requests_total{route="/rest/v1/",status="200"}')
              for url in cluster.instance_urls()]
    statuses = []
    for _ in range(200):
        response = api.get("/rest/v1/")
        statuses.append(response.status_code)
        if response.status_code == 429:
            assert response.headers.get("Retry-After"), response.headers
            assert response.json()["code"] == "PGRST429"
    after = [cluster.metric(url, 'pricesvc_http_requests_total{route="/rest/v1/",status="200"}')
             for url in cluster.instance_urls()]
    served = [a - b for a, b in zip(after, before)]
    assert set(statuses) == {200, 429}, statuses
    # Each instance alone would allow 120 from this address; both together still allow 120, not 240.
    # (A sliding-window edge can admit one or two more when the minute rolls over mid-burst.)
    assert 120 <= statuses.count(200) <= 122, statuses.count(200)
    assert all(count >= 30 for count in served), f"HAProxy did not balance: {served}"
    # The limit is the client's, not everyone's.
    assert cluster.api(client_address(200, 2)).get("/rest/v1/").status_code == 200
    auth = api.sign_up()
    assert auth.status_code == 429 and auth.json()["error_code"] == "over_request_rate_limit", auth.text


def test_sign_ups_from_one_address_are_limited_across_both_instances(cluster):
    api = cluster.api(client_address(201, 1))
    route = 'pricesvc_http_requests_total{route="/auth/v1/signup",status="200"}'
    before = [cluster.metric(url, route) for url in cluster.instance_urls()]
    statuses = [api.sign_up().status_code for _ in range(34)]
    after = [cluster.metric(url, route) for url in cluster.instance_urls()]
    assert statuses[:30] == [200] * 30 and statuses[30:] == [429] * 4, statuses  # burst of 30 per address
    assert all(a - b >= 10 for a, b in zip(after, before)), f"sign-ups were not spread: {before} → {after}"
    assert cluster.api(client_address(201, 2)).sign_up().status_code == 200


# ---------------------------------------------------------------- reads on the replica

def test_medians_come_from_the_replica_and_from_the_primary_while_it_is_stopped(cluster):
    location = f"cluster:replica:{time.monotonic_ns()}"
    apis = [cluster.api(client_address(202, i)) for i in range(3)]
    sessions = [api.new_session() for api in apis]
    for api, session, cents in zip(apis, sessions, (300, 400, 500)):
        assert api.submit(report(location, cents=cents), session["access_token"]).status_code == 201
    # Medians count identities at least a day old: age them, as time would (on the primary, as superuser).
    ids = "{" + ",".join(s["user"]["id"] for s in sessions) + "}"
    assert cluster.on_leader(f"with aged as (update auth.users set created_at = created_at - interval '2 days' "
                             f"where id = any('{ids}'::uuid[]) returning 1) select count(*) from aged") == "3"
    token = sessions[0]["access_token"]
    replica_reads = 'pricesvc_db_reads_total{pool="replica"}'
    fallbacks = "pricesvc_db_replica_fallbacks_total"

    def total(name):
        return sum(cluster.metric(url, name) for url in cluster.instance_urls())

    reads_before = total(replica_reads)
    # The update above committed with remote_apply: the replica already has it, no waiting needed.
    for _ in range(6):
        assert apis[0].medians([location], token)[0]["median_cents"] == 400
    assert total(replica_reads) - reads_before >= 6
    standby = cluster.node("sync_standby")["name"]
    leader = cluster.node("leader")["name"]
    count_read_sessions = "select count(*) from pg_stat_activity where application_name = 'pricesvc-read'"
    assert int(cluster.psql(cluster.node_url(standby), count_read_sessions)) >= 1
    assert int(cluster.psql(cluster.node_url(leader), count_read_sessions)) == 0

    # Stop the replica (its Patroni stops its PostgreSQL).
    os.kill(cluster.node("sync_standby")["patroni_pid"], signal.SIGTERM)
    wait_until(lambda: cluster.status() and cluster.node_role(standby) == "down", timeout=60,
               message="the standby stopped")
    fallbacks_before = total(fallbacks)
    started = time.monotonic()
    for _ in range(6):
        assert apis[0].medians([location], token)[0]["median_cents"] == 400
    assert time.monotonic() - started < 15
    assert total(fallbacks) - fallbacks_before >= 6
    for url in cluster.instance_urls() + [cluster.url]:
        assert requests.get(url + "/readyz", timeout=5).status_code == 200, url
    # With its standby gone the primary stops waiting for it (synchronous_mode_strict is off): writes go on.
    write = wait_until(lambda: apis[1].submit(report(), sessions[1]["access_token"]).status_code == 201,
                       timeout=30, interval=0.5, message="a write with the standby down")
    assert write

    # Back up: the node rejoins as the synchronous standby and reads return to it.
    cluster.sh("up")
    assert cluster.node(role="sync_standby")["name"] == standby

    def replica_answers():
        before = total(replica_reads)
        apis[0].medians([location], token)
        return total(replica_reads) > before

    wait_until(replica_answers, timeout=30, interval=0.5, message="reads back on the replica")


# ---------------------------------------------------------------- instance loss

def test_losing_one_instance_costs_at_most_its_requests_in_flight_and_no_acknowledged_report(cluster):
    groups = [Reporters(cluster, group=210 + g, count=4, attempts=10, pause=0.05) for g in range(3)]
    run_reporters(groups)
    try:
        wait_until(lambda: sum(len(g.acknowledged()) for g in groups) >= 15, timeout=30, message="201s before the kill")
        victim = cluster.info["pricesvc_pids"][0]
        os.kill(victim, signal.SIGKILL)
        killed = time.monotonic()
        wait_until(lambda: cluster.haproxy_servers()[("pricesvc", "pricesvc1")].startswith("DOWN")
                   or cluster.haproxy_servers()[("pricesvc", "pricesvc2")].startswith("DOWN"),
                   timeout=10, message="HAProxy marks the dead instance down")
        wait_until(lambda: sum(1 for g in groups for r in g.results if r[0] > killed + 1 and r[4] == 201) >= 15,
                   timeout=30, message="201s after the kill")
    finally:
        stop_reporters(groups)

    results = [r for g in groups for r in g.results]
    failures = [r for r in results if r[4] not in (201, 429)]
    # At most the requests in flight on the dead instance: one per reporter thread.
    assert len(failures) <= len(groups), failures
    assert all(r[4] == 502 or str(r[4]).startswith("exception") for r in failures), failures
    acknowledged = [r[3] for r in results if r[4] == 201]
    leader = cluster.node("leader")["name"]
    missing = set(acknowledged) - stored_on(cluster, leader, acknowledged)
    assert not missing, f"{len(missing)} acknowledged reports are missing"
    after_kill = [r for r in results if r[0] > killed + 1]
    assert after_kill and all(r[4] in (201, 429) for r in after_kill), "HAProxy kept sending to the dead instance"

    cluster.sh("up")  # the lost instance comes back
    assert len(cluster.info["pricesvc_pids"]) == 2 and victim not in cluster.info["pricesvc_pids"]
    wait_until(lambda: all(s == "UP" for (proxy, _), s in cluster.haproxy_servers().items() if proxy == "pricesvc"),
               timeout=15, message="HAProxy sends to the new instance")


# ---------------------------------------------------------------- planned switchover

def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] if ordered else 0.0


def write_measurements(update: dict) -> None:
    """Adds to the measurements report (PRICESVC_TEST_CLUSTER_REPORT), which scripts/dev/test.sh prints."""
    if not DRILL_REPORT:
        return
    path = Path(DRILL_REPORT)
    report_so_far = json.loads(path.read_text()) if path.exists() else {}
    report_so_far.update(update)
    path.write_text(json.dumps(report_so_far, indent=2) + "\n")


def test_a_switchover_under_load_answers_only_2xx_and_writes_follow_the_new_leader(cluster):
    """Maintenance nobody notices: while the leader hands over, pricesvc holds the requests
    (PRICESVC_DB_HOLD_MS, default 5 s) that cannot be applied twice, so clients see only 201s. The
    demoted leader turns read-only under open connections (25006): rolled back, so safe to send again."""
    old_leader = cluster.node("leader")["name"]
    # Ten attempts each, the cap: every answer should be 201. Sixteen reporters a group keep the load on
    # for the whole switchover even on a busy machine.
    groups = [Reporters(cluster, group=215 + g, count=16, attempts=10, pause=0.15) for g in range(2)]
    held_before = sum(cluster.metric(url, 'pricesvc_db_held_requests_total{outcome="served"}')
                      for url in cluster.instance_urls())
    run_reporters(groups)
    try:
        wait_until(lambda: sum(len(g.acknowledged()) for g in groups) >= 10, timeout=30, message="201s before")
        started = time.monotonic()
        cluster.sh("switchover", timeout=150)
        switched = time.monotonic()
        print(f"switchover command took {switched - started:.1f}s")
        # A reporter that has not written yet: the load's reporters may have used up their attempts
        # while the switchover ran, and then none would write after it.
        late = cluster.api(client_address(217, 1))
        late_session = late.new_session()
        late_response = late.submit(report(), late_session["access_token"])
        assert late_response.status_code == 201, late_response.text
    finally:
        stop_reporters(groups)
    assert cluster.node("leader")["name"] != old_leader
    assert cluster.node("sync_standby")["name"] == old_leader
    results = [r for g in groups for r in g.results]
    during = [r for r in results if r[1] >= started and r[0] <= switched]
    assert during, "no request was answered while the switchover ran: no load to measure"
    statuses = {str(r[4]) for r in results}
    answers = {status: sum(1 for r in results if str(r[4]) == status) for status in sorted(statuses)}
    acknowledged = [r[3] for r in results if r[4] == 201]
    assert not set(acknowledged) - stored_on(cluster, cluster.node("leader")["name"], acknowledged)
    held = sum(cluster.metric(url, 'pricesvc_db_held_requests_total{outcome="served"}')
               for url in cluster.instance_urls()) - held_before
    longest = max(cluster.metric(url, "pricesvc_db_hold_longest_milliseconds") for url in cluster.instance_urls())
    measurements = {"planned_switchover": {
        "switchover_seconds": round(switched - started, 2),
        "responses": answers,
        "responses_during_switchover": len(during),
        "p99_latency_seconds": round(p99([r[1] - r[0] for r in results]), 3),
        "p99_latency_during_switchover_seconds": round(p99([r[1] - r[0] for r in during]), 3),
        "held_and_served": int(held),
        "longest_hold_milliseconds": int(longest),
    }}
    print("planned switchover:", json.dumps(measurements))
    write_measurements(measurements)
    assert statuses == {"201"}, f"a switchover under load answered other than 201: {answers}"


# ---------------------------------------------------------------- the failover drill

def test_failover_drill_killing_the_leader_loses_no_acknowledged_report(cluster):
    old_leader = cluster.node("leader")
    standby = cluster.node("sync_standby")["name"]
    groups = [Reporters(cluster, group=220 + g, count=6, attempts=12, pause=0.1) for g in range(4)]
    run_reporters(groups)
    try:
        wait_until(lambda: sum(len(g.acknowledged()) for g in groups) >= 20, timeout=30, message="201s before the kill")
        # A dying machine: Patroni and PostgreSQL vanish at once, nothing is shut down cleanly.
        os.kill(old_leader["patroni_pid"], signal.SIGKILL)
        os.kill(old_leader["postmaster_pid"], signal.SIGKILL)
        killed = time.monotonic()

        def first_201_after_kill():
            times = [t for t in (g.first_201_after(killed) for g in groups) if t is not None]
            return min(times) if times else None

        recovered_at = wait_until(first_201_after_kill, timeout=90, interval=0.2,
                                  message="201s again after the leader was killed")
        # The load goes on against the new leader until every reporter has made its attempts.
        wait_until(lambda: not any(g.is_alive() for g in groups), timeout=90, interval=0.2,
                   message="the reporters to finish on the new leader")
    finally:
        stop_reporters(groups)

    info = cluster.status()
    assert cluster.node("leader")["name"] == standby, info["nodes"]
    results = [r for g in groups for r in g.results]
    statuses = {str(r[4]) for r in results}
    assert statuses <= {"201", "429", "503"}, f"unexpected answers: {statuses}"
    assert all(r[5] for r in results if r[4] == 503), "a 503 without Retry-After"
    assert any(r[4] == 503 for r in results), "the drill never saw the outage"

    acknowledged = [r[3] for r in results if r[4] == 201]
    missing = set(acknowledged) - stored_on(cluster, standby, acknowledged)
    assert not missing, f"{len(missing)} of {len(acknowledged)} acknowledged reports are not on the new leader"
    user_ids = [uid for g in groups for uid in g.user_ids]
    highest = max_reports_per_reporter(cluster, standby, user_ids)
    assert highest <= 10, f"a reporter has {highest} reports: the cap of 10 was exceeded"
    assert any(r[4] == 429 for r in results), "the drill never reached the cap"

    unavailable = recovered_at - killed
    last_before = max(r[1] for r in results if r[4] == 201 and r[1] <= killed)
    measurements = {
        "acknowledged_reports_checked": len(acknowledged),
        "write_unavailability_seconds": round(unavailable, 2),
        "gap_between_201s_seconds": round(recovered_at - last_before, 2),
        "responses": {status: sum(1 for r in results if str(r[4]) == status) for status in sorted(statuses)},
        "max_reports_per_reporter": highest,
        "new_leader": standby,
    }
    longest_hold = max(cluster.metric(url, "pricesvc_db_hold_longest_milliseconds") for url in cluster.instance_urls())
    measurements["longest_hold_milliseconds"] = int(longest_hold)
    print("failover drill:", json.dumps(measurements))
    write_measurements(measurements)
    assert unavailable < 45, measurements

    # The killed node comes back as the synchronous standby (rewound if it had diverged): a 201 means
    # two copies again, and it holds every acknowledged report.
    cluster.sh("up")
    rejoined = old_leader["name"]
    assert cluster.node("sync_standby")["name"] == rejoined
    assert not set(acknowledged) - stored_on(cluster, rejoined, acknowledged)
