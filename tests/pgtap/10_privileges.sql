-- Nobody reads, changes or empties price_reports or the auth tables directly: not anon, not a signed-in
-- reporter, not an analyst, not the service's own login. Denials are permission errors (42501).
begin;
\ir _helpers.psql
select plan(44);

select tap.seed(tap.alice(), 'sfmta:garage-1', 300) \g /dev/null

create function tap.denials(who text) returns setof text language sql as $$
    select throws_ok(s, '42501', null, who || ' cannot ' || split_part(s, ' ', 1) || ' price_reports')
    from unnest(array['select * from public.price_reports',
                      'select count(*) from public.price_reports',
                      'update public.price_reports set price_cents = 1',
                      'delete from public.price_reports',
                      'truncate public.price_reports']) s
$$;
create function tap.auth_denials(who text) returns setof text language sql as $$
    select throws_ok('select * from auth.' || t, '42501', null, who || ' cannot read auth.' || t)
    from unnest(array['signing_keys', 'users', 'sessions', 'refresh_tokens', 'rate_limit_buckets']) t
$$;

-- anon: requests that carry only the anon key.
set local role anon;
select tap.denials('anon');
select tap.auth_denials('anon');
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('x', 'hourly', 1)$$,
                 '42501', null, 'anon cannot insert reports');
reset role;

-- authenticated, with a valid token: may insert, and nothing else.
set local role authenticated;
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select tap.denials('authenticated');
select tap.auth_denials('authenticated');
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('x', 'hourly', 250)$$,
                'authenticated may insert a report');
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('x', 'hourly', 250)
                  returning id$$, '42501', null, 'authenticated cannot read back even its own row (RETURNING)');
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('x', 'hourly', 250)
                  on conflict (id) do update set price_cents = 1$$, '42501', null, 'authenticated cannot upsert over a row');
reset role;

-- price_analyst: medians only.
set local role price_analyst;
select tap.denials('price_analyst');
select tap.auth_denials('price_analyst');
select throws_ok($$insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents)
                  values (tap.alice(), 'x', 'hourly', 1)$$, '42501', null, 'price_analyst cannot insert reports');
reset role;

-- authenticator on its own (NOINHERIT): no table privileges at all.
set local role authenticator;
select tap.denials('authenticator');
select throws_ok('select * from auth.refresh_tokens', '42501', null, 'authenticator cannot read refresh tokens');
select throws_ok('select auth.prune(interval ''1 day'')', '42501', null, 'authenticator cannot prune');
select throws_ok('select private.median_fold_stale(interval ''1 hour'')', '42501', null,
                 'authenticator cannot run the maintenance fold');
select throws_ok($$select auth.install_signing_keys('\x00'::bytea)$$, '42501', null, 'authenticator cannot install keys');
reset role;

select * from finish();
rollback;
