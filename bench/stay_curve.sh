#!/usr/bin/env bash
# The stay-length curve (bench row 15): price_quotes for one location and stays of 1 hour, 1 day, 30 days and
# 366 days, per call: pgbench average latency (one client, prepared statements) and the PostgreSQL
# backend's CPU time (/proc/PID/schedstat around STAY_CURVE_CALLS calls in one session: what a loaded
# machine disturbs least); beside it published_cost alone (the published part of the quote, without the
# community median). Target: 366 days at most 20 x 1 hour.
#
#   bench/stay_curve.sh OWNER_URL            (libpq environment for psql and pgbench: PGHOST, PGUSER,
#                                             PGDATABASE, a role that may call both functions)
#
# Imports bench/stay_curve_feed.py as source "curve" (a no-op when it is already there), then measures.
# Settings: PRICESVC_BIN (default .build/release/pricesvc), STAY_CURVE_SECONDS=5 per stay and function,
# STAY_CURVE_CALLS=40 per stay and function for the CPU figure,
# STAY_CURVE_STARTS=2026-03-02T17:30:00-05:00 (the bench's quote start: the 30- and 366-day stays cross
# DST changes), PGBENCH (default pgbench on PATH, else PostgreSQL 15's).
# Prints one line per stay, then `stay_curve_ratio_366d_1h=R` (price_quotes) and
# `stay_curve_published_ratio_366d_1h=R` (published_cost), both from CPU time, for the bench table.
set -euo pipefail
cd "$(dirname "$0")/.."
owner_url=${1:?usage: bench/stay_curve.sh OWNER_URL}
BIN=${PRICESVC_BIN:-$PWD/.build/release/pricesvc}
SECS=${STAY_CURVE_SECONDS:-5}
CALLS=${STAY_CURVE_CALLS:-40}
STARTS=${STAY_CURVE_STARTS:-2026-03-02T17:30:00-05:00}
PGBENCH=${PGBENCH:-$(command -v pgbench || echo /usr/lib/postgresql/15/bin/pgbench)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 bench/stay_curve_feed.py >"$work/feed.json"
"$BIN" import-rates --migration-database-url "$owner_url" --source curve "$work/feed.json" >"$work/import.txt" 2>&1 ||
  { cat "$work/import.txt" >&2; exit 1; }

# pgbench reads :name as a variable: the location, start and duration are parameters, as pricesvc sends them.
echo "select published_cents, published_allowed from public.price_quotes(array[:location], 'hourly', :starts, :duration);" >"$work/quotes.sql"
echo "select cost_cents, allowed from public.published_cost(array[:location], :starts, :duration);" >"$work/published.sql"

measure() {  # script duration -> average latency in ms
  "$PGBENCH" -n -c 1 -j 1 -T "$SECS" -M prepared -D location=curve:stay -D starts="$STARTS" -D duration="$2" \
    -f "$work/$1.sql" >"$work/$1.txt" 2>&1 || { cat "$work/$1.txt" >&2; exit 1; }
  sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$work/$1.txt"
}

cpu() {  # script duration -> backend CPU ms per call (3 calls to warm up, then CALLS)
  local i call
  call=$(sed -e "s/:location/'curve:stay'/" -e "s/:starts/'$STARTS'/" -e "s/:duration/'$2'/" "$work/$1.sql")
  {
    echo 'select pg_backend_pid() as pid \gset'
    echo '\setenv BPID :pid'
    echo '\o /dev/null'
    for i in 1 2 3; do echo "$call"; done
    echo "\\! cut -d' ' -f1 /proc/\$BPID/schedstat >$work/cpu0"
    for ((i = 0; i < CALLS; i++)); do echo "$call"; done
    echo "\\! cut -d' ' -f1 /proc/\$BPID/schedstat >$work/cpu1"
  } >"$work/cpu.sql"
  psql -X -q -v ON_ERROR_STOP=1 -f "$work/cpu.sql" >/dev/null
  python3 -c "import sys; print(round((int(sys.argv[2]) - int(sys.argv[1])) / 1e6 / int(sys.argv[3]), 3))" \
    "$(cat "$work/cpu0")" "$(cat "$work/cpu1")" "$CALLS"
}

declare -A quotes published quotes_cpu published_cpu
for stay in '1 hour' '1 day' '30 days' '366 days'; do
  # The answer first: a curve of stays that were refused would measure nothing.
  answer=$(psql -X -A -t -q -v location=curve:stay -v starts="$STARTS" -v duration="$stay" \
           <<<"select published_cents, published_allowed from public.price_quotes(array[:'location'], 'hourly', :'starts', :'duration')")
  case $answer in *'|t') ;; *) echo "stay_curve: $stay answered '$answer', not an allowed stay" >&2; exit 1 ;; esac
  quotes[$stay]=$(measure quotes "$stay")
  published[$stay]=$(measure published "$stay")
  quotes_cpu[$stay]=$(cpu quotes "$stay")
  published_cpu[$stay]=$(cpu published "$stay")
  printf 'stay %-9s price_quotes %8s ms per call (CPU %7s ms), published_cost %8s ms (CPU %7s ms); cost %s\n' \
    "$stay" "${quotes[$stay]}" "${quotes_cpu[$stay]}" "${published[$stay]}" "${published_cpu[$stay]}" "${answer%|t}"
done
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 1))" "$1" "$2"; }
printf 'stay_curve_ratio_366d_1h=%s\n' "$(ratio "${quotes_cpu[366 days]}" "${quotes_cpu[1 hour]}")"
printf 'stay_curve_published_ratio_366d_1h=%s\n' "$(ratio "${published_cpu[366 days]}" "${published_cpu[1 hour]}")"
