-- One-time seed for the median benchmarks, run as the superuser
-- (psql -v reports= -v reporters= -v locations= -v popular_reports= -v popular_reporters= -v marker=):
-- - :reports reports over :locations locations bench:loc-00001.., all 'hourly', from :reporters
--   distinct reporters, spread over the last 170 days (inside the 180-day window). With the defaults
--   (1 000 000 over 20 000 locations) a car park has ~50 reports: the shape of a city's worth of
--   community data.
-- - one popular location, bench:popular (a city's airport garage): :popular_reports reports from
--   :popular_reporters of the same reporters (100 000 from 20 000 by default), over the same 170 days.
-- The cap trigger would stamp every row with now() and refuse the 11th per reporter, so the bulk load
-- runs with session_replication_role = replica (no triggers at all), and then builds the median store
-- itself, as a bulk load must (migrations/median_store.sql); with no trigger, it also says when each
-- reporter matures (reporter_matures_at, which the admission trigger sets otherwise). Reporters are
-- months old, like their reports: only identities older than a day count toward medians.
\set ON_ERROR_STOP 1
begin;
select bench.ensure_users(array(select md5('bench-seed-' || g)::uuid from generate_series(1, :reporters) g));
update auth.users set created_at = now() - interval '200 days'
where id = any (array(select md5('bench-seed-' || g)::uuid from generate_series(1, :reporters) g));
set local session_replication_role = replica;
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, created_at,
                                  reporter_matures_at)
select md5('bench-seed-' || (1 + floor(random() * :reporters))::int)::uuid,
       'bench:loc-' || lpad((1 + g % :locations)::text, 5, '0'),
       'hourly',
       400 + floor(random() * 1600)::int,
       'USD',
       now() - random() * interval '170 days',
       now() - interval '200 days' + private.reporter_maturity()
from generate_series(1, :reports) g;
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, created_at,
                                  reporter_matures_at)
select md5('bench-seed-' || (1 + g % least(:popular_reporters, :reporters)))::uuid,
       'bench:popular',
       'hourly',
       400 + floor(random() * 1600)::int,
       'USD',
       now() - random() * interval '170 days',
       now() - interval '200 days' + private.reporter_maturity()
from generate_series(1, :popular_reports) g;
set local session_replication_role = origin;
select private.median_rebuild(null);
insert into bench.seeded (what) values (:'marker');
commit;
-- VACUUM too: index-only scans need the visibility map a live table has.
vacuum (analyze) public.price_reports;
vacuum (analyze) private.median_queue, private.median_groups, private.median_latest, private.median_prices,
                 private.median_price_bands, private.median_totals;
