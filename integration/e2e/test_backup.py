"""scripts/dev/backup.sh on the single-node database (scripts/dev/pg-cluster.sh, `make run`): WAL archiving, full
and incremental backups, a restore to the latest point of a live database and to a point in time, with
a real pricesvc serving throughout. (The cluster's restore drill is in integration/cluster.)"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from conftest import REPO, ServerFactory, _start_cluster
from helpers import Database, jwt_claims, report, wait_until

BACKUP_SH = REPO / "scripts/dev/backup.sh"
PG_CLUSTER_SH = REPO / "scripts/dev/pg-cluster.sh"


def backup_sh(*args, timeout: float = 240) -> dict:
    result = subprocess.run([str(BACKUP_SH), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"backup.sh {args[0]} failed ({result.returncode}):\n{result.stderr[-3000:]}"
    return json.loads(result.stdout.strip().splitlines()[-1])


def submitter(api, token: str):
    """submit(n): n reports, each acknowledged 201; returns their client_report_ids."""
    def submit(n: int) -> list[str]:
        rows = [report() for _ in range(n)]
        for row in rows:
            assert api.submit(row, token).status_code == 201
        return [r["client_report_id"] for r in rows]
    return submit


def wait_past_backup(db: Database, backup: dict) -> None:
    """pgBackRest keeps a backup's stop time in whole seconds, so a restore to T starts from a backup only
    when it stopped a full second before T: waits (on the database's clock) until `backup` has."""
    wait_until(lambda: db.scalar(f"select now() >= '{backup['stop']}'::timestamptz + interval '1 second'") == "t",
               5, interval=0.05, message=f"the database's clock past {backup['stop']} + 1 s")


def assert_repository_keeps_no_secret(pg_dir: Path, repository: str, needles: list[bytes]) -> None:
    conf_dir = (pg_dir / "cluster" if (pg_dir / "cluster").is_symlink() else pg_dir).resolve() / "pgbackrest"
    conf = (conf_dir / "pgbackrest.conf").read_text()
    assert "repo1-cipher-type=aes-256-cbc" in conf, conf
    assert (conf_dir / "pgbackrest.conf").stat().st_mode & 0o077 == 0, "the configuration holds the passphrase"
    pass_file = conf_dir / "repo-cipher-pass"
    assert pass_file.stat().st_mode & 0o777 == 0o600 and len(pass_file.read_text().strip()) >= 32
    repo = Path(repository).resolve()
    assert repo not in pass_file.resolve().parents, "the passphrase is kept outside the repository"
    files = [path for path in repo.rglob("*") if path.is_file()]
    assert len(files) > 10, files  # backups and archived WAL segments
    def head(path: Path) -> bytes:
        with path.open("rb") as file:
            return file.read(8)
    encrypted = sum(head(path) == b"Salted__" for path in files)  # OpenSSL's header, as pgBackRest writes it
    assert encrypted > len(files) // 2, f"only {encrypted} of {len(files)} files are encrypted"
    for path in files:
        raw = path.read_bytes()
        texts = [raw]
        if raw.startswith(b"\x28\xb5\x2f\xfd"):  # zstd's magic: compressed, not encrypted
            unpacked = subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True, timeout=30)
            texts.append(unpacked.stdout)
        for text in texts:
            for needle in needles:
                assert needle not in text, f"{path} holds a secret in plain text"


@pytest.fixture
def own_database(migrated, tmp_path):
    """A database of its own (archiving restarts it), migrated, and a pricesvc serving it."""
    pg_dir = tmp_path / "pg"
    pghost, pguser = _start_cluster(pg_dir)
    env = dataclasses.replace(migrated, pg_dir=str(pg_dir), pghost=pghost, pguser=pguser,
                              owner_url=f"postgresql:///pricesvc?host={pghost}&user={pguser}",
                              service_url=f"postgresql:///pricesvc?host={pghost}&user=authenticator")
    env.migrate()
    servers = ServerFactory(env, tmp_path)
    try:
        yield pg_dir, env, Database(pghost, pguser), servers.start()
    finally:
        servers.stop_all()
        subprocess.run([str(PG_CLUSTER_SH), "destroy", str(pg_dir)], capture_output=True, timeout=120)
        # As root the cluster, its pgBackRest files and repository live in a folder under /var/tmp.
        if (pg_dir / "cluster").is_symlink():
            shutil.rmtree((pg_dir / "cluster").resolve(), ignore_errors=True)


