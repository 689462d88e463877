-- The maintenance fold (`pricesvc prune`): private.median_fold_stale folds the groups that inserts
-- stopped folding, and only those, so a quiet group's reads stop correcting with more and more rows.
-- It changes no answer: the store still answers what the straightforward query answers.
--
-- Time is simulated as in 55_median_store.sql: every stored time moves back by the same amount. Inserts
-- here never fold on their own (ids are kept off multiples of median_fold_every()); the test folds where
-- an insert would have.
begin;
\ir _helpers.psql
select plan(21);

-- Whatever else the database holds is folded first, so that the counts below are this file's groups.
select private.median_fold_stale(interval '0', 2147483647) \g /dev/null

create function tap.store_medians() returns setof private.median_row language sql stable as $$
    select * from public.price_median_overview() where location_id like 'stale:%'
$$;

-- Seven reporters whose identities are a month old; an eighth is made later.
create table tap.reporters (n integer, reporter uuid);
insert into tap.reporters select g, gen_random_uuid() from generate_series(1, 8) g;
insert into auth.users (id, created_at) select reporter, clock_timestamp() - interval '30 days' from tap.reporters where n <= 7;

create function tap.report(n integer, location text, cents integer, kind text default 'hourly') returns bigint
    language sql volatile
    return tap.seed((select reporter from tap.reporters r where r.n = report.n), location, cents, kind);

-- The next 15 reports get ids that are not multiples of median_fold_every(): no insert folds.
create function tap.no_insert_folds() returns void language sql volatile
    begin atomic
        select setval('public.price_reports_id_seq',
                      (nextval('public.price_reports_id_seq') / private.median_fold_every() + 1) * private.median_fold_every());
    end;

-- The clock moves forward by `by` (see 55_median_store.sql): no trigger fires, the store is not told.
create function tap.advance_clock(by interval) returns void language plpgsql as $$
begin
    set local session_replication_role = replica;
    update public.price_reports set created_at = created_at - by, reporter_matures_at = reporter_matures_at - by where location_id like 'stale:%';
    update private.median_queue set created_at = created_at - by, matures_at = matures_at - by where location_id like 'stale:%';
    update private.median_latest set created_at = created_at - by where location_id like 'stale:%';
    update private.median_totals set newest = newest - by where location_id like 'stale:%';
    update private.median_groups set expired_through = expired_through - by, summarized_at = summarized_at - by,
                                     summary_until = summary_until - by where location_id like 'stale:%';
    update private.median_summaries set last_reported_at = last_reported_at - by where location_id like 'stale:%';
    update auth.users set created_at = created_at - by where id in (select reporter from tap.reporters);
    set local session_replication_role = origin;
end
$$;

create function tap.queued(location text) returns integer language sql stable
    return (select count(*)::integer from private.median_queue q where q.location_id = location);
create function tap.expired_through(location text) returns timestamptz language sql stable
    return (select g.expired_through from private.median_groups g where g.location_id = location);
-- What a read of the group corrects the folded state with, besides queued reports: latest reports
-- still counted though they left the window, and reports that left it since the group's last fold.
create function tap.aged_out_corrections(location text) returns integer language sql stable
    return (select count(*)::integer from private.median_latest l
            where l.location_id = location and l.counted and l.created_at <= clock_timestamp() - private.report_window())
         + (select count(*)::integer from public.price_reports r
            where r.location_id = location and r.created_at > tap.expired_through(location)
              and r.created_at <= clock_timestamp() - private.report_window());

-- 190 days ago: four reporters at stale:quiet, folded (as their 16th report would).
select tap.no_insert_folds() \g /dev/null
select tap.report(n, 'stale:quiet', 100 * n) from generate_series(1, 4) n \g /dev/null
select private.median_fold('stale:quiet', 'hourly') \g /dev/null
select tap.advance_clock(interval '100 days');
-- 90 days ago: three more, and reporter 1 again; folded. Then nobody reports at stale:quiet any more.
select tap.no_insert_folds() \g /dev/null
select tap.report(n, 'stale:quiet', 100 * n) from generate_series(5, 7) n \g /dev/null
select tap.report(1, 'stale:quiet', 950) \g /dev/null
select private.median_fold('stale:quiet', 'hourly') \g /dev/null
select tap.advance_clock(interval '90 days');

