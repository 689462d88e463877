-- Compiled schedules: the loader compiles each zone's policies into per-week local-time
-- intervals with the rule that governs each, and private.cds_stay prices a stay from them instead of
-- working the governing rule out of cds.time_spans piece by piece. The general path (still used for
-- spans that name days of the month or months) is the reference: every stay below is priced both ways
-- and must cost exactly the same, with the same allowed and reason.
begin;
\ir _helpers.psql
select plan(16);

\ir _cds_helpers.psql

-- What the loader made of a zone: weekdays 09:00-18:00 metered, free otherwise (the free policy governs
-- all the rest, so 11 intervals: Monday 00:00-09:00, then metered and free in turn, the weekend free
-- from Friday 18:00 to Monday 00:00).
select tap.zone('evening', 'America/New_York', $$[
    {"time_spans": [{"days_of_week": ["mon","tue","wed","thu","fri"], "time_of_day_start": "09:00", "time_of_day_end": "18:00"}],
     "rules": [{"activity": "parking", "max_stay": 120, "rate": [{"rate": 5, "rate_unit": "minute", "increment_duration": 15}]}]},
    {"rules": [{"activity": "parking"}]}]$$) \g /dev/null
select results_eq(
    $$select i.week_from / 3600000000, i.week_to / 3600000000, i.curb_policy_id = md5('evening/1')::uuid
      from cds.zones z join cds.schedule_intervals i on i.source = z.source and i.schedule_id = z.schedule_id
      where z.location_id = 'evening:z' order by i.week_from$$,
    $$values (0::bigint, 9::bigint, false), (9, 18, true), (18, 33, false), (33, 42, true), (42, 57, false), (57, 66, true),
             (66, 81, false), (81, 90, true), (90, 105, false), (105, 114, true), (114, 168, false)$$,
    'a zone compiles to its week: each stretch of local time with the rule that governs it, merged');

-- Every offset of a time zone the loader met, between its changes: New York in 2026 is EST until
-- 8 March 07:00 UTC, EDT until 1 November 06:00 UTC, then EST.
select results_eq(
    $$select valid_from, utc_offset from cds.time_zone_offsets
      where time_zone = 'America/New_York' and valid_to > '2026-01-01 00:00+00' and valid_from < '2027-01-01 00:00+00'
      order by valid_from$$,
    $$values ('2025-11-02 06:00+00'::timestamptz, '-05:00'::interval), ('2026-03-08 07:00+00', '-04:00'),
             ('2026-11-01 06:00+00', '-05:00')$$,
    'a time zone''s UTC offsets are stored between its changes, to the microsecond');

