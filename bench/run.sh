#!/usr/bin/env bash
# `make bench`: pricesvc against its references, side by side, in one run, on this machine.
#
#   1. submissions/s: wrk POST /rest/v1/price_reports (return=minimal) vs pgbench running the same
#      identity + INSERT (RLS, cap trigger, median store), pipelined, one Sync
#   2. that pgbench vs the floor: the same statements into the same table, as a role whose RLS policy
#      takes the reporter from a plain setting instead of verifying the token (bench/setup.sql)
#   3. PostgreSQL CPU per submission, through pricesvc vs from pgbench
#   4. price_medians over 12 locations and 1 000 000 reports: wrk vs pgbench on the same statements
#   5. price_medians over 12 locations of which one has 100 000 reports (pgbench) vs 12 ordinary ones
#   6. GET /healthz vs nginx answering a fixed 11-byte JSON body
#   7. peak RSS (VmHWM) of pricesvc after 256 concurrent connections on healthz + medians
#   8. scale: medians and submissions (pgbench) on a second database of 10 000 000 reports vs this one
#   9. price_quotes for the same 12 locations (medians beside published CDS rates for a 2-hour stay):
#      wrk vs pgbench on the same statements
#  (numbered as in the results table:)
#  11. pricesvc's own CPU per submission vs PostgreSQL's per submission (row 1's pricesvc side)
#  12. the read floor: 12 precomputed rows (bench.floor_medians, one per location) read by primary key,
#      pgbench; price_medians(12) via pgbench (row 4's) vs it
#  13. price_quotes(12, 2 h) via pgbench (row 10's) vs the read floor
#  5f. row 5 right after ANALYZE of the whole database (fresh statistics, as after a seed or a restore),
#      measured before anything else
#  14. a mixed search workload through pricesvc: Zipf-drawn locations, medians and quotes searches and a
#      share of submissions (wrk); searches/s and PostgreSQL CPU per search, reported without a target
#  15. the stay-length curve: price_quotes for 1 location (bench-stay:metered) and stays of 1 hour,
#      1 day, 30 days and 366 days (pgbench); PostgreSQL CPU per call, 366 days vs 1 hour
#  16. places_nearby (500 m, 20 results, no stay) via pgbench over BENCH_PLACES places in a city-sized area,
#      BENCH_LOCATIONS of them with the seeded reports, at a random point each call, vs the read floor (row 12)
#  17. the same call through pricesvc (wrk) vs pgbench on the same SQL
#  18. the same call with a 2-hour stay vs without (pgbench; report only)
#
# Everything runs on loopback and Unix sockets under var/bench; every process started here is
# stopped on exit. Settings (environment):
#   BENCH_SECONDS=10        length of each measured run
#   BENCH_ROUNDS=2          rounds per comparison, alternating which side goes first; rates are averaged
#   BENCH_SUBMIT_ROUNDS=4   rounds for rows 1 and 2: single submission runs vary by ±10 %, so these rows,
#                           whose targets sit closest to their ratios, average more rounds (each shown)
#   BENCH_CLIENTS=16        connections (wrk -c) and clients (pgbench -c), the same for both sides
#   BENCH_THREADS=2         wrk -t and pgbench -j
#   BENCH_MEDIAN_SECONDS    length of each price_medians and price_quotes run (default and at least BENCH_SECONDS)
#   BENCH_RSS_CONNECTIONS=256, BENCH_RSS_SECONDS=5
#   BENCH_REPORTERS=60000   fresh reporters minted per run and per submission side (http, pg, verified,
#                           floor; the pg side is used by BENCH_SUBMIT_ROUNDS + BENCH_ROUNDS runs (row 1, then
#                           row 9's base), each reporter at most once per run, so it stays under the cap)
#   BENCH_REPORTS=1000000   reports seeded once for the median benchmark; BENCH_SEED_REPORTERS=20000,
#   BENCH_LOCATIONS=20000   over that many locations (the benchmark asks for 12 of them)
#   BENCH_POPULAR_REPORTS=100000, BENCH_POPULAR_REPORTERS=20000  the popular location (bench:popular)
#   BENCH_SCALE_REPORTS=10000000  reports of the scale database (pricesvc_scale), seeded once, with
#                           locations and reporters scaled alike so a queried location has the same
#                           shape; 0 skips the scale rows
#   BENCH_STAY_SECONDS=5    length of each stay-length run (row 15: 4 stays × BENCH_ROUNDS)
#   BENCH_STAY_CLIENTS=2    pgbench clients of the stay-length runs (one per core: each backend's start-up
#                           and first plans, paid again by every run, stay a small part of a short run)
#   BENCH_MIX_REPORTERS=20000  fresh reporters for the mixed workload's submissions (row 14; each used at
#                           most once per run while a wrk thread's slice lasts)
#   BENCH_ZIPF_S=1.1, BENCH_SUBMIT_PERCENT=5  the mixed workload's Zipf exponent over the BENCH_LOCATIONS
#                           seeded locations, and its share of submissions
#   BENCH_POOL_SIZE         PRICESVC_POOL_SIZE for the run (default: the service's default)
#   BENCH_PORT, BENCH_NGINX_PORT  (default: free ports)
#   PRICESVC_BIN            default .build/release/pricesvc
#   BENCH_KEEP_PG=1         leave the bench PostgreSQL running at the end (faster reruns)
#   BENCH_PLACES=1000000    places seeded once for rows 16-18 (bench/places_seed.sql)
#   BENCH_PLACES_ONLY=1     after the set-up, run only the read floor (row 12) and the places rows (16-18),
#                           print them and stop (with BENCH_SCALE_REPORTS=0, the shortest way to measure them)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd -P)

BIN=${PRICESVC_BIN:-$root/.build/release/pricesvc}
SECS=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-16}
THREADS=${BENCH_THREADS:-2}
RSS_CONNS=${BENCH_RSS_CONNECTIONS:-256}
RSS_SECS=${BENCH_RSS_SECONDS:-5}
REPORTERS=${BENCH_REPORTERS:-60000}
SEED_REPORTS=${BENCH_REPORTS:-1000000}
SEED_REPORTERS=${BENCH_SEED_REPORTERS:-20000}
SEED_LOCATIONS=${BENCH_LOCATIONS:-20000}
POPULAR_REPORTS=${BENCH_POPULAR_REPORTS:-100000}
POPULAR_REPORTERS=${BENCH_POPULAR_REPORTERS:-20000}
SCALE_REPORTS=${BENCH_SCALE_REPORTS:-10000000}
PLACES=${BENCH_PLACES:-1000000}
PLACES_ONLY=${BENCH_PLACES_ONLY:-0}
WARMUP=${BENCH_WARMUP_SECONDS:-2}
ROUNDS=${BENCH_ROUNDS:-2}
SUBMIT_ROUNDS=${BENCH_SUBMIT_ROUNDS:-4}
STAY_SECS=${BENCH_STAY_SECONDS:-5}
STAY_CLIENTS=${BENCH_STAY_CLIENTS:-2}
MIX_REPORTERS=${BENCH_MIX_REPORTERS:-20000}
ZIPF_S=${BENCH_ZIPF_S:-1.1}
SUBMIT_PERCENT=${BENCH_SUBMIT_PERCENT:-5}
# Runs of price_medians can be set longer when a data shape makes each call slow (wrk counts only
# completed requests).
MEDIAN_SECS=${BENCH_MEDIAN_SECONDS:-$SECS}
# Port 0: pricesvc binds a free port and prints it; nginx gets a free port found just before it starts.
PORT=${BENCH_PORT:-0}
NGINX_PORT=${BENCH_NGINX_PORT:-}
PGBIN=${PGBIN:-/usr/lib/postgresql/15/bin}
PGBENCH=${PGBENCH:-$PGBIN/pgbench}
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)

