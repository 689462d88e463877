-- The read floor (bench/run.sh rows 12 and 13): one precomputed row per seeded location, with the columns
-- price_medians returns (private.median_row's, declared here, not by the type: a typed table would
-- keep a migration from replacing the type), keyed by location. pgbench reads 12 of them by primary key
-- in the statement pricesvc would send for a lookup (bench/pgbench_scripts.py, pgbench-read-floor.sql):
-- what a median search costs if it were only a read of stored rows. Run as the superuser after the seed
-- (psql -v marker=); rebuilt only when the seed changed (bench.seeded is emptied by a reseed).
-- The values are the seeded reports' plain per-location aggregates: what matters is the rows' shape and
-- the access path, not whether the median is the store's.
\set ON_ERROR_STOP 1
set client_min_messages = warning;
begin;
drop table if exists bench.floor_medians;
create table bench.floor_medians (
    location_id text primary key,
    rate_kind text not null,
    currency text not null,
    median_cents integer,
    reporters integer,
    reports integer,
    last_reported_at timestamptz
);
insert into bench.floor_medians (location_id, rate_kind, currency, median_cents, reporters, reports, last_reported_at)
select r.location_id, r.rate_kind, r.currency,
       percentile_disc(0.5) within group (order by r.price_cents),
       count(distinct r.reporter_id), count(*), max(r.created_at)
from public.price_reports r
where r.location_id like 'bench:loc-%'
group by r.location_id, r.rate_kind, r.currency;
grant select on bench.floor_medians to authenticated;
insert into bench.seeded (what) values (:'marker');
commit;
vacuum (analyze) bench.floor_medians;
