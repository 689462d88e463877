"""pricesvc-backup on a Patroni node (issue 36, "Installed operator tools"): the same timer runs on every
node with that node's pgBackRest configuration and its Patroni REST API; only the leader's run backs up."""

from __future__ import annotations

import json
import subprocess

from conftest import REPO, cluster_env

TOOL = REPO / "scripts/pricesvc-backup"


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


def test_a_restore_through_patroni_is_refused_before_anything_stops(cluster):
    before = cluster.status()
    api = f"http://127.0.0.1:{cluster.ports['NODE1_API_PORT']}"
    for args in (["restore"], ["restore", "--plan"]):
        result = subprocess.run([str(TOOL), "--config", str(cluster.dir / "nodes/node1/pgbackrest.conf"),
                                 "--patroni", api, *args], capture_output=True, text=True, timeout=60, env=cluster_env())
        assert result.returncode == 1 and "nothing was stopped" in result.stderr, result.stderr
        assert "docs/deployment.md" in result.stderr and result.stdout == ""
    after = cluster.status()
    assert [(n["name"], n["role"], n["postmaster_pid"]) for n in after["nodes"]] == \
        [(n["name"], n["role"], n["postmaster_pid"]) for n in before["nodes"]]