state=$root/var/bench
out=$state/out
mkdir -p "$state" "$out"
rm -f "$out"/*

die() { echo "bench: $*" >&2; exit 1; }
for setting in ROUNDS SUBMIT_ROUNDS; do
  [[ ${!setting} =~ ^[1-9][0-9]*$ ]] || die "BENCH_$setting must be a whole number of at least 1, not '${!setting}'"
done
# A pg-side reporter reports once in each of row 1's rounds and, with the scale rows, once in each of row
# 9's base runs (a client makes fewer than BENCH_REPORTERS / BENCH_CLIENTS transactions per run at the
# default length); the cap is 10 per hour, so more would measure 429s. "max reports per reporter" in the
# details shows what each side reached.
pg_side_runs=$(( SUBMIT_ROUNDS + (SCALE_REPORTS > 0 ? ROUNDS : 0) ))
(( pg_side_runs <= 10 )) || die "BENCH_SUBMIT_ROUNDS (+ BENCH_ROUNDS with the scale rows) is $pg_side_runs: at most 10, the cap per reporter"
# The mixed workload (row 14) runs BENCH_ROUNDS times; each run starts its reporters from the first.
(( ROUNDS <= 10 )) || die "BENCH_ROUNDS is $ROUNDS: at most 10, the cap per reporter of the mixed workload"
[[ $MIX_REPORTERS =~ ^[0-9]+$ ]] && (( MIX_REPORTERS >= THREADS )) || die "BENCH_MIX_REPORTERS must be a whole number of at least BENCH_THREADS"
[[ $SUBMIT_PERCENT =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v p="$SUBMIT_PERCENT" 'BEGIN { exit !(p <= 100) }' ||
  die "BENCH_SUBMIT_PERCENT must be a number from 0 to 100"
[[ $STAY_CLIENTS =~ ^[1-9][0-9]*$ ]] || die "BENCH_STAY_CLIENTS must be a whole number of at least 1"
[[ $ZIPF_S =~ ^[0-9]+([.][0-9]+)?$ ]] || die "BENCH_ZIPF_S must be a positive number"
note() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

[ -x "$BIN" ] || die "no pricesvc binary at $BIN (make build, or set PRICESVC_BIN)"
for tool in wrk nginx curl python3 "$PGBENCH"; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/dev/install-deps.sh --bench)"
done
[ "$CLIENTS" -ge "$THREADS" ] || die "BENCH_CLIENTS must be ≥ BENCH_THREADS"

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
[ "$PORT" != 0 ] && port_busy "$PORT" && die "127.0.0.1:$PORT is in use (set BENCH_PORT)"
if [ -z "$NGINX_PORT" ]; then
  NGINX_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fi
port_busy "$NGINX_PORT" && die "127.0.0.1:$NGINX_PORT is in use (set BENCH_NGINX_PORT)"

# ---------------------------------------------------------------- cleanup of what we start
pricesvc_pid=""
nginx_dir=$state/nginx
cleanup() {
  local status=$?
  set +e
  if [ -n "$pricesvc_pid" ] && kill -0 "$pricesvc_pid" 2>/dev/null; then
    kill -TERM "$pricesvc_pid"
    for _ in $(seq 50); do kill -0 "$pricesvc_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$pricesvc_pid" 2>/dev/null
    wait "$pricesvc_pid" 2>/dev/null
  fi
  if [ -s "$nginx_dir/nginx.pid" ]; then
    local npid
    npid=$(cat "$nginx_dir/nginx.pid")
    kill -QUIT "$npid" 2>/dev/null
    for _ in $(seq 25); do kill -0 "$npid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$npid" 2>/dev/null
    rm -f "$nginx_dir/nginx.pid"
  fi
  if [ "${BENCH_KEEP_PG:-0}" != 1 ]; then
    scripts/dev/pg-cluster.sh stop "$state/pg" >/dev/null 2>&1
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- CPU accounting from /proc
# Clock ticks used by a process and its children (live ones, and reaped ones via cutime/cstime).
ticks_of() {  # pid → utime+stime+cutime+cstime
  [ -r "/proc/$1/stat" ] || { echo 0; return; }
  # Fields after the ")" of comm: state is $1, so utime=$12 stime=$13 cutime=$14 cstime=$15.
  sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 + $14 + $15 }'
}
tree_ticks() {  # pid → ticks of pid and its direct children (PostgreSQL backends, nginx workers)
  local total child
  total=$(ticks_of "$1")
  for child in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    total=$((total + $(ticks_of "$child")))
  done
  echo "$total"
}
HZ=$(getconf CLK_TCK)

# ---------------------------------------------------------------- PostgreSQL
note "PostgreSQL in $state/pg"
eval "$(scripts/dev/pg-cluster.sh start "$state/pg" | tail -n 1)"   # PGHOST, PGUSER
export PGHOST PGUSER PGDATABASE=pricesvc
postmaster_pid=$(head -n 1 "$PGHOST/data/postmaster.pid")
owner_url="postgresql:///pricesvc?host=$PGHOST&user=$PGUSER"
service_url="postgresql:///pricesvc?host=$PGHOST&user=authenticator"
psql_su() { "$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGHOST" -U "$PGUSER" -d pricesvc "$@"; }

secret_file=$state/jwt-secret
if [ ! -s "$secret_file" ]; then
  (umask 077; head -c 48 /dev/urandom | base64 -w0 | tr '+/' '-_' > "$secret_file")
fi
export PRICESVC_JWT_SECRET_FILE=$secret_file
unset PRICESVC_JWT_SECRET

note "migrate"
"$BIN" migrate --migration-database-url "$owner_url" --database-url "$service_url" >"$out/migrate.log" 2>&1 ||
  { cat "$out/migrate.log" >&2; die "pricesvc migrate failed"; }
psql_su -f bench/setup.sql >/dev/null

# seed DATABASE REPORTS LOCATIONS REPORTERS: the median data, once per shape (bench/seed.sql).
seed() {
  local db=$1 reports=$2 locations=$3 reporters=$4
  local marker="medians:$reports:$locations:$reporters:popular:$POPULAR_REPORTS:$POPULAR_REPORTERS:store"
  if [ "$(psql_su -d "$db" -tAc "select count(*) from bench.seeded where what = '$marker'")" != 1 ]; then
    note "seeding $db: $reports reports over $locations locations from $reporters reporters, $POPULAR_REPORTS at bench:popular (once)"
    # Without triggers: the seed rebuilds the median store itself.
    psql_su -d "$db" -c "set session_replication_role = replica" \
      -c "delete from public.price_reports where location_id like 'bench:loc-%' or location_id = 'bench:popular'" \
      -c "truncate bench.seeded" >/dev/null
    psql_su -d "$db" -v reports="$reports" -v reporters="$reporters" -v locations="$locations" \
      -v popular_reports="$POPULAR_REPORTS" -v popular_reporters="$POPULAR_REPORTERS" \
      -v marker="$marker" -f bench/seed.sql >/dev/null
  fi
}
seed pricesvc "$SEED_REPORTS" "$SEED_LOCATIONS" "$SEED_REPORTERS"
# The read floor's table (rows 12, 13), from the seeded reports, once per seed.
if [ "$(psql_su -tAc "select count(*) from bench.seeded
                      where what = 'read-floor' and to_regclass('bench.floor_medians') is not null")" != 1 ]; then
  note "building the read floor (bench.floor_medians: one row per seeded location)"
  psql_su -v marker=read-floor -f bench/read_floor.sql >/dev/null
fi
# The places of rows 16-18, once per shape.
places_marker="places:$PLACES:$SEED_LOCATIONS:geohash"
if [ "$PLACES" -gt 0 ] && [ "$(psql_su -tAc "select count(*) from bench.seeded where what = '$places_marker'")" != 1 ]; then
  note "seeding $PLACES places, $SEED_LOCATIONS of them the seeded locations (once)"
  psql_su -v places="$PLACES" -v reported="$SEED_LOCATIONS" -v marker="$places_marker" -f bench/places_seed.sql >/dev/null
fi
seeded=$(psql_su -tAc "select count(*) from public.price_reports where location_id like 'bench:loc-%'")
if [ "$SCALE_REPORTS" -gt 0 ]; then
  scale_factor=$(( (SCALE_REPORTS + SEED_REPORTS - 1) / SEED_REPORTS ))
  [ "$(psql_su -d postgres -tAc "select 1 from pg_database where datname = 'pricesvc_scale'")" = 1 ] ||
    psql_su -d postgres -c "create database pricesvc_scale" >/dev/null
  scale_url="postgresql:///pricesvc_scale?host=$PGHOST&user=$PGUSER"
  "$BIN" migrate --migration-database-url "$scale_url" --database-url "postgresql:///pricesvc_scale?host=$PGHOST&user=authenticator" \
    >"$out/migrate-scale.log" 2>&1 || { cat "$out/migrate-scale.log" >&2; die "pricesvc migrate (scale database) failed"; }
  psql_su -d pricesvc_scale -f bench/setup.sql >/dev/null
  seed pricesvc_scale "$SCALE_REPORTS" $((SEED_LOCATIONS * scale_factor)) $((SEED_REPORTERS * scale_factor))
  scale_seeded=$(psql_su -d pricesvc_scale -tAc "select count(*) from public.price_reports")
fi

databases=(pricesvc)
[ "$SCALE_REPORTS" -gt 0 ] && databases+=(pricesvc_scale)

# Each run starts from the seeded data. With BENCH_KEEP_PG=1 the submissions of earlier runs (about
# 700 000 a run, at the bench:sub-* locations), their reporters and their queued reports used to stay:
# after a day of runs the "1 000 000 reports" database held 13 M, so row 9 no longer compared sizes.
# The median store's delete trigger rebuilds the groups they leave. A reporter goes only if it is younger
# than 100 days and has no report left: seeded reporters (aged 200 days by bench/seed.sql) stay twice over.
# The mixed workload (row 14) submits at the seeded locations themselves: its reports are the ones made
# there after the seed (the seed dates every report before its own transaction).
for db in "${databases[@]}"; do
  removed=$(psql_su -d "$db" -tA <<'SQL'
with seeded as (select max(at) as at from bench.seeded where what like 'medians:%'),
gone as (delete from public.price_reports r
         where r.location_id like 'bench:sub-%'
            or ((r.location_id like 'bench:loc-%' or r.location_id = 'bench:popular')
                and r.created_at > (select at from seeded))
         returning 1)
select count(*) from gone;
delete from auth.users u
where u.created_at > now() - interval '100 days'
  and not exists (select from public.price_reports r where r.reporter_id = u.id);
SQL
)
  [ "$removed" = 0 ] || note "$db: removed $removed submissions of earlier runs, with their reporters"
done

# shellcheck source=bench/reporters.sh
. bench/reporters.sh
# Fresh reporters for this run: the cap is 10 per reporter per sliding hour, so reporters of an
# earlier run (less than an hour ago) must not be reused.
run_id=$(date +%s)
note "minting $REPORTERS reporters per submission side"
python3 bench/tokens.py "$secret_file" "$run_id" "$REPORTERS" "$state/run" "$MIX_REPORTERS"
for db in "${databases[@]}"; do
  load_reporters "$db" "$state/run/reporters.tsv"
  # Autovacuum is off for these tables (bench/setup.sql), so the vacuum and the statistics they need
  # happen here, before any measured run, instead of in the middle of one side's round.
  psql_su -d "$db" -c 'vacuum (analyze) bench.tokens, auth.sessions, auth.users, public.price_reports, private.median_queue' >/dev/null
done
# The pgbench scripts, and PGOPTIONS with the session settings pricesvc sends in its startup packet:
# both from the binary under test (`pricesvc statements --json`), so pgbench runs the same SQL text.
"$BIN" statements --json --statement-timeout-ms "${PRICESVC_STATEMENT_TIMEOUT_MS:-5000}" >"$state/run/statements.json"
python3 bench/pgbench_scripts.py "$state/run/statements.json" "$state/run"
# Published rates for the 12 queried locations (source "bench"): price_quotes prices a stay under them.
python3 bench/published_feed.py >"$state/run/published-feed.json"
"$BIN" import-rates --migration-database-url "$owner_url" --source bench "$state/run/published-feed.json" \
  >"$out/import-rates.log" 2>&1 || { cat "$out/import-rates.log" >&2; die "pricesvc import-rates failed"; }
# The stay-length curve's zone (row 15), a source of its own: bench-stay:metered.
python3 bench/stay_feed.py >"$state/run/stay-feed.json"
"$BIN" import-rates --migration-database-url "$owner_url" --source bench-stay "$state/run/stay-feed.json" \
  >"$out/import-stay-rates.log" 2>&1 || { cat "$out/import-stay-rates.log" >&2; die "pricesvc import-rates (bench-stay) failed"; }
# Monday 17:30 in the feed's zone, for two hours: metered, then free.
QUOTE_STARTS=2026-03-02T17:30:00-05:00
QUOTE_DURATION=PT2H
export BENCH_QUOTE_ARGS="\"rate_kind\":\"hourly\",\"starts_at\":\"$QUOTE_STARTS\",\"duration\":\"$QUOTE_DURATION\""
apikey=$("$BIN" keys)
reader=$(cat "$state/run/reader.txt")
export BENCH_APIKEY=$apikey BENCH_READER=$reader BENCH_TOKENS=$state/run/tokens-http.txt BENCH_THREADS=$THREADS

# ---------------------------------------------------------------- pricesvc
note "pricesvc"
(
  export PRICESVC_LISTEN=127.0.0.1:$PORT PRICESVC_DATABASE_URL=$service_url
  # One client address plays every client (wrk -c 16, quotes included): the per-address and quote limits are off.
  export PRICESVC_RATE_LIMIT_PER_MINUTE=0 PRICESVC_DB_REQUESTS_PER_IP=0 PRICESVC_EXPENSIVE_REQUESTS_IN_FLIGHT=0 PRICESVC_MAX_CONNECTIONS=2048 PRICESVC_MAX_CONNECTIONS_PER_IP=2048
  export PRICESVC_ACCESS_LOG=false PRICESVC_ADMIN_LISTEN=127.0.0.1:0  # /metrics is on the admin listener
  [ -n "${BENCH_POOL_SIZE:-}" ] && export PRICESVC_POOL_SIZE=$BENCH_POOL_SIZE
  exec "$BIN" serve
) >"$state/pricesvc.log" 2>&1 &
pricesvc_pid=$!
# The port comes from pricesvc's own start-up line, so we never talk to someone else's server.
bound=""
for _ in $(seq 300); do
  bound=$(sed -n 's|^pricesvc: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$state/pricesvc.log")
  admin_port=$(sed -n 's|^pricesvc: admin listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$state/pricesvc.log")
  [ -n "$bound" ] && [ -n "$admin_port" ] && break
  kill -0 "$pricesvc_pid" 2>/dev/null || { cat "$state/pricesvc.log" >&2; die "pricesvc exited"; }
  sleep 0.1
done
[ -n "$bound" ] || { cat "$state/pricesvc.log" >&2; die "pricesvc did not start listening"; }
PORT=$bound
note "pricesvc (pid $pricesvc_pid) on 127.0.0.1:$PORT"
curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null || { curl -sS "http://127.0.0.1:$PORT/readyz" >&2; die "pricesvc is not ready"; }
admin=http://127.0.0.1:$admin_port
# awk reads to the end: an early exit closes the pipe while curl still writes a large /metrics, and under
# pipefail curl's "failed writing body" (23) would end the bench.
pool_size=$(curl -fsS "$admin/metrics" | awk '/^pricesvc_db_pool_size/ && !found { print $2; found = 1 }')
pool_size=${pool_size:-${BENCH_POOL_SIZE:-default}}

popular_json='["bench:popular","bench:loc-00001","bench:loc-00002","bench:loc-00003","bench:loc-00004","bench:loc-00005","bench:loc-00006","bench:loc-00007","bench:loc-00008","bench:loc-00009","bench:loc-00010","bench:loc-00011"]'
locations_json='["bench:loc-00001","bench:loc-00002","bench:loc-00003","bench:loc-00004","bench:loc-00005","bench:loc-00006","bench:loc-00007","bench:loc-00008","bench:loc-00009","bench:loc-00010","bench:loc-00011","bench:loc-00012"]'
medians_body="{\"location_ids\":$locations_json}"
curl -sS -X POST "http://127.0.0.1:$PORT/rest/v1/rpc/price_medians" -H "apikey: $apikey" \
  -H "Authorization: Bearer $reader" -H 'Content-Type: application/json' -d "$medians_body" >"$out/probe-medians.txt" || true
probe_medians=$(python3 -c '
import json, sys
body = json.load(open(sys.argv[1]))
print(f"{len(body)} rows" if isinstance(body, list) else "error " + body.get("code", "?") + ": " + body.get("message", "?"))
' "$out/probe-medians.txt" 2>/dev/null || echo "unreadable answer")
[ "$probe_medians" = "12 rows" ] || note "WARNING: price_medians(12 locations) through pricesvc answered: $probe_medians"
curl -sS -X POST "http://127.0.0.1:$PORT/rest/v1/rpc/price_quotes" -H "apikey: $apikey" \
  -H "Authorization: Bearer $reader" -H 'Content-Type: application/json' \
  -d "{\"location_ids\":$locations_json,$BENCH_QUOTE_ARGS}" >"$out/probe-quotes.txt" || true
probe_quotes=$(python3 -c '
import json, sys
body = json.load(open(sys.argv[1]))
if isinstance(body, list):
    medians = sum(row.get("median_cents") is not None for row in body)
    published = sum(row.get("published_cents") is not None for row in body)
    print("%d rows, %d medians, %d published costs" % (len(body), medians, published))
else:
    print("error " + body.get("code", "?") + ": " + body.get("message", "?"))
' "$out/probe-quotes.txt" 2>/dev/null || echo "unreadable answer")
[ "$probe_quotes" = "12 rows, 12 medians, 12 published costs" ] ||
  note "WARNING: price_quotes(12 locations) through pricesvc answered: $probe_quotes"
status=$(curl -sS -o "$out/probe-submit.txt" -w '%{http_code}' -X POST "http://127.0.0.1:$PORT/rest/v1/price_reports" \
  -H "apikey: $apikey" -H "Authorization: Bearer $reader" -H 'Content-Type: application/json' \
  -H 'Prefer: return=minimal' -d '{"location_id":"bench:probe","rate_kind":"hourly","price_cents":100}')
[ "$status" = 201 ] || { cat "$out/probe-submit.txt" >&2; die "a probe submission got $status instead of 201"; }

# ---------------------------------------------------------------- nginx (unprivileged)
note "nginx on 127.0.0.1:$NGINX_PORT"
mkdir -p "$nginx_dir/tmp"
sed -e "s/@PORT@/$NGINX_PORT/" -e "s/@WORKERS@/$(nproc)/" bench/nginx.conf.in >"$nginx_dir/nginx.conf"
as_nginx=()
if [ "$(id -u)" -eq 0 ]; then
  chown -R nobody: "$nginx_dir"
  as_nginx=(runuser -u nobody --)
fi
"${as_nginx[@]}" nginx -p "$nginx_dir/" -c "$nginx_dir/nginx.conf" -e "$nginx_dir/error.log" ||
  die "nginx did not start (see $nginx_dir/error.log)"
for _ in $(seq 50); do [ -s "$nginx_dir/nginx.pid" ] && break; sleep 0.1; done
nginx_pid=$(cat "$nginx_dir/nginx.pid")
[ "$(curl -fsS "http://127.0.0.1:$NGINX_PORT/")" = '{"ok":true}' ] || die "nginx does not answer the fixed body"

# ---------------------------------------------------------------- runners
# Each runner writes $out/NAME.txt and sets R_RATE (per second), R_OK, R_BAD, R_P50/R_P99 (ms),
# R_SRV (server CPU ms per request), R_PG (PostgreSQL CPU ms per request); run_wrk also R_SECONDS (the
# run's length) and R_PG_MS / R_SRV_MS (all of PostgreSQL's and the server's CPU ms in the run).
rate() { awk -v r="$1" 'BEGIN { printf (r < 100 ? "%.2f" : "%.0f"), r }'; }
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" "$2" | head -n 1; }

run_wrk() {  # name mode url connections seconds server_pid
  local name=$1 mode=$2 url=$3 conns=$4 secs=$5 server=$6 file=$out/$1.txt
  local srv0 pg0 srv1 pg1
  srv0=$(tree_ticks "$server"); pg0=$(tree_ticks "$postmaster_pid")
  BENCH_MODE=$mode wrk -t "$THREADS" -c "$conns" -d "${secs}s" --timeout 60s -s bench/wrk.lua "$url" >"$file" 2>&1 ||
    { cat "$file" >&2; die "wrk $name failed"; }
  srv1=$(tree_ticks "$server"); pg1=$(tree_ticks "$postmaster_pid")
  grep -q BENCH_RESULT "$file" || { cat "$file" >&2; die "wrk $name printed no result"; }
  local requests duration non2xx errors statuses
  requests=$(field requests "$file"); duration=$(field duration_us "$file"); non2xx=$(field non2xx "$file")
  errors=$(( $(field connect "$file") + $(field read "$file") + $(field write "$file") + $(field timeout "$file") ))
  statuses=$(field statuses "$file")
  if [ "$mode" = submit ]; then
    R_OK=$(tr ',' '\n' <<<"$statuses" | awk -F: '$1 == 201 { print $2 }')
    R_OK=${R_OK:-0}
  else
    R_OK=$((requests - non2xx))
  fi
  R_BAD=$((requests - R_OK)); R_ERR=$errors; R_STATUSES=$statuses
  R_RATE=$(rate "$(awk -v n="$R_OK" -v d="$duration" 'BEGIN { print n / (d / 1e6) }')")
  R_P50=$(awk -v v="$(field p50_us "$file")" 'BEGIN { printf "%.2f", v / 1000 }')
  R_P99=$(awk -v v="$(field p99_us "$file")" 'BEGIN { printf "%.2f", v / 1000 }')
  R_SRV=$(awk -v t=$((srv1 - srv0)) -v n="$requests" -v hz="$HZ" 'BEGIN { printf "%.3f", n ? t * 1000 / hz / n : 0 }')
  R_PG=$(awk -v t=$((pg1 - pg0)) -v n="$requests" -v hz="$HZ" 'BEGIN { printf "%.3f", n ? t * 1000 / hz / n : 0 }')
  R_SECONDS=$(awk -v d="$duration" 'BEGIN { print d / 1e6 }')
  R_PG_MS=$(( (pg1 - pg0) * 1000 / HZ )); R_SRV_MS=$(( (srv1 - srv0) * 1000 / HZ ))
}
status_count() {  # status "200:5,201:3" → how many answers had that status
  tr ',' '\n' <<<"$2" | awk -F: -v s="$1" '$1 == s { n += $2 } END { print n + 0 }'
}

# pgbench's backends exit when it does, and their CPU time reaches the postmaster's cutime only once it
# has reaped them: read the clock after that, or a run is charged only part of its own work (which is
# what made pgbench look 1.3-1.8x cheaper per insert than pricesvc, whose backends live on).
settle_backends() {  # children of the postmaster before the run
  local before=" $1 " child pending
  for _ in $(seq 100); do
    pending=0
    for child in $(cat /proc/"$postmaster_pid"/task/*/children 2>/dev/null); do
      case "$before" in *" $child "*) ;; *) grep -q 'autovacuum worker' "/proc/$child/cmdline" 2>/dev/null || pending=1 ;; esac
    done
    [ "$pending" = 0 ] && return 0
    sleep 0.05
  done
  note "WARNING: pgbench's backends were not all reaped after 5 s; its PostgreSQL CPU is undercounted"
}

