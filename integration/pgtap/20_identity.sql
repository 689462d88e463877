-- Identity comes only from a token the database verifies itself. Setting claims, forging a signature,
-- alg tricks or an expired token get nobody a reporter id that is not theirs.
begin;
\ir _helpers.psql
select plan(65);

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

-- Each claim check answers with its own detail, and a token passes only when every check does.
create function tap.verdict(token text) returns text language plpgsql as $$
declare
    state text;
    message text;
    detail text;
begin
    perform set_config('request.jwt', token, true);
    return case when auth.jwt() is null then 'null' else 'ok' end;
exception when others then
    get stacked diagnostics state = returned_sqlstate, message = message_text, detail = pg_exception_detail;
    return state || ': ' || message || coalesce(' / ' || nullif(detail, ''), '');
end
$$;
create function tap.claims(extra jsonb, without text default null) returns jsonb language sql volatile
    return (jsonb_build_object('sub', tap.alice(), 'role', 'authenticated', 'session_id', tap.session_for(tap.alice()),
                               'exp', floor(extract(epoch from clock_timestamp() + interval '1 hour'))) || extra) - coalesce(without, '');
select is(tap.verdict(tap.sign('{"alg":"HS256"}', tap.claims('{}'))), 'ok',
          'another header with alg HS256 passes (decoded, not the service''s own)');
select is(tap.verdict(tap.sign('{"typ":"JWT"}', tap.claims('{}'))), 'PT401: invalid token / alg must be HS256',
          'a header without alg fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', '[1, 2]')), 'PT401: invalid token / the payload must be a JSON object',
          'a payload that is an array fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', '"alice"')), 'PT401: invalid token / the payload must be a JSON object',
          'a payload that is a string fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"exp": "2099-01-01"}'))),
          'PT401: invalid token / exp must be a number', 'exp as a string fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims(jsonb_build_object('nbf', floor(extract(epoch from clock_timestamp() + interval '5 minutes')))))),
          'PT401: invalid token / token not valid yet', 'nbf five minutes ahead fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"nbf": "now"}'))),
          'PT401: invalid token / token not valid yet', 'nbf as a string fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims(jsonb_build_object('nbf', floor(extract(epoch from clock_timestamp() + interval '10 seconds')))))),
          'ok', 'nbf within the 30-second leeway passes');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims(jsonb_build_object('nbf', floor(extract(epoch from clock_timestamp() - interval '1 minute')))))),
          'ok', 'nbf in the past passes');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"sub": "a11ce000-0000-4000-8000-00000000000"}'))),
          'PT401: invalid token / sub and session_id must be UUIDs', 'a sub one digit short fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"sub": "a11ce000-0000-4000-8000-0000000000-1"}'))),
          'PT401: invalid token / sub and session_id must be UUIDs', 'a sub with a fifth dash in place of a digit fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"sub": "a11ce000-0000-4000-8000-00000000000g"}'))),
          'PT401: invalid token / sub and session_id must be UUIDs', 'a sub with a non-hex digit fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{"sub": 12345}'))),
          'PT401: invalid token / sub and session_id must be UUIDs', 'a sub that is a number fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims('{}', 'session_id'))),
          'PT401: invalid token / sub and session_id must be UUIDs', 'a sub without a session_id fails');
select is(tap.verdict(tap.sign('{"alg":"HS256","typ":"JWT"}', tap.claims(jsonb_build_object('sub', upper(tap.alice()::text))))),
          'ok', 'a sub in upper-case hex passes (the same UUID)');
select set_config('request.jwt', '', true) \g /dev/null

-- Secret rotation: the previous key still verifies.
select set_config('request.jwt', tap.sign('{"alg":"HS256"}', jsonb_build_object('sub', tap.bob()),
                                          convert_to('the-previous-signing-secret-0123456789ab', 'UTF8')), true) \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'an unknown old key is rejected');
