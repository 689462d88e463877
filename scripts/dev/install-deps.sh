#!/usr/bin/env bash
# Installs the Debian packages pricesvc builds, runs and tests with; a no-op when all are present.
# Swift itself comes with the machine (/opt/swift); everything else is here. etcd, Patroni and HAProxy
# are for the replicated topology (scripts/topology/cluster.sh) and its tests.
set -euo pipefail

packages=(
  libpq-dev libmicrohttpd-dev libssl-dev pkg-config
  postgresql postgresql-contrib postgresql-15-pgtap libtap-parser-sourcehandler-pgtap-perl
  postgresql-15-postgis-3  # places (migrations/0023_places.sql): PostGIS; pg_trgm comes with postgresql-15 (contrib)
  python3-venv
  etcd-server patroni haproxy curl
  pgbackrest  # scripts/dev/backup.sh, scripts/topology/cluster.sh backup|restore: WAL archiving and point-in-time restore
  zstd  # scripts/ops/backup-info.py: reads archived WAL (zstd-compressed) to list timelines and check restore targets
  chromium chromium-driver  # integration/e2e/test_browser_cors.py: CORS proven in a real browser
  dpkg-dev binutils lintian systemd  # make deb (dpkg-shlibdeps, strip), and integration/e2e/test_package.py: lintian, systemd-analyze verify
  openssl  # integration/e2e/test_tls.py: a test CA and the database's certificate
  prometheus  # promtool: integration/e2e/test_alerts.py checks and unit-tests docs/alerts.yml
)
if [ "${1:-}" = "--bench" ]; then
  packages+=(wrk nginx-light)
fi

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# The Debian nginx, postgresql, etcd, haproxy and prometheus packages start system services; pricesvc runs its own
# private instances, so keep the system ones from starting.
policy=/usr/sbin/policy-rc.d
restore_policy=false
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod +x "$policy"
  restore_policy=true
fi
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
$restore_policy && $sudo rm -f "$policy"
exit 0