run_pgbench() {  # name script seconds -D... (PGB_DB: the database, default pricesvc; PGB_CLIENTS: default BENCH_CLIENTS)
  local name=$1 script=$2 secs=$3 file=$out/$1.txt
  shift 3
  local pg0 pg1 children
  children=$(cat /proc/"$postmaster_pid"/task/*/children 2>/dev/null)
  pg0=$(tree_ticks "$postmaster_pid")
  PGOPTIONS=$(cat "$state/run/pgbench-options.txt") \
  "$PGBENCH" -n -h "$PGHOST" -U authenticator -c "${PGB_CLIENTS:-$CLIENTS}" -j "$THREADS" -T "$secs" -M prepared \
    -f "$script" "$@" "${PGB_DB:-pricesvc}" >"$file" 2>&1 || { cat "$file" >&2; die "pgbench $name failed"; }
  settle_backends "$children"
  pg1=$(tree_ticks "$postmaster_pid")
  local tps tx failed
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$file")
  tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$file")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$file")
  [ -n "$tps" ] || { cat "$file" >&2; die "pgbench $name printed no tps"; }
  R_RATE=$(rate "$tps"); R_OK=$tx; R_BAD=${failed:-0}; R_ERR=0; R_STATUSES=""
  R_P50="-"
  R_P99=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$file")
  R_SRV="-"
  R_PG=$(awk -v t=$((pg1 - pg0)) -v n="$tx" -v hz="$HZ" 'BEGIN { printf "%.3f", n ? t * 1000 / hz / n : 0 }')
}

declare -A T   # results: T[row.side.metric]
save() {  # row side — rates and CPU per request are averaged and counts summed over the rounds; latencies are the last round's
  local n=$(( ${T[$1.$2.rounds]:-0} + 1 ))
  T[$1.$2.rounds]=$n
  T[$1.$2.sum]=$(awk -v a="${T[$1.$2.sum]:-0}" -v b="$R_RATE" 'BEGIN { print a + b }')
  T[$1.$2.rate]=$(rate "$(awk -v s="${T[$1.$2.sum]}" -v n="$n" 'BEGIN { print s / n }')")
  T[$1.$2.rates]="${T[$1.$2.rates]:+${T[$1.$2.rates]} }$R_RATE"
  T[$1.$2.ok]=$(( ${T[$1.$2.ok]:-0} + R_OK )); T[$1.$2.bad]=$(( ${T[$1.$2.bad]:-0} + R_BAD ))
  T[$1.$2.err]=$(( ${T[$1.$2.err]:-0} + R_ERR ))
  T[$1.$2.p50]=$R_P50; T[$1.$2.p99]=$R_P99
  # CPU per request: the mean over the rounds (a single round's figure moves by ±10 %).
  local metric
  for metric in srv pg; do
    local value
    [ "$metric" = srv ] && value=$R_SRV || value=$R_PG
    if [ "$value" = - ]; then T[$1.$2.$metric]=-; continue; fi
    T[$1.$2.$metric.sum]=$(awk -v a="${T[$1.$2.$metric.sum]:-0}" -v b="$value" 'BEGIN { print a + b }')
    T[$1.$2.$metric]=$(awk -v s="${T[$1.$2.$metric.sum]}" -v n="$n" 'BEGIN { printf "%.3f", s / n }')
  done
  T[$1.$2.statuses]="${T[$1.$2.statuses]:+${T[$1.$2.statuses]} }$R_STATUSES"
}

# "a b c" "x y z" → the ratio of each round: "a/x b/y c/z" (n/a where the reference is 0).
round_ratios() {
  awk -v a="$1" -v b="$2" 'BEGIN { n = split(a, x, " "); split(b, y, " ");
    for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), (y[i] > 0 ? sprintf("%.2f", x[i] / y[i]) : "n/a") }'
}

# Each comparison runs BENCH_ROUNDS rounds, alternating which side goes first, so neither side is
# always the one that follows a checkpoint or a warm cache.
in_order() {  # round first-command second-command
  if (( $1 % 2 == 1 )); then eval "$2"; eval "$3"; else eval "$3"; eval "$2"; fi
}

reporters_max_use() {  # side → most reports any of this run's reporters of that side made
  psql_su -tAc "select coalesce(max(c), 0) from (select count(*) c from public.price_reports r
                join bench.tokens t on t.uid = r.reporter_id where t.side = '$1' group by r.reporter_id) s"
}
reports_of() {  # side → rows inserted by this run's reporters of that side
  psql_su -tAc "select count(*) from public.price_reports r join bench.tokens t on t.uid = r.reporter_id where t.side = '$1'"
}

app=http://127.0.0.1:$PORT
# Waits until pricesvc has no request at the database (wrk stops without waiting for slow answers,
# and a median query left running would be measured as the next run's load).
drain() {
  local in_use
  for _ in $(seq 600); do
    in_use=$(curl -fsS "$admin/metrics" | awk -F'} ' '/^pricesvc_db_pool_connections\{state="in_use"\}/ { print $2 }')
    [ "${in_use:-0}" = 0 ] && return 0
    sleep 0.1
  done
  note "WARNING: pricesvc still had $in_use database connections in use after 60 s"
}

note "warm-up ${WARMUP}s (healthz; the seeded table is read once into shared buffers)"
psql_su -c "select count(*) from public.price_reports" >/dev/null
run_wrk warmup healthz "$app" "$CLIENTS" "$WARMUP" "$pricesvc_pid"

if [ "$PLACES_ONLY" != 1 ]; then  # BENCH_PLACES_ONLY: straight to rows 12 and 16-18
# Row 5f: row 5 on fresh statistics, before anything else has run. A freshly seeded or restored database
# has just been analyzed; with those statistics row 5 once read 0.03 (the planner read every report of
# the popular place in each call: migrations/medians.sql, the totals' expiry correction). Reseeding takes
# minutes, so each round analyzes the whole database first (every table of the median store, whatever
# it holds then, and price_reports), and waits for that backend to be reaped so its CPU is not the
# round's. Row 5 proper, later in the run, measures the same calls on the statistics as they are by then.
for round in $(seq "$ROUNDS"); do
  note "5f. price_medians with the popular location vs 12 ordinary right after ANALYZE (pgbench, ${MEDIAN_SECS}s each), round $round"
  before_analyze=$(cat /proc/"$postmaster_pid"/task/*/children 2>/dev/null)
  psql_su -c analyze >/dev/null
  settle_backends "$before_analyze"
  in_order "$round" \
    'run_pgbench fresh-popular "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$popular_json"; save fresh_popular ref' \
    'run_pgbench fresh-ordinary "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$locations_json"; save fresh_ordinary ref'
done

for round in $(seq "$ROUNDS"); do
  note "3. healthz: pricesvc vs nginx (${SECS}s each, $CLIENTS connections, wrk -t $THREADS), round $round"
  in_order "$round" \
    'run_wrk healthz-pricesvc healthz "$app" "$CLIENTS" "$SECS" "$pricesvc_pid"; save health app' \
    'run_wrk healthz-nginx nginx "http://127.0.0.1:$NGINX_PORT" "$CLIENTS" "$SECS" "$nginx_pid"; save health ref'
done

for round in $(seq "$ROUNDS"); do
  note "2. price_medians: pricesvc vs pgbench (${MEDIAN_SECS}s each), round $round"
  in_order "$round" \
    'run_wrk medians-pricesvc medians "$app" "$CLIENTS" "$MEDIAN_SECS" "$pricesvc_pid"; save medians app; drain' \
    'run_pgbench medians-pgbench "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$locations_json"; save medians ref'
done

fi

# Rows 12 and 13: what reading 12 stored rows costs, by the same clients in the same protocol (identity
# statement, token verified, one pipeline), against rows 4's and 10's pgbench sides of this run.
for round in $(seq "$ROUNDS"); do
  note "12. the read floor: 12 precomputed rows by primary key (pgbench, ${SECS}s), round $round"
  run_pgbench read-floor "$state/run/pgbench-read-floor.sql" "$SECS" \
    -D role=authenticated -D token="$reader" -D ids="$locations_json"; save read_floor ref
done

# Rows 16-18: places_nearby as a driver's app asks it (500 m, 20 results), at a random point of the seeded
# city each call; pgbench and wrk draw from the same area. Row 16 sets pgbench's rate against the read
# floor (row 12, same clients and protocol), row 17 pricesvc's against pgbench's, row 18 prices a 2-hour stay.
places_rows() {
  [ "$PLACES" -gt 0 ] || return 0
  local round
  for round in $(seq "$ROUNDS"); do
    note "16/17. places_nearby (500 m, 20 results): pricesvc vs pgbench (${SECS}s each), round $round"
    in_order "$round" \
      'run_wrk places-pricesvc places "$app" "$CLIENTS" "$SECS" "$pricesvc_pid"; save places app; drain' \
      'run_pgbench places-pgbench "$state/run/pgbench-places.sql" "$SECS" \
         -D role=authenticated -D token="$reader" -D radius=500 -D kind=hourly -D max=20; save places ref'
    note "18. places_nearby with a 2-hour stay (pgbench, ${SECS}s), round $round"
    run_pgbench places-stay "$state/run/pgbench-places-stay.sql" "$SECS" \
      -D role=authenticated -D token="$reader" -D radius=500 -D kind=hourly -D max=20 \
      -D starts="$QUOTE_STARTS" -D duration="$QUOTE_DURATION"; save places_stay ref
  done
}
places_report() {
  local r16 r17 r18
  r16=$(ratio "${T[places.ref.rate]}" "${T[read_floor.ref.rate]}")
  r17=$(ratio "${T[places.app.rate]}" "${T[places.ref.rate]}")
  r18=$(ratio "${T[places_stay.ref.rate]}" "${T[places.ref.rate]}")
  echo "| 16 | places_nearby(500 m, 20 results) calls/s over $PLACES places (pgbench) vs the read floor (row 12) | ${T[places.ref.rate]} | ${T[read_floor.ref.rate]} | $r16 | ≥ 0.3 $(verdict "$r16" 0.3) |"
  echo "| 17 | places_nearby(500 m, 20 results) req/s through pricesvc vs pgbench on the same SQL | ${T[places.app.rate]} | ${T[places.ref.rate]} | $r17 | ≥ 0.85 $(verdict "$r17" 0.85) |"
  echo "| 18 | places_nearby with a 2-hour stay vs without, pgbench calls/s | ${T[places_stay.ref.rate]} | ${T[places.ref.rate]} | $r18 | report (no target) |"
}
places_details() {
  echo "  places (rows 16-18):              $PLACES places, $SEED_LOCATIONS with reports; PostgreSQL CPU ms per call ${T[places.ref.pg]} (pgbench), ${T[places.app.pg]} (pricesvc), ${T[places_stay.ref.pg]} with a stay; pgbench average latency ${T[places.ref.p99]} ms (${T[places_stay.ref.p99]} with a stay), wrk p50 / p99 ${T[places.app.p50]} / ${T[places.app.p99]} ms; non-2xx ${T[places.app.bad]} (statuses ${T[places.app.statuses]:-none}); rounds 16 $(round_ratios "${T[places.ref.rates]}" "${T[read_floor.ref.rates]}"), 17 $(round_ratios "${T[places.app.rates]}" "${T[places.ref.rates]}")"
}

if [ "$PLACES_ONLY" = 1 ]; then
  places_rows
  ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
  verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r + 0 >= t) ? "ok" : "BELOW" }'; }
  {
    echo "| row | what | measured | reference | ratio | target |"
    echo "|---|---|---:|---:|---:|---|"
    echo "| 12 | the read floor: 12 stored rows by primary key (pgbench) | ${T[read_floor.ref.rate]} | | | |"
    places_report
    echo
    echo "details"
    places_details
  } | tee "$out/places-table.txt"
  exit 0