-- The three steps (pricesvc keys add, promote, retire): both keys verify until the old one is retired.
select is(auth.add_signing_key(convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8')),
          private.signing_key_id(convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8')), 'add: returns the key''s id');
select is(auth.uid(), null::uuid, 'sanity: no sub') from (select set_config('request.jwt', '', true)) s;
select set_config('request.jwt', tap.token_for(tap.bob(), secret => convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8')), true) \g /dev/null
select is(auth.uid(), tap.bob(), 'after add, a token signed with the next key verifies');
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select is(auth.uid(), tap.bob(), 'after add, a token signed with the current key still verifies');
select auth.promote_signing_key() \g /dev/null
select is(array(select slot || ':' || key_id from auth.signing_key_list()),
          array['current:' || private.signing_key_id(convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8')),
                'previous:' || private.signing_key_id(tap.test_secret())], 'promote: next is current, current is previous');
select is(auth.uid(), tap.bob(), 'after promote, tokens signed with the previous key still verify');
select auth.retire_signing_key() \g /dev/null
select throws_ok('select auth.uid()', 'PT401', 'invalid token', 'after retire, the previous key''s tokens are refused');
select throws_ok('select auth.retire_signing_key()', '55000', 'there is no previous key to retire', 'retire twice: refused');
select throws_ok('select auth.promote_signing_key()', '55000', 'there is no next key to promote', 'promote with no next key: refused');
-- After a leak: a key added unshared is not wrapped for the holders of the other keys; they are for it.
select auth.add_signing_key(convert_to('the-unshared-signing-secret-0123456789ab', 'UTF8'), false) \g /dev/null
select is(array(select slot || ':' || (wrapped is not null)::text from auth.signing_key_ring(
                   private.signing_key_id(convert_to('the-next-signing-secret-0123456789abcdef', 'UTF8'))) order by slot),
          array['current:true', 'next:false'], 'an unshared key is not given to the holder of the current key');
select is((select wrapped is not null from auth.signing_key_ring(
               private.signing_key_id(convert_to('the-unshared-signing-secret-0123456789ab', 'UTF8'))) where slot = 'current'), true,
          'the holder of the unshared key is given the current key');
select is((select count(*)::int from auth.signing_key_ring('0123456789abcdef') where wrapped is not null), 0,
          'a holder id that is no key of the set is given nothing');
delete from auth.signing_keys;
select is(auth.install_first_signing_key(tap.test_secret()), 'installed', 'migrate installs the first key of an empty set');
select is(auth.install_first_signing_key(tap.test_secret()), 'current', '... and only says where a known key is');
select is(auth.install_first_signing_key(convert_to('an-unknown-signing-secret-0123456789abcd', 'UTF8')), 'unknown',
          '... and changes nothing for an unknown one');
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

-- The reporter_id default is a hint (auth.unverified_uid()) read from settings anyone can write, even
-- between the rows of one INSERT; the RLS policy verifies the token once per statement and refuses
-- whatever the hint got wrong. Nobody learns anything about the reporter they named.
create function tap.forge_hint(reporter uuid, token text default 'forged') returns boolean language sql as $$
    select set_config('pricesvc.hint_uid', reporter::text, true) is not null
       and set_config('pricesvc.hint_jwt', token, true) is not null
       and set_config('request.jwt', token, true) is not null
$$;
create function tap.unsigned_for(sub uuid) returns text language sql immutable
    return tap.b64url('{"alg":"HS256","typ":"JWT"}') || '.' || tap.b64url(convert_to(jsonb_build_object('sub', sub)::text, 'UTF8')) || '.x';
-- carol is at the cap, and used a client_report_id.
select tap.seed(tap.carol(), 'identity:carol', 100 + i) from generate_series(1, 9) i \g /dev/null
insert into public.price_reports (reporter_id, location_id, rate_kind, price_cents, client_report_id)
values (tap.carol(), 'identity:carol', 'hourly', 555, 'ca201000-0000-4000-8000-00000000c0de');
set local track_functions = 'pl';

-- As the service's login (a superuser session may name any reporter: fixtures).
set local session authorization authenticator;
set local role authenticated;
select tap.use_token(tap.token_for(tap.bob())) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents)
                  select 'identity:mid', 'hourly', v from (values (1), (2)) t(v)
                  where v = 1 or tap.forge_hint(tap.alice(), tap.unsigned_for(tap.alice()))$$,
                 '42501', 'new row violates row-level security policy for table "price_reports"',
                 'a hint and an unsigned token for alice, set by the INSERT''s own source query between two rows, are refused');
select tap.use_token(tap.token_for(tap.bob())) \g /dev/null
select throws_ok(format($$insert into public.price_reports (location_id, rate_kind, price_cents)
                          select 'identity:mid', 'hourly', v from (values (1), (2)) t(v)
                          where v = 1 or set_config('request.jwt', %L, true) is not null$$, tap.token_for(tap.dave())),
                 '42501', null, 'switching to another valid token mid-statement is refused: the statement verified bob''s once');
select tap.forge_hint(tap.alice(), '') \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:mid', 'hourly', 1)$$,
                 '42501', null, 'a hint for alice with no token at all is refused');
select tap.use_token(tap.token_for(tap.bob())) \g /dev/null
select tap.forge_hint(tap.carol(), current_setting('request.jwt')) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:mid', 'hourly', 1)$$,
                 '42501', null, 'a hint naming carol, who is at the cap, is refused by the policy, not with PT429 (no hint she is at the cap)');
select tap.forge_hint(tap.carol(), current_setting('request.jwt')) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, client_report_id)
                   values ('identity:carol', 'hourly', 555, 'ca201000-0000-4000-8000-00000000c0de')$$,
                 '42501', null, 'a hint naming carol with her client_report_id is refused, not answered as her replay');
