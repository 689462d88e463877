#!/usr/bin/env bash
# The stay-length curve (issue 22): price_quotes for one location and stays of 1 hour, 1 day, 30 days and
# 366 days, pgbench average latency per call (one client, prepared statements), and each over the 1-hour
# one; beside it published_cost alone (the published part of the quote, without the community median).
# Target: 366 days at most 20 x 1 hour.
#
#   bench/stay_curve.sh OWNER_URL            (libpq environment for psql and pgbench: PGHOST, PGUSER,
#                                             PGDATABASE, a role that may call both functions)
#
# Imports bench/stay_curve_feed.py as source "curve" (a no-op when it is already there), then measures.
# Settings: PRICESVC_BIN (default .build/release/pricesvc), STAY_CURVE_SECONDS=5 per stay and function,
# STAY_CURVE_STARTS=2026-03-02T17:30:00-05:00 (the bench's quote start: the 30- and 366-day stays cross
# DST changes), PGBENCH (default pgbench on PATH, else PostgreSQL 15's).
# Prints one line per stay, then `stay_curve_ratio_366d_1h=R` (price_quotes) and
# `stay_curve_published_ratio_366d_1h=R` (published_cost) for the bench table.
set -euo pipefail
cd "$(dirname "$0")/.."
owner_url=${1:?usage: bench/stay_curve.sh OWNER_URL}
BIN=${PRICESVC_BIN:-$PWD/.build/release/pricesvc}
SECS=${STAY_CURVE_SECONDS:-5}
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

declare -A quotes published
for stay in '1 hour' '1 day' '30 days' '366 days'; do
  # The answer first: a curve of stays that were refused would measure nothing.
  answer=$(psql -X -A -t -q -v location=curve:stay -v starts="$STARTS" -v duration="$stay" \
           <<<"select published_cents, published_allowed from public.price_quotes(array[:'location'], 'hourly', :'starts', :'duration')")
  case $answer in *'|t') ;; *) echo "stay_curve: $stay answered '$answer', not an allowed stay" >&2; exit 1 ;; esac
  quotes[$stay]=$(measure quotes "$stay")
  published[$stay]=$(measure published "$stay")
  printf 'stay %-9s price_quotes %8s ms per call, published_cost %8s ms (cost %s)\n' \
    "$stay" "${quotes[$stay]}" "${published[$stay]}" "${answer%|t}"
done
ratio() { python3 -c "import sys; print(round(float(sys.argv[1]) / float(sys.argv[2]), 1))" "$1" "$2"; }
printf 'stay_curve_ratio_366d_1h=%s\n' "$(ratio "${quotes[366 days]}" "${quotes[1 hour]}")"
printf 'stay_curve_published_ratio_366d_1h=%s\n' "$(ratio "${published[366 days]}" "${published[1 hour]}")"