fi

for round in $(seq "$ROUNDS"); do
  note "9. price_quotes: pricesvc vs pgbench (${MEDIAN_SECS}s each), round $round"
  in_order "$round" \
    'run_wrk quotes-pricesvc quotes "$app" "$CLIENTS" "$MEDIAN_SECS" "$pricesvc_pid"; save quotes app; drain' \
    'run_pgbench quotes-pgbench "$state/run/pgbench-quotes.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$locations_json" -D kind=hourly \
       -D starts="$QUOTE_STARTS" -D duration="$QUOTE_DURATION"; save quotes ref'
done

places_rows

# Row 15: the stay-length curve. One metered location (bench/stay_feed.py), the same start as row 10, stays
# from an hour to a year; each stay is probed once first, so a quote that stops early (not allowed) is
# seen rather than measured as cheap. The order of the stays is reversed every other round. Two clients,
# not 16: a year-long quote is a tenth of a second or more, so 16 fresh backends would each make a few
# calls in a run and their start-up (connection, catalog caches, first plans) would weigh on the 1-hour
# stay's CPU per call and flatter the ratio. With one client per core pgbench's latency is the call's time.
stays=(PT1H P1D P30D P366D)
stay_ids='["bench-stay:metered"]'
stay_probes=""
for stay in "${stays[@]}"; do
  probe=$(psql_su -tA -F ' ' -c "select coalesce(published_cents::text, 'none'), coalesce(published_allowed::text, 'none'),
                                        coalesce(published_reason, '-')
                                 from public.price_quotes(array['bench-stay:metered'], 'hourly', '$QUOTE_STARTS', '$stay')" 2>&1) ||
    probe="error: $probe"
  stay_probes="${stay_probes:+$stay_probes; }$stay ${probe// /, }"
  case "$probe" in
    *' true '*) ;;
    *) note "WARNING: price_quotes(bench-stay:metered, $stay) is not an allowed, priced stay: $probe" ;;
  esac