select tap.forge_hint(tap.carol(), 'not a token') \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:mid', 'hourly', 1)$$,
                 'PT401', null, 'a hint naming carol with a malformed token fails as the token fails, whatever carol''s state');
reset role;
reset session authorization;
select is((select count(*)::int from public.price_reports where location_id = 'identity:mid'), 0,
          'none of the forged rows, nor the rows of their statements, were stored');

-- One verification per statement: the identity statement's, then the policy's for a five-row insert.
-- (The counters are read as the superuser: statistics are not for client roles.)
select tap.token_for(tap.dave()) as dave_token \gset
select pg_stat_get_xact_function_calls('auth.jwt()'::regprocedure) as before \gset
set local role authenticated;
select pg_catalog.set_config('request.jwt', :'dave_token', true), auth.jwt() is not null \g /dev/null
reset role;
select is(pg_stat_get_xact_function_calls('auth.jwt()'::regprocedure) - :before, 1::bigint,
          'the identity statement verifies the token once');
set local role authenticated;
insert into public.price_reports (location_id, rate_kind, price_cents)
select 'identity:count', 'hourly', 100 + i from generate_series(1, 5) i;
reset role;
select is(pg_stat_get_xact_function_calls('auth.jwt()'::regprocedure) - :before, 2::bigint,
          'a five-row insert verifies it once more: the policy, not the default or the trigger per row');

-- The service's submission identity statement (Statements.submitterIdentity) switches role and records
-- the sub it verified in-process as the hint, without verifying: the INSERT's policy is the one
-- verification of the whole submission.
select pg_stat_get_xact_function_calls('auth.jwt()'::regprocedure) as before \gset
set local role authenticated;
select pg_catalog.set_config('role', 'authenticated', true), pg_catalog.set_config('request.jwt', :'dave_token', true),
       pg_catalog.set_config('pricesvc.hint_jwt', :'dave_token', true),
       pg_catalog.set_config('pricesvc.hint_uid', tap.dave()::text, true) \g /dev/null
insert into public.price_reports (location_id, rate_kind, price_cents)
select 'identity:count', 'hourly', 200 + i from generate_series(1, 5) i;
reset role;
select is(pg_stat_get_xact_function_calls('auth.jwt()'::regprocedure) - :before, 1::bigint,
          'a submission (identity statement without verification, then a five-row insert) verifies the token once');
select is((select count(*)::int from public.price_reports where location_id = 'identity:count' and reporter_id = tap.dave()), 10,
          'all ten rows of both inserts are dave''s');

-- A submission whose session was signed out: the identity statement does not verify, so the INSERT's
-- policy must refuse it with the token's own error, and store nothing.
select tap.token_for('e1170000-0000-4000-8000-000000000005'::uuid) as erin_token \gset
update auth.sessions set revoked_at = now() where user_id = 'e1170000-0000-4000-8000-000000000005'::uuid;
set local role authenticated;
select pg_catalog.set_config('request.jwt', :'erin_token', true),
       pg_catalog.set_config('pricesvc.hint_jwt', :'erin_token', true),
       pg_catalog.set_config('pricesvc.hint_uid', 'e1170000-0000-4000-8000-000000000005'::uuid::text, true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('identity:revoked', 'hourly', 1)$$,
                 'PT401', 'session not found', 'a submission with a signed-out session is refused by the insert itself');
reset role;
select is((select count(*)::int from public.price_reports where location_id = 'identity:revoked'), 0,
          'nothing was stored for the signed-out session');

select * from finish();
rollback;
