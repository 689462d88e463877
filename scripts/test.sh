#!/usr/bin/env bash
# `make test`: a throwaway PostgreSQL cluster, the migrations, then every suite against it:
# pgTAP policies (pg_prove), the concurrency check, Swift tests, the fuzz targets, and the end-to-end suite that
# drives a real pricesvc with curl-like requests and the unmodified supabase Python client. Last, the
# replicated topology of docs/deployment.md (scripts/cluster.sh) and its failover drill.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)
export PATH=/opt/swift/usr/bin:$PATH
state=$root/var/test
bin=$root/.build/release/pricesvc

step() { printf '\n== %s\n' "$*"; }
failures=()
run_suite() {  # name, command...
  local name=$1; shift
  step "$name"
  if "$@"; then echo "-- $name: ok"; else echo "-- $name: FAILED"; failures+=("$name"); fi
}

step "build"
scripts/build.sh || exit 1
swift build --build-tests || exit 1
# The previous release, for the rolling-upgrade test (tests/e2e/test_upgrade.py): built from git once per
# commit and cached in var/previous-release (a release build: minutes the first time, nothing after).
scripts/previous-release.sh || exit 1

step "fresh PostgreSQL cluster in $state/pg"
scripts/cluster.sh down "$state/cluster" >/dev/null 2>&1 || true
scripts/pg-cluster.sh destroy "$state/pg" >/dev/null 2>&1 || true
rm -rf "$state"
mkdir -p "$state"
eval "$(scripts/pg-cluster.sh start "$state/pg" | tail -n 1)" || exit 1
export PGHOST PGUSER PGDATABASE=pricesvc
trap 'scripts/cluster.sh down "$state/cluster" >/dev/null 2>&1 || true; scripts/pg-cluster.sh stop "$state/pg" >/dev/null 2>&1 || true' EXIT

owner_url="postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
secret=$(head -c 48 /dev/urandom | base64 -w0)
export PRICESVC_TEST_JWT_SECRET=$secret
step "migrate"
PRICESVC_JWT_SECRET=$secret "$bin" migrate --migration-database-url "$owner_url" || exit 1

run_suite "migrations/ layout (scripts/lint-migrations.py)" scripts/lint-migrations.py
run_suite "pgTAP policies" pg_prove --failures -d pricesvc -h "$PGHOST" -U "$PGUSER" tests/pgtap/*.sql
run_suite "50 parallel inserts, one reporter" tests/concurrency/parallel_inserts.sh
run_suite "1 600 parallel inserts, one median store" tests/concurrency/median_store.sh
run_suite "median rule: random histories vs the raw reports (tests/differential)" tests/differential/median_rule.py --pricesvc "$bin"

export PRICESVC_TEST_PGHOST=$PGHOST PRICESVC_TEST_PGUSER=$PGUSER
run_suite "swift test" swift test --skip-build
# Every parser under libFuzzer (Fuzz/, docs/fuzzing.md): each committed crash and seed replayed, then 20 s
# of fuzzing per target, after one sanitizer build.
run_suite "fuzzing: every target × 20 s" scripts/fuzz.sh 20

step "python virtual environment (.venv)"
wanted=$(sha256sum tests/e2e/requirements.txt | cut -c1-64)
if [ ! -x .venv/bin/pytest ] || [ "$(cat .venv/.requirements-sha 2>/dev/null)" != "$wanted" ]; then
  python3 -m venv .venv && .venv/bin/pip install -q --disable-pip-version-check -r tests/e2e/requirements.txt || exit 1
  echo "$wanted" > .venv/.requirements-sha
fi
export PRICESVC_BIN=$bin PRICESVC_TEST_PG_DIR=$state/pg PRICESVC_OWNER_URL=$owner_url
run_suite "end-to-end (real pricesvc, curl, supabase-py)" .venv/bin/pytest -q tests/e2e
# Its own etcd, Patroni nodes, HAProxy and pricesvc instances (scripts/cluster.sh), not the cluster above.
run_suite "cluster: Patroni failover drill, HAProxy limits, replica reads, backup and restore drill" \
  env PRICESVC_TEST_CLUSTER_DIR="$state/cluster" PRICESVC_TEST_CLUSTER_REPORT="$state/failover-drill.json" \
  PRICESVC_TEST_RESTORE_REPORT="$state/restore-drill.json" .venv/bin/pytest -q tests/cluster
[ -f "$state/failover-drill.json" ] && { echo "failover drill:"; cat "$state/failover-drill.json"; }
[ -f "$state/restore-drill.json" ] && { echo "restore drill:"; cat "$state/restore-drill.json"; }

echo
if [ ${#failures[@]} -eq 0 ]; then
  echo "make test: every suite passed"
  exit 0
fi
echo "make test: failed suites: ${failures[*]}"
exit 1