-- Zones that share their policies share one schedule; a new import replaces the source's schedules.
select tap.zone('shared', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is((select count(*) from cds.schedules where source = 'shared'), 1::bigint, 'one schedule per set of policies');
select is(tap.cost('shared:z', '2026-03-29 01:00 Europe/Paris', '3 hours'), '300',
          'a policy without spans: one interval, the whole week; 3 hours across spring forward cost 3 hours');

-- A local time a DST change repeats is read twice: 01:40-02:00 on 1 November 2026 in New York is
-- 01:40-02:00 EDT and again 01:40-02:00 EST, 40 minutes at 100 an hour (66.67, rounded up once).
select tap.zone('repeat40', 'America/New_York', $$[
    {"time_spans": [{"time_of_day_start": "01:40", "time_of_day_end": "02:00"}], "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('repeat40:z', '2026-11-01 00:00 America/New_York', '4 hours'), '67',
          'New York fall back: 01:40-02:00 happens twice, 40 minutes, whatever the minute');
-- Lord Howe Island moves its clocks by 30 minutes: at 02:00 on 4 October 2026 to 02:30. A span
-- 02:00-03:00 then lasts 30 minutes; on 5 April 2026 the clock goes back from 02:00 to 01:30, and
-- 01:30-02:00 happens twice (an hour under a span 01:30-02:00).
select tap.zone('howe', 'Australia/Lord_Howe', $$[
    {"time_spans": [{"time_of_day_start": "02:00", "time_of_day_end": "03:00"}], "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"time_spans": [{"time_of_day_start": "01:30", "time_of_day_end": "02:00"}], "rules": [{"activity": "parking", "rate": [{"rate": 60, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('howe:z', '2026-10-04 00:00 Australia/Lord_Howe', '4 hours'), '80',
          'Lord Howe spring forward (30 minutes): 02:00-03:00 is 02:30-03:00, 50; 01:30-02:00, 30');
select is(tap.cost('howe:z', '2026-04-05 00:00 Australia/Lord_Howe', '4 hours'), '160',
          'Lord Howe fall back (30 minutes): 01:30-02:00 twice, 60; 02:00-03:00, 100');

-- Spans that name days of the month or months are not compiled: those zones keep the general path.
select tap.zone('monthly', 'Europe/Paris', $$[
    {"time_spans": [{"days_of_month": [1, 15], "time_of_day_start": "08:00", "time_of_day_end": "12:00"}], "rules": [{"activity": "no parking"}]},
    {"rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is((select s.compiled from cds.zones z join cds.schedules s using (source, schedule_id) where z.location_id = 'monthly:z'),
          false, 'days of the month: not compiled');
select is(tap.cost('monthly:z', '2026-03-15 07:00 Europe/Paris', '2 hours'), 'no_parking', '... and priced by the general path');

-- The property: zones that exercise every part of the cost (tiers, increments, increment_amount,
-- maximum_fee, calendar and rolling units, months, no-parking windows, max_stay, span dates, windows
-- past midnight, car and everyone rules, operator-only policies, four time zones), and stays that start
-- on quarter hours through 2026 (the general path cuts DST days at quarter hours, so a time of day off
-- the quarter hour on such a day is where the two may rightly differ, as 'repeat40' shows).
select tap.zone('p-mix', 'Europe/Paris', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["tue"], "time_of_day_start": "07:00", "time_of_day_end": "09:00"}], "rules": [{"activity": "no parking"}]},
    {"priority": 2, "time_spans": [{"days_of_week": ["mon","tue","wed","thu","fri"], "time_of_day_start": "22:00", "time_of_day_end": "06:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 1500, "rate_unit": "day", "rate_unit_period": "calendar"}]}]},
    {"priority": 3, "rules": [{"activity": "parking", "rate": [
        {"rate": 200, "rate_unit": "hour", "end_duration": 1, "increment_amount": 25},
        {"rate": 400, "rate_unit": "hour", "start_duration": 1, "maximum_fee": 30000}]}]}]$$) \g /dev/null
select tap.zone('p-dates', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"start_date": 1780272000000, "end_date": 1788220800000, "time_of_day_start": "10:00", "time_of_day_end": "16:00"}],
     "rules": [{"activity": "parking", "max_stay": 240, "rate": [{"rate": 300, "rate_unit": "hour", "increment_duration": 30}]}]},
    {"priority": 2, "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour", "increment_duration": 1}]}]}]$$) \g /dev/null
select tap.zone('p-classes', 'Australia/Sydney', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["sat","sun"], "time_of_day_start": "02:00", "time_of_day_end": "05:00"}],
     "rules": [{"activity": "no stopping"}]},
    {"priority": 2, "rules": [{"activity": "parking", "user_classes": ["truck"]},
                              {"activity": "parking", "rate": [{"rate": 120, "rate_unit": "hour"}]},
                              {"activity": "parking", "user_classes": ["car"], "rate": [{"rate": 90, "rate_unit": "hour", "increment_duration": 2, "end_duration": 48},
                                                                                         {"rate": 7000, "rate_unit": "week", "rate_unit_period": "calendar", "start_duration": 2}]}]},
    {"priority": 0, "data_source_operator_ids": ["d0000000-0000-4000-8000-000000000001"], "rules": [{"activity": "no parking"}]}]$$) \g /dev/null
select tap.zone('p-long', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["sat","sun"]}, {"days_of_week": ["mon"], "time_of_day_start": "00:00", "time_of_day_end": "01:15"}],
     "rules": [{"activity": "parking", "max_stay": 3, "max_stay_unit": "day", "rate": [{"rate": 2500, "rate_unit": "month"}]}]},
    {"priority": 2, "time_spans": [{"time_of_day_start": "06:45", "time_of_day_end": "23:30", "designated_period": "snow", "designated_period_except": true}],
     "rules": [{"activity": "parking", "rate": [{"rate": 50, "rate_unit": "hour", "end_duration": 24},
                                                {"rate": 900, "rate_unit": "day", "start_duration": 1, "end_duration": 10, "increment_duration": 1},
                                                {"rate": 20000, "rate_unit": "week", "start_duration": 2}]}]},
    {"priority": 3, "time_spans": [{"time_of_day_start": "00:00", "time_of_day_end": "12:00", "designated_period": "school"}],
     "rules": [{"activity": "no parking"}]}]$$, '{"end_date": 1798761600000}') \g /dev/null

