"""The restore drill (docs/operations.md, "Backups"): what continuous archiving and point-in-time restore
promise, proven on the cluster of conftest.py after the failover drill, with as few restores as that
takes (two).

A full backup; reports acknowledged through pricesvc; an incremental backup; more reports; time T from
the database's clock; a token rotation, a sign-out and more reports after T. Then, without waiting for
the archive (archive_timeout is off, so what came after T is only in the live WAL):

1. `restore --to T` on the running cluster: it archives the current WAL before it stops anything, and
   has exactly the reports acknowledged before T, the tokens as they were, the cap and the median store.
2. `restore` without a target is refused, naming the timelines (the history after T is on the old
   one): the cluster keeps running. `--plan` shows which timeline and backup a target uses.
3. Both nodes killed as dying machines and their data directories deleted; `restore --timeline OLD`
   from the repository alone has every acknowledged report and none other.
4. A target the repository cannot reach (in the future) is refused with the reason, and the cluster
   keeps serving.

`pricesvc migrate` has nothing to do after each restore and the URLs of `up` serve again. The
measurements go to PRICESVC_TEST_RESTORE_REPORT (scripts/dev/test.sh prints them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from conftest import CLUSTER_SH, REPO, client_address, cluster_env, pids_alive
from helpers import report, wait_until

RESTORE_REPORT = os.environ.get("PRICESVC_TEST_RESTORE_REPORT")
CAP = 10


def run_cluster_sh(cluster, action: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLUSTER_SH), action, str(cluster.dir), *args], capture_output=True, text=True,
                          timeout=timeout, env=cluster_env())


def cluster_command(cluster, action: str, *args: str, timeout: float = 300) -> list[dict]:
    """scripts/topology/cluster.sh ACTION DIR ARGS: its JSON lines. The last one, when it is the status line, is
    kept as the cluster's info."""
    result = run_cluster_sh(cluster, action, *args, timeout=timeout)
    assert result.returncode == 0, f"cluster.sh {action} failed ({result.returncode}):\n{result.stderr[-3000:]}"
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    if lines and "nodes" in lines[-1]:
        cluster.info = lines[-1]
        cluster.seen_pids |= set(cluster.info["pricesvc_pids"]) | {
            pid for node in cluster.info["nodes"] for pid in (node["patroni_pid"], node["postmaster_pid"]) if pid}
    return lines


def refused(cluster, *args: str) -> str:
    """`cluster.sh restore DIR ARGS` refuses, and nothing was stopped: the same processes serve. Its reason."""
    before = cluster.status()
    result = run_cluster_sh(cluster, "restore", *args, timeout=120)
    assert result.returncode != 0, f"restore {args} was not refused:\n{result.stdout}"
    assert "nothing was stopped" in result.stderr, result.stderr
    after = cluster.status()
    assert after["nodes"] == before["nodes"] and after["pricesvc_pids"] == before["pricesvc_pids"], (before, after)
    assert requests.get(cluster.url + "/readyz", timeout=5).status_code == 200
    return result.stderr