done
for round in $(seq "$ROUNDS"); do
  order=("${stays[@]}")
  (( round % 2 == 0 )) && order=(P366D P30D P1D PT1H)
  note "15. stay-length curve: price_quotes(1 location) for ${order[*]} (pgbench, $STAY_CLIENTS clients, ${STAY_SECS}s each), round $round"
  for stay in "${order[@]}"; do
    PGB_CLIENTS=$STAY_CLIENTS run_pgbench "stay-$stay" "$state/run/pgbench-quotes.sql" "$STAY_SECS" \
      -D role=authenticated -D token="$reader" -D ids="$stay_ids" -D kind=hourly \
      -D starts="$QUOTE_STARTS" -D duration="$stay"
    save "stay_$stay" ref
  done
done

for round in $(seq "$ROUNDS"); do
  note "5. price_medians with the popular location vs 12 ordinary ones (pgbench, ${MEDIAN_SECS}s each), round $round"
  in_order "$round" \
    'run_pgbench medians-popular "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$popular_json"; save popular ref' \
    'run_pgbench medians-ordinary "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
       -D role=authenticated -D token="$reader" -D ids="$locations_json"; save ordinary ref'
done

# Every round reuses the same reporters (each at most once per run), so a reporter ends with at most
# one report per run it took part in (see pg_side_runs above). Each comparison alternates which side goes first.
submit_body='[{"location_id":"bench:sub-pg","rate_kind":"hourly","price_cents":1234,"currency":"USD"}]'
for round in $(seq "$SUBMIT_ROUNDS"); do
  note "1. submissions: pricesvc vs pgbench, round $round"
  in_order "$round" \
    'psql_su -c checkpoint >/dev/null; run_wrk submit-pricesvc submit "$app" "$CLIENTS" "$SECS" "$pricesvc_pid"; save submit app; drain' \
    'psql_su -c checkpoint >/dev/null; run_pgbench submit-pgbench "$state/run/pgbench-submit.sql" "$SECS" -D role=authenticated -D n=0 \
       -D stride=$((REPORTERS / CLIENTS)) -D body="$submit_body"; save submit ref'
