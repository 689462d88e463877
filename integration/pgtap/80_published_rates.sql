-- Published rates (CDS): what a stay costs under a city's posted rules, beside the community median.
-- Every expected amount below is worked out by hand in its comment.
begin;
\ir _helpers.psql
select plan(79);

\ir _cds_helpers.psql

-- A worked example: weekdays 09:00-18:00 5 cents a minute in 15-minute steps,
-- at most 2 hours; free at all other times.
select tap.zone('evening', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["mon","tue","wed","thu","fri"], "time_of_day_start": "09:00", "time_of_day_end": "18:00"}],
     "rules": [{"activity": "parking", "max_stay": 120, "rate": [{"rate": 5, "rate_unit": "minute", "increment_duration": 15}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
-- 17:30-18:00 metered (2 x 15 min x 5 = 150), then free until 19:30.
select is(tap.cost('evening:z', '2026-03-02 17:30 America/New_York', '2 hours'), '150', 'metered then free: 30 metered minutes cost 150');
-- 16:30-18:00: 90 minutes = 6 increments = 450.
select is(tap.cost('evening:z', '2026-03-02 16:30 America/New_York', '2 hours'), '450', 'metered until 18:00, free after');
-- 17:31-17:51: 20 minutes, bought as 2 increments of 15 = 150.
select is(tap.cost('evening:z', '2026-03-02 17:31 America/New_York', '20 minutes'), '150', 'time is rounded up to whole increments');
-- Saturday: no span matches, the free policy governs.
select is(tap.cost('evening:z', '2026-03-07 10:00 America/New_York', '3 hours'), '0', 'weekend: free');
-- 09:00-12:00 weekday: 3 hours under the 2-hour rule.
select is(tap.cost('evening:z', '2026-03-02 09:00 America/New_York', '3 hours'), 'max_stay', 'past max_stay: not allowed');
select is(tap.cost('evening:z', '2026-03-02 09:00 America/New_York', '2 hours'), '600', 'exactly max_stay: allowed (120 min x 5)');
-- 17:00 for 3 hours: the metered rule governs only until 18:00, when 1 hour has elapsed.
select is(tap.cost('evening:z', '2026-03-02 17:00 America/New_York', '3 hours'), '300',
          'max_stay counts only while its rule governs');
select results_eq($$select location_id, currency, cost_cents, allowed, reason, source, last_updated
                    from public.published_cost(array['evening:z', 'nowhere:z'], '2026-03-02 17:30 America/New_York', '2 hours')$$,
                  $$values ('evening:z', 'USD', 150::bigint, true, null::text, 'evening', '2026-01-01 00:00:00+00'::timestamptz)$$,
                  'one row per location with data; a location without data is absent');

-- Tiers: the first hour 200, every later hour 400, prorated exactly.
select tap.zone('tiered', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 200, "rate_unit": "hour", "end_duration": 1}, {"rate": 400, "rate_unit": "hour", "start_duration": 1}]}]}]$$) \g /dev/null
select is(tap.cost('tiered:z', '2026-03-03 10:00 America/New_York', '30 minutes'), '100', 'tier 1 only: half an hour = 100');
select is(tap.cost('tiered:z', '2026-03-03 10:00 America/New_York', '2 hours 30 minutes'), '800', 'tiers: 200 + 1.5 x 400 = 800');
-- 200 + 400/3 = 333.33..., rounded up once at the end.
select is(tap.cost('tiered:z', '2026-03-03 10:00 America/New_York', '80 minutes'), '334', 'the total is rounded up once, at the end');

-- Three pieces of 20 minutes at 200/hour under alternating rules: 3 x 66.666... = 200 exactly, not 201.
select tap.zone('thirds', 'Europe/Paris', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "10:20", "time_of_day_end": "10:40"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 200, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking", "rate": [{"rate": 200, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('thirds:z', '2026-03-03 10:00 Europe/Paris', '1 hour'), '200',
          'prorated pieces add up exactly: 3 x 20 minutes at 200/hour under two rules = 200');

