#!/usr/bin/env bash
# `make test`: every deterministic check, in at most 10 minutes on a 2-core machine, the same verdict every run.
# Builds, a throwaway PostgreSQL cluster, the migrations, then every suite against it: pgTAP policies
# (pg_prove), the concurrency races, Swift tests (with the replay of every committed fuzz input), and the
# end-to-end suite that drives a real pricesvc with curl-like requests, psql and the unmodified supabase
# Python client. Beside that, the replicated topology of docs/deployment.md (scripts/topology/cluster.sh) and its
# drills; it starts in the background as soon as the binary exists, while the single-node suites run.
#
#   scripts/dev/test.sh          make test
#   scripts/dev/test.sh --all    make test-all (nightly): also what make test leaves out because it searches at
#                                random or takes long: timed libFuzzer runs (scripts/dev/fuzz.sh, FUZZ_SECONDS, 60 s
#                                a target), schemathesis with a new random seed, and the tests marked `nightly`.
#
# Each suite's wall time goes to var/test/timings.tsv (suite, seconds, budget, result) and is printed at the
# end; a suite over its budget is named. pytest prints its slowest tests, pg_prove its timings.
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd -P)
export PATH=/opt/swift/usr/bin:$PATH
# Every build in this run (the release binary here, `make run` and `make demo` inside the e2e suites) names
# the same commit: without this, a file edited while the suites run makes `git describe --dirty` change,
# and the e2e suite's `make run` relinks .build/release/pricesvc while other tests are starting it ("Text
# file busy"). Plugins/BuildCommit reads BUILD_COMMIT and rewrites nothing when it is unchanged.
export BUILD_COMMIT=${BUILD_COMMIT:-$(git -c safe.directory='*' describe --always --dirty --abbrev=12 --match 'v[0-9]*' 2>/dev/null || echo unknown)}
state=$root/var/test
bin=$root/.build/release/pricesvc
all=0
case ${1:-} in
--all) all=1 ;;
"") ;;
*) echo "usage: $0 [--all]" >&2; exit 2 ;;
esac

