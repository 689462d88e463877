#!/usr/bin/env bash
# User-space instructions pricesvc executes per request, counted by valgrind's callgrind.
#
# Unlike the ratios of bench/run.sh, this number does not move with the machine's other load: two
# runs of the same build agree to about 0.1 %. It covers pricesvc's own work (parsing, the token
# check, building the query, libpq, libmicrohttpd, allocation), not the kernel's share of a request
# nor PostgreSQL's. Use it to see what a change to the request path costs or saves.
#
#   bench/instructions.sh [submit|medians|places|healthz]   (default submit)
#
# Needs the benchmark's database, kept by an earlier `BENCH_KEEP_PG=1 bench/run.sh`, and valgrind
# (apt-get install valgrind). Settings: BENCH_INSTRUCTION_SECONDS (10, the counted run),
# PRICESVC_BIN (.build/release/pricesvc). Writes var/bench/instructions/callgrind.out.* for
# callgrind_annotate --inclusive=yes. Leaves the benchmark's PostgreSQL running, as BENCH_KEEP_PG=1 does
# (scripts/dev/pg-cluster.sh stop var/bench/pg stops it).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${1:-submit}
case $mode in submit|medians|places|healthz) ;; *) echo "usage: bench/instructions.sh [submit|medians|places|healthz]" >&2; exit 2 ;; esac
seconds=${BENCH_INSTRUCTION_SECONDS:-10}
case $seconds in ''|*[!0-9]*|0) echo "BENCH_INSTRUCTION_SECONDS must be a whole number of seconds >= 1" >&2; exit 2 ;; esac
bin=${PRICESVC_BIN:-.build/release/pricesvc}
for tool in valgrind callgrind_control callgrind_annotate wrk python3 psql; do
  command -v "$tool" >/dev/null || { echo "bench/instructions.sh needs $tool (valgrind: apt-get install valgrind)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "no pricesvc binary at $bin: build it first (make build)" >&2; exit 1; }
pg_dir=var/bench/pg
secret_file=var/bench/jwt-secret
[ -d "$pg_dir" ] && [ -f "$secret_file" ] \
  || { echo "no benchmark database in $pg_dir: run BENCH_KEEP_PG=1 bench/run.sh once first" >&2; exit 1; }

eval "$(scripts/dev/pg-cluster.sh start "$pg_dir" | tail -n1)"
export PGHOST PGUSER

out=var/bench/instructions
rm -rf "$out"; mkdir -p "$out"
export PRICESVC_JWT_SECRET_FILE=$PWD/$secret_file
unset PRICESVC_JWT_SECRET

# Fresh reporters, as bench/run.sh mints them: the cap allows 10 reports per reporter and hour.
python3 bench/tokens.py "$secret_file" "instr-$(date +%s%N)" 20000 "$out" >/dev/null
# shellcheck source=bench/reporters.sh
. bench/reporters.sh
load_reporters pricesvc "$out/reporters.tsv"

PRICESVC_LISTEN=127.0.0.1:0 PRICESVC_DATABASE_URL="postgresql:///pricesvc?host=$PGHOST&user=authenticator" \
PRICESVC_RATE_LIMIT_PER_MINUTE=0 PRICESVC_DB_REQUESTS_PER_IP=0 PRICESVC_EXPENSIVE_REQUESTS_IN_FLIGHT=0 PRICESVC_MAX_CONNECTIONS=2048 PRICESVC_MAX_CONNECTIONS_PER_IP=2048 \
PRICESVC_ACCESS_LOG=false \
  valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.out.%p" "$bin" serve >"$out/pricesvc.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true' EXIT
port=
for _ in $(seq 600); do
  port=$(sed -n 's|^pricesvc: listening on http://127\.0\.0\.1:\([0-9]*\)$|\1|p' "$out/pricesvc.log" 2>/dev/null || true)
  [ -n "$port" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$out/pricesvc.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$port" ] || { echo "pricesvc did not start under valgrind within 60 s" >&2; exit 1; }

apikey=$("$bin" keys) || { echo "pricesvc keys failed" >&2; exit 1; }
export BENCH_MODE=$mode BENCH_APIKEY=$apikey BENCH_TOKENS=$out/tokens-http.txt BENCH_THREADS=1
export BENCH_READER=$(head -n1 "$out/tokens-http.txt")
# Warm-up (connections, prepared statements, caches), then count only the measured run.
wrk -t 1 -c 4 -d 3s -s bench/wrk.lua "http://127.0.0.1:$port" >/dev/null
callgrind_control -z "$pid" >/dev/null 2>&1
result=$(wrk -t 1 -c 4 -d "${seconds}s" -s bench/wrk.lua "http://127.0.0.1:$port" | grep '^BENCH_RESULT')
callgrind_control -d "$pid" >/dev/null 2>&1
requests=$(sed -n 's/.* requests=\([0-9]*\) .*/\1/p' <<<"$result")
non2xx=$(sed -n 's/.* non2xx=\([0-9]*\) .*/\1/p' <<<"$result")
dump=$(ls "$out"/callgrind.out.*.1 2>/dev/null | head -n1)
[ -n "$dump" ] && [ "${requests:-0}" -gt 0 ] || { echo "no requests counted (wrk: $result)" >&2; exit 1; }
total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
[ -n "$total" ] || { echo "callgrind_annotate found no totals in $dump" >&2; exit 1; }
printf 'pricesvc %s: %d requests (%s not 2xx), %s user-space instructions per request\n' \
  "$mode" "$requests" "${non2xx:-?}" "$((total / requests))"
echo "profile: callgrind_annotate --inclusive=yes $dump"
