-- The cost of a quote is bounded, so one address cannot take the database with quotes, nor a feed's values
-- break them: the engine stops at the first piece of a stay that is not allowed, looks the governing rule
-- up per weekday and time-of-day pattern, caps locations x days per call, and prices a zone whose values it
-- cannot compute with as feed_error without losing the other locations of the call. Every expected amount
-- is worked out in its comment.
begin;
\ir _helpers.psql
select plan(14);

\ir _cds_helpers.psql

-- Weekdays 09:00-18:00 at 5 cents a minute; nothing governs at other times (free).
select tap.zone('weekdays', 'America/New_York', $$[
    {"time_spans": [{"days_of_week": ["mon","tue","wed","thu","fri"], "time_of_day_start": "09:00", "time_of_day_end": "18:00"}],
     "rules": [{"activity": "parking", "rate": [{"rate": 5, "rate_unit": "minute"}]}]}]$$) \g /dev/null
-- Two weeks from Monday 2 March 2026 (DST starts on Sunday 8 March): 10 weekdays x 540 minutes x 5 = 27 000.
select is(tap.cost('weekdays:z', '2026-03-02 00:00 America/New_York', '14 days'), '27000',
          'two weeks across a DST change: 10 metered weekdays');
-- 366 days from Monday 2 March 2026 touch 262 weekdays: 262 x 2 700 = 707 400.
select is(tap.cost('weekdays:z', '2026-03-02 00:00 America/New_York', '366 days'), '707400',
          'a year-long stay: one lookup per pattern gives what one per piece gave');

-- Stops at the first piece that is not allowed. A 1-hour max_stay governs the first day; from the tenth
-- day a rule whose max_stay (2^31 - 1 years) no arithmetic can reach would govern. The stay is over its
-- max_stay after an hour, so that rule is never evaluated: max_stay, not feed_error.
select tap.zone('stops', 'Europe/Paris', $$[
    {"priority": 1, "time_spans": [{"start_date": 1773532800000}],
     "rules": [{"activity": "parking", "max_stay": 2147483647, "max_stay_unit": "year"}]},
    {"priority": 2, "rules": [{"activity": "parking", "max_stay": 1, "max_stay_unit": "hour",
                               "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
-- 1773532800000 ms = 2026-03-15 00:00 UTC.
select is(tap.cost('stops:z', '2026-03-03 10:00 Europe/Paris', '366 days'), 'max_stay',
          'a stay stops at its first piece that is not allowed; later rules are never evaluated');
select is(tap.cost('stops:z', '2026-03-03 10:00 Europe/Paris', '1 hour'), '100', '... and within max_stay it is priced');

-- The reason is the first instant the stay stops being allowed: max_stay at 11:00, before the
-- no-parking window at 12:00 (the earlier engine named no_parking, whichever came first).
select tap.zone('first', 'America/New_York', $$[
    {"priority": 1, "time_spans": [{"time_of_day_start": "12:00", "time_of_day_end": "13:00"}], "rules": [{"activity": "no parking"}]},
    {"priority": 2, "rules": [{"activity": "parking", "max_stay": 60, "rate": [{"rate": 100, "rate_unit": "hour"}]}]}]$$) \g /dev/null
select is(tap.cost('first:z', '2026-03-03 10:00 America/New_York', '4 hours'), 'max_stay', 'max_stay first, then the window: max_stay');
select is(tap.cost('first:z', '2026-03-03 11:30 America/New_York', '4 hours'), 'no_parking', 'the window first, then max_stay: no_parking');

-- Values the importer refuses (FeedBounds), loaded directly as the owner would: a max_stay of
-- 2^31 - 1 years, and 2^31 - 1 cents a second (a year of it is about 6.8 x 10^16, beyond 2^53 - 1).
select tap.zone('forever', 'America/New_York', $$[{"rules": [{"activity": "parking", "max_stay": 2147483647, "max_stay_unit": "year"}]}]$$) \g /dev/null
select tap.zone('dear', 'America/New_York', $$[{"rules": [{"activity": "parking", "rate": [{"rate": 2147483647, "rate_unit": "second"}]}]}]$$) \g /dev/null
select results_eq(
    $$select location_id, cost_cents, allowed, reason from public.published_cost(array['forever:z', 'weekdays:z', 'dear:z'],
                                                                             '2026-03-02 00:00 America/New_York', '366 days')$$,
    $$values ('dear:z', null::bigint, false, 'feed_error'), ('forever:z', null, false, 'feed_error'), ('weekdays:z', 707400, true, null)$$,
    'a zone the engine cannot compute with is a feed_error; the other locations of the call are unaffected');
select results_eq(
    $$select location_id, published_cents, published_allowed, published_reason
      from public.price_quotes(array['forever:z', 'weekdays:z'], 'hourly', '2026-03-02 10:00 America/New_York', 'PT1H')$$,
    $$values ('forever:z', null::bigint, false, 'feed_error'), ('weekdays:z', 300::bigint, true, null)$$,
    'price_quotes answers feed_error for that location and quotes the others');
-- One hour of 2^31 - 1 a second is 7.7 x 10^12: well within 2^53, so it is priced.
select is(tap.cost('dear:z', '2026-03-02 10:00 America/New_York', '1 hour'), (2147483647::bigint * 3600)::text,
          'a large rate is priced while its total fits in 2^53 - 1');

-- Locations x days per call: at most 1 830 (5 year-long stays, or 50 locations for 36 days).
select throws_ok($$select * from public.published_cost(array(select 'x' || i from generate_series(1, 6) i), now(), '366 days')$$,
                 '22023', 'too many location-days: 6 locations x 366 days = 2196, at most 1830 per call',
                 'published_cost: more than 1 830 location-days are refused, naming the limit');
select throws_ok($$select * from public.price_quotes(array(select 'x' || i from generate_series(1, 50) i), 'hourly', now(), 'P365DT23H')$$,
                 '22023', 'too many location-days: 50 locations x 366 days = 18300, at most 1830 per call',
                 'price_quotes: a flood of 50 locations x 366 days is refused before any work');
select lives_ok($$select * from public.price_quotes(array(select 'x' || i from generate_series(1, 50) i), 'hourly', now(), '36 days')$$,
                '50 locations for 36 days are within the limit');
select lives_ok($$select * from public.published_cost(array['weekdays:z', 'weekdays:z', 'weekdays:z'] || array(select 'x' || i from generate_series(1, 4) i),
                                                     now(), '366 days')$$,
                'a location named twice counts once');
-- Partial days count as whole days: 10 x 183 days is the limit exactly, one more hour is beyond it.
select throws_ok($$select * from public.published_cost(array(select 'x' || i from generate_series(1, 10) i), now(), '183 days 1 hour')$$,
                 '22023', 'too many location-days: 10 locations x 184 days = 1840, at most 1830 per call',
                 'a started day counts as a day');

select * from finish();
rollback;