-- Increments and a maximum fee.
select tap.zone('steps', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 100, "rate_unit": "hour", "increment_duration": 1}]}]}]$$) \g /dev/null
select is(tap.cost('steps:z', '2026-03-03 10:00 America/New_York', '61 minutes'), '200', 'whole hours: 61 minutes pay for 2');
select tap.zone('rounded', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 5, "rate_unit": "minute", "increment_amount": 25}]}]}]$$) \g /dev/null
select is(tap.cost('rounded:z', '2026-03-03 10:00 America/New_York', '11 minutes'), '75', 'increment_amount: 55 is charged as 75');
select is(tap.cost('rounded:z', '2026-03-03 10:00 America/New_York', '10 minutes'), '50', 'increment_amount: 50 stays 50');
select tap.zone('capped', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 300, "rate_unit": "hour", "maximum_fee": 1000}]}]}]$$) \g /dev/null
select is(tap.cost('capped:z', '2026-03-03 10:00 America/New_York', '5 hours'), '1000', 'maximum_fee caps 1500 at 1000');
select is(tap.cost('capped:z', '2026-03-03 10:00 America/New_York', '3 hours'), '900', 'below the maximum fee: 900');

-- A no-parking window: Tuesdays 07:00-09:00 (street cleaning) over 100/hour parking.
select tap.zone('cleaning', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["tue"], "time_of_day_start": "07:00", "time_of_day_end": "09:00"}],
     "rules": [{"activity": "no parking"}]},
    {"priority": 2, "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select results_eq($$select cost_cents, allowed, reason from public.published_cost(array['cleaning:z'], '2026-03-03 06:00 America/New_York', '4 hours')$$,
                  $$values (null::bigint, false, 'no_parking'::text)$$, 'a no-parking window inside the stay: not allowed, no cost');
select is(tap.cost('cleaning:z', '2026-03-03 09:00 America/New_York', '2 hours'), '200', 'after the window: 200');
select is(tap.cost('cleaning:z', '2026-03-03 05:00 America/New_York', '2 hours'), '200', 'ending as the window starts: allowed');
select is(tap.cost('cleaning:z', '2026-03-04 06:00 America/New_York', '4 hours'), '400', 'Wednesday: no window');

