"""The package: a release binary that runs without the Swift toolchain, finds its
migrations wherever it is started, installs with a hardened systemd unit, and becomes a .deb that
unpacks into a scratch root, serves from there, and that lintian accepts."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from helpers import wait_until_ready

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 40


def _serve(env, binary: str, tmp_path: Path, cwd: str = "/", **settings) -> tuple[subprocess.Popen, str, Path]:
    """`binary serve` from `cwd` with no migrations directory set; returns once /readyz answers 200."""
    stderr_path = tmp_path / f"serve-{time.monotonic_ns()}.stderr"
    process_env = env.base_env(MIGRATIONS_DIR=None, LISTEN="127.0.0.1:0", ACCESS_LOG="false", **settings)
    with open(stderr_path, "wb") as err:
        process = subprocess.Popen([binary, "serve"], env=process_env, stdout=subprocess.DEVNULL, stderr=err,
                                   stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True)
    try:
        return process, wait_until_ready(process, stderr_path, START_TIMEOUT), stderr_path
    except AssertionError as error:
        _stop(process)
        raise AssertionError(f"{binary} serve (cwd {cwd}) did not become ready: {error}") from None


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _version_line(binary: str) -> re.Match:
    result = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"pricesvc (\S+) \(commit (\S+), Swift (\S+)\)\n", result.stdout)
    assert match, result.stdout
    return match


def test_the_release_binary_needs_no_swift_toolchain(env):
    ldd = subprocess.run(["ldd", env.bin], capture_output=True, text=True, timeout=30)
    assert ldd.returncode == 0, ldd.stderr
    libraries = [line.strip() for line in ldd.stdout.splitlines() if line.strip()]
    assert len(libraries) >= 4, ldd.stdout  # libc, libpq, libmicrohttpd, libcrypto at least
    assert "/opt/swift" not in ldd.stdout and "not found" not in ldd.stdout, ldd.stdout
    assert not any("libswiftCore" in line or "libFoundation" in line for line in libraries), ldd.stdout
    dynamic = subprocess.run(["readelf", "-d", env.bin], capture_output=True, text=True, timeout=30)
    assert dynamic.returncode == 0 and "/opt/swift" not in dynamic.stdout, dynamic.stdout
    # Run it with the toolchain out of sight: /opt/swift hidden under an empty tmpfs in a private mount
    # namespace, and an environment with nothing in it.
    namespaces = ["--mount"] if os.geteuid() == 0 else ["--user", "--map-root-user", "--mount"]
    hidden = subprocess.run(["unshare", *namespaces, "--", "sh", "-c",
                             f"mount -t tmpfs none /opt/swift && ! ls /opt/swift/usr 2>/dev/null && exec env -i '{env.bin}' --version"],
                            capture_output=True, text=True, timeout=30)
    assert hidden.returncode == 0, hidden.stderr
    assert hidden.stdout.startswith("pricesvc "), hidden.stdout


def test_version_names_the_changelog_release_and_a_commit_of_this_repository(env):
    version, commit, _ = _version_line(env.bin).groups()
    newest = re.search(r"^## (\S+)", (REPO / "CHANGELOG.md").read_text(), re.M)
    assert newest and newest.group(1) == version
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    # `git describe`: HASH, HASH-dirty or vX-N-gHASH; the hash is a commit of this repository.
    described = re.fullmatch(r"(?:v\S+-\d+-g)?([0-9a-f]{7,40})(?:-dirty)?|v[0-9][^-]*", commit)
    assert described, commit
    if described.group(1):
        known = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", described.group(1) + "^{commit}"],
                               capture_output=True, timeout=30)
        assert known.returncode == 0, f"commit {commit} is not in this repository"


def test_serve_started_from_the_root_directory_finds_the_migrations_it_was_built_with(migrated, tmp_path):
    process, url, stderr_path = _serve(migrated, migrated.bin, tmp_path, cwd="/")
    try:
        assert requests.get(url + "/readyz", timeout=10).status_code == 200
        assert f"migrations from {REPO / 'migrations'} (source tree)" in stderr_path.read_text()
    finally:
        _stop(process)


def _assert_backup_tool_installed(prefix: Path, unitdir: Path, runs_as: Path | None = None) -> None:
    """pricesvc-backup in PREFIX/bin with its code in PREFIX/lib/pricesvc, and the service and
    timers that schedule it, which systemd accepts (the instances the timers start included). `runs_as`:
    the path the unit names when PREFIX is a staging root (then systemd cannot verify the instances)."""
    tool = prefix / "bin/pricesvc-backup"
    assert os.access(tool, os.X_OK)
    assert {path.name for path in (prefix / "lib/pricesvc").iterdir()} == {"backup-lib.sh", "backup-info.py"}
    shown = subprocess.run([str(tool), "--help"], capture_output=True, text=True, timeout=30, cwd="/")
    assert shown.returncode == 0, shown.stderr
    for line in ("Usage: pricesvc-backup ", "  backup [full|incr] ", "  backups ", "  restore [--to TIME] [--timeline N|latest]"):
        assert line in shown.stdout, line
    refused = subprocess.run([str(tool), "no-such-command"], capture_output=True, text=True, timeout=30, cwd="/")
    assert refused.returncode == 2 and "Usage: pricesvc-backup" in refused.stderr
    service = (unitdir / "pricesvc-backup@.service").read_text()
    assert f"ExecStart={runs_as or tool} $PRICESVC_BACKUP_OPTIONS backup %i" in service.splitlines(), service
    units = [unitdir / "pricesvc-backup-full.timer", unitdir / "pricesvc-backup-incr.timer"]
    for timer, instance in zip(units, ("full", "incr")):
        assert f"Unit=pricesvc-backup@{instance}.service" in timer.read_text().splitlines()
    if runs_as is None:
        units += [unitdir / "pricesvc-backup@full.service", unitdir / "pricesvc-backup@incr.service"]
    verify = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and "pricesvc-backup" not in verify.stderr, verify.stderr


def test_make_install_puts_a_binary_migrations_and_a_hardened_unit_that_systemd_accepts(migrated, tmp_path):
    prefix = tmp_path / "usr-local"
    result = subprocess.run(["make", "-s", "install", f"PREFIX={prefix}"], cwd=REPO, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    binary = prefix / "bin/pricesvc"
    assert os.access(binary, os.X_OK)
    shipped = sorted(path.name for path in (REPO / "migrations").glob("*.sql"))
    installed = prefix / "share/pricesvc/migrations"
    assert sorted(path.name for path in installed.glob("*.sql")) == shipped and len(shipped) > 10
    # The migrator reads these beside the SQL: without them an installed pricesvc would declare no schema
    # version and refuse a database that recorded a superseded checksum.
    for name in ("VERSION", "superseded.txt"):
        assert (installed / name).read_bytes() == (REPO / "migrations" / name).read_bytes(), name
    assert (prefix / "lib/sysusers.d/pricesvc.conf").read_text().splitlines()[-1].startswith("u pricesvc ")
    assert (prefix / "etc/pricesvc/pricesvc.env").stat().st_mode & 0o077 == 0
    unit_path = prefix / "lib/systemd/system/pricesvc.service"
    unit = unit_path.read_text()
    for line in (f"ExecStart={binary} serve", "User=pricesvc", "ProtectSystem=strict", "NoNewPrivileges=yes",
                 f"LoadCredential=jwt-secret:{prefix}/etc/pricesvc/jwt-secret",
                 "Environment=PRICESVC_JWT_SECRET_FILE=%d/jwt-secret", "CapabilityBoundingSet=", "PrivateTmp=yes"):
        assert line in unit.splitlines(), line
    assert "@" not in "".join(line for line in unit.splitlines() if not line.startswith(("#", "SystemCallFilter")))
    verify = subprocess.run(["systemd-analyze", "verify", str(unit_path)], capture_output=True, text=True, timeout=60)
    assert verify.returncode == 0 and "pricesvc.service" not in verify.stderr, verify.stderr
    _assert_backup_tool_installed(prefix, prefix / "lib/systemd/system")
    # The installed binary, started from /, serves the installed migrations.
    process, url, stderr_path = _serve(migrated, str(binary), tmp_path, cwd="/")
    try:
        assert f"migrations from {installed} (installed)" in stderr_path.read_text()
    finally:
        _stop(process)


def test_the_deb_unpacked_into_a_scratch_root_serves_and_lintian_finds_no_errors(migrated, tmp_path):
    result = subprocess.run([str(REPO / "packaging/package-deb.sh"), str(tmp_path / "out")], cwd=REPO,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    deb = Path(result.stdout.strip().splitlines()[-1])
    version, commit, _ = _version_line(migrated.bin).groups()
    fields = subprocess.run(["dpkg-deb", "--field", str(deb), "Package", "Version", "Depends", "Recommends"],
                            capture_output=True, text=True, timeout=60).stdout
    assert "Package: pricesvc" in fields and f"Version: {version}" in fields, fields
    for dependency in ("libc6", "libpq5", "libmicrohttpd12", "adduser"):
        assert dependency in fields, fields
    assert re.search(r"^Recommends: .*\bpgbackrest\b", fields, re.M), fields

    root = tmp_path / "root"
    unpack = subprocess.run(["dpkg", "-x", str(deb), str(root)], capture_output=True, text=True, timeout=120)
    assert unpack.returncode == 0, unpack.stderr
    binary = root / "usr/bin/pricesvc"
    assert _version_line(str(binary)).group(2) == commit
    assert (root / "lib/systemd/system/pricesvc.service").is_file()
    assert (root / "usr/share/man/man1/pricesvc.1.gz").is_file() and (root / "usr/share/doc/pricesvc/copyright").is_file()
    assert (root / "usr/share/man/man1/pricesvc-backup.1.gz").is_file()
    assert (root / "usr/share/doc/pricesvc/docs/grafana-dashboard.json").is_file()
    _assert_backup_tool_installed(root / "usr", root / "lib/systemd/system", runs_as=Path("/usr/bin/pricesvc-backup"))
    process, url, stderr_path = _serve(migrated, str(binary), tmp_path, cwd="/")
    try:
        assert f"migrations from {root}/usr/share/pricesvc/migrations (installed)" in stderr_path.read_text()
        signup = requests.post(url + "/auth/v1/signup", json={"data": {}}, timeout=10,
                               headers={"apikey": migrated.run("keys").stdout.strip()})
        assert signup.status_code == 200, signup.text
    finally:
        _stop(process)

    lintian = subprocess.run(["lintian", "--tag-display-limit", "0", str(deb)], capture_output=True, text=True,
                             timeout=900)
    errors = [line for line in lintian.stdout.splitlines() if line.startswith("E: ")]
    assert not errors and lintian.returncode == 0, lintian.stdout + lintian.stderr
