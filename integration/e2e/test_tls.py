"""TLS to PostgreSQL: pricesvc against a PostgreSQL with `ssl = on`, a test CA made here
with openssl and a `pg_hba.conf` that accepts only `hostssl`. With `sslmode=verify-full` migrate and
serve work, every service connection is encrypted, and a server whose certificate does not verify
(another CA, or another host name) is refused at once with the reason."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest
import requests

from helpers import wait_until_ready

REPO = Path(__file__).resolve().parents[2]
HOST = "db.pricesvc.test"  # the name in the server's certificate; hostaddr= says where it is


def _openssl(*args: str, cwd: Path) -> None:
    result = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def _make_ca(directory: Path, name: str) -> None:
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN=pricesvc test {name}",
             cwd=directory)


class TLSCluster:
    """A private PostgreSQL (scripts/dev/pg-cluster.sh) listening on a loopback address of its own, TLS only."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.address = f"127.{random.randint(1, 254)}.{random.randint(1, 254)}.{random.randint(2, 254)}"
        started = self._cluster("start")
        values = dict(part.split("=", 1) for part in started.strip().splitlines()[-1].split())
        self.pghost, self.pguser = values["PGHOST"], values["PGUSER"]
        real = Path(self.pghost)
        data = real / "data"
        owner = data.stat()
        certs = directory / "certs"
        certs.mkdir()
        _make_ca(certs, "ca")
        _make_ca(certs, "other-ca")
        _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", "server.key",
                 "-out", "server.csr", "-subj", f"/CN={HOST}", cwd=certs)
        (certs / "server.ext").write_text(f"subjectAltName=DNS:{HOST}\nbasicConstraints=CA:FALSE\n"
                                          "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n")
        _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                 "-out", "server.crt", "-days", "2", "-extfile", "server.ext", cwd=certs)
        for name in ("server.crt", "server.key"):
            target = real / name
            target.write_bytes((certs / name).read_bytes())
            os.chown(target, owner.st_uid, owner.st_gid)
            target.chmod(0o600)
        self.ca, self.other_ca = str(certs / "ca.crt"), str(certs / "other-ca.crt")
        (real / "local.conf").write_text(f"ssl = on\nssl_cert_file = '{real}/server.crt'\n"
                                         f"ssl_key_file = '{real}/server.key'\nlisten_addresses = '{self.address}'\n")
        # Over TCP only hostssl: a connection without TLS finds no entry (the cluster sample's rule).
        hba = data / "pg_hba.conf"
        hba.write_text("local all all peer map=pricesvc\nhostssl all all 127.0.0.0/8 trust\n")
        os.chown(hba, owner.st_uid, owner.st_gid)
        self._cluster("restart")

    def _cluster(self, command: str) -> str:
        result = subprocess.run([str(REPO / "scripts/dev/pg-cluster.sh"), command, str(self.directory / "pg")],
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def url(self, user: str, host: str = HOST, root_cert: str | None = None, sslmode: str = "verify-full") -> str:
        return (f"postgresql://{user}@{host}:5432/pricesvc?hostaddr={self.address}&sslmode={sslmode}"
                f"&sslrootcert={root_cert or self.ca}&connect_timeout=5")

    def psql(self, sql: str) -> str:
        result = subprocess.run(["psql", "-X", "-A", "-t", "-h", self.pghost, "-U", self.pguser, "-d", "pricesvc",
                                 "-c", sql], capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return result.stdout.strip()

    def destroy(self) -> None:
        self._cluster("destroy")
        for name in ("local.conf", "server.crt", "server.key"):  # pg-cluster.sh's folder may be under /var/tmp
            (Path(self.pghost) / name).unlink(missing_ok=True)


@pytest.fixture(scope="module")
def tls_cluster(env, tmp_path_factory):
    cluster = TLSCluster(tmp_path_factory.mktemp("tls"))
    try:
        migrate = env.run("migrate", "--migration-database-url", cluster.url(cluster.pguser), timeout=300)
        assert migrate.returncode == 0, migrate.stdout + migrate.stderr
        yield cluster
    finally:
        cluster.destroy()


def _serve(env, tmp_path: Path, database_url: str) -> tuple[subprocess.Popen, Path]:
    stderr_path = tmp_path / f"serve-{time.monotonic_ns()}.stderr"
    with open(stderr_path, "wb") as err:
        process = subprocess.Popen([env.bin, "serve"], stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL,
                                   env=env.base_env(DATABASE_URL=database_url, LISTEN="127.0.0.1:0", ACCESS_LOG="false",
                                                    STARTUP_TIMEOUT=30),
                                   cwd=str(REPO), start_new_session=True)
    return process, stderr_path


def _refused(env, tmp_path: Path, database_url: str) -> str:
    """serve's one stderr line when it refuses to start; it must not wait out the 30 s start-up timeout."""
    started = time.monotonic()
    process, stderr_path = _serve(env, tmp_path, database_url)
    try:
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    elapsed = time.monotonic() - started
    lines = [line for line in stderr_path.read_text().splitlines() if line.strip()]
    assert code == 1 and len(lines) == 1, (code, lines)
    assert elapsed < 15, f"a certificate that does not verify must not be retried ({elapsed:.1f} s)"
    return lines[0]


def test_serve_with_verify_full_is_ready_and_every_connection_is_encrypted(env, tls_cluster, tmp_path):
    process, stderr_path = _serve(env, tmp_path, tls_cluster.url("authenticator"))
    try:
        url = wait_until_ready(process, stderr_path, 40)
        anon_key = env.run("keys").stdout.strip()
        signup = requests.post(url + "/auth/v1/signup", json={"data": {}}, headers={"apikey": anon_key}, timeout=10)
        assert signup.status_code == 200, signup.text
        rows = tls_cluster.psql("select count(*), bool_and(s.ssl), min(s.version) from pg_stat_ssl s "
                                "join pg_stat_activity a using (pid) where a.application_name = 'pricesvc'")
        count, all_encrypted, protocol = rows.split("|")
        assert int(count) >= 1 and all_encrypted == "t" and protocol.startswith("TLSv1."), rows
    finally:
        if process.poll() is None:
            process.terminate()
            process.wait(timeout=15)


def test_a_connection_without_tls_finds_no_pg_hba_entry(env, tls_cluster, tmp_path):
    line = _refused(env, tmp_path, tls_cluster.url("authenticator", sslmode="disable"))
    assert "pg_hba.conf has no entry" in line and "no encryption" in line, line


def test_a_server_certificate_from_another_ca_is_refused_with_the_reason(env, tls_cluster, tmp_path):
    line = _refused(env, tmp_path, tls_cluster.url("authenticator", root_cert=tls_cluster.other_ca))
    assert "TLS certificate does not verify" in line and "retrying will not help" in line, line


def test_a_server_certificate_for_another_host_name_is_refused_with_the_reason(env, tls_cluster, tmp_path):
    line = _refused(env, tmp_path, tls_cluster.url("authenticator", host="other.pricesvc.test"))
    assert "not for this host name" in line and "other.pricesvc.test" in line, line
