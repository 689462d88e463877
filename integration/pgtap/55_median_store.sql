-- The median store answers exactly what the straightforward query over every report answers, on random
-- data, while time passes with no write at all: reports age out of the window and identities mature
-- without anyone touching the store.
--
-- Time is simulated by moving every timestamp (reports, the store, identities) back by the same amount,
-- which is what the clock moving forward looks like to a reader. Reports are inserted in time order
-- through the real triggers, with the clock advanced between them, so the folds (every 16th report)
-- happen at many points of the timeline, as in production.
begin;
\ir _helpers.psql
select plan(15);

-- The queue lookup is planned without its arguments, so a location flooded with new identities'
-- reports makes every group look like millions of rows: it must never be JIT-compiled for that.
select ok((select 'jit=off' = any(p.proconfig) from pg_catalog.pg_proc p
           where p.oid = 'private.median_queued(text, text)'::regprocedure),
          'median_queued runs without JIT, whatever the queue''s statistics estimate');

-- Every group of the test, from the store: the overview (every location and kind), and price_medians
-- per location (the call the service makes), which must agree with each other.
create function tap.store_medians() returns setof private.median_row language sql stable as $$
    select * from public.price_median_overview() where location_id like 'prop:%'
$$;
create function tap.store_medians_by_location() returns setof private.median_row language sql stable as $$
    select m.* from (select distinct location_id from public.price_reports where location_id like 'prop:%') l,
                    unnest(private.rate_kinds()) k(kind),
                    lateral public.price_medians(array[l.location_id], k.kind) m
$$;

-- The clock moves forward by `by`: every stored time moves back by it. No trigger fires
-- (session_replication_role = replica), so the store is not told.
create function tap.advance_clock(by interval) returns void language plpgsql as $$
begin
    set local session_replication_role = replica;
    update public.price_reports set created_at = created_at - by, reporter_matures_at = reporter_matures_at - by where location_id like 'prop:%';
    update private.median_queue set created_at = created_at - by, matures_at = matures_at - by where location_id like 'prop:%';
    update private.median_latest set created_at = created_at - by where location_id like 'prop:%';
    update private.median_totals set newest = newest - by where location_id like 'prop:%';
    update private.median_groups set expired_through = expired_through - by, summarized_at = summarized_at - by,
                                     summary_until = summary_until - by where location_id like 'prop:%';
    update private.median_summaries set last_reported_at = last_reported_at - by where location_id like 'prop:%';
    update auth.users set created_at = created_at - by where id in (select reporter from tap.reporters);
    set local session_replication_role = origin;
end
$$;

-- 40 reporters: 25 with identities a month old, 8 made an hour ago (immature), 7 a month old. Once
-- they have reported, 4 of the young ones and the last 7 are pruned (their users rows deleted): each
-- report keeps when its reporter matures, so pruned young ones stay young and pruned old ones old.
create table tap.reporters (n integer, reporter uuid);
insert into tap.reporters select g, gen_random_uuid() from generate_series(1, 40) g;
insert into auth.users (id, created_at)
select reporter, clock_timestamp() - case when n between 26 and 33 then interval '1 hour' else interval '30 days' end
from tap.reporters;

-- 700 reports at 48 moments over 200 days (three of them within minutes of the 180-day edge), over 6
-- locations, 2 rate kinds and 3 currencies, each reporter reporting several times.
select setseed(extract(epoch from clock_timestamp())::integer % 1000 / 1000.0) \g /dev/null
create table tap.moments as
select m, case when m <= 3 then interval '180 days' + (m - 2) * interval '3 minutes'
               else random() * interval '200 days' end as age
from generate_series(1, 48) m;
create table tap.timeline as
select t.n, t.location_id, t.rate_kind, t.currency, r.reporter, t.price_cents, mo.age
from (select g as n,
             'prop:' || (1 + floor(random() * 6))::int as location_id,
             (array['hourly', 'daily'])[1 + floor(random() * 2)::int] as rate_kind,
             (array['USD', 'USD', 'EUR', 'CHF'])[1 + floor(random() * 4)::int] as currency,
             1 + floor(random() * 40)::int as reporter_n,
             (100 + floor(random() * 400)::int) as price_cents,
             1 + floor(random() * 48)::int as moment
      from generate_series(1, 700) g) t
join tap.reporters r on r.n = t.reporter_n
join tap.moments mo on mo.m = t.moment;

-- Oldest moment first: its reports go in through the triggers, then the clock moves on to the next.
do $$
declare
    r record;
    previous_age interval;
begin
    for r in select * from tap.timeline order by age desc, n loop
        if previous_age is not null and previous_age > r.age then
            perform tap.advance_clock(previous_age - r.age);
        end if;
        perform tap.seed(r.reporter, r.location_id, r.price_cents, r.rate_kind, r.currency);
        previous_age := r.age;
    end loop;
    perform tap.advance_clock(previous_age);
end
$$;

delete from auth.users where id in (select reporter from tap.reporters where n >= 30);

select is((select count(*)::int from public.price_reports where location_id like 'prop:%'), 700, 'all 700 reports were stored');
select ok((select count(*) from private.median_queue where location_id like 'prop:%') between 1 and 699,
          'some reports are folded, some still queued');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'the store answers what the query over every report answers');
select set_eq('select * from tap.store_medians_by_location()', $$select * from tap.reference_medians('prop:%')$$,
              'price_medians, location by location, answers the same');
select ok((select count(*) from tap.reference_medians('prop:%')) >= 6, 'and there are medians to compare');

-- Time passes, nothing is written.
select tap.advance_clock(interval '2 days');
select ok(exists (select from private.median_latest where location_id like 'prop:%' and counted
                  and created_at <= clock_timestamp() - interval '180 days'),
          'two days later: folded latest reports have left the window without the store being told');
select ok(exists (select from private.median_queue q
                  where q.location_id like 'prop:%' and q.matures_at < clock_timestamp()),
          'and queued reports of identities made an hour ago now count, still queued');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'two days later the store still answers exactly: aged-out reports stopped counting, matured reporters started');

select tap.advance_clock(interval '25 days');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'four weeks later too');

-- A fold at the new time (what the next report would do) changes no answer.
select private.median_fold(l, k) from (select distinct location_id, rate_kind from public.price_reports
                                       where location_id like 'prop:%') g(l, k) \g /dev/null
select ok(not exists (select from private.median_latest where location_id like 'prop:%' and counted
                      and created_at <= clock_timestamp() - interval '180 days'),
          'a fold takes aged-out latest reports out of the histograms');
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'and the answers are the same after it');

-- Owner maintenance: an UPDATE or DELETE rebuilds the locations it touched.
update public.price_reports set price_cents = price_cents + 1 where location_id = 'prop:1';
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'after an UPDATE of reports, the same answers');
delete from public.price_reports where location_id = 'prop:2' and id % 3 = 0;
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'after a DELETE of reports, the same answers');
select private.median_rebuild(null) \g /dev/null
select set_eq('select * from tap.store_medians()', $$select * from tap.reference_medians('prop:%')$$,
              'a full rebuild gives the same answers');

select * from finish();
rollback;
