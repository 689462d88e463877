-- A popular place costs a reader what an ordinary one costs (bench row 5). The correction of a
-- group's totals for reports that left the window since its last fold reads price_reports between the
-- group's expired_through and the reader's cutoff. Planned with the reports joined before median_groups,
-- as fresh statistics made it, every call read every report of each group: 100 000 for the bench's popular
-- place, 1.3 s a call against 10 ms. Here: 2 000 mature reporters at one place, folded and analyzed; a read
-- may touch the reports index only for the few reports of that span.
begin;
\ir _helpers.psql
select plan(4);
\set QUIET 1

insert into auth.users (id, created_at)
select ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, now() - interval '3 days'
from generate_series(1, 2000) i;
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency)
select ('00000000-0000-4000-8000-' || lpad(to_hex(i), 12, '0'))::uuid, 'pop:place', 'hourly', 100 + i % 500, 'USD'
from generate_series(1, 2000) i;
-- Three ordinary places beside it.
select tap.seed(r, 'pop:ordinary-' || n, 300 + n) from (values (tap.alice()), (tap.bob()), (tap.carol())) r(r),
       generate_series(1, 3) n \g /dev/null
update auth.users set created_at = now() - interval '3 days' where id in (tap.alice(), tap.bob(), tap.carol());
-- And what makes the planner expect a handful of reports per place: 20 000 reports over 10 000 other
-- places (loaded without triggers, so outside the store; nothing here reads them).
set local session_replication_role = replica;
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency, reporter_matures_at)
select gen_random_uuid(), 'pop:filler-' || (i % 10000), 'hourly', 100, 'USD', now() - interval '1 day'
from generate_series(1, 20000) i;
set local session_replication_role = origin;
select private.median_rebuild(array['pop:place', 'pop:ordinary-1', 'pop:ordinary-2', 'pop:ordinary-3']) \g /dev/null
analyze public.price_reports;
analyze private.median_groups;
analyze private.median_queue;

select is((select reporters from public.price_medians(array['pop:place'])), 2000,
          'the popular place has its median, over 2 000 reporters');

-- Index tuples this transaction has read from price_reports' location/time index, so far.
create function pg_temp.reports_index_reads() returns bigint language sql volatile
    return pg_stat_get_xact_tuples_returned('public.price_reports_location_time_idx'::regclass);

create temp table reads (what text primary key, n bigint);
insert into reads values ('before', pg_temp.reports_index_reads());
select count(*) from public.price_medians(array['pop:place']) \g /dev/null
select count(*) from public.price_medians(array['pop:place', 'pop:ordinary-1', 'pop:ordinary-2', 'pop:ordinary-3']) \g /dev/null
insert into reads values ('popular', pg_temp.reports_index_reads());
select count(*) from public.price_medians(array['pop:ordinary-1', 'pop:ordinary-2', 'pop:ordinary-3']) \g /dev/null
insert into reads values ('ordinary', pg_temp.reports_index_reads());

select cmp_ok((select n from reads where what = 'popular') - (select n from reads where what = 'before'), '<', 50::bigint,
              'reading the popular place, alone and with three others, reads under 50 of its 2 000 reports from the index');
select cmp_ok((select n from reads where what = 'ordinary') - (select n from reads where what = 'popular'), '<', 50::bigint,
              'reading three ordinary places reads under 50 reports from the index');

set local role authenticated;
select tap.use_token(tap.token_for(tap.alice())) \g /dev/null
select is((select count(*)::int from public.price_medians(array['pop:place', 'pop:ordinary-1'])), 2,
          'as a reporter through the service: both medians');
reset role;

select * from finish();
rollback;