done
http_rows=$(reports_of http); http_max=$(reporters_max_use http)

# Row 2: the same statements into the same table, verified against the floor (pgbench as bench_floor,
# whose policy reads the recorded sub instead of verifying), each side with reporters of its own.
for round in $(seq "$SUBMIT_ROUNDS"); do
  note "2. pgbench with verification vs the floor (reporter from a plain setting), round $round"
  in_order "$round" \
    'psql_su -c checkpoint >/dev/null; run_pgbench submit-verified "$state/run/pgbench-verified.sql" "$SECS" -D role=authenticated -D n=0 \
       -D stride=$((REPORTERS / CLIENTS)) -D body="$submit_body"; save verified ref' \
    'psql_su -c checkpoint >/dev/null; run_pgbench submit-floor "$state/run/pgbench-floor.sql" "$SECS" -D role=bench_floor -D n=0 \
       -D stride=$((REPORTERS / CLIENTS)) -D body="$submit_body"; save floor ref'
done
floor_rows=$(reports_of floor); floor_max=$(reporters_max_use floor); verified_max=$(reporters_max_use verified)

if [ "$SCALE_REPORTS" -gt 0 ]; then
  for round in $(seq "$ROUNDS"); do
    note "8. scale: pgbench on $scale_seeded reports vs $seeded + the rest, round $round"
    in_order "$round" \
      'PGB_DB=pricesvc_scale run_pgbench medians-scale "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
         -D role=authenticated -D token="$reader" -D ids="$locations_json"; save scale_medians big' \
      'run_pgbench medians-base "$state/run/pgbench-medians.sql" "$MEDIAN_SECS" \
         -D role=authenticated -D token="$reader" -D ids="$locations_json"; save scale_medians base'
    in_order "$round" \
      'psql_su -c checkpoint >/dev/null; PGB_DB=pricesvc_scale run_pgbench submit-scale "$state/run/pgbench-submit.sql" "$SECS" \
         -D role=authenticated -D n=0 -D stride=$((REPORTERS / CLIENTS)) -D body="$submit_body"; save scale_submit big' \
      'psql_su -c checkpoint >/dev/null; run_pgbench submit-base "$state/run/pgbench-submit.sql" "$SECS" \
         -D role=authenticated -D n=0 -D stride=$((REPORTERS / CLIENTS)) -D body="$submit_body"; save scale_submit base'
  done
fi

# Row 14: searches as drivers' apps make them, beside a few submissions, through pricesvc. Location ids
# are drawn from a Zipf law over the seeded locations (rank k is bench:loc-k, so the 12 with published
# rates are the most asked for); the submissions come from reporters of their own and land at the
# seeded locations (young identities: queued, as a new reporter's are). wrk.lua formats them; 200s are
# searches, 201s submissions. PostgreSQL's CPU per search is all of its CPU in the run over the searches.
export BENCH_LOCATIONS=$SEED_LOCATIONS BENCH_ZIPF_S=$ZIPF_S BENCH_SUBMIT_PERCENT=$SUBMIT_PERCENT BENCH_MIX_TOKENS=$state/run/tokens-mixed.txt
for round in $(seq "$ROUNDS"); do
  note "14. mixed search workload through pricesvc (Zipf s=$ZIPF_S, $SUBMIT_PERCENT % submissions, ${SECS}s), round $round"
  run_wrk search-pricesvc search "$app" "$CLIENTS" "$SECS" "$pricesvc_pid"; save search app; drain
  T[search.searches]=$(( ${T[search.searches]:-0} + $(status_count 200 "$R_STATUSES") ))
  T[search.submissions]=$(( ${T[search.submissions]:-0} + $(status_count 201 "$R_STATUSES") ))
  T[search.pg_ms]=$(( ${T[search.pg_ms]:-0} + R_PG_MS )); T[search.srv_ms]=$(( ${T[search.srv_ms]:-0} + R_SRV_MS ))
  T[search.seconds]=$(awk -v a="${T[search.seconds]:-0}" -v b="$R_SECONDS" 'BEGIN { print a + b }')
done
mixed_rows=$(reports_of mixed); mixed_max=$(reporters_max_use mixed)

