-- Reads go through the median functions only. A median appears once 3 distinct reporters reported a
-- location and rate kind within 180 days; each reporter counts once, with their latest report.
begin;
\ir _helpers.psql
select plan(22);

create function tap.backdate(location text, reporter uuid, by interval) returns void language sql as $$
    update public.price_reports set created_at = now() - by where location_id = location and reporter_id = reporter
$$;

-- Threshold: 2 reporters hidden, the 3rd reveals it.
select tap.seed(tap.alice(), 'm:threshold', 300) \g /dev/null
select tap.seed(tap.bob(), 'm:threshold', 500) \g /dev/null
select is_empty($$select * from public.price_median('m:threshold')$$, 'two distinct reporters: no median');
select tap.seed(tap.carol(), 'm:threshold', 400) \g /dev/null
select results_eq($$select location_id, rate_kind, currency, median_cents, reporters, reports from public.price_median('m:threshold')$$,
                  $$values ('m:threshold', 'hourly', 'USD', 400, 3, 3)$$, 'three distinct reporters: the median appears');
select is((select last_reported_at from public.price_median('m:threshold')), date_trunc('hour', clock_timestamp(), 'UTC'),
          'last_reported_at is the newest report''s hour');

-- One reporter, five reports: never a median.
select tap.seed(tap.dave(), 'm:solo', 100 * i) from generate_series(1, 5) i \g /dev/null
select is_empty($$select * from public.price_median('m:solo')$$, 'one reporter x 5 reports stays hidden');

-- Each reporter counts once, with their latest report: dave's earlier 9000s do not drag the median.
select tap.seed(tap.alice(), 'm:latest', 200) \g /dev/null
select tap.seed(tap.bob(), 'm:latest', 210) \g /dev/null
select tap.seed(tap.carol(), 'm:latest', 9000) \g /dev/null
select tap.backdate('m:latest', tap.carol(), interval '2 days');
select tap.seed(tap.carol(), 'm:latest', 220) \g /dev/null
select results_eq($$select median_cents, reporters, reports from public.price_median('m:latest')$$,
                  $$values (210, 3, 4)$$, 'the latest report per reporter counts; reports counts all of them');

-- Known data, even count: the median of 100, 200, 301, 1000 is 250.5, rounded to 251.
select tap.seed(r, 'm:even', c) from (values (tap.alice(), 100), (tap.bob(), 200), (tap.carol(), 301), (tap.dave(), 1000)) v(r, c) \g /dev/null
select results_eq($$select median_cents, reporters from public.price_median('m:even')$$, $$values (251, 4)$$,
                  'median_cents = round(percentile_cont(0.5)) on known data');

-- 180-day window.
select tap.seed(r, 'm:window', 500) from unnest(array[tap.alice(), tap.bob(), tap.carol()]) r \g /dev/null
select tap.backdate('m:window', tap.carol(), interval '179 days');
select results_eq($$select reporters from public.price_median('m:window')$$, $$values (3)$$, 'a 179-day-old report counts');
select tap.backdate('m:window', tap.carol(), interval '181 days');
select is_empty($$select * from public.price_median('m:window')$$, 'a 181-day-old report does not');
select is_empty($$select * from public.price_median_overview(now() - interval '10 years') where location_id = 'm:window'$$,
                'the overview cannot reach past the window either');

-- Rate kind and currency are separate groups.
select tap.seed(r, 'm:window', 2000, 'daily') from unnest(array[tap.alice(), tap.bob(), tap.dave()]) r \g /dev/null
select results_eq($$select rate_kind, median_cents from public.price_median('m:window', 'daily')$$, $$values ('daily', 2000)$$,
                  'rate_kind selects the group');
select tap.seed(r, 'm:eur', 700, 'hourly', 'EUR') from unnest(array[tap.alice(), tap.bob()]) r \g /dev/null
select tap.seed(tap.carol(), 'm:eur', 700, 'hourly', 'USD') \g /dev/null
select is_empty($$select * from public.price_median('m:eur')$$, 'reporters in different currencies do not add up');

-- price_medians: several locations at once, bounded, validated.
select results_eq($$select location_id, median_cents from public.price_medians(array['m:threshold', 'm:solo', 'm:even', 'm:none'])$$,
                  $$values ('m:even', 251), ('m:threshold', 400)$$, 'price_medians returns only the locations over the threshold');
select lives_ok($$select * from public.price_medians(array(select 'm:' || i from generate_series(1, 50) i))$$, '50 locations are fine');
select throws_ok($$select * from public.price_medians(array(select 'm:' || i from generate_series(1, 51) i))$$,
                 '22023', 'too many location_ids: 51, at most 50 per call', '51 locations are refused');
select throws_ok($$select * from public.price_medians(array['m:even'], 'weekly')$$, '22023', 'unknown rate_kind ''weekly''',
                 'an unknown rate_kind is refused');
select is(tap.error_hint($$select * from public.price_median('m:even', 'Hourly')$$),
          '22023: rate_kind is one of hourly, daily, flat, monthly', 'the refusal names the rate kinds');
select throws_ok($$select * from public.price_median('m:even', null)$$, '22023', 'unknown rate_kind ''''', 'a null rate_kind is refused');
select throws_ok($$select * from public.price_medians(array(select 'm:' || i from generate_series(1, 51) i), 'weekly')$$,
                 '22023', 'unknown rate_kind ''weekly''', 'the rate kind is checked before the number of locations');

-- Who may call what.
set local role authenticated;
select tap.use_token(tap.token_for(tap.alice())) \g /dev/null
select results_eq($$select median_cents from public.price_median('m:threshold')$$, $$values (400)$$, 'a reporter reads medians');
select throws_ok($$select * from public.price_median_overview()$$, '42501', null, 'a reporter cannot list every location');
reset role;
set local role price_analyst;
select results_eq($$select location_id from public.price_median_overview() where location_id like 'm:%' and rate_kind = 'hourly'$$,
                  $$values ('m:even'), ('m:latest'), ('m:threshold')$$, 'an analyst''s overview lists every location over the threshold');
select results_eq($$select * from public.price_median_overview() where location_id like 'm:%'$$,
                  $$select * from public.price_median_overview(now() - interval '180 days') where location_id like 'm:%'$$,
                  'the overview''s default is the whole 180-day report window');
reset role;

select * from finish();
rollback;