step() { printf '\n== %s\n' "$*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
failures=() over=() timing_rows=()
# suite name, seconds, budget, result: one row of the table (and of timings.tsv).
record() {
  timing_rows+=("$(printf '%s\t%.0f\t%s\t%s' "$1" "$2" "$3" "$4")")
  [ "$4" = ok ] || failures+=("$1")
  awk -v s="$2" -v b="$3" 'BEGIN { exit !(s > b) }' && over+=("$1 ($(printf '%.0f' "$2") s, budget $3 s)")
  return 0
}
# run_suite NAME BUDGET_SECONDS COMMAND...
run_suite() {
  local name=$1 budget=$2 started result=ok; shift 2
  step "$name"
  started=$(now)
  "$@" || result=FAILED
  echo "-- $name: $result"
  record "$name" "$(since "$started")" "$budget" "$result"
}
print_timings() {
  echo
  printf '%-70s %8s %8s  %s\n' suite seconds budget result
  local row total=0
  for row in "${timing_rows[@]}"; do
    IFS=$'\t' read -r name seconds budget result <<<"$row"
    printf '%-70s %8s %8s  %s\n' "$name" "$seconds" "$budget" "$result"
  done
  printf '%-70s %8.0f %8s\n' "make test, wall time" "$(since "$begun")" 600
  mkdir -p "$state"
  { printf 'suite\tseconds\tbudget\tresult\n'; printf '%s\n' "${timing_rows[@]}"; } >"$state/timings.tsv"
  [ ${#over[@]} -eq 0 ] || printf 'over budget: %s\n' "${over[@]}"
}
begun=$(now)

# The Python virtual environment (.venv) installs from PyPI while Swift builds: it waits on the network, the
# build on the CPU.
venv_log=$root/var/venv.log
mkdir -p "$root/var"
scripts/dev/venv.sh >"$venv_log" 2>&1 &
venv_pid=$!

started=$(now)
step "build: the release binary, the test build"
build_ok=ok
scripts/dev/build.sh && swift build --build-tests || build_ok=FAILED
record "build (release binary, test build)" "$(since "$started")" 240 "$build_ok"
[ "$build_ok" = ok ] || { print_timings; exit 1; }

# The previous release, for the rolling-upgrade test (integration/e2e/test_upgrade.py): built from git once per
# commit into a cache shared by clones (scripts/dev/previous-release.sh), in the background while the
# single-node suites run; the test waits for it.
scripts/dev/previous-release.sh >"$root/var/previous-release.log" 2>&1 &

cluster_dir=$state/cluster
step "fresh PostgreSQL cluster in $state/pg (throwaway: no fsync)"
scripts/topology/cluster.sh down "$cluster_dir" >/dev/null 2>&1 || true
scripts/dev/pg-cluster.sh destroy "$state/pg" >/dev/null 2>&1 || true
rm -rf "$state"
mkdir -p "$state"
eval "$(PG_CLUSTER_THROWAWAY=1 scripts/dev/pg-cluster.sh start "$state/pg" | tail -n 1)" || exit 1
export PGHOST PGUSER PGDATABASE=pricesvc
trap 'scripts/topology/cluster.sh down "$cluster_dir" >/dev/null 2>&1 || true; scripts/dev/pg-cluster.sh stop "$state/pg" >/dev/null 2>&1 || true
  scripts/dev/pg-cluster.sh stop "$state/pg-apart" >/dev/null 2>&1 || true' EXIT

# The replicated topology comes up in the background (its own durable clusters, not the one above); the
# cluster suite finds it running, or brings up what failed to start.
# The environment is integration/cluster/conftest.py's cluster_env(): no PRICESVC_* setting but the binary, and WAL
# archived within 5 s.
mapfile -t unset_settings < <(compgen -e | grep '^PRICESVC_' | sed 's/^/--unset=/')
env "${unset_settings[@]}" PRICESVC_BIN="$bin" CLUSTER_ARCHIVE_TIMEOUT=5 \
  scripts/topology/cluster.sh up "$cluster_dir" >"$state/cluster-up.log" 2>&1 &

owner_url="postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
secret=$(head -c 48 /dev/urandom | base64 -w0)
export PRICESVC_TEST_JWT_SECRET=$secret
step "migrate"
PRICESVC_JWT_SECRET=$secret "$bin" migrate --migration-database-url "$owner_url" || exit 1

# swift test needs the CPU and the suites below mostly the database: they run side by side, swift test's
# output kept in var/test/swift-test.log and its failures shown when it ends.
export PRICESVC_TEST_PGHOST=$PGHOST PRICESVC_TEST_PGUSER=$PGUSER
swift_log=$state/swift-test.log
(
  started=$(now) result=ok
  swift test --skip-build >"$swift_log" 2>&1 || result=FAILED
  printf '%s\t%s\n' "$(since "$started")" "$result" >"$swift_log.result"
) &
swift_pid=$!

run_suite "migrations/ layout (scripts/dev/lint-migrations.py)" 5 scripts/dev/lint-migrations.py
run_suite "pgTAP policies" 45 pg_prove --timer --failures -d pricesvc -h "$PGHOST" -U "$PGUSER" integration/pgtap/*.sql
run_suite "50 parallel inserts, one reporter" 10 integration/concurrency/parallel_inserts.sh
run_suite "1 600 parallel inserts, one median store" 10 integration/concurrency/median_store.sh
run_suite "median rule: random histories vs the raw reports (integration/differential)" 60 integration/differential/median_rule.py --pricesvc "$bin"

# Includes FuzzReplayTests: every committed fuzz seed and FailCase through its target's checks.
step "swift test (with every committed fuzz input replayed), beside the suites above"
wait "$swift_pid"
IFS=$'\t' read -r swift_seconds swift_result <"$swift_log.result" || swift_result=FAILED
grep -E '✘|error:|fatal|Fatal|crashed|invariant' "$swift_log" | head -n 60
tail -n 3 "$swift_log"
echo "-- swift test: $swift_result (whole output: $swift_log)"
record "swift test (with every committed fuzz input replayed), beside the suites above" "${swift_seconds:-0}" 60 "$swift_result"
[ $all = 1 ] && run_suite "fuzzing: every target × ${FUZZ_SECONDS:-60} s (AddressSanitizer)" 900 scripts/dev/fuzz.sh "${FUZZ_SECONDS:-60}"

step "python virtual environment (.venv)"
started=$(now)
venv_ok=ok
wait "$venv_pid" || { venv_ok=FAILED; cat "$venv_log"; }
record "python virtual environment (.venv), after the build" "$(since "$started")" 30 "$venv_ok"
[ "$venv_ok" = ok ] || { print_timings; exit 1; }

export PRICESVC_BIN=$bin PRICESVC_TEST_PG_DIR=$state/pg PRICESVC_OWNER_URL=$owner_url
# The cluster suite runs beside the end-to-end suite: its own etcd, Patroni nodes, HAProxy and pricesvc
# instances (scripts/topology/cluster.sh, started above), on ports below the ephemeral range; both suites mostly
# wait (on failovers, restores, servers). Its output is kept in var/test/cluster-suite.log and shown after.
cluster_log=$state/cluster-suite.log
(
  started=$(now) result=ok
  env PRICESVC_TEST_CLUSTER_DIR="$cluster_dir" PRICESVC_TEST_CLUSTER_STARTED=1 \
    PRICESVC_TEST_CLUSTER_REPORT="$state/failover-drill.json" PRICESVC_TEST_RESTORE_REPORT="$state/restore-drill.json" \
    .venv/bin/pytest -q --durations=10 integration/cluster >"$cluster_log" 2>&1 || result=FAILED
  printf '%s\t%s\n' "$(since "$started")" "$result" >"$cluster_log.result"
) &
cluster_pid=$!
selection=(-m "not nightly")
[ $all = 1 ] && selection=()
# The slowest end-to-end files that need no state of the others (the packages, the backups, make run,
# schemathesis) run apart, beside the rest, on a PostgreSQL of their own ($state/pg-apart: its own
# database, secret and shared server), so the two halves cannot see each other's data or keys.
apart=(integration/e2e/test_fuzz_openapi.py integration/e2e/test_package.py integration/e2e/test_backup.py integration/e2e/test_make_run.py)
apart_log=$state/e2e-apart.log
(
  started=$(now) result=ok
  env -u PGHOST -u PGUSER -u PGDATABASE -u PRICESVC_OWNER_URL PG_CLUSTER_THROWAWAY=1 \
    PRICESVC_TEST_PG_DIR="$state/pg-apart" PRICESVC_TEST_JWT_SECRET="$(head -c 48 /dev/urandom | base64 -w0)" \
    .venv/bin/pytest -q --durations=10 "${selection[@]}" "${apart[@]}" >"$apart_log" 2>&1 || result=FAILED
  printf '%s\t%s\n' "$(since "$started")" "$result" >"$apart_log.result"
) &
apart_pid=$!
run_suite "end-to-end (real pricesvc, curl, psql, supabase-py, Chromium)" 300 \
  .venv/bin/pytest -q --durations=15 "${selection[@]}" "${apart[@]/#/--ignore=}" integration/e2e
apart_suite="end-to-end, apart (packages, backups, make run, schemathesis), beside the rest"
step "$apart_suite"
wait "$apart_pid"
IFS=$'\t' read -r apart_seconds apart_result <"$apart_log.result" || apart_result=FAILED
cat "$apart_log"
echo "-- end-to-end, apart: $apart_result (whole output: $apart_log)"
record "$apart_suite" "${apart_seconds:-0}" 300 "$apart_result"
cluster_suite="cluster (beside end-to-end): Patroni failover drill, HAProxy limits, replica reads, restore drill"
step "$cluster_suite"
wait "$cluster_pid"
IFS=$'\t' read -r cluster_seconds cluster_result <"$cluster_log.result" || cluster_result=FAILED
cat "$cluster_log"
echo "-- cluster: $cluster_result (whole output: $cluster_log)"
record "$cluster_suite" "${cluster_seconds:-0}" 200 "$cluster_result"
[ -f "$state/failover-drill.json" ] && { echo "failover drill:"; cat "$state/failover-drill.json"; }
[ -f "$state/restore-drill.json" ] && { echo "restore drill:"; cat "$state/restore-drill.json"; }

print_timings
echo
if [ ${#failures[@]} -eq 0 ]; then
  echo "make test: every suite passed"
  exit 0
fi
echo "make test: failed suites: ${failures[*]}"
exit 1