class Phase:
    """Reporters, each its own phone (sign-up, source address), with identities aged past maturity so
    their reports count in medians. Each submits `attempts` reports to a few shared locations, one
    thread per reporter; more attempts than the cap, so some reporters end at it."""

    def __init__(self, cluster, group: int, count: int, attempts: int):
        self.apis = [cluster.api(client_address(group, i)) for i in range(count)]
        self.sessions = [api.new_session() for api in self.apis]
        self.user_ids = [s["user"]["id"] for s in self.sessions]
        self.attempts = attempts
        self.locations = [f"drill:{group}:{k}" for k in range(3)]
        self.results: list[tuple[str, str, int]] = []  # (reporter, client_report_id, status)
        ids = "{" + ",".join(self.user_ids) + "}"
        assert cluster.on_leader(f"with aged as (update auth.users set created_at = created_at - interval '2 days' "
                                 f"where id = any('{ids}'::uuid[]) returning 1) select count(*) from aged") == str(count)

    def run(self):
        def one_reporter(i):
            out = []
            for k in range(self.attempts):
                row = report(self.locations[(i + k) % 3], cents=300 + 25 * ((i * 7 + k) % 9))
                response = self.apis[i].submit(row, self.sessions[i]["access_token"])
                assert response.status_code in (201, 429), (response.status_code, response.text)
                out.append((self.user_ids[i], row["client_report_id"], response.status_code))
            return out

        with ThreadPoolExecutor(len(self.apis)) as pool:
            for out in pool.map(one_reporter, range(len(self.apis))):
                self.results.extend(out)

    def acknowledged(self) -> list[str]:
        return [r[1] for r in self.results if r[2] == 201]

    def capped(self) -> list[int]:
        """Reporters that were refused for the cap."""
        return sorted({self.user_ids.index(r[0]) for r in self.results if r[2] == 429})


def literal(ids) -> str:
    return "'{" + ",".join(ids) + "}'::uuid[]"


def stored(cluster, client_report_ids) -> set[str]:
    if not client_report_ids:
        return set()
    out = cluster.on_leader(f"select client_report_id from public.price_reports "
                            f"where client_report_id = any({literal(client_report_ids)})")
    return set(out.split())


def reports_of(cluster, reporters) -> int:
    return int(cluster.on_leader(f"select count(*) from public.price_reports where reporter_id = any({literal(reporters)})"))


def commit_times(cluster, reporters) -> str:
    """Each report with the commit time of the transaction that stored it: what the cap counts by."""
    return cluster.on_leader(f"select string_agg(client_report_id || '@' || pg_xact_commit_timestamp(xmin), ',' "
                             f"order by client_report_id) from public.price_reports "
                             f"where reporter_id = any({literal(reporters)})")


def token_families(cluster, user_ids) -> str:
    """Refresh-token families of these identities: every token, its parent, rotation and revocation."""
    return cluster.on_leader(
        "select string_agg(concat_ws(':', t.id, s.id, t.parent_id, t.rotated_at, t.revoked_at, s.revoked_at), ',' "
        f"order by t.id) from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id "
        f"where s.user_id = any({literal(user_ids)})")


def median_store_matches_a_rebuild(cluster) -> int:
    """The median store answers what a rebuild from the (restored) reports answers; returns how many
    groups the drill's locations have in the answer, so an empty answer cannot pass."""
    out = cluster.on_leader(
        "begin; create temporary table drill_store as select * from public.price_median_overview(); "
        "select private.median_rebuild(null); "
        "select (select count(*) from ((table drill_store except all select * from public.price_median_overview()) "
        "union all (select * from public.price_median_overview() except all table drill_store)) d) "
        "|| ' ' || (select count(*) from drill_store where location_id like 'drill:%'); rollback;")
    differences, groups = out.split()[-2:]
    assert differences == "0", f"{differences} median groups differ from a rebuild"
    return int(groups)


def destroy_both_nodes(cluster):
    """Dying machines with their disks: Patroni and PostgreSQL killed at once, data directories gone."""
    info = cluster.status()
    pids = [n[key] for n in info["nodes"] for key in ("patroni_pid", "postmaster_pid") if n[key]]
    assert len(pids) == 4, info["nodes"]
    for pid in pids:
        os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not pids_alive(pids), timeout=10, message="the killed processes to go")
    for name in ("node1", "node2"):
        data = (cluster.dir / "nodes").resolve() / name / "data"
        shutil.rmtree(data)
        assert not data.exists()


