-- Retention and erasure: private.prune_reports deletes reports past the report
-- window plus the grace and leaves the median store exactly as a rebuild would; auth.forget_user erases
-- one person; neither is reachable by a client role, and no client can switch off the store's rebuild.
begin;
\ir _helpers.psql
select plan(23);

-- Whatever else the database holds past retention goes first (rolled back with the file).
do $$ begin while (select groups from private.prune_reports(1000)) > 0 loop end loop; end $$;

-- Three old reporters at three locations. Every reporter reports at 'keep:*' (stays: 100 and 170 days old)
-- and at 'gone:*' (goes: 190 days old); the eldest report of each reporter at 'mixed:a' goes, the newer stays.
select tap.seed(r, l, c) from (values (tap.alice(), 300), (tap.bob(), 400), (tap.carol(), 500)) p(r, c),
       (values ('retention:keep'), ('retention:gone'), ('retention:mixed')) s(l) \g /dev/null
select tap.seed(r, 'retention:mixed', c + 50) from (values (tap.alice(), 300), (tap.bob(), 400), (tap.carol(), 500)) p(r, c) \g /dev/null
update public.price_reports set created_at = now() - interval '170 days' where location_id = 'retention:keep';
update public.price_reports set created_at = now() - interval '190 days' where location_id = 'retention:gone';
update public.price_reports set created_at = now() - case when price_cents % 100 = 0 then interval '200 days' else interval '100 days' end
where location_id = 'retention:mixed';
select private.median_fold(l, 'hourly') from (values ('retention:keep'), ('retention:gone'), ('retention:mixed')) s(l) \g /dev/null

select results_eq($$select median_cents, reporters from public.price_medians(array['retention:keep', 'retention:mixed'])
                    order by location_id$$,
                  $$values (400, 3), (450, 3)$$, 'before: medians of the reports inside the window');

select results_eq($$select reports, groups from private.prune_reports(1000)$$, $$values (6::bigint, 2)$$,
                  'prune deletes the 6 reports past retention, in 2 groups');
select is((select count(*)::int from public.price_reports where location_id like 'retention:%'), 6,
          'the 3 reports of 170 days and the 3 of 100 days stay');
select results_eq($$select reports, groups from private.prune_reports(1000)$$, $$values (0::bigint, 0)$$,
                  'a second run finds nothing');
select results_eq($$select median_cents, reporters from public.price_medians(array['retention:keep', 'retention:mixed'])
                    order by location_id$$,
                  $$values (400, 3), (450, 3)$$, 'after: the same medians');
select results_eq($$select * from public.price_medians(array['retention:keep', 'retention:mixed', 'retention:gone']) order by 1, 2, 3$$,
                  $$select * from tap.reference_medians('retention:%') order by 1, 2, 3$$, 'as the straightforward query says');
select is_empty($$select from private.median_latest where location_id = 'retention:gone'
                  union all select from private.median_groups where location_id = 'retention:gone'
                  union all select from private.median_totals where location_id = 'retention:gone'
                  union all select from private.median_queue where location_id = 'retention:gone'$$,
                'a group left without reports leaves the store');

-- The store is what a rebuild makes of the reports left.
create temp table pruned_latest as select location_id, rate_kind, reporter_id, price_cents, report_id, counted
    from private.median_latest where location_id like 'retention:%';
create temp table pruned_prices as select * from private.median_prices where location_id like 'retention:%';
select private.median_rebuild(array['retention:keep', 'retention:mixed', 'retention:gone']) \g /dev/null
select set_eq($$select * from pruned_latest$$, $$select location_id, rate_kind, reporter_id, price_cents, report_id, counted
                from private.median_latest where location_id like 'retention:%'$$, 'median_latest as a rebuild makes it');
select set_eq($$select * from pruned_prices$$, $$select * from private.median_prices where location_id like 'retention:%'$$,
              'median_prices as a rebuild makes it');