def install_pricesvc_backup(root: Path) -> Path:
    """The command `make install` puts in PREFIX/bin, installed into a scratch DESTDIR: it runs with nothing
    of the source tree, on the pgBackRest configuration an operator has."""
    install = subprocess.run([str(REPO / "packaging/install.sh")], cwd=REPO, capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PREFIX": "/opt/pricesvc", "DESTDIR": str(root)})
    assert install.returncode == 0, install.stdout + install.stderr
    tool = root / "opt/pricesvc/bin/pricesvc-backup"
    assert str(REPO) not in tool.read_text()
    return tool


def test_backups_restore_the_latest_point_and_exactly_a_point_in_time_while_pricesvc_serves(own_database, anon_key,
                                                                                             tmp_path):
    """One proof of the single-node topology: scripts/dev/backup.sh takes the backups and restores the latest
    point; the installed pricesvc-backup lists them and restores to a point in time (PostgreSQL stopped and
    started by pg_ctl); then the ambiguous "latest" is refused. (The cluster's drill is in integration/cluster.)"""
    pg_dir, env, db, server = own_database
    tool = install_pricesvc_backup(tmp_path / "root")

    def installed(*args, timeout: float = 240) -> dict:
        config = (pg_dir / "cluster" if (pg_dir / "cluster").is_symlink() else pg_dir).resolve() / "pgbackrest/pgbackrest.conf"
        result = subprocess.run([str(tool), "--config", str(config), *map(str, args)], capture_output=True,
                                text=True, timeout=timeout, cwd=tmp_path)
        assert result.returncode == 0, f"pricesvc-backup {args[0]} failed ({result.returncode}):\n{result.stderr[-3000:]}"
        return json.loads(result.stdout.strip().splitlines()[-1])

    assert backup_sh("backups", pg_dir)["backups"] == []
    full = backup_sh("backup", pg_dir, "full")
    assert full["type"] == "full" and full["size_bytes"] > 0 and full["wal_start"] <= full["wal_stop"]
    assert db.scalar("show archive_mode") == "on" and db.scalar("show track_commit_timestamp") == "on"

    api = server.api(anon_key)
    session = api.new_session()
    token = session["access_token"]
    session_id_text = jwt_claims(token)["session_id"]

    submit = submitter(api, token)
    before = submit(4)
    wait_past_backup(db, full)
    point_t = db.scalar("select now()")
    middle = submit(3)
    incremental = backup_sh("backup", pg_dir)
    assert incremental["type"] == "incr" and incremental["prior"] == full["label"]
    after = submit(3)  # ten: the cap
    assert api.submit(report(), token).status_code == 429
    listed = backup_sh("backups", pg_dir)
    assert [b["label"] for b in listed["backups"]] == [full["label"], incremental["label"]]
    assert listed["archive"]["max"] >= incremental["wal_stop"]
    assert installed("backups")["backups"] == listed["backups"] and Path(listed["repository"]).is_dir()
    stamps = db.psql("select client_report_id || '@' || pg_xact_commit_timestamp(xmin) from public.price_reports order by 1")
    # A backup once held the signing keys in plain text. The repository is encrypted by default, with a passphrase file of its own.
    # Neither the signing secret nor a session id is anywhere in it in plain text (zstd-compressed or
    # not): backups or WAL archive. The restores below read it back.
    assert_repository_keeps_no_secret(pg_dir, listed["repository"], [
        env.secret.encode(), session_id_text.encode(), uuid.UUID(session_id_text).bytes])

    # The latest point of a live database: what is not archived yet is archived first.
    latest = backup_sh("restore", pg_dir)
    assert latest["target"] == "latest" and latest["restored_backup"] == incremental["label"]
    assert db.count_reports(before + middle + after) == 10
    assert db.psql("select client_report_id || '@' || pg_xact_commit_timestamp(xmin) from public.price_reports order by 1") == stamps
    # pricesvc reconnected by itself, and the reporter is still at the cap (commit times survived).
    assert api.submit(report(), token).status_code == 429
    migrated_again = env.migrate()
    assert "already up to date" in migrated_again.stdout + migrated_again.stderr
    assert db.scalar("select count(*) from pg_settings where name like 'recovery_target%' and source <> 'default'") == "0"

    at_t = installed("restore", "--to", point_t)
    assert at_t["restored_backup"] == full["label"] and at_t["timeline"] > latest["timeline"]
    assert db.count_reports(before) == 4 and db.count_reports(middle + after) == 0
    assert db.scalar("select count(*) from public.price_reports") == "4"
    # Six more fit under the cap again, as they did at T; the seventh does not.
    submit(6)
    assert api.submit(report(), token).status_code == 429
    # Each restore ended with a full backup of its new timeline.
    listed = installed("backups")
    labels = [b["label"] for b in listed["backups"]]
    assert latest["backup_after_restore"] in labels and at_t["backup_after_restore"] in labels
    timelines = {t["timeline"]: t for t in listed["timelines"]}
    assert timelines[at_t["timeline"]]["reason"].startswith("before ") and at_t["from_timeline"] == 1

    # The latest point is now ambiguous (what came after T is on timeline 1 and the one the first
    # restore made): refused, naming the timelines, the database untouched; --plan names what is used.
    refusal = subprocess.run([str(BACKUP_SH), "restore", str(pg_dir)], capture_output=True, text=True, timeout=120)
    assert refusal.returncode != 0 and "nothing was stopped" in refusal.stderr, refusal.stderr
    assert "--timeline" in refusal.stderr and "timeline 1:" in refusal.stderr, refusal.stderr
    assert db.scalar("select count(*) from public.price_reports") == "10"
    plan = backup_sh("restore", pg_dir, "--plan", "--timeline", "1")
    assert plan["timeline"] == 1 and plan["restored_backup"] == incremental["label"], plan