note "the live-session check in auth.jwt(), timed inside PostgreSQL (20 000 calls each)"
read -r verify_us lookup_us < <(psql_su -tA -F ' ' -c "select round(verify_us::numeric, 2), round(lookup_us::numeric, 2)
                                                     from bench.session_check_cost('$reader', 20000)")
session_share=$(awk -v l="$lookup_us" -v v="$verify_us" 'BEGIN { printf "%.0f", (v > 0) ? 100 * l / v : 0 }')
# A submission verifies its token once: the RLS policy's initplan for the whole INSERT (its identity
# statement does not verify; the reporter_id default and the trigger read a hint); a median call once.
session_per_submit=$(awk -v l="$lookup_us" 'BEGIN { printf "%.3f", l / 1000 }')
pg_rows=$(reports_of pg); pg_max=$(reporters_max_use pg)

note "4. peak RSS under $RSS_CONNS connections (${RSS_SECS}s, healthz + medians)"
hwm_before=$(awk '/^VmHWM/ { print $2 }' "/proc/$pricesvc_pid/status")
threads_peak=0
(
  while kill -0 "$pricesvc_pid" 2>/dev/null; do
    awk '/^Threads/ { print $2 }' "/proc/$pricesvc_pid/status"; sleep 0.25
  done
) >"$out/threads.txt" 2>/dev/null &
sampler=$!
run_wrk rss-pricesvc mix "$app" "$RSS_CONNS" "$RSS_SECS" "$pricesvc_pid"; save rss app
kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null || true
threads_peak=$(sort -n "$out/threads.txt" | tail -n 1)
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$pricesvc_pid/status")
rss_now=$(awk '/^VmRSS/ { print $2 }' "/proc/$pricesvc_pid/status")

# ---------------------------------------------------------------- report
# Last, a city-sized feed (integration/fixtures/cds/make_fixtures.py) into a database of its own, migrated afresh and
# dropped after, so its 20 000 zones never change the statistics other rows plan with: timed, reported, no target.
# make test imports a small feed (test_an_import_analyzes_every_table_quotes_read); make test-all this size too.
note "importing a feed of 20 000 zones"
python3 -c 'import json, sys; sys.path.insert(0, "integration/fixtures/cds"); import make_fixtures; print(json.dumps(make_fixtures.large_feed(20000)))' \
  >"$state/run/large-feed.json"
psql_su -d postgres -c "drop database if exists pricesvc_import with (force)" -c "create database pricesvc_import" >/dev/null
import_url="postgresql:///pricesvc_import?host=$PGHOST&user=$PGUSER"
"$BIN" migrate --migration-database-url "$import_url" --database-url "postgresql:///pricesvc_import?host=$PGHOST&user=authenticator" \
  >"$out/migrate-import.log" 2>&1 ||
  { cat "$out/migrate-import.log" >&2; die "pricesvc migrate (import database) failed"; }
import_started=$(date +%s.%N)
"$BIN" import-rates --migration-database-url "$import_url" --source bench-large "$state/run/large-feed.json" \
  >"$out/import-large.log" 2>&1 || { cat "$out/import-large.log" >&2; die "pricesvc import-rates (20 000 zones) failed"; }
large_import_seconds=$(awk -v a="$import_started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
large_import_mb=$(awk -v b="$(stat -c %s "$state/run/large-feed.json")" 'BEGIN { printf "%.1f", b / 1e6 }')
psql_su -d postgres -c "drop database pricesvc_import with (force)" >/dev/null

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r + 0 >= t) ? "ok" : "BELOW" }'; }
at_most() { awk -v r="$1" -v t="$2" 'BEGIN { print (r != "n/a" && r + 0 <= t) ? "ok" : "ABOVE" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

cpu_model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
mem_total=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)
r_submit=$(ratio "${T[submit.app.rate]}" "${T[submit.ref.rate]}")
r_medians=$(ratio "${T[medians.app.rate]}" "${T[medians.ref.rate]}")
r_health=$(ratio "${T[health.app.rate]}" "${T[health.ref.rate]}")
r_quotes=$(ratio "${T[quotes.app.rate]}" "${T[quotes.ref.rate]}")
r_floor=$(ratio "${T[verified.ref.rate]}" "${T[floor.ref.rate]}")
r_cpu=$(ratio "${T[submit.app.pg]}" "${T[submit.ref.pg]}")
r_popular=$(ratio "${T[popular.ref.rate]}" "${T[ordinary.ref.rate]}")
r_fresh=$(ratio "${T[fresh_popular.ref.rate]}" "${T[fresh_ordinary.ref.rate]}")
r_own_cpu=$(ratio "${T[submit.app.srv]}" "${T[submit.app.pg]}")
r_floor_medians=$(ratio "${T[medians.ref.rate]}" "${T[read_floor.ref.rate]}")
r_floor_quotes=$(ratio "${T[quotes.ref.rate]}" "${T[read_floor.ref.rate]}")
search_rate=$(rate "$(awk -v n="${T[search.searches]}" -v s="${T[search.seconds]}" 'BEGIN { print (s > 0) ? n / s : 0 }')")
submission_rate=$(rate "$(awk -v n="${T[search.submissions]}" -v s="${T[search.seconds]}" 'BEGIN { print (s > 0) ? n / s : 0 }')")
search_pg=$(awk -v t="${T[search.pg_ms]}" -v n="${T[search.searches]}" 'BEGIN { if (n > 0) printf "%.3f", t / n; else print "n/a" }')
r_stay=$(awk -v a="${T[stay_P366D.ref.pg]}" -v b="${T[stay_PT1H.ref.pg]}" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }')
stay_curve=""
for stay in "${stays[@]}"; do
  stay_curve="${stay_curve:+$stay_curve; }$stay ${T[stay_$stay.ref.pg]} ms CPU, ${T[stay_$stay.ref.p99]} ms per call, ${T[stay_$stay.ref.rate]} calls/s"
done
if [ "$SCALE_REPORTS" -gt 0 ]; then
  r_scale_medians=$(ratio "${T[scale_medians.big.rate]}" "${T[scale_medians.base.rate]}")
  r_scale_submit=$(ratio "${T[scale_submit.big.rate]}" "${T[scale_submit.base.rate]}")
  scale_rows="| 8 | price_medians(12 locations) req/s (pgbench): $scale_seeded vs $seeded reports | ${T[scale_medians.big.rate]} | ${T[scale_medians.base.rate]} | $r_scale_medians | ≥ 0.8 $(verdict "$r_scale_medians" 0.8) |
| 9 | submissions/s (pgbench identity + INSERT): $scale_seeded vs $seeded reports | ${T[scale_submit.big.rate]} | ${T[scale_submit.base.rate]} | $r_scale_submit | ≥ 0.8 $(verdict "$r_scale_submit" 0.8) |"
else
  scale_rows="| 8-9 | scale rows | | | | skipped (BENCH_SCALE_REPORTS=0) |"
fi
hwm_mb=$(mb "$hwm")