-- Rules for other user classes do not count; a car rule beats an everyone rule of the same policy.
select tap.zone('classes', 'America/New_York', $$[
    {"priority": 1, "rules": [{"activity": "no parking", "user_classes": ["truck"]}]},
    {"priority": 2, "rules": [{"activity": "parking", "user_classes": ["permit"]}, {"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]},
                              {"activity": "parking", "user_classes": ["car"], "rate": [{"rate": 150, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('classes:z', '2026-03-03 10:00 America/New_York', '2 hours'), '300', 'only general-public rules count; car beats everyone');

-- Designated periods never match, unless designated_period_except.
select tap.zone('snow', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"designated_period": "snow emergency"}], "rules": [{"activity": "no parking"}]},
    {"priority": 2, "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('snow:z', '2026-03-03 10:00 America/New_York', '1 hour'), '100', 'a designated period never matches');
select tap.zone('snow-except', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"designated_period": "snow emergency", "designated_period_except": true}], "rules": [{"activity": "no parking"}]},
    {"priority": 2, "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('snow-except:z', '2026-03-03 10:00 America/New_York', '1 hour'), 'no_parking', '... except with designated_period_except');

-- Days of month, months, span dates; nothing governs: free.
select tap.zone('dates', 'Europe/Paris', $$[
    {"priority": 1, "time_spans": [{"days_of_week": ["mon"], "days_of_month": [8,9,10,11,12,13,14], "months": [6]}],
     "rules": [{"activity": "no parking"}]},
    {"priority": 2, "time_spans": [{"start_date": 1780000000000, "end_date": 1780003600000}],
     "rules": [{"activity": "parking", "rate": [{"rate": 1000, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('dates:z', '2026-06-08 10:00 Europe/Paris', '1 hour'), 'no_parking', 'the 2nd Monday of June matches');
select is(tap.cost('dates:z', '2026-06-15 10:00 Europe/Paris', '1 hour'), '0', 'the 3rd does not, and no policy governs: free');
-- 1780000000000 ms = 2026-05-28 20:26:40 UTC: one hour at 1000.
select is(tap.cost('dates:z', '2026-05-28 20:00:00+00', '2 hours'), '1000', 'span start_date/end_date (inclusive, exclusive)');

-- Overnight span 22:00-06:00 wraps midnight.
select tap.zone('night', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "22:00", "time_of_day_end": "06:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
select is(tap.cost('night:z', '2026-03-03 20:00 America/New_York', '12 hours'), '800', 'an end before the start runs past midnight');

-- Calendar units: each local day touched is charged in full; rolling days are prorated.
select tap.zone('daily', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 1500, "rate_unit": "day", "rate_unit_period": "calendar"}]}]}]$$) \g /dev/null
select is(tap.cost('daily:z', '2026-03-03 22:00 America/New_York', '4 hours'), '3000', 'calendar day: 22:00-02:00 touches 2 days');
select is(tap.cost('daily:z', '2026-03-03 08:00 America/New_York', '4 hours'), '1500', 'calendar day: one day');
select tap.zone('rolling-day', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 2400, "rate_unit": "day"}]}]}]$$) \g /dev/null
select is(tap.cost('rolling-day:z', '2026-03-03 22:00 America/New_York', '4 hours'), '400', 'rolling day: 4/24 of 2400');
select tap.zone('weekly', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 5000, "rate_unit": "week", "rate_unit_period": "calendar"}]}]}]$$) \g /dev/null
-- Sunday 2026-03-08 20:00 to Monday 02:00: ISO weeks start on Monday, so 2 weeks.
select is(tap.cost('weekly:z', '2026-03-08 20:00 Europe/Paris', '6 hours'), '10000', 'calendar week: Sunday to Monday touches 2 weeks');
-- Month units follow the local calendar: 7 days of February are a quarter of a month, 7 days of March 7/31.
select tap.zone('monthly', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 2800, "rate_unit": "month"}]}]}]$$) \g /dev/null
select is(tap.cost('monthly:z', '2026-02-01 00:00 Europe/Paris', '7 days'), '700', 'rolling month: 7 days of a 28-day month = 1/4');
select tap.zone('monthly31', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 3100, "rate_unit": "month"}]}]}]$$) \g /dev/null
-- 2026-03-01 + 1 month = 2026-04-01: 31 days, of which one hour is DST (30 days 23 hours of real time).
-- 7 days = 168 h of 743 h: 3100 x 168 / 743 = 700.94 -> 701.
select is(tap.cost('monthly31:z', '2026-03-01 00:00 Europe/Paris', '7 days'), '701', 'rolling month: real time within the local month');
select tap.zone('monthly-calendar', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 9000, "rate_unit": "month", "rate_unit_period": "calendar"}]}]}]$$) \g /dev/null
select is(tap.cost('monthly-calendar:z', '2026-01-31 12:00 Europe/Paris', '2 days'), '18000', 'calendar month: January and February');
select tap.zone('quarterly', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 100, "rate_unit": "quarter", "rate_unit_period": "calendar"}]}]}]$$) \g /dev/null
select is(tap.cost('quarterly:z', '2026-03-31 12:00 Europe/Paris', '2 days'), '200', 'calendar quarter: Q1 and Q2');

