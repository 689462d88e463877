-- Every rule on a report is a CHECK constraint, so bad rows cannot get in even around the service;
-- and the server, not the client, decides created_at.
begin;
\ir _helpers.psql
select plan(18);

create function tap.violates(constraint_name text, reporter uuid, location text, kind text, cents integer,
                             currency text default 'USD') returns text language sql as $$
    select throws_ok(format('insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, currency) values (%L, %L, %L, %s, %L)',
                            reporter, location, kind, cents, currency),
                     '23514', format('new row for relation "price_reports" violates check constraint "%s"', constraint_name),
                     format('%s rejects %s/%s/%s/%s', constraint_name, regexp_replace(left(location, 20), '[[:cntrl:]]', '?', 'g'), kind, cents, currency))
$$;

select tap.violates('price_reports_location_id_length', tap.alice(), '', 'hourly', 100);
select tap.violates('price_reports_location_id_length', tap.alice(), repeat('x', 201), 'hourly', 100);
select lives_ok(format($$select tap.seed(%L, %L, 100)$$, tap.alice(), repeat('x', 200)), '200 characters are fine');
select lives_ok($$select tap.seed(tap.alice(), 'mapkit:ünïcødé-garage', 100)$$, 'non-ASCII printable ids are fine');
select tap.violates('price_reports_location_id_no_control_chars', tap.alice(), E'sfmta:garage\n1', 'hourly', 100);
select tap.violates('price_reports_location_id_no_control_chars', tap.alice(), E'sfmta:\tgarage', 'hourly', 100);
select tap.violates('price_reports_location_id_no_control_chars', tap.alice(), E'sfmta:\x7fgarage', 'hourly', 100);
select tap.violates('price_reports_rate_kind_known', tap.alice(), 'a', 'weekly', 100);
select tap.violates('price_reports_rate_kind_known', tap.alice(), 'a', 'Hourly', 100);
select tap.violates('price_reports_price_cents_range', tap.alice(), 'a', 'hourly', 0);
select tap.violates('price_reports_price_cents_range', tap.alice(), 'a', 'hourly', -5);
select tap.violates('price_reports_price_cents_range', tap.alice(), 'a', 'hourly', 1000001);
select lives_ok($$select tap.seed(tap.bob(), 'a', 1000000, 'monthly')$$, '1 000 000 cents is the maximum');
select tap.violates('price_reports_currency_iso4217', tap.alice(), 'a', 'hourly', 100, 'usd');
select tap.violates('price_reports_currency_iso4217', tap.alice(), 'a', 'hourly', 100, 'USDX');

-- created_at is the server's time: a backdated value is ignored even from the owner...
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, created_at)
values (tap.carol(), 'backdated', 'daily', 900, '2001-01-01');
select cmp_ok((select created_at from public.price_reports where location_id = 'backdated'), '>', now(),
          'a backdated created_at is replaced by the server''s clock (after this transaction began)');
-- ...and a client cannot even name the column.
set local role authenticated;
select set_config('request.jwt', tap.token_for(tap.carol()), true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, created_at)
                  values ('backdated', 'daily', 900, '2001-01-01')$$, '42501', null,
                 'authenticated cannot set created_at');
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, currency)
                 values ('sfmta:garage-9', 'flat', 1500, 'EUR')$$, 'a valid report from a client goes in');
reset role;

select * from finish();
rollback;