{
cat <<EOF

pricesvc benchmark — $(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')
machine: $(nproc) cores, ${cpu_model:-unknown CPU}, $mem_total RAM, Linux $(uname -r)
         PostgreSQL $("$PGBIN/postgres" --version | awk '{ print $3 }'), $(nginx -v 2>&1 | sed 's/nginx version: //'), wrk $(wrk -v 2>&1 | awk 'NR == 1 { print $2 }'), pgbench -M prepared
load:    $CLIENTS connections / clients on both sides, wrk -t $THREADS, pgbench -j $THREADS, ${SECS}s per run, $ROUNDS rounds per comparison, $SUBMIT_ROUNDS for rows 1 and 2 (alternating order, rates averaged),
         everything on this machine (load generator, server and PostgreSQL share the $(nproc) cores);
         pricesvc pool size $pool_size; medians: 12 locations per call, $seeded seeded reports over $SEED_LOCATIONS locations

| # | measurement ($CLIENTS connections) | pricesvc | reference | ratio | target |
|---|---|---:|---:|---:|---|
| 1 | submissions/s (201 only) vs pgbench identity + INSERT | ${T[submit.app.rate]} | ${T[submit.ref.rate]} | $r_submit | report (no target) |
| 2 | pgbench identity + INSERT tx/s vs the floor (reporter from a plain setting) | ${T[verified.ref.rate]} | ${T[floor.ref.rate]} | $r_floor | ≥ 0.6 $(verdict "$r_floor" 0.6) |
| 3 | PostgreSQL CPU ms per submission, via pricesvc vs via pgbench | ${T[submit.app.pg]} | ${T[submit.ref.pg]} | $r_cpu | ≤ 1.15 $(at_most "$r_cpu" 1.15) |
| 4 | price_medians(12 locations) req/s vs pgbench | ${T[medians.app.rate]} | ${T[medians.ref.rate]} | $r_medians | ≥ 0.85 $(verdict "$r_medians" 0.85) |
| 5 | price_medians(12, one of them $POPULAR_REPORTS reports) vs 12 ordinary, pgbench calls/s | ${T[popular.ref.rate]} | ${T[ordinary.ref.rate]} | $r_popular | ≥ 0.8 $(verdict "$r_popular" 0.8) |
| 5f | row 5 right after ANALYZE of the database (fresh statistics, as after a seed), first of the run | ${T[fresh_popular.ref.rate]} | ${T[fresh_ordinary.ref.rate]} | $r_fresh | ≥ 0.8 $(verdict "$r_fresh" 0.8) |
| 6 | GET /healthz req/s vs nginx (11-byte JSON) | ${T[health.app.rate]} | ${T[health.ref.rate]} | $r_health | ≥ 0.8 $(verdict "$r_health" 0.8) |
| 7 | peak RSS (VmHWM) after $RSS_CONNS connections | $hwm_mb MB | | | < 64 MB $(awk -v m="$hwm_mb" 'BEGIN { print (m < 64) ? "ok" : "ABOVE" }') |
$scale_rows
| 10 | price_quotes(12 locations, 2-hour stay) req/s vs pgbench | ${T[quotes.app.rate]} | ${T[quotes.ref.rate]} | $r_quotes | ≥ 0.85 $(verdict "$r_quotes" 0.85) |
| 11 | pricesvc's own CPU ms per submission vs PostgreSQL's (row 1, via pricesvc) | ${T[submit.app.srv]} | ${T[submit.app.pg]} | $r_own_cpu | ≤ 0.3 $(at_most "$r_own_cpu" 0.3) |
| 12 | price_medians(12) calls/s (pgbench, row 4) vs the read floor: 12 stored rows by primary key | ${T[medians.ref.rate]} | ${T[read_floor.ref.rate]} | $r_floor_medians | ≥ 0.3 $(verdict "$r_floor_medians" 0.3) |
| 13 | price_quotes(12, 2-hour stay) calls/s (pgbench, row 10) vs the read floor | ${T[quotes.ref.rate]} | ${T[read_floor.ref.rate]} | $r_floor_quotes | ≥ 0.1 $(verdict "$r_floor_quotes" 0.1) |
| 14 | mixed search workload via pricesvc (Zipf s=$ZIPF_S, $SUBMIT_PERCENT % submissions): searches/s, PostgreSQL CPU ms per search | $search_rate/s | $search_pg ms | | report (no target) |
| 15 | price_quotes(1 location) PostgreSQL CPU ms per call, 366-day vs 1-hour stay (pgbench, $STAY_CLIENTS clients) | ${T[stay_P366D.ref.pg]} | ${T[stay_PT1H.ref.pg]} | $r_stay | ≤ 20 $(at_most "$r_stay" 20) |
$( [ "$PLACES" -gt 0 ] && places_report )

details
  latency p50 / p99 (ms), wrk:      healthz ${T[health.app.p50]} / ${T[health.app.p99]} (nginx ${T[health.ref.p50]} / ${T[health.ref.p99]}); medians ${T[medians.app.p50]} / ${T[medians.app.p99]}; submit ${T[submit.app.p50]} / ${T[submit.app.p99]}
  pgbench average latency (ms):     medians ${T[medians.ref.p99]}; submit ${T[submit.ref.p99]}; quotes ${T[quotes.ref.p99]}
  price_quotes:                     wrk p50 / p99 ${T[quotes.app.p50]} / ${T[quotes.app.p99]} ms; CPU ms per request, PostgreSQL ${T[quotes.app.pg]} via pricesvc vs ${T[quotes.ref.pg]} via pgbench; non-2xx ${T[quotes.app.bad]} (statuses ${T[quotes.app.statuses]:-none}); probe: $probe_quotes
  CPU ms per request, server:       pricesvc healthz ${T[health.app.srv]}, medians ${T[medians.app.srv]}, submit ${T[submit.app.srv]}; nginx ${T[health.ref.srv]}
  CPU ms per request, PostgreSQL:   medians ${T[medians.app.pg]} via pricesvc vs ${T[medians.ref.pg]} via pgbench; submit ${T[submit.app.pg]} vs ${T[submit.ref.pg]}; row 2 ${T[verified.ref.pg]} verified vs ${T[floor.ref.pg]} floor;
                                    medians with the popular location ${T[popular.ref.pg]} vs ${T[ordinary.ref.pg]} ordinary (pgbench, backends reaped before reading the clock)
  rows 1 and 2, each round:         row 1 $(round_ratios "${T[submit.app.rates]}" "${T[submit.ref.rates]}"); row 2 $(round_ratios "${T[verified.ref.rates]}" "${T[floor.ref.rates]}")
  row 2, verified (pgbench):        ${T[verified.ref.ok]} transactions, ${T[verified.ref.bad]} failed; max reports per reporter $verified_max (cap 10)
  row 2, the floor (bench_floor):   ${T[floor.ref.ok]} transactions, ${T[floor.ref.bad]} failed; rows in the table ${floor_rows}; max reports per reporter $floor_max (cap 10)
  submissions, pricesvc:            ${T[submit.app.ok]} × 201, statuses ${T[submit.app.statuses]}, socket errors ${T[submit.app.err]}; rows in the table ${http_rows}; max reports per reporter $http_max (cap 10)
  submissions, pgbench:             ${T[submit.ref.ok]} transactions, ${T[submit.ref.bad]} failed; rows in the table ${pg_rows}; max reports per reporter $pg_max (cap 10)
  non-2xx / socket errors:          healthz ${T[health.app.bad]}/${T[health.app.err]}, nginx ${T[health.ref.bad]}/${T[health.ref.err]}, medians ${T[medians.app.bad]}/${T[medians.app.err]} (statuses ${T[medians.app.statuses]:-none})
  live-session check:               $lookup_us µs per lookup of $verify_us µs per token verification ($session_share%), timed in a loop; a submission verifies once (the INSERT's policy): $session_per_submit ms of PostgreSQL time per submission (vs ${T[submit.app.pg]} ms CPU in all)
  read floor (rows 12, 13):         ${T[read_floor.ref.rate]} calls/s, PostgreSQL CPU ${T[read_floor.ref.pg]} ms per call (price_medians ${T[medians.ref.pg]}, price_quotes ${T[quotes.ref.pg]}); rounds $(echo ${T[read_floor.ref.rates]})
  row 5f, right after ANALYZE:      rounds $(round_ratios "${T[fresh_popular.ref.rates]}" "${T[fresh_ordinary.ref.rates]}"); PostgreSQL CPU ms per call ${T[fresh_popular.ref.pg]} with the popular location vs ${T[fresh_ordinary.ref.pg]}; pgbench average latency ${T[fresh_popular.ref.p99]} vs ${T[fresh_ordinary.ref.p99]} ms
  mixed workload (row 14):          ${T[search.searches]} searches and ${T[search.submissions]} submissions in ${T[search.seconds]} s ($search_rate searches/s, $submission_rate submissions/s); statuses ${T[search.app.statuses]}, socket errors ${T[search.app.err]};
                                    PostgreSQL CPU $search_pg ms per search (all of it, submissions' included), pricesvc CPU ${T[search.app.srv]} ms per request; wrk p50 / p99 ${T[search.app.p50]} / ${T[search.app.p99]} ms; rows in the table $mixed_rows; max reports per reporter $mixed_max (cap 10)
  stay-length curve (row 15):       $stay_curve (pgbench, $STAY_CLIENTS clients; PostgreSQL CPU and latency per call)
                                    probes (published cents, allowed, reason): $stay_probes
$( [ "$PLACES" -gt 0 ] && places_details )
  import-rates, 20 000 zones:       ${large_import_seconds} s for a ${large_import_mb} MB feed (source bench-large; reported, no target)
  price_medians probe (1 request):  $probe_medians; pricesvc statement timeout ${PRICESVC_STATEMENT_TIMEOUT_MS:-5000} ms, pgbench none
  $RSS_CONNS connections:              ${T[rss.app.rate]} ok req/s, ${T[rss.app.bad]} non-2xx ($( [ -n "${T[rss.app.statuses]}" ] && echo "${T[rss.app.statuses]}" || echo "statuses not counted")), ${T[rss.app.err]} socket errors; peak threads $threads_peak; VmHWM $hwm_mb MB (before: $(mb "$hwm_before") MB), VmRSS after $(mb "$rss_now") MB
EOF
} | tee "$out/table.txt"