-- Two hours ago: stale:busy is reported at and folded; stale:unfolded is reported at by mature reporters
-- and never folded; stale:young only by an identity made for it (it matures in a day).
insert into auth.users (id, created_at) select reporter, clock_timestamp() from tap.reporters where n = 8;
select tap.no_insert_folds() \g /dev/null
select tap.report(n, 'stale:busy', 200 + n) from generate_series(1, 4) n \g /dev/null
select private.median_fold('stale:busy', 'hourly') \g /dev/null
select tap.report(n, 'stale:unfolded', 300 + n, 'daily') from generate_series(2, 5) n \g /dev/null
select tap.report(8, 'stale:young', 400) \g /dev/null
select tap.advance_clock(interval '2 hours');

create table tap.before as select g.location_id, g.expired_through from private.median_groups g where g.location_id like 'stale:%';

select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('stale:%')$$,
              'before: the store answers what the query over every report answers');
select ok(tap.aged_out_corrections('stale:quiet') >= 3,
          'a quiet group''s reads correct with its reports that left the window since its last fold, 90 days ago');
select is(tap.queued('stale:unfolded'), 4, 'an unfolded group''s reads correct with every queued report');

select set_eq($$select location_id, rate_kind from private.median_stale_groups(interval '1 hour')$$,
              $$values ('stale:quiet', 'hourly'), ('stale:unfolded', 'daily')$$,
              'stale after an hour: the group with aged-out reports and the one with foldable queued reports; '
              'not the group folded two hours ago with nothing aged out, nor queued reports of an immature reporter');
select is_empty($$select from private.median_stale_groups(interval '3 hours') where location_id like 'stale:%' and location_id <> 'stale:quiet'$$,
                'reports queued two hours ago are not stale after three hours');

-- One group per call: the one due longest, stale:quiet (10 days), before stale:unfolded (2 hours).
select is(private.median_fold_stale(interval '1 hour', 1), 1, 'max_groups 1: folds one group');
select cmp_ok(tap.expired_through('stale:quiet'), '>', (select expired_through from tap.before where location_id = 'stale:quiet'),
              'the longest due first: stale:quiet''s fold time advanced');
select is(tap.aged_out_corrections('stale:quiet'), 0, 'and its reads correct with nothing that aged out');
select is(tap.queued('stale:unfolded'), 4, 'stale:unfolded waits for the next call');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('stale:%')$$,
              'the answers are unchanged');

select is(private.median_fold_stale(interval '1 hour'), 1, 'the next call folds the other stale group');
select is(tap.queued('stale:unfolded'), 0, 'its queued reports are folded');
select ok(tap.expired_through('stale:unfolded') > clock_timestamp() - private.report_window() - interval '1 minute',
          'and it has a fold time, now');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('stale:%')$$,
              'the answers are still unchanged');
select ok(exists (select from tap.store_medians() where location_id = 'stale:quiet')
          and exists (select from tap.store_medians() where location_id = 'stale:unfolded'),
          'and both folded groups have medians to compare');

select is(tap.expired_through('stale:busy'), (select expired_through from tap.before where location_id = 'stale:busy'),
          'a fresh group is not folded');
select is(tap.queued('stale:young'), 1, 'an immature reporter''s report stays queued');
select is(private.median_fold_stale(interval '1 hour'), 0, 'a third call finds nothing stale');

-- A day later the young identity has matured: its queued report becomes due.
select tap.advance_clock(interval '1 day');
select is(private.median_fold_stale(interval '1 hour'), 1, 'once its reporter matured, the queued report''s group is folded');
select is(tap.queued('stale:young'), 0, 'and its report is taken in');

select throws_ok($$select private.median_fold_stale(interval '-1 hour')$$, '22023', null, 'a negative age is refused');

select * from finish();
rollback;
