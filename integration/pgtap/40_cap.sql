-- Each reporter may submit 10 reports in any sliding 60-minute window. The 11th is PT429 with a hint
-- the HTTP layer turns into Retry-After. A retry of an already stored report (same client_report_id)
-- is not counted and not refused, and every row the trigger sees leaves a receipt.
begin;
\ir _helpers.psql
select plan(19);

create function tap.submit(n integer default 1) returns void language sql as $$
    insert into public.price_reports (location_id, rate_kind, price_cents)
    select 'cap:garage-' || i, 'hourly', 100 + i from generate_series(1, n) i
$$;
create function tap.stored(reporter uuid) returns bigint language sql security definer set search_path = '' as $$
    select count(*) from public.price_reports where reporter_id = reporter
$$;
create function tap.age_reports(reporter uuid, by interval) returns void language sql security definer
    set search_path = '' as $$
    update public.price_reports set created_at = created_at - by where reporter_id = reporter
$$;

set local role authenticated;
select set_config('request.jwt', tap.token_for(tap.alice()), true) \g /dev/null
select lives_ok('select tap.submit(4)', '4 reports one by one...') ;
select lives_ok('select tap.submit(6)', '...and 6 in one statement make 10');
select throws_ok('select tap.submit(1)', 'PT429',
                 'reporter cap reached: at most 10 price reports in any 60 minutes', 'the 11th report is PT429');
select is(tap.error_hint('select tap.submit(1)'), 'PT429: Retry after 3600 seconds',
          'the hint says when the oldest report leaves the window');
select is(tap.stored(tap.alice()), 10::bigint, 'exactly 10 rows are stored');

-- Sliding window: once the oldest reports are 59 min 30 s old, the wait is 30 seconds.
select tap.age_reports(tap.alice(), interval '59 minutes 30 seconds') \g /dev/null
select is(tap.error_hint('select tap.submit(1)'), 'PT429: Retry after 30 seconds', 'Retry-After shrinks as the window slides');
select tap.age_reports(tap.alice(), interval '31 seconds') \g /dev/null
select lives_ok('select tap.submit(10)', 'reports older than an hour no longer count');
select throws_ok('select tap.submit(1)', 'PT429', null, 'and the cap applies again to the new ones');

-- Backdating cannot help: created_at is not writable and is set by the server anyway.
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, created_at)
                  values ('cap:x', 'hourly', 1, now() - interval '2 hours')$$, '42501', null,
                 'a client cannot backdate a report to dodge the cap');

-- Another reporter is unaffected; a statement crossing the cap is refused whole.
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select lives_ok('select tap.submit(8)', 'bob submits 8');
select throws_ok('select tap.submit(3)', 'PT429', null, 'a statement of 3 that would cross the cap is refused...');
select is(tap.stored(tap.bob()), 8::bigint, '...whole');

-- Idempotent replays.
select set_config('request.jwt', tap.token_for(tap.carol()), true) \g /dev/null
select set_config('pricesvc.receipts', '', true) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
values ('cap:replay', 'daily', 700, 'c0000000-0000-4000-8000-000000000001');
select matches(current_setting('pricesvc.receipts', true),
               '^\[\{"id":\d+,"created_at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00","currency":"USD","replayed":false\}\]$',
               'an insert leaves one receipt in pricesvc.receipts, with the defaulted currency');
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
                 values ('cap:replay', 'daily', 700, 'c0000000-0000-4000-8000-000000000001')$$,
                'replaying a client_report_id succeeds');
select is(current_setting('pricesvc.receipts', true)::jsonb -> 1,
          (current_setting('pricesvc.receipts', true)::jsonb -> 0) || '{"replayed": true}',
          'the replay''s receipt names the original row, marked replayed');
select tap.submit(9) \g /dev/null
select is(tap.stored(tap.carol()), 10::bigint, 'carol has 10 rows: the replay inserted nothing');
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
                 values ('cap:replay', 'daily', 700, 'c0000000-0000-4000-8000-000000000001')$$,
                'a replay at the cap is still not refused');
select is(jsonb_array_length(current_setting('pricesvc.receipts', true)::jsonb), 12,
          'one receipt per row seen, in insert order (1 + replay + 9 + replay)');

-- Another reporter reusing carol's client_report_id gets their own row, not hers.
select set_config('request.jwt', tap.token_for(tap.dave()), true) \g /dev/null
select set_config('pricesvc.receipts', '', true) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
values ('cap:replay', 'daily', 700, 'c0000000-0000-4000-8000-000000000001');
select is(current_setting('pricesvc.receipts', true)::jsonb -> 0 ->> 'replayed', 'false',
          'a client_report_id is scoped to its reporter');

reset role;
select * from finish();
rollback;
