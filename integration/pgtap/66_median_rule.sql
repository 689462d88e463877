-- One median rule: the store answers what the raw reports say under the documented rule
-- (counted_reports.sql), whatever the session's TimeZone, a reporter's reports maturing at different times,
-- or a setting changed through migrate, each as it was first seen to fail. Reports admitted while the
-- threshold mode changes need two committed sessions: that case is in
-- integration/differential/median_rule.py. Each read is also compared with private.report_medians_scanned,
-- the rule as a query over price_reports.
begin;
\ir _helpers.psql
select plan(15);

-- What `pricesvc migrate` does when it applies an edited settings.sql: the function redefined, then
-- MigrationLayout.pricesvc's firstFileFollowUp (the reconciliation), in the file's transaction.
create function tap.migrate_setting(name text, returns text, body text) returns void language plpgsql as $$
begin
    execute format('create or replace function private.%I() returns %s language sql immutable parallel safe return %s',
                   name, returns, body);
    if to_regprocedure('private.median_rule_reconcile()') is not null then
        perform private.median_rule_reconcile();
    end if;
end
$$;
-- An identity of a given age, and a report from it as the owner seeds one (tap.seed).
create function tap.reporter(n integer, age interval) returns uuid language sql volatile as $$
    insert into auth.users (id, created_at) values (md5('rule-' || n)::uuid, clock_timestamp() - age)
    on conflict (id) do update set created_at = excluded.created_at;
    select md5('rule-' || n)::uuid;
$$;
-- A place's answer through price_medians, and the reference's (the rule over the raw reports).
create function tap.answer(location text) returns text language sql stable
    return (select coalesce(string_agg(format('%s|%s|%s', m.median_cents, m.reporters, m.reports), ','), 'none')
            from public.price_medians(array[location]) m);
create function tap.reference(location text) returns text language sql stable
    return (select coalesce(string_agg(format('%s|%s|%s', m.median_cents, m.reporters, m.reports), ','), 'none')
            from private.report_medians_scanned(array[location], array['hourly'],
                                                clock_timestamp() - make_interval(secs => date_part('epoch', private.report_window())),
                                                clock_timestamp()) m);
-- A zone whose UTC offset now differs from its offset one report window ago (a DST change in between),
-- so `now - '180 days'` in it is not 4 320 hours: New York or Sydney, whichever it is today.
create function tap.dst_zone() returns text language sql stable
    return (select z from unnest(array['America/New_York', 'Australia/Sydney']) z
            where (now() at time zone z) - (now() at time zone 'UTC')
                  <> ((now() - interval '4320 hours') at time zone z) - ((now() - interval '4320 hours') at time zone 'UTC')
            limit 1);

-- The window and the retention cutoff do not depend on the session's TimeZone (and neither does a
-- summary a maintenance session writes). a and b report now, c just outside the window (by elapsed
-- time), f past retention; prune runs in a zone with a DST change inside the window.
select tap.seed(tap.reporter(1, interval '300 days'), 'rule:tz', 100) \g /dev/null
select tap.seed(tap.reporter(2, interval '300 days'), 'rule:tz', 200) \g /dev/null
select tap.seed(tap.reporter(3, interval '300 days'), 'rule:tz', 300) \g /dev/null
select tap.seed(tap.reporter(6, interval '300 days'), 'rule:tz', 600) \g /dev/null
select tap.seed(tap.reporter(7, interval '300 days'), 'rule:tz', 700) \g /dev/null
select tap.seed(tap.reporter(8, interval '300 days'), 'rule:tz', 800) \g /dev/null
select isnt(tap.dst_zone(), null, 'a zone with a DST change inside the window: ' || coalesce(tap.dst_zone(), 'none'));
select set_config('timezone', tap.dst_zone(), true) \g /dev/null
update public.price_reports set created_at = clock_timestamp() - interval '4320 hours 30 minutes'
where location_id = 'rule:tz' and price_cents = 300;
update public.price_reports set created_at = clock_timestamp() - interval '4800 hours'
where location_id = 'rule:tz' and price_cents = 600;
-- Retention is the window plus the grace (4 488 hours): 30 minutes inside it is kept, 30 minutes past it goes.
update public.price_reports set created_at = clock_timestamp() - interval '4487 hours 30 minutes'
where location_id = 'rule:tz' and price_cents = 700;
update public.price_reports set created_at = clock_timestamp() - interval '4488 hours 30 minutes'
where location_id = 'rule:tz' and price_cents = 800;
select private.prune_reports(1000) \g /dev/null
select private.median_fold_stale(interval '30 days') \g /dev/null
select is(tap.answer('rule:tz'), 'none', 'in that zone, two reporters in the window: no median');
select is((select string_agg(price_cents::text, ',' order by price_cents) from public.price_reports
           where location_id = 'rule:tz'), '100,200,300,700', 'prune in that zone deletes by elapsed time');
select set_config('timezone', 'UTC', true) \g /dev/null
select is(tap.answer('rule:tz'), 'none', 'and a UTC reader after it sees no median either');
select set_config('timezone', 'Asia/Kathmandu', true) \g /dev/null
select is(tap.answer('rule:tz'), tap.reference('rule:tz'), 'nor one in Kathmandu (+05:45)');
select set_config('timezone', 'UTC', true) \g /dev/null

