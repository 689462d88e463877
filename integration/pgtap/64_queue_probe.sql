-- A stored summary is used only while no queued report changes it: report_medians probes the queue once
-- per group. It keeps one generic plan per session (plan_cache_mode), so whatever plan that probe got
-- when the session first read medians stays until the queue is analyzed again. Planned while the queue
-- was empty (as after a restore, a bulk fold, or a vacuum of a quiet queue), the probe was a sequential
-- scan of the whole queue; once new reporters queued 140 000 reports, every group of every search read
-- all of them: the bench's mixed workload (row 14) fell to 4 searches a second, half of them cut by the
-- statement timeout. The probe must read the queue by index whatever the statistics said at planning.
begin;
\ir _helpers.psql
select plan(4);
\set QUIET 1

-- Three mature reporters at one place, folded and summarized: a read takes the summary path.
select tap.seed(r, 'qp:place', 300 + n) from (values (tap.alice(), 1), (tap.bob(), 2), (tap.carol(), 3)) r(r, n) \g /dev/null
update auth.users set created_at = now() - interval '3 days' where id in (tap.alice(), tap.bob(), tap.carol());
update public.price_reports set reporter_matures_at = now() - interval '1 day' where location_id = 'qp:place';
select private.median_rebuild(array['qp:place']) \g /dev/null
-- An empty queue, physically (no pages left), and statistics that say so: the state a plan must not keep.
truncate private.median_queue;
analyze private.median_queue;

-- This session's first read plans the probe, with the queue's statistics saying it is empty.
select is((select median_cents from public.price_medians(array['qp:place'])), 302,
          'the median of three mature reporters, from the store');
select ok((select summarized_at is not null from private.median_groups where location_id = 'qp:place'),
          'the group has a stored summary, so the read probes the queue');

-- Then many young reporters queue reports elsewhere; nothing analyzes the queue.
insert into private.median_queue (report_id, location_id, rate_kind, reporter_id, currency, price_cents,
                                  created_at, matures_at)
select -i, 'qp:other-' || (i % 5000), 'hourly', gen_random_uuid(), 'USD', 500, now(), now() + interval '1 day'
from generate_series(1, 50000) i;

create function pg_temp.queue_seq_scans() returns bigint language sql volatile
    return pg_stat_get_xact_numscans('private.median_queue'::regclass);
create temp table scans (what text primary key, n bigint);
insert into scans values ('before', pg_temp.queue_seq_scans());
select count(*) from public.price_medians(array['qp:place', 'qp:other-1', 'qp:other-2']) \g /dev/null
insert into scans values ('after', pg_temp.queue_seq_scans());

select is((select n from scans where what = 'after') - (select n from scans where what = 'before'), 0::bigint,
          'reading three groups with a plan made when the queue was empty scans none of its 50 000 rows');
select is((select median_cents from public.price_medians(array['qp:place'])), 302,
          'and the median is unchanged');

select * from finish();
rollback;
