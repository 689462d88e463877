"""pricesvc-backup on a Patroni node, installed as an operator tool: the same timer runs on every
node with that node's pgBackRest configuration and its Patroni REST API; only the leader's run backs up."""

from __future__ import annotations

import json
import subprocess

from conftest import REPO, cluster_env

TOOL = REPO / "scripts/ops/pricesvc-backup"


def test_on_each_node_only_the_leaders_run_backs_up(cluster):
    roles = {node["name"]: node["role"] for node in cluster.status()["nodes"]}
    assert sorted(roles.values()) == ["leader", "sync_standby"], roles
    before = len(json.loads(subprocess.run(
        [str(TOOL), "--config", str(cluster.dir / "nodes/node1/pgbackrest.conf"), "backups"],
        capture_output=True, text=True, timeout=120, env=cluster_env(), check=True).stdout)["backups"])
    taken = []
    for name, role in sorted(roles.items()):
        api = f"http://127.0.0.1:{cluster.ports[f'{name.upper()}_API_PORT']}"
        result = subprocess.run([str(TOOL), "--config", str(cluster.dir / f"nodes/{name}/pgbackrest.conf"),
                                 "--patroni", api, "backup", "incr"],
                                capture_output=True, text=True, timeout=240, env=cluster_env())
        assert result.returncode == 0, f"{name} ({role}): {result.stderr[-2000:]}"
        if role == "leader":
            taken.append(json.loads(result.stdout.strip().splitlines()[-1]))
        else:
            assert result.stdout == "" and "this member does not lead" in result.stderr, result.stderr
    listed = json.loads(subprocess.run(
        [str(TOOL), "--config", str(cluster.dir / "nodes/node1/pgbackrest.conf"), "backups"],
        capture_output=True, text=True, timeout=120, env=cluster_env(), check=True).stdout)["backups"]
    assert len(taken) == 1 and len(listed) == before + 1 and listed[-1]["label"] == taken[0]["label"], listed


def test_through_patroni_a_restore_needs_its_stop_and_start_steps_and_plans_only_on_the_leaders_host(cluster):
    before = cluster.status()
    roles = {node["name"]: node["role"] for node in before["nodes"]}
    def run(name: str, *args: str) -> subprocess.CompletedProcess:
        api = f"http://127.0.0.1:{cluster.ports[f'{name.upper()}_API_PORT']}"
        return subprocess.run([str(TOOL), "--config", str(cluster.dir / f"nodes/{name}/pgbackrest.conf"), "--patroni", api,
                               *args], capture_output=True, text=True, timeout=120, env=cluster_env())
    leader = next(name for name, role in roles.items() if role == "leader")
    standby = next(name for name in roles if name != leader)
    refused = run(leader, "restore")
    assert refused.returncode == 1 and "needs BACKUP_STOP_COMMAND" in refused.stderr, refused.stderr
    assert "nothing was stopped" in refused.stderr and refused.stdout == ""
    elsewhere = run(standby, "restore", "--plan")
    assert elsewhere.returncode == 1 and f"the leader is {leader}" in elsewhere.stderr, elsewhere.stderr
    # The newest timeline's end, named (a cluster restored before may have two "latest" points).
    plan = run(leader, "restore", "--plan", "--timeline", "latest")
    assert plan.returncode == 0, plan.stderr
    planned = json.loads(plan.stdout)
    assert planned["target"] == "latest" and planned["restored_backup"] and planned["timeline"] >= 1, planned
    after = cluster.status()
    assert [(n["name"], n["role"], n["postmaster_pid"]) for n in after["nodes"]] == \
        [(n["name"], n["role"], n["postmaster_pid"]) for n in before["nodes"]]
