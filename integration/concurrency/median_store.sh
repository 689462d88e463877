#!/usr/bin/env bash
# The median store stays consistent under parallel inserts: 16 connections insert 1 600 reports into
# two locations at once (so folds, which every 16th report tries under a try-lock, race with inserts and
# with each other, and with the maintenance fold `pricesvc prune` runs, looping meanwhile), then the store must answer what the query over every report answers, and its books
# must balance; and the community places of the two locations (every report here carries coordinates,
# each insert refreshes its location's place under a lock) must be what the counted positions say.
#
#   integration/concurrency/median_store.sh ['postgresql:///pricesvc?host=DIR&user=<superuser>']
#
# Inserts run as the owner with explicit reporters (the store is what is under test here, not identity).
# Rows written by the test are deleted at the end. Prints TAP; exits non-zero when an assertion fails.
set -uo pipefail

owner_url=${1:-"postgresql:///${PGDATABASE:-pricesvc}?host=${PGHOST:?set PGHOST or pass a URL}&user=${PGUSER:-$(id -un)}"}
PGBENCH=${PGBENCH:-/usr/lib/postgresql/15/bin/pgbench}
[ -x "$PGBENCH" ] || PGBENCH=$(command -v pgbench)
CLIENTS=16
PER_CLIENT=100

work=$(mktemp -d)
owner() { psql -X -q -A -t -v ON_ERROR_STOP=1 "$owner_url" "$@"; }
cleanup() {
    owner -c "delete from public.price_reports where location_id like 'race:%'" >/dev/null
    owner -c "delete from auth.users where id in (select md5('race-' || g)::uuid from generate_series(1, 400) g)" >/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

# 400 reporters with month-old identities, each reporting 4 times: the cap (10 an hour) is never reached.
owner -c "insert into auth.users (id, created_at)
          select md5('race-' || g)::uuid, now() - interval '30 days' from generate_series(1, 400) g
          on conflict (id) do nothing" >/dev/null || { echo "Bail out! cannot create the reporters"; exit 1; }

cat >"$work/insert.sql" <<'SQL'
\set n :n + 1
\set reporter (:client_id * 100 + :n) % 400 + 1
\set location random(1, 2)
\set price random(100, 2000)
\set currency random(1, 3)
\set north random(-500, 500)
\set east random(-500, 500)
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, lat, lng)
values (md5('race-' || :reporter)::uuid, 'race:' || :location, 'hourly', :price,
        (array['USD', 'USD', 'EUR'])[:currency], 37.7 + :location * 0.01 + :north / 1e6, -122.4 + :east / 1e6);
SQL

echo "1..7"
failed=0
check() {  # description, condition (shell test result)
    if [ "$2" = ok ]; then echo "ok - $1"; else echo "not ok - $1"; failed=$((failed + 1)); fi
}

# The maintenance fold, as often as it can while the inserts run (interval 0: every queued report is due).
( while [ ! -e "$work/inserted" ]; do
      owner -c "select private.median_fold_stale(interval '0')" >>"$work/stale.txt" 2>>"$work/stale.err" ||
          { touch "$work/stale.failed"; break; }
  done ) &
stale_loop=$!
"$PGBENCH" -n -c "$CLIENTS" -j 2 -t "$PER_CLIENT" -D n=0 -f "$work/insert.sql" "$owner_url" >"$work/pgbench.txt" 2>&1
touch "$work/inserted"
wait "$stale_loop"
stale_folds=$(awk '{ s += $1 } END { print s + 0 }' "$work/stale.txt")
check "maintenance folds ran during the race without an error ($stale_folds groups)" \
    "$([ "$stale_folds" -gt 0 ] && [ ! -e "$work/stale.failed" ] && echo ok)"
[ -e "$work/stale.failed" ] && sed 's/^/# /' "$work/stale.err"
stored=$(owner -c "select count(*) from public.price_reports where location_id like 'race:%'")
[ "$stored" = $((CLIENTS * PER_CLIENT)) ] || grep -E 'ERROR|DETAIL|aborted' "$work/pgbench.txt" | sort | uniq -c | head -5 | sed 's/^/# /'
check "all $((CLIENTS * PER_CLIENT)) parallel inserts were stored (got $stored)" \
      "$([ "$stored" = $((CLIENTS * PER_CLIENT)) ] && echo ok)"

folds=$(owner -c "select count(*) from private.median_groups where location_id like 'race:%'")
check "folds ran during the race ($folds groups folded)" "$([ "$folds" = 2 ] && echo ok)"

differences=$(owner <<'SQL'
with store as (select * from public.price_medians(array['race:1', 'race:2'])),
     scan as (select * from private.report_medians_scanned(array['race:1', 'race:2'], array['hourly'],
                                                           clock_timestamp() - interval '180 days',
                                                           clock_timestamp()))
select (select count(*) from (select * from store except select * from scan) a)
     + (select count(*) from (select * from scan except select * from store) b)
     + (select case when count(*) = 4 then 0 else 1 end from store);
SQL
)
check "the store's medians equal the scan of every report, for both locations and both currencies" \
      "$([ "$differences" = 0 ] && echo ok)"

unbalanced=$(owner <<'SQL'
select (select count(*) from public.price_reports where location_id like 'race:%')
     - (select count(*) from private.median_queue where location_id like 'race:%')
     - (select coalesce(sum(reports), 0) from private.median_totals where location_id like 'race:%');
SQL
)
check "every report is either queued or counted once in the totals (difference $unbalanced)" \
      "$([ "$unbalanced" = 0 ] && echo ok)"

histograms=$(owner <<'SQL'
select (select count(*) from private.median_latest where location_id like 'race:%' and counted)
       = (select coalesce(sum(reporters), 0) from private.median_prices where location_id like 'race:%')
   and (select coalesce(sum(reporters), 0) from private.median_prices where location_id like 'race:%')
       = (select coalesce(sum(reporters), 0) from private.median_price_bands where location_id like 'race:%')
   and not exists (select from private.median_prices where location_id like 'race:%' and reporters <= 0);
SQL
)
check "both histograms count exactly the counted latest reports" "$([ "$histograms" = t ] && echo ok)"

placed=$(owner <<'SQL'
with fresh as (select p.location_id, percentile_cont(0.5) within group (order by p.lat) as lat,
                      percentile_cont(0.5) within group (order by p.lng) as lng, count(*)::integer as reporters
               from private.counted_positions(array['race:1', 'race:2'], clock_timestamp()) p
               group by p.location_id having count(*) >= private.median_min_reporters()),
     stored as (select location_id, lat, lng, reporters from private.community_places where location_id like 'race:%' and lat is not null)
select (select count(*) from (select * from stored except select * from fresh) a)
     + (select count(*) from (select * from fresh except select * from stored) b)
     + (select case when count(*) = 2 then 0 else 1 end from stored);
SQL
)
check "both community places are the counted positions' medians, as a refresh from scratch makes them" \
      "$([ "$placed" = 0 ] && echo ok)"

echo "# $((7 - failed)) passed, $failed failed"
[ "$failed" = 0 ]