-- DST. An hour is an hour of real time; time spans are read on the local clock. The overnight rate
-- (00:00-06:00 local, 100/hour, free otherwise) covers 5 real hours on a spring-forward night and 7 on a
-- fall-back night, in each zone.
select tap.zone('ny-night', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "00:00", "time_of_day_end": "06:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
select tap.zone('paris-night', 'Europe/Paris', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "00:00", "time_of_day_end": "06:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
select tap.zone('sydney-night', 'Australia/Sydney', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "00:00", "time_of_day_end": "06:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
-- 22:00 to 08:00 local, across the change.
select is(tap.cost('ny-night:z', '2026-03-07 22:00 America/New_York', '9 hours'), '500', 'New York, 8 March 2026 (spring forward): 00:00-06:00 is 5 hours');
select is(tap.cost('ny-night:z', '2026-10-31 22:00 America/New_York', '11 hours'), '700', 'New York, 1 November 2026 (fall back): 00:00-06:00 is 7 hours');
select is(tap.cost('paris-night:z', '2026-03-28 22:00 Europe/Paris', '9 hours'), '500', 'Paris, 29 March 2026 (spring forward): 5 hours');
select is(tap.cost('paris-night:z', '2026-10-24 22:00 Europe/Paris', '11 hours'), '700', 'Paris, 25 October 2026 (fall back): 7 hours');
select is(tap.cost('sydney-night:z', '2026-04-04 22:00 Australia/Sydney', '11 hours'), '700', 'Sydney, 5 April 2026 (fall back): 7 hours');
select is(tap.cost('sydney-night:z', '2026-10-03 22:00 Australia/Sydney', '9 hours'), '500', 'Sydney, 4 October 2026 (spring forward): 5 hours');
-- A span that starts inside the skipped hour applies from the moment the clock jumps past its start.
select tap.zone('ny-gap', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "02:30", "time_of_day_end": "04:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
select is(tap.cost('ny-gap:z', '2026-03-08 00:00 America/New_York', '5 hours'), '100', 'New York spring forward: 02:30-04:00 is 03:00-04:00 EDT, one hour');
-- A span inside the repeated hour applies twice.
select tap.zone('ny-repeat', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "01:30", "time_of_day_end": "02:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]},
    {"priority": 2, "rules": [{"activity": "parking"}]}]$$) \g /dev/null
select is(tap.cost('ny-repeat:z', '2026-11-01 00:00 America/New_York', '4 hours'), '100', 'New York fall back: 01:30-02:00 happens twice, one hour in all');
-- Rolling hours are real hours across the change: 01:30 EST + 1 hour = 03:30 EDT.
select tap.zone('paris-hourly', 'Europe/Paris', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('paris-hourly:z', '2026-03-29 01:30 Europe/Paris', '1 hour'), '100', 'Paris: an hour across the change costs one hour');
select is(tap.cost('paris-hourly:z', '2026-10-25 00:00 Europe/Paris', '4 hours'), '400', 'Paris: 00:00-03:00 local on the 25-hour day is 4 hours');
select tap.zone('sydney-daily', 'Australia/Sydney', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 1500, "rate_unit": "day", "rate_unit_period": "calendar"}]}]}]$$) \g /dev/null
select is(tap.cost('sydney-daily:z', '2026-04-05 00:00 Australia/Sydney', '25 hours'), '1500', 'Sydney: the 25-hour day is one calendar day');

-- The zone's own validity bounds everything.
select tap.zone('bounded', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$,
                '{"start_date": 1772409600000, "end_date": 1772582400000}') \g /dev/null
-- 1772409600000 = 2026-03-02 00:00 UTC, 1772582400000 = 2026-03-04 00:00 UTC.
select is(tap.cost('bounded:z', '2026-03-01 12:00+00', '1 hour'), null, 'before the zone starts: absent');
select is(tap.cost('bounded:z', '2026-03-03 12:00+00', '1 hour'), '100', 'inside the zone''s validity');
select is(tap.cost('bounded:z', '2026-03-03 23:00+00', '2 hours'), 'no_data', 'a stay that outlives the zone: not allowed, no_data');