select setseed(0.22) \g /dev/null
create temporary table stays on commit drop as
select z.location, s.starts_at, s.duration
from (values ('p-mix:z', 'Europe/Paris'), ('p-dates:z', 'America/New_York'), ('p-classes:z', 'Australia/Sydney'),
             ('p-long:z', 'America/New_York'), ('evening:z', 'America/New_York'), ('howe:z', 'Australia/Lord_Howe')) z(location, time_zone),
     lateral (
         -- Quarter hours through 2026 (random, seeded), and the nights of every DST change.
         select pg_catalog.timezone(z.time_zone, '2026-01-01'::timestamp + (floor(random() * 365 * 96) * interval '15 minutes')) as starts_at,
                (case when k % 10 = 0 then floor(random() * 60 * 96) else floor(random() * 4 * 96) + 1 end) * interval '15 minutes' as duration
         from generate_series(1, 48) k
         union all
         select pg_catalog.timezone(z.time_zone, d + t), l
         from (values ('2026-03-08'::timestamp), ('2026-03-29'), ('2026-04-05'), ('2026-10-04'), ('2026-10-25'), ('2026-11-01')) n(d),
              (values (interval '-3 hours'), ('00:45'), ('01:30'), ('03:00')) t(t),
              (values (interval '45 minutes'), ('5 hours'), ('30 hours'), ('9 days')) l(l)
         union all
         select pg_catalog.timezone(z.time_zone, '2026-03-02 17:30'::timestamp), '366 days'::interval
     ) s;

-- Three ways: a quote prices its compiled zones in one statement (cds_compiled_costs); cds_stay prices
-- one zone from its schedule (what a quote falls back to when that statement fails); the general path.
create temporary table compiled on commit drop as
select s.*, c.cost_cents, c.allowed, c.reason
from stays s, public.published_cost(array[s.location], s.starts_at, s.duration) c;
create temporary table one_statement on commit drop as
select s.location, s.starts_at, s.duration, c.cost_cents, c.allowed, c.reason
from stays s
join cds.zones z on z.location_id = s.location,
lateral private.cds_compiled_costs(array[z], s.starts_at, s.starts_at + make_interval(secs => extract(epoch from s.duration))) c
where s.starts_at < z.end_date or z.end_date is null;
create temporary table single on commit drop as
select s.location, s.starts_at, s.duration, c.*
from stays s
join cds.zones z on z.location_id = s.location,
lateral private.cds_stay(z.source, z.curb_zone_id, s.starts_at, s.starts_at + make_interval(secs => extract(epoch from s.duration))) c
where s.starts_at < z.end_date or z.end_date is null;

select is((select count(*) from cds.zones z join cds.schedules s using (source, schedule_id)
           where z.location_id in (select location from stays) and s.compiled), 6::bigint,
          'the six zones of the property are compiled');

-- Now the general path for the same stays.
update cds.schedules set compiled = false;
create temporary table reference on commit drop as
select s.*, c.cost_cents, c.allowed, c.reason
from stays s, public.published_cost(array[s.location], s.starts_at, s.duration) c;

select is((select count(*) from compiled), (select count(*) from stays), 'every stay of the property is priced (compiled)');
select is((select count(*) from one_statement), (select count(*) from stays),
          'every stay is priced by the one statement for compiled zones, none left to the fallback');
select is((select count(*) from reference), (select count(*) from stays), 'every stay of the property is priced (general path)');
select is((select count(*) from (select * from compiled except select * from reference) d), 0::bigint,
          'compiled and general paths give the same cost, allowed and reason for every stay');
select is((select count(*) from (select * from single except select * from reference) d), 0::bigint,
          'cds_stay on its own, from the schedule, gives the same as the general path for every stay');
select is((select count(*) from compiled where allowed) > 100 and (select count(*) from compiled where not allowed) > 30, true,
          'the property covers priced stays and refused ones');

select * from finish();
rollback;
