#!/usr/bin/env bash
# The stay-length curve (issue 22): price_quotes for one location and stays of 1 hour, 1 day, 30 days and
# 366 days, pgbench average latency per call (one client, prepared statements), and each over the
# 1-hour one. Target: 366 days at most 20 x 1 hour.
#
#   bench/stay_curve.sh OWNER_URL            (libpq environment for pgbench: PGHOST, PGUSER, PGDATABASE)
#
# Imports bench/stay_curve_feed.py as source "curve" (a no-op when it is already there), then measures.
# Settings: PRICESVC_BIN (default .build/release/pricesvc), STAY_CURVE_SECONDS=5 per stay,
# STAY_CURVE_STARTS=2026-03-02T17:30:00-05:00 (the bench's quote start: the 30- and 366-day stays cross
# both DST changes), PGBENCH (default pgbench on PATH, else PostgreSQL 15's).
# Prints one line per stay, then `stay_curve_ratio_366d_1h=R` for the bench table.
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

declare -A ms
for stay in PT1H P1D P30D P366D; do
  interval=${stay/PT1H/1 hour}; interval=${interval/P1D/1 day}; interval=${interval/P30D/30 days}; interval=${interval/P366D/366 days}
  cat >"$work/$stay.sql" <<SQL
select published_cents, published_allowed from public.price_quotes(array['curve:stay'], 'hourly', '$STARTS'::timestamptz, '$interval'::interval);
SQL
  # The answer first: a curve of stays that were refused would measure nothing.
  answer=$(psql -X -A -t -q -f "$work/$stay.sql")
  case $answer in *'|t') ;; *) echo "stay_curve: $stay answered '$answer', not an allowed stay" >&2; exit 1 ;; esac
  "$PGBENCH" -n -c 1 -j 1 -T "$SECS" -M prepared -f "$work/$stay.sql" >"$work/$stay.txt" 2>&1 ||
    { cat "$work/$stay.txt" >&2; exit 1; }
  ms[$stay]=$(sed -n 's/^latency average = \([0-9.]*\) ms/\1/p' "$work/$stay.txt")
  printf 'stay %-6s %8s ms per call   cost %s\n' "$stay" "${ms[$stay]}" "${answer%|t}"
done
printf 'stay_curve_ratio_366d_1h=%s\n' "$(python3 -c "print(round($(echo "${ms[P366D]}") / $(echo "${ms[PT1H]}"), 1))")"