-- Erasure keeps the store as a rebuild makes it too: carol's reports go from a group where they count,
-- one queued report included (a fresh reporter at 'retention:mixed' keeps the group's queue busy).
select tap.seed(tap.dave(), 'retention:mixed', 700) \g /dev/null
update auth.users set created_at = now() where id = tap.dave();
update public.price_reports set created_at = now() - interval '1 minute' where reporter_id = tap.dave();
select tap.seed(tap.carol(), 'retention:mixed', 650) \g /dev/null
select private.median_fold('retention:mixed', 'hourly') \g /dev/null
select results_eq($$select users, reports, locations from auth.forget_user(tap.carol())$$,
                  $$values (1::bigint, 3::bigint, 2::bigint)$$, 'forget_user deletes carol and her 3 reports at 2 locations');
create temp table erased_latest as select location_id, rate_kind, reporter_id, price_cents, report_id, counted
    from private.median_latest where location_id like 'retention:%';
create temp table erased_prices as select * from private.median_prices where location_id like 'retention:%';
create temp table erased_bands as select * from private.median_price_bands where location_id like 'retention:%';
create temp table erased_totals as select location_id, rate_kind, currency, reports, date_trunc('hour', newest) as newest
    from private.median_totals where location_id like 'retention:%' and reports > 0;
create temp table erased_queue as select report_id from private.median_queue where location_id like 'retention:%';
create temp table erased_summaries as select location_id, rate_kind, currency, median_cents, reporters, reports
    from private.median_summaries where location_id like 'retention:%';
select results_eq($$select * from public.price_medians(array['retention:keep', 'retention:mixed', 'retention:gone']) order by 1, 2, 3$$,
                  $$select * from tap.reference_medians('retention:%') order by 1, 2, 3$$,
                  'after an erasure, readers see the straightforward query''s answer (not a summary from before it)');
select private.median_rebuild(array['retention:keep', 'retention:mixed', 'retention:gone']) \g /dev/null
select set_eq($$select * from erased_latest$$, $$select location_id, rate_kind, reporter_id, price_cents, report_id, counted
                from private.median_latest where location_id like 'retention:%'$$, 'after an erasure: median_latest as a rebuild makes it');
select set_eq($$select * from erased_prices union all select * from erased_bands$$,
              $$select * from private.median_prices where location_id like 'retention:%'
                union all select * from private.median_price_bands where location_id like 'retention:%'$$,
              'after an erasure: the histograms as a rebuild makes them');
select set_eq($$select * from erased_totals$$, $$select location_id, rate_kind, currency, reports, date_trunc('hour', newest)
                from private.median_totals where location_id like 'retention:%' and reports > 0$$,
              'after an erasure: the totals, newest report included, as a rebuild makes them');
select set_eq($$select * from erased_queue$$, $$select report_id from private.median_queue where location_id like 'retention:%'$$,
              'after an erasure: the queue as a rebuild makes it');
select set_eq($$select * from erased_summaries$$,
              $$select location_id, rate_kind, currency, median_cents, reporters, reports from private.median_summaries
                where location_id like 'retention:%'$$, 'after an erasure: the summaries as a rebuild makes them');

-- Erasure: bob's identity, session and every report go; the median falls below the threshold.
select results_eq($$select users, sessions, reports, locations from auth.forget_user(tap.bob())$$,
                  $$values (1::bigint, 1::bigint, 2::bigint, 2::bigint)$$, 'forget_user deletes one identity, its session and its 2 reports left');
select is_empty($$select from public.price_reports where reporter_id = tap.bob()
                  union all select from auth.users where id = tap.bob()
                  union all select from auth.sessions where user_id = tap.bob()
                  union all select from private.median_latest where reporter_id = tap.bob()$$, 'nothing of bob is left');
select is_empty($$select * from public.price_medians(array['retention:keep', 'retention:mixed'])$$,
                'two reporters left: no median');
select results_eq($$select users, sessions, reports from auth.forget_user(tap.bob())$$,
                  $$values (0::bigint, 0::bigint, 0::bigint)$$, 'forgetting again deletes nothing');

-- No client role reaches either, nor deletes a report to use the setting that skips the rebuild.
set local role authenticator;
select throws_ok($$select * from auth.forget_user('a11ce000-0000-4000-8000-000000000001')$$, '42501', null,
                 'authenticator cannot forget a user');
reset role;
set local role authenticated;
select throws_ok($$select * from private.prune_reports(1)$$, '42501', null, 'authenticated cannot prune');
select tap.use_token(tap.token_for(tap.alice())) \g /dev/null
select set_config('pricesvc.median_store_pruning', 'on', true) \g /dev/null
select throws_ok($$delete from public.price_reports where reporter_id = tap.alice()$$, '42501', null,
                 'a client cannot delete reports, so the setting skips nothing for it');
reset role;

select * from finish();
rollback;