-- Arguments.
select throws_ok($$select * from public.published_cost(array['tiered:z'], now(), '0 minutes')$$, '22023', null, 'a zero duration is refused');
select throws_ok($$select * from public.published_cost(array['tiered:z'], now(), '367 days')$$, '22023', null, 'more than 366 days is refused');
select throws_ok($$select * from public.published_cost(array(select 'x' || i from generate_series(1, 51) i), now(), '1 hour')$$,
                 '22023', 'too many location_ids: 51, at most 50 per call', 'more than 50 locations are refused');

-- The loader: an identical document changes nothing, a new one replaces the source's data atomically.
create temp table before as select xmin::text as x, * from cds.zones where source = 'tiered';
select is((select status from private.cds_replace_source('tiered', tap.zone_doc('tiered', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [
    {"rate": 200, "rate_unit": "hour", "end_duration": 1}, {"rate": 400, "rate_unit": "hour", "start_duration": 1}]}]}]$$))),
          'unchanged', 'importing the same data again: unchanged');
select results_eq($$select xmin::text, count(*) over () from cds.zones where source = 'tiered'$$,
                  $$select x, count(*) over () from before$$, '... and no row was rewritten');
select is((select count(*)::int from cds.imports where source = 'tiered'), 1, '... nor logged again');
select is((select status from private.cds_replace_source('tiered', tap.zone_doc('tiered', 'America/New_York',
              $$[{"rules": [{"activity": "parking", "rate": [{"rate": 250, "rate_unit": "hour"}]}]}]$$))),
          'imported', 'a changed feed is imported');
select is(tap.cost('tiered:z', '2026-03-03 10:00 America/New_York', '2 hours'), '500', '... and replaces the old rates');
select results_eq($$select count(*)::int from cds.rates where source = 'tiered'$$, $$values (1)$$, '... leaving none of the old tiers');
select results_eq($$select zones, policies, rules, time_spans, rates, author, license_url, last_updated from cds.imports
                    where source = 'tiered' order by id desc limit 1$$,
                  $$values (1, 1, 1, 0, 1, 'pgTAP', 'https://example.org/licence', '2026-01-01 00:00:00+00'::timestamptz)$$,
                  'the import log keeps the feed''s envelope and the counts');
select throws_ok($$select private.cds_replace_source('tiered', tap.zone_doc('tiered', 'Mars/Olympus_Mons', '[{"rules": []}]'))$$,
                 '22023', 'unknown IANA time zone ''Mars/Olympus_Mons''', 'an unknown time zone is refused');
select throws_ok($$select private.cds_replace_source('tiered', jsonb_set(tap.zone_doc('tiered', 'America/New_York', '[{"rules": []}]'),
                   '{zones,0,curb_policy_ids}', '["00000000-0000-4000-8000-000000000000"]'))$$,
                 '23503', null, 'a zone naming an undefined policy is refused by the database too');
select is(tap.cost('tiered:z', '2026-03-03 10:00 America/New_York', '2 hours'), '500', 'refused imports leave the data as it was');

