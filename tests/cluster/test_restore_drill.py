"""The restore drill (docs/operations.md, "Backups"): what continuous archiving and point-in-time restore
promise, proven on the cluster of conftest.py after the failover drill.

A full backup; reports acknowledged through pricesvc; time T from the database's clock; more reports; an
incremental backup; more reports; both nodes killed as dying machines and their data directories
deleted. A restore to the latest point has every acknowledged report; a restore to T has exactly those
acknowledged before T. On both, the cap, the commit timestamps it counts by, the median store and the
refresh-token families are as they were, `pricesvc migrate` has nothing to do, and the URLs of `up`
serve again. The measurements go to PRICESVC_TEST_RESTORE_REPORT (scripts/test.sh prints them)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from conftest import CLUSTER_SH, REPO, client_address, cluster_env, pids_alive
from helpers import report, wait_until

RESTORE_REPORT = os.environ.get("PRICESVC_TEST_RESTORE_REPORT")
CAP = 10


def cluster_command(cluster, action: str, *args: str, timeout: float = 300) -> list[dict]:
    """scripts/cluster.sh ACTION DIR ARGS: its JSON lines. The last one, when it is the status line, is
    kept as the cluster's info."""
    result = subprocess.run([str(CLUSTER_SH), action, str(cluster.dir), *args], capture_output=True, text=True,
                            timeout=timeout, env=cluster_env())
    assert result.returncode == 0, f"cluster.sh {action} failed ({result.returncode}):\n{result.stderr[-3000:]}"
    lines = [json.loads(line) for line in result.stdout.strip().splitlines()]
    if lines and "nodes" in lines[-1]:
        cluster.info = lines[-1]
        cluster.seen_pids |= set(cluster.info["pricesvc_pids"]) | {
            pid for node in cluster.info["nodes"] for pid in (node["patroni_pid"], node["postmaster_pid"]) if pid}
    return lines


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


def archived_through(cluster, lsn: str) -> bool:
    return cluster.on_leader(f"select coalesce(last_archived_wal >= pg_walfile_name('{lsn}'), false) "
                             f"from pg_stat_archiver") == "t"


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


@pytest.mark.timeout(480)
def test_restore_drill_loses_no_acknowledged_report_and_restores_exactly_to_a_point_in_time(cluster):
    url = cluster.url
    full = cluster_command(cluster, "backup", "full")[-1]
    assert full["type"] == "full"

    before = Phase(cluster, group=230, count=4, attempts=CAP + 2)
    before.run()
    refresh_api, refresh_session = before.apis[0], before.sessions[0]
    rotated = refresh_api.refresh(refresh_session["refresh_token"])
    assert rotated.status_code == 200, rotated.text
    current_at_t = rotated.json()["refresh_token"]
    families_at_t = token_families(cluster, before.user_ids)
    commit_times_at_t = commit_times(cluster, before.user_ids)
    point_t = cluster.on_leader("select now()")
    # After T: a rotation and a sign-out, which a restore to T must undo.
    assert refresh_api.refresh(current_at_t).status_code == 200
    assert before.apis[1].logout(before.sessions[1]["access_token"]).status_code == 204

    middle = Phase(cluster, group=231, count=4, attempts=6)
    middle.run()
    incremental = cluster_command(cluster, "backup", "incr")[-1]
    assert incremental["type"] == "incr" and incremental["prior"] == full["label"]
    after = Phase(cluster, group=232, count=4, attempts=6)
    after.run()
    capped = before.capped()
    assert len(capped) >= 2, "too few reporters reached the cap"
    # A reporter at the cap stays there: the next report is refused, before and after the restores.
    reporter = next(i for i in capped if i != 1)  # the second one signed out after T
    capped_api, capped_session = before.apis[reporter], before.sessions[reporter]
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429

    acknowledged = before.acknowledged() + middle.acknowledged() + after.acknowledged()
    everyone = before.user_ids + middle.user_ids + after.user_ids
    assert len(stored(cluster, acknowledged)) == len(acknowledged)
    # What monitoring asserts before it calls the archive current: the WAL of the last acknowledged
    # report is in the repository (archive_timeout bounds the wait).
    last_lsn = cluster.on_leader("select pg_current_wal_lsn()")
    waited = time.monotonic()
    wait_until(lambda: archived_through(cluster, last_lsn), timeout=60, interval=0.5,
               message=f"the archive to reach {last_lsn}")
    archive_wait = time.monotonic() - waited
    commit_times_before = commit_times(cluster, everyone)
    listed = cluster_command(cluster, "backups")[-1]
    assert [b["label"] for b in listed["backups"]][-2:] == [full["label"], incremental["label"]], listed

    destroy_both_nodes(cluster)

    # ---- the latest point: every acknowledged report
    latest = cluster_command(cluster, "restore", timeout=400)[0]
    assert latest["target"] == "latest" and latest["restored_backup"] == incremental["label"], latest
    found = stored(cluster, acknowledged)
    assert not set(acknowledged) - found, f"{len(set(acknowledged) - found)} acknowledged reports lost"
    reports_found = reports_of(cluster, everyone)
    assert reports_found == len(acknowledged), "reports nobody acknowledged"
    assert commit_times(cluster, everyone) == commit_times_before, "commit timestamps changed"
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429
    assert median_store_matches_a_rebuild(cluster) > 0
    serves_again(cluster, url)

    # ---- T: exactly the reports acknowledged before it, the tokens as they were
    at_t = cluster_command(cluster, "restore", "--to", point_t, timeout=400)[0]
    assert at_t["restored_backup"] == full["label"], at_t
    acknowledged_before = before.acknowledged()
    found_at_t = stored(cluster, acknowledged)
    assert found_at_t == set(acknowledged_before), (
        f"{len(set(acknowledged_before) - found_at_t)} reports from before T missing, "
        f"{len(found_at_t - set(acknowledged_before))} from after T present")
    assert reports_of(cluster, everyone) == len(acknowledged_before)
    assert commit_times(cluster, before.user_ids) == commit_times_at_t
    assert token_families(cluster, before.user_ids) == families_at_t
    assert capped_api.submit(report(), capped_session["access_token"]).status_code == 429
    assert median_store_matches_a_rebuild(cluster) > 0
    serves_again(cluster, url)
    # The token current at T is current again: its rotation after T never happened.
    assert refresh_api.refresh(current_at_t).status_code == 200

    measurements = {
        "reports_acknowledged": len(acknowledged),
        "reports_found": reports_found,
        "reports_lost": len(set(acknowledged) - found),
        "reports_acknowledged_before_t": len(acknowledged_before),
        "reports_found_at_t": len(found_at_t),
        "full_backup_bytes": full["size_bytes"],
        "full_backup_stored_bytes": full["stored_bytes"],
        "incremental_backup_stored_bytes": incremental["stored_bytes"],
        "archive_wait_seconds": round(archive_wait, 1),
        "restore_seconds": latest["restore_seconds"],
        "restore_complete_seconds": latest["complete_seconds"],
        "wal_replayed_bytes": latest["wal_replayed_bytes"],
        "restore_to_t_seconds": at_t["restore_seconds"],
        "restore_to_t_complete_seconds": at_t["complete_seconds"],
        "wal_replayed_to_t_bytes": at_t["wal_replayed_bytes"],
    }
    print("restore drill:", json.dumps(measurements))
    if RESTORE_REPORT:
        Path(RESTORE_REPORT).write_text(json.dumps(measurements, indent=2) + "\n")
