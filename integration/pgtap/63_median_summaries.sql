-- Summaries: a folded group's answer is stored, and a reader returns it only while it is still
-- the exact answer. To see which path answered, the test marks a stored summary (median_cents 99 999, a
-- value no report has) as the superuser: a read that shows the mark used the summary, one that shows the
-- true median computed the group. Each reason a summary stops being exact must make the reader compute.
begin;
\ir _helpers.psql
select plan(17);

-- Inserts never fold on their own here: each report gets an id off the multiples of median_fold_every().
create function tap.no_insert_fold() returns void language sql volatile
    begin atomic
        select setval('public.price_reports_id_seq',
                      (nextval('public.price_reports_id_seq') / private.median_fold_every() + 1) * private.median_fold_every());
    end;
create function tap.median(location text) returns integer language sql stable
    return (select m.median_cents from public.price_medians(array[location]) m);
create function tap.mark(location text) returns void language sql volatile
    begin atomic
        update private.median_summaries set median_cents = 99999 where location_id = location;
    end;

select tap.no_insert_fold() \g /dev/null
select tap.seed(tap.alice(), 'sum:a', 100) \g /dev/null
select tap.seed(tap.bob(), 'sum:a', 200) \g /dev/null
select tap.seed(tap.carol(), 'sum:a', 300) \g /dev/null
select private.median_fold('sum:a', 'hourly') \g /dev/null

select results_eq($$select median_cents, reporters, reports from private.median_summaries where location_id = 'sum:a'$$,
                  $$values (200, 3, 3)$$, 'a fold stores the group''s answer');
select ok((select summarized_at is not null and summary_until > now() + interval '179 days'
           from private.median_groups where location_id = 'sum:a'),
          'it holds until its oldest report leaves the 180-day window');
select tap.mark('sum:a') \g /dev/null
select is(tap.median('sum:a'), 99999, 'a reader returns the stored answer while nothing changed');
-- (The hour of the newest report, not of now(): a run that crosses an hour would otherwise fail.)
select is((select last_reported_at from public.price_medians(array['sum:a'])),
          (select date_trunc('hour', max(r.created_at), 'UTC') from public.price_reports r where r.location_id = 'sum:a'),
          'with last_reported_at coarse to the hour, as computed answers are');

-- A group below the threshold has a summary too: no row.
select tap.seed(tap.alice(), 'sum:two', 100) \g /dev/null
select tap.seed(tap.bob(), 'sum:two', 200) \g /dev/null
select private.median_fold('sum:two', 'hourly') \g /dev/null
select ok((select summarized_at is not null from private.median_groups where location_id = 'sum:two')
          and not exists (select from private.median_summaries where location_id = 'sum:two'),
          'two reporters: summarized, with no row');
select is_empty($$select * from public.price_medians(array['sum:two'])$$, 'and the reader shows nothing');

-- 1. A queued report of a mature reporter changes the answer: the reader computes.
select tap.no_insert_fold() \g /dev/null
select tap.seed(tap.dave(), 'sum:a', 400) \g /dev/null
select is(tap.median('sum:a'), 250, 'a mature queued report: computed (the summary is not used)');
select private.median_fold('sum:a', 'hourly') \g /dev/null
select is(tap.median('sum:a'), 250, 'after the fold, the new summary answers the same');
select tap.mark('sum:a') \g /dev/null

-- 2. An immature reporter's queued report: nothing changes until it matures, and the summary is used.
insert into auth.users (id) values ('e0000000-0000-4000-8000-000000000005');
select tap.no_insert_fold() \g /dev/null
select tap.seed('e0000000-0000-4000-8000-000000000005', 'sum:a', 900) \g /dev/null
select is(tap.median('sum:a'), 99999, 'a new identity''s queued report: the summary is still exact, and used');
-- ... once it matures (as the clock would make it), the reader computes and counts it.
update private.median_queue set matures_at = now() - interval '1 second' where location_id = 'sum:a';
select is(tap.median('sum:a'), 300, 'once that reporter is mature: computed, with the report counted');
update private.median_queue set matures_at = now() + interval '1 day' where location_id = 'sum:a';

-- 3. A queued report of a reporter who is folded already (their older report is in the summary), not
-- mature yet (reports admitted for a reporter without an identity mature one by one): it is not their
-- latest counted report, so it changes nothing, and the summary is exact.
update private.median_queue set reporter_id = tap.alice() where location_id = 'sum:a';
select is(tap.median('sum:a'), 99999, 'an immature queued report of a folded reporter: the summary holds');
select is((select median_cents from private.report_medians_exact(array['sum:a'], array['hourly'], clock_timestamp())),
          250, 'and the store computes what it says');
update private.median_queue set reporter_id = 'e0000000-0000-4000-8000-000000000005' where location_id = 'sum:a';

-- 4. Time: the oldest report leaving the window, or a reader whose clock is behind the summary's.
update private.median_groups set summary_until = now() - interval '1 second' where location_id = 'sum:a';
select is(tap.median('sum:a'), 250, 'past summary_until: computed');
update private.median_groups set summary_until = 'infinity', summarized_at = clock_timestamp() + interval '1 hour'
where location_id = 'sum:a';
select is(tap.median('sum:a'), 250, 'a summary made by a clock ahead of the reader''s: computed');
update private.median_groups set summarized_at = now() - interval '1 minute' where location_id = 'sum:a';

-- 5. The rules it was made under: a changed setting, applied as `pricesvc migrate` applies settings.sql,
-- rebuilds every summary.
create or replace function private.median_min_reporters() returns integer language sql immutable parallel safe return 2;
select private.median_rule_reconcile() \g /dev/null
select is(tap.median('sum:two'), 150, 'another threshold: the rebuilt summaries follow it');
create or replace function private.median_min_reporters() returns integer language sql immutable parallel safe return 3;
select private.median_rule_reconcile() \g /dev/null
select is(tap.median('sum:a'), 250, 'and back: no summary made under the other rule is left');
select tap.mark('sum:a') \g /dev/null

-- 6. A delete (maintenance) rebuilds the group, and its summary with it.
delete from public.price_reports where location_id = 'sum:a' and reporter_id = tap.dave();
select is(tap.median('sum:a'), 200, 'after a delete, the rebuilt summary answers');

select * from finish();
rollback;