-- A reporter whose reports mature at different times counts with their latest counted report.
select tap.seed(tap.reporter(11, interval '300 days'), 'rule:mature', 100) \g /dev/null
select tap.seed(tap.reporter(12, interval '300 days'), 'rule:mature', 200) \g /dev/null
select tap.seed(tap.reporter(14, interval '300 days'), 'rule:mature', 300) \g /dev/null
select private.median_fold('rule:mature', 'hourly') \g /dev/null
select tap.seed(tap.reporter(14, interval '300 days'), 'rule:mature', 900) \g /dev/null
update public.price_reports set reporter_matures_at = now() + interval '1 day'
where location_id = 'rule:mature' and price_cents = 900;
select is(tap.answer('rule:mature'), '200|3|3', 'price_medians: d counts with the report that is mature');
select is((select format('%s|%s|%s', median_cents, reporters, reports) from public.price_median_overview()
           where location_id = 'rule:mature'), '200|3|3', 'price_median_overview() says the same');
select is((select format('%s|%s|%s', median_cents, reporters, reports)
           from public.price_median_overview(now() - interval '10 days') where location_id = 'rule:mature'),
          '200|3|3', 'and so does the overview narrowed by since, which scans the reports');
-- The same without any edit: a reporter with no identity row matures 24 h after each admission. Their
-- folded report is mature, their newer one is queued and young.
select tap.seed(tap.reporter(21, interval '300 days'), 'rule:young', 100) \g /dev/null
select tap.seed(tap.reporter(22, interval '300 days'), 'rule:young', 200) \g /dev/null
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency)
values ('e1000000-0000-4000-8000-000000000024', 'rule:young', 'hourly', 300, 'USD');
update public.price_reports set reporter_matures_at = now() - interval '1 hour'
where location_id = 'rule:young' and price_cents = 300;
select private.median_fold('rule:young', 'hourly') \g /dev/null
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency)
values ('e1000000-0000-4000-8000-000000000024', 'rule:young', 'hourly', 900, 'USD');
select is(tap.answer('rule:young'), '200|3|3', 'a reporter without an identity: their mature report counts');

-- `reports` counts each counted report once after the window shrinks and grows again. d matures within
-- the fold margin, so their report, backdated 60 days, stays queued through both folds.
select tap.seed(tap.reporter(31, interval '300 days'), 'rule:shrink', 100) \g /dev/null
select tap.seed(tap.reporter(32, interval '300 days'), 'rule:shrink', 200) \g /dev/null
select tap.seed(tap.reporter(33, interval '300 days'), 'rule:shrink', 300) \g /dev/null
select tap.seed(tap.reporter(34, interval '24 hours 2 minutes'), 'rule:shrink', 400) \g /dev/null
update public.price_reports set created_at = clock_timestamp() - interval '60 days'
where location_id = 'rule:shrink' and price_cents = 400;
select tap.migrate_setting('report_window', 'interval', $$interval '30 days'$$);
select private.median_fold_stale(interval '0') \g /dev/null
select is(tap.answer('rule:shrink'), '200|3|3', 'under a 30-day window: d''s report is outside it');
select tap.migrate_setting('report_window', 'interval', $$interval '180 days'$$);
-- Time passes: d is mature by the fold margin (as the clock would make it), and the next fold takes the
-- report in.
update private.median_queue set matures_at = now() - interval '10 minutes' where location_id = 'rule:shrink';
select private.median_fold('rule:shrink', 'hourly') \g /dev/null
select is(tap.answer('rule:shrink'), '250|4|4', 'back at 180 days: four reports, each counted once');
select is(tap.answer('rule:shrink'), tap.reference('rule:shrink'), 'as the reference says');

-- The band width is a setting like the others: changing it rebuilds the bands, and so does reverting it.
select tap.seed(tap.reporter(40 + p / 10, interval '300 days'), 'rule:band', p) from unnest(array[130, 190, 250]) p \g /dev/null
select private.median_fold('rule:band', 'hourly') \g /dev/null
select tap.migrate_setting('median_band_cents', 'integer', '100');
select tap.seed(tap.reporter(40 + p / 10, interval '300 days'), 'rule:band', p) from unnest(array[310, 370]) p \g /dev/null
select is(tap.answer('rule:band'), '250|5|5', 'a band width of 100 cents: the median is still 250');
select private.median_fold('rule:band', 'hourly') \g /dev/null
select tap.migrate_setting('median_band_cents', 'integer', '64');
select is(tap.answer('rule:band'), '250|5|5', 'back at 64 after a fold at 100: still 250');

-- A rebuild from the reports alone answers what the incremental store answered, for every place above.
create temporary table before_rebuild on commit drop as
select * from public.price_median_overview();
select private.median_rebuild(null) \g /dev/null
select results_eq($$select * from public.price_median_overview()$$, $$select * from before_rebuild$$,
                  'a rebuild from scratch gives the same overview');

select * from finish();
rollback;