-- price_quotes: the community median (price_medians' rules) beside the published cost.
select tap.seed(r, 'tiered:z', c) from (values (tap.alice(), 400), (tap.bob(), 500), (tap.carol(), 600)) v(r, c) \g /dev/null
select tap.seed(r, 'community:only', 300) from unnest(array[tap.alice(), tap.bob(), tap.carol()]) r \g /dev/null
select tap.seed(r, 'community:thin', 300) from unnest(array[tap.alice(), tap.bob()]) r \g /dev/null
select tap.seed(r, 'euro:z', 300) from unnest(array[tap.alice(), tap.bob(), tap.carol()]) r \g /dev/null
select tap.zone('euro', 'Europe/Paris', '[{"rules": [{"activity": "parking", "rate": [{"rate": 150, "rate_unit": "hour"}]}]}]', '{}', 'EUR') \g /dev/null
select results_eq(
    $$select location_id, rate_kind, currency, median_cents, reporters, published_cents, published_allowed, published_reason,
             published_source, published_updated_at
      from public.price_quotes(array['tiered:z', 'community:only', 'community:thin', 'cleaning:z', 'euro:z', 'nowhere'],
                               'hourly', '2026-03-03 06:00 America/New_York', 'PT4H')$$,
    $$values ('cleaning:z', 'hourly', 'USD', null::int, null::int, null::bigint, false, 'no_parking', 'cleaning', '2026-01-01 00:00:00+00'::timestamptz),
             ('community:only', 'hourly', 'USD', 300, 3, null, null, null, null, null),
             ('euro:z', 'hourly', 'EUR', null, null, 600, true, null, 'euro', '2026-01-01 00:00:00+00'),
             ('tiered:z', 'hourly', 'USD', 500, 3, 1000, true, null, 'tiered', '2026-01-01 00:00:00+00')$$,
    'price_quotes: one row per location with either kind of data; medians only in the published currency');
select is((select count(*)::int from public.price_quotes(array['tiered:z'])), 1, 'defaults: hourly, now, one hour');
select throws_ok($$select * from public.price_quotes(array(select 'x' || i from generate_series(1, 51) i))$$,
                 '22023', 'too many location_ids: 51, at most 50 per call', 'price_quotes: more than 50 locations are refused');
select throws_ok($$select * from public.price_quotes(array['tiered:z'], null)$$, '22023', null, 'price_quotes: a null rate_kind is refused');
select throws_ok($$select * from public.price_quotes(array['tiered:z'], 'hourly', now(), '-1 hour')$$, '22023', null,
                 'price_quotes: a negative duration is refused');

-- Who may call and read what.
set local role authenticated;
select tap.use_token(tap.token_for(tap.dave())) \g /dev/null
select results_eq($$select median_cents, published_cents from public.price_quotes(array['tiered:z'], 'hourly', '2026-03-03 10:00 America/New_York', '2 hours')$$,
                  $$values (500, 500::bigint)$$, 'a reporter gets quotes');
select throws_ok($$select * from cds.rates$$, '42501', null, 'a reporter cannot read the published tables directly');
select throws_ok($$select * from public.price_vs_published()$$, '42501', null, 'a reporter cannot list every location');
select throws_ok($$select private.cds_replace_source('x', '{}')$$, '42501', null, 'a reporter cannot import');
reset role;
set local role anon;
select throws_ok($$select * from public.price_quotes(array['tiered:z'])$$, '42501', null, 'anon gets no quotes');
reset role;
set local role authenticator;
select throws_ok($$select * from cds.zones$$, '42501', null, 'the service''s login reads no published table');
reset role;
set local role price_analyst;
select results_eq($$select location_id, currency, median_cents, reporters, published_cents, difference_cents, difference_percent, source
                    from public.price_vs_published('2026-03-03 10:00 America/New_York')
                    where location_id in ('tiered:z', 'euro:z', 'community:only')$$,
                  $$values ('tiered:z', 'USD', 500, 3, 250::bigint, 250::bigint, 100.0, 'tiered')$$,
                  'price_vs_published: the median against one published hour (euro:z has no median in EUR)');
select is((select count(*)::int from cds.zones z join cds.rates r using (source) where z.location_id = 'tiered:z'), 1,
          'an analyst reads the published tables');
select is((select count(*)::int from cds.imports where source = 'tiered'), 2, 'an analyst reads the import log');
select throws_ok($$select * from public.price_reports$$, '42501', null, 'an analyst still cannot read reports');
select results_eq($$select published_cents from public.price_quotes(array['tiered:z'], 'hourly', '2026-03-03 10:00 America/New_York', '2 hours')$$,
                  $$values (500::bigint)$$, 'an analyst gets quotes');
reset role;

select * from finish();
rollback;