def migrate_output(cluster) -> str:
    env = {**cluster_env(), "PRICESVC_JWT_SECRET_FILE": str(cluster.dir / "secrets/jwt-secret"),
           "PRICESVC_MIGRATIONS_DIR": str(REPO / "migrations")}
    result = subprocess.run([env["PRICESVC_BIN"], "migrate", "--migration-database-url", cluster.info["owner_url"]],
                            capture_output=True, text=True, timeout=60, env=env, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result.stdout + result.stderr


def serves_again(cluster, before_url: str):
    assert cluster.url == before_url, "the restored cluster answers on another URL"
    assert sorted(n["role"] for n in cluster.info["nodes"]) == ["leader", "sync_standby"], cluster.info["nodes"]
    assert "already up to date" in migrate_output(cluster)
    assert requests.get(cluster.url + "/readyz", timeout=5).status_code == 200
    api = cluster.api(client_address(239, 1))
    session = api.new_session()
    assert api.submit(report(), session["access_token"]).status_code == 201


def database_clock_passes(cluster, stop: str):
    """A backup's stop time is kept in whole seconds: a target after it must be a full second later."""
    wait_until(lambda: cluster.on_leader(f"select now() >= '{stop}'::timestamptz + interval '1 second'") == "t",
               timeout=5, interval=0.05, message=f"the database's clock to pass {stop} + 1 s")


@pytest.mark.timeout(420)
def test_restore_drill_restores_exactly_to_a_point_in_time_then_back_to_the_latest_point_of_the_old_timeline(cluster):
    url = cluster.url
    full = cluster_command(cluster, "backup", "full")[-1]
    assert full["type"] == "full"

    first = Phase(cluster, group=230, count=4, attempts=CAP + 2)
    first.run()
    incremental = cluster_command(cluster, "backup", "incr")[-1]
    assert incremental["type"] == "incr" and incremental["prior"] == full["label"]
    # From here on only the live WAL holds the reports (no segment is archived by time): a restore to T
    # has to archive it first, or recovery would end before T (what it did before: the cluster was gone).
    cluster.on_leader("alter system set archive_timeout = 0")
    cluster.on_leader("select pg_reload_conf()")
    second = Phase(cluster, group=231, count=4, attempts=4)
    second.run()
    refresh_api, refresh_session = first.apis[0], first.sessions[0]
    rotated = refresh_api.refresh(refresh_session["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    current_at_t = rotated.json()["refresh_token"]
    families_at_t = token_families(cluster, first.user_ids)
    database_clock_passes(cluster, incremental["stop"])
    point_t = cluster.on_leader("select now()")
    # After T: a rotation and a sign-out, which a restore to T must undo, and more reports.
    assert refresh_api.refresh(current_at_t).status_code == 200
    assert first.apis[1].logout(first.sessions[1]["access_token"]).status_code == 204
    third = Phase(cluster, group=232, count=4, attempts=4)
    third.run()
    after_third = cluster.on_leader("select now()")
    capped = first.capped()
    assert len(capped) >= 2, "too few reporters reached the cap"
    reporter = next(i for i in capped if i != 1)  # the second one signed out after T
    capped_api, capped_session = first.apis[reporter], first.sessions[reporter]
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429

    before_t = first.acknowledged() + second.acknowledged()
    acknowledged = before_t + third.acknowledged()
    everyone = first.user_ids + second.user_ids + third.user_ids
    assert len(stored(cluster, acknowledged)) == len(acknowledged)
    commit_times_at_t = commit_times(cluster, first.user_ids + second.user_ids)
    commit_times_before = commit_times(cluster, everyone)
    old_timeline = int(cluster.on_leader("select substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)"), 16)
    listed = cluster_command(cluster, "backups")[-1]
    assert [b["label"] for b in listed["backups"]][-2:] == [full["label"], incremental["label"]], listed
    assert listed["timelines"][-1]["timeline"] == old_timeline, listed["timelines"]

    # ---- 1. T, on the running cluster: exactly what was acknowledged before it
    at_t = cluster_command(cluster, "restore", "--to", point_t, timeout=300)[0]
    assert at_t["restored_backup"] == incremental["label"] and at_t["from_timeline"] == old_timeline, at_t
    new_timeline = at_t["timeline"]
    found_at_t = stored(cluster, acknowledged)
    assert found_at_t == set(before_t), (
        f"{len(set(before_t) - found_at_t)} reports from before T missing, "
        f"{len(found_at_t - set(before_t))} from after T present")
    assert reports_of(cluster, everyone) == len(before_t)
    assert commit_times(cluster, first.user_ids + second.user_ids) == commit_times_at_t
    assert token_families(cluster, first.user_ids) == families_at_t
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429
    assert median_store_matches_a_rebuild(cluster) > 0
    assert cluster.on_leader("show archive_timeout") == "5s", "the restored cluster kept the drill's setting"
    serves_again(cluster, url)
    # The token current at T is current again: its rotation after T never happened.
    assert refresh_api.refresh(current_at_t).status_code == 200

    # ---- 2. The latest point is ambiguous now: refused, naming both timelines; --plan says what a target uses
    reason = refused(cluster)
    assert f"timeline {old_timeline}" in reason and f"timeline {new_timeline}" in reason and "--timeline" in reason, reason
    latest_plan = cluster_command(cluster, "restore", "--plan", "--timeline", "latest")[-1]
    assert latest_plan["timeline"] == new_timeline and latest_plan["restored_backup"] == at_t["backup_after_restore"]
    # A time after T but before the point-in-time restore was in use on the old timeline.
    between = cluster_command(cluster, "restore", "--plan", "--to", after_third)[-1]
    assert between["timeline"] == old_timeline and between["restored_backup"] == incremental["label"], between
    # The restore branched from the old timeline before T's first later commit (and Patroni, starting
    # on it as a standby, promoted it once more).
    timelines = cluster_command(cluster, "backups")[-1]["timelines"]
    branched = [t for t in timelines if t["parent"] == old_timeline and t["reason"].startswith("before ")]
    assert len(branched) == 1 and branched[0]["timeline"] <= new_timeline == timelines[-1]["timeline"], timelines

    # ---- 3. Both machines lost; back to the end of the old timeline from the repository alone
    destroy_both_nodes(cluster)
    back = cluster_command(cluster, "restore", "--timeline", str(old_timeline), timeout=300)[0]
    assert back["from_timeline"] == old_timeline and back["restored_backup"] == incremental["label"], back
    found = stored(cluster, acknowledged)
    assert not set(acknowledged) - found, f"{len(set(acknowledged) - found)} acknowledged reports lost"
    reports_found = reports_of(cluster, everyone)
    assert reports_found == len(acknowledged), "reports nobody acknowledged"
    assert commit_times(cluster, everyone) == commit_times_before, "commit timestamps changed"
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429
    assert median_store_matches_a_rebuild(cluster) > 0
    serves_again(cluster, url)

    # ---- 4. A target the repository cannot reach: refused with the reason, the cluster keeps serving
    future = cluster.on_leader("select now() + interval '1 hour'")
    assert "holds no commit after" in refused(cluster, "--to", future)

    measurements = {
        "reports_acknowledged": len(acknowledged),
        "reports_found": reports_found,
        "reports_lost": len(set(acknowledged) - found),
        "reports_acknowledged_before_t": len(before_t),
        "reports_found_at_t": len(found_at_t),
        "full_backup_bytes": full["size_bytes"],
        "full_backup_stored_bytes": full["stored_bytes"],
        "incremental_backup_stored_bytes": incremental["stored_bytes"],
        "restore_to_t_seconds": at_t["restore_seconds"],
        "restore_to_t_complete_seconds": at_t["complete_seconds"],
        "wal_replayed_to_t_bytes": at_t["wal_replayed_bytes"],
        "restore_old_timeline_seconds": back["restore_seconds"],
        "restore_old_timeline_complete_seconds": back["complete_seconds"],
        "wal_replayed_old_timeline_bytes": back["wal_replayed_bytes"],
    }
    print("restore drill:", json.dumps(measurements))
    if RESTORE_REPORT:
        Path(RESTORE_REPORT).write_text(json.dumps(measurements, indent=2) + "\n")
