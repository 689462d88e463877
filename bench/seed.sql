-- One-time seed for the median benchmark, run as the superuser (psql -v reports= -v reporters=):
-- :reports reports over :locations locations bench:loc-00001.., all 'hourly', from :reporters distinct
-- reporters, spread over the last 170 days (inside the 180-day window). With the defaults (1 000 000
-- over 20 000 locations) a car park has ~50 reports: the shape of a city's worth of community data.
-- The cap trigger would stamp every row with now() and refuse the 11th per reporter, so the bulk
-- load runs with session_replication_role = replica (no user triggers), after inserting the
-- reporters themselves so the foreign key holds anyway.
\set ON_ERROR_STOP 1
begin;
select bench.ensure_users(array(select md5('bench-seed-' || g)::uuid from generate_series(1, :reporters) g));
set local session_replication_role = replica;
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, created_at)
select md5('bench-seed-' || (1 + floor(random() * :reporters))::int)::uuid,
       'bench:loc-' || lpad((1 + g % :locations)::text, 5, '0'),
       'hourly',
       400 + floor(random() * 1600)::int,
       'USD',
       now() - random() * interval '170 days'
from generate_series(1, :reports) g;
insert into bench.seeded (what) values (:'marker');
commit;
-- VACUUM too: the median index is read index-only, which needs the visibility map a live table has.
vacuum (analyze) public.price_reports;
