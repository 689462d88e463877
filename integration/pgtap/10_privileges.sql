-- Nobody reads, changes or empties price_reports or the auth tables directly: not anon, not a signed-in
-- reporter, not an analyst, not the service's own login. Denials are permission errors (42501).
begin;
\ir _helpers.psql
select plan(53);

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
select throws_ok($$select auth.install_first_signing_key('\x00'::bytea)$$, '42501', null, 'authenticator cannot install keys');
select throws_ok($$select auth.add_signing_key(convert_to(repeat('k', 40), 'UTF8'))$$, '42501', null, 'authenticator cannot add a key');
select throws_ok('select auth.promote_signing_key()', '42501', null, 'authenticator cannot promote a key');
select throws_ok('select auth.retire_signing_key()', '42501', null, 'authenticator cannot retire a key');
select throws_ok('select * from auth.signing_key_list()', '42501', null, 'authenticator cannot list the keys');
select throws_ok($$select * from auth.create_publishable_key('x', sha256('x'), 'x')$$, '42501', null,
                 'authenticator cannot make a publishable key');
select throws_ok('select auth.revoke_publishable_key(gen_random_uuid())', '42501', null,
                 'authenticator cannot revoke a publishable key');
select throws_ok('select * from auth.publishable_keys', '42501', null, 'authenticator cannot read the publishable keys');
-- What it may read: key ids and wrapped keys (for the holder of a key only), and hashes of random keys.
select is((select count(*)::int from auth.signing_key_ring('0000000000000000') where wrapped is null), 1,
          'authenticator reads the key ring, but nothing is wrapped for a key it does not hold');
select lives_ok('select * from auth.publishable_key_hashes()', 'authenticator reads the publishable keys'' hashes');
reset role;

select * from finish();
rollback;
