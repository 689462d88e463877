-- Spent sign-up challenges: each one is accepted once across all instances, only the service's login
-- may record one, nobody reads the list, and expired rows are cleared by the function itself.
begin;
\ir _helpers.psql
select plan(14);

create function tap.spend(name text, expires timestamptz default now() + interval '5 minutes') returns void
    language sql as $$ select auth.spend_signup_challenge(sha256(convert_to(name, 'UTF8')), expires) $$;

-- Who may call it: authenticator only.
select function_privs_are('auth', 'spend_signup_challenge', array['bytea', 'timestamptz'], 'authenticator', array['EXECUTE']);
select function_privs_are('auth', 'spend_signup_challenge', array['bytea', 'timestamptz'], 'anon', array[]::text[]);
select function_privs_are('auth', 'spend_signup_challenge', array['bytea', 'timestamptz'], 'authenticated', array[]::text[]);
select function_privs_are('auth', 'spend_signup_challenge', array['bytea', 'timestamptz'], 'price_analyst', array[]::text[]);
set local role anon;
select throws_ok($$select tap.spend('a')$$, '42501', null, 'anon cannot spend a challenge');
reset role;
set local role authenticated;
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select throws_ok($$select tap.spend('a')$$, '42501', null, 'a signed-in reporter cannot spend a challenge');
select throws_ok($$select * from auth.spent_signup_challenges$$, '42501', null, 'nor read the spent list');
reset role;

-- Spent twice: PA010, and the first spend stays.
set local role authenticator;
select lives_ok($$select tap.spend('challenge-1')$$, 'authenticator spends a fresh challenge');
select throws_ok($$select tap.spend('challenge-1')$$, 'PA010', 'sign-up challenge already used',
                 'the same challenge again is PA010');
select lives_ok($$select tap.spend('challenge-2')$$, 'another challenge is its own');
select throws_ok($$select auth.spend_signup_challenge('\x00', now())$$, '23514', null,
                 'only a SHA-256 (32 bytes) is stored');
select throws_ok($$select * from auth.spent_signup_challenges$$, '42501', null, 'authenticator cannot read the list either');
reset role;
select is((select count(*)::int from auth.spent_signup_challenges
           where challenge_hash = sha256(convert_to('challenge-1', 'UTF8'))), 1, 'it is stored once, as its SHA-256');

-- Rows long expired are cleared by later spends; recently expired ones are kept (clock skew margin).
insert into auth.spent_signup_challenges
select sha256(convert_to('old-' || i, 'UTF8')), now() - interval '1 hour' from generate_series(1, 20) i;
insert into auth.spent_signup_challenges values (sha256(convert_to('recent', 'UTF8')), now() - interval '1 minute');
set local role authenticator;
select tap.spend('challenge-3') \g /dev/null
select tap.spend('challenge-4') \g /dev/null
reset role;
select results_eq($$select count(*) filter (where expires_at < now() - interval '10 minutes')::int,
                          count(*) filter (where challenge_hash = sha256(convert_to('recent', 'UTF8')))::int
                   from auth.spent_signup_challenges$$,
                  $$values (0, 1)$$, 'two spends clear 20 long-expired rows and keep the recently expired one');

select * from finish();
rollback;
