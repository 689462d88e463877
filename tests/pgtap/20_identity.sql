-- Identity comes only from a token the database verifies itself. Setting claims, forging a signature,
-- alg tricks or an expired token get nobody a reporter id that is not theirs.
begin;
\ir _helpers.psql
select plan(24);

create function tap.report_as(token text) returns text language plpgsql as $$
begin
    perform set_config('request.jwt', token, true);
    insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:test', 'hourly', 123);
    return 'inserted';
end
$$;
create function tap.reporters_of_identity_test() returns setof uuid language sql security definer
    set search_path = '' as $$ select reporter_id from public.price_reports where location_id = 'identity:test' $$;

-- auth.jwt() itself.
select is(auth.jwt(), null, 'no token: auth.jwt() is null');
select is(auth.uid(), null, 'no token: auth.uid() is null');
select set_config('request.jwt', tap.token_for(tap.alice()), true) \g /dev/null
select is(auth.uid(), tap.alice(), 'a valid token: auth.uid() is its sub');
select is(auth.role(), 'authenticated', 'auth.role() is the token''s role claim');
select is(auth.jwt() ->> 'aud', 'authenticated', 'auth.jwt() returns the verified payload');

select set_config('request.jwt', tap.sign('{"alg":"HS256"}', jsonb_build_object('sub', tap.alice()),
                                          convert_to('some-other-secret-of-forty-bytes-length!!', 'UTF8')), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'a token signed with another key is rejected');
select set_config('request.jwt', tap.b64url('{"alg":"none"}') || '.' || tap.b64url(convert_to(jsonb_build_object('sub', tap.alice())::text, 'UTF8')) || '.', true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'alg none (empty signature) is rejected');
select set_config('request.jwt', tap.sign('{"alg":"none"}', jsonb_build_object('sub', tap.alice())), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'alg none is rejected even with a valid HMAC');
select set_config('request.jwt', tap.sign('{"alg":"RS256"}', jsonb_build_object('sub', tap.alice())), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'alg RS256 is rejected');
select set_config('request.jwt', tap.sign('{"alg":"hs256"}', jsonb_build_object('sub', tap.alice())), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'alg must be exactly HS256');
select set_config('request.jwt', tap.token_for(tap.alice()) || 'x', true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'a tampered signature is rejected');
select set_config('request.jwt', 'not a token', true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'a malformed token is rejected');
select set_config('request.jwt', tap.token_for(tap.alice(), interval '-1 minute'), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'token expired', 'a token expired a minute ago is rejected');
select set_config('request.jwt', tap.token_for(tap.alice(), interval '-10 seconds'), true) \g /dev/null
select is(auth.uid(), tap.alice(), 'a token expired within the 30-second leeway still passes');

-- Secret rotation: the previous key still verifies.
select set_config('request.jwt', tap.sign('{"alg":"HS256"}', jsonb_build_object('sub', tap.bob()),
                                          convert_to('the-previous-signing-secret-0123456789ab', 'UTF8')), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'an unknown old key is rejected');
select auth.install_signing_keys(convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8'),
                                 tap.test_secret()) \g /dev/null
select is(auth.uid(), null::uuid, 'sanity: no sub') from (select set_config('request.jwt', '', true)) s;
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select is(auth.uid(), tap.bob(), 'after a rotation, tokens signed with the previous key still verify');
select auth.install_signing_keys(tap.test_secret()) \g /dev/null
select set_config('request.jwt', '', true) \g /dev/null

-- Forging another reporter's id through the table.
set local role authenticated;
select is(tap.report_as(tap.token_for(tap.bob())), 'inserted', 'bob reports with his own token');
select throws_ok($$insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents)
                  values ('a11ce000-0000-4000-8000-000000000001', 'identity:test', 'hourly', 1)$$,
                 '42501', null, 'naming a reporter_id is not allowed (no column privilege)');
select set_config('request.jwt.claims', jsonb_build_object('sub', tap.alice(), 'role', 'authenticated')::text, true) \g /dev/null
select set_config('request.jwt', '', true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:test', 'hourly', 1)$$,
                 '42501', 'new row violates row-level security policy for table "price_reports"',
                 'request.jwt.claims is ignored: without a signed token the row fails the policy');
select throws_ok($$select tap.report_as(tap.sign('{"alg":"HS256"}', '{"sub":"a11ce000-0000-4000-8000-000000000001"}',
                                                 convert_to('an-attacker-chosen-secret-0123456789abcd', 'UTF8')))$$,
                 'PT401', 'invalid token', 'a token for alice signed with a guessed key is rejected');
select throws_ok($$select tap.report_as(tap.b64url('{"alg":"none","typ":"JWT"}') || '.' ||
                                        tap.b64url('{"sub":"a11ce000-0000-4000-8000-000000000001"}') || '.')$$,
                 'PT401', 'invalid token', 'an unsigned alg-none token for alice is rejected');
select throws_ok($$select tap.report_as(tap.token_for(tap.alice(), interval '-1 hour'))$$,
                 'PT401', 'token expired', 'an expired token for alice is rejected');
reset role;
select results_eq('select * from tap.reporters_of_identity_test()', array[tap.bob()],
                  'only bob''s own report exists, under his id');

select * from finish();
rollback;
