-- Anonymous sign-in in the database: per-IP sign-up bucket, rotating refresh tokens with a reuse window,
-- sign-out scopes, user lookup and pruning. Only SHA-256 hashes of refresh tokens are ever stored.
begin;
\ir _helpers.psql
select plan(43);

create temp table signups (n int, user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz);
grant all on signups to public;
create function tap.sign_up(n int, ip bytea default '\x0a000001') returns void language sql as $$
    insert into signups select n, s.* from auth.sign_up_anonymous(ip, '{"app":"pgtap"}', sha256(('token-' || n)::bytea), 30, 30) s
$$;
-- request.jwt as the service sends it before auth.get_user and auth.sign_out: the caller's own token.
create function tap.use_session(n int) returns void language sql as $$
    select set_config('request.jwt', tap.token_for(s.user_id, session => s.session_id), true) from signups s where s.n = use_session.n
$$;
create function tap.refresh(old text, new text, reuse_seconds int default 10) returns text language sql as $$
    select r.status || coalesce(':' || (r.user_id is not null)::text, '') || coalesce(':' || r.generations, '')
    from auth.refresh_session(sha256(old::bytea), sha256(new::bytea), '\x0a000001', 150, 300, reuse_seconds) r
$$;

-- Clients cannot call the sign-in functions; only the service's login can.
set local role authenticated;
select throws_ok($$select tap.sign_up(0)$$, '42501', null, 'authenticated cannot call sign_up_anonymous');
reset role;
set local role anon;
select throws_ok($$select * from auth.get_user(gen_random_uuid(), gen_random_uuid())$$, '42501', null, 'anon cannot call get_user');
reset role;

set local role authenticator;

-- Sign-up: 30 per IP (burst), then PT429 with a Retry-After hint.
select lives_ok($$select tap.sign_up(n) from generate_series(1, 30) n$$, '30 sign-ups from one IP');
select throws_ok($$select tap.sign_up(31)$$, 'PT429', 'too many anonymous sign-ups from this address', 'the 31st is PT429');
select matches(tap.error_hint('select tap.sign_up(31)'), '^PT429: Retry after 1[12][0-9] seconds$',
               'the hint says when the next token arrives (one every 120 s at 30/hour)');
select lives_ok($$select tap.sign_up(32, '\x0a000002')$$, 'another IP has its own bucket');
select is((select count(distinct user_id)::int from signups), 31, 'every sign-up is a new anonymous user');
select tap.use_session(1) \g /dev/null
select results_eq($$select u.user_metadata from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 1$$,
                  $$values ('{"app":"pgtap"}'::jsonb)$$, 'get_user returns the user''s metadata');
select throws_ok($$select * from auth.get_user(gen_random_uuid(), gen_random_uuid())$$, 'PA003', 'session not found',
                 'get_user of an unknown user and session is PA003');
select throws_ok($$select * from signups s, auth.get_user(s.user_id, (select session_id from signups where n = 2)) u where s.n = 1$$,
                 'PA003', 'session not found', 'get_user with another user''s session is PA003');
reset role;
update auth.sessions set revoked_at = clock_timestamp() where id = (select session_id from signups where n = 30);
set local role authenticator;
select tap.use_session(30) \g /dev/null
select throws_ok($$select * from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 30$$,
                 'PA003', 'session not found', 'get_user of a revoked session is PA003 at once, whatever the token''s exp');

-- get_user and sign_out act on a session only for its own token, verified in PostgreSQL with the keys as
-- they are now, never for an id the caller names.
select set_config('request.jwt', '', true) \g /dev/null
select throws_ok($$select * from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 4$$,
                 'PA003', 'session not found', 'get_user without a token is PA003, whoever holds the service''s login');
select tap.use_session(5) \g /dev/null
select throws_ok($$select * from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 4$$,
                 'PA003', 'session not found', 'get_user with another session''s valid token is PA003');
select throws_ok($$select auth.sign_out((select session_id from signups where n = 4), 'global')$$,
                 'PA003', 'session not found', 'sign_out with another session''s valid token is PA003');
select set_config('request.jwt', tap.token_for(s.user_id, session => s.session_id,
                                                secret => convert_to('a-retired-signing-key-0123456789abcdef', 'UTF8')), true)
from signups s where s.n = 4 \g /dev/null
select throws_ok($$select * from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 4$$,
                 'PT401', 'invalid token', 'get_user with the session''s token signed by a key not in the ring is PT401');
select throws_ok($$select auth.sign_out((select session_id from signups where n = 4), 'global')$$,
                 'PT401', 'invalid token', 'so is sign_out');
reset role;
select is((select revoked_at from auth.sessions where id = (select session_id from signups where n = 4)), null,
          'and the session they named is still live');
set local role authenticator;
select tap.use_session(4) \g /dev/null
select lives_ok($$select * from signups s, auth.get_user(s.user_id, s.session_id) u where s.n = 4$$,
                'with its own token, get_user answers');
select throws_ok($$select auth.sign_up_anonymous('\x0b', '{}', '\x00', 30, 30)$$, '23514', null,
                 'a refresh token hash must be 32 bytes (a SHA-256)');
reset role;

-- Only hashes are stored.
select is((select count(*)::int from auth.refresh_tokens t join signups s on s.session_id = t.session_id
           where t.token_hash = sha256(('token-' || s.n)::bytea)), 31, 'each session stores the SHA-256 of its token');
select is((select count(*)::int from auth.refresh_tokens t where t::text like '%token-%'
              or encode(t.token_hash, 'escape') like '%token-%'), 0, 'no raw refresh token is stored anywhere');

-- Refresh rotation and reuse detection.
set local role authenticator;
select is(tap.refresh('token-1', 'token-1b'), 'ok:true:1', 'a refresh token rotates to its child');
select is(tap.refresh('token-1b', 'token-1c'), 'ok:true:1', 'the child rotates in turn');
select is(tap.refresh('token-1', 'token-1x'), 'ok:true:2',
          'the first token again inside the reuse window: no new token, the live one is two generations down');
select is((select r.live_token_hash from auth.refresh_session(sha256('token-1b'::bytea), sha256('token-1y'::bytea),
                                                              '\x0a000001', 150, 300, 10) r),
          sha256('token-1c'::bytea), 'a rotated token inside the window names the live token by its hash');
reset role;
select is((select count(*)::int from auth.refresh_tokens t join signups s on s.session_id = t.session_id where s.n = 1), 3,
          'presenting rotated tokens again forks nothing: the session still has 3 tokens');
set local role authenticator;
select is(tap.refresh('token-1c', 'token-1e'), 'ok:true:1', 'the live token rotates as usual');
reset role;
update auth.refresh_tokens set rotated_at = now() - interval '11 seconds' where token_hash = sha256('token-1b'::bytea);
set local role authenticator;
select is(tap.refresh('token-1b', 'token-1f'), 'reused:false', 'outside the 10-second window: reused, and no user returned');
select throws_ok($$select tap.refresh('token-1e', 'token-1g')$$, 'PA001', 'refresh token not found',
                 'after a reuse the whole session is revoked');
select throws_ok($$select tap.refresh('no-such-token', 'x')$$, 'PA001', 'refresh token not found', 'an unknown token is PA001');
reset role;
select is((select count(*)::int from auth.refresh_tokens t join signups s on s.session_id = t.session_id
           where s.n = 1 and t.revoked_at is null), 0, 'the reused session''s refresh tokens are all revoked');

-- Per-IP refresh limit.
set local role authenticator;
select lives_ok($$select auth.refresh_session(sha256('token-2'::bytea), sha256('token-2b'::bytea), '\x0c', 2, 300, 10)$$, 'refresh 1 of 2');
select lives_ok($$select auth.refresh_session(sha256('token-2b'::bytea), sha256('token-2c'::bytea), '\x0c', 2, 300, 10)$$, 'refresh 2 of 2');
select throws_ok($$select auth.refresh_session(sha256('token-2c'::bytea), sha256('token-2d'::bytea), '\x0c', 2, 300, 10)$$,
                 'PT429', null, 'the 3rd refresh from that IP in the window is PT429');
reset role;

-- Sign-out scopes: give user 3 three more sessions (a, b, c).
insert into auth.sessions (id, user_id)
select ('00000000-0000-4000-8000-00000000000' || x)::uuid, (select user_id from signups where n = 3)
from unnest(array['a', 'b', 'c']) x;
insert into auth.refresh_tokens (token_hash, session_id)
select sha256(('token-3' || x)::bytea), ('00000000-0000-4000-8000-00000000000' || x)::uuid from unnest(array['a', 'b', 'c']) x;
create function tap.live_sessions() returns int language sql as $$
    select count(*)::int from auth.sessions where user_id = (select user_id from signups where n = 3) and revoked_at is null
$$;
create function tap.use_session_id(id uuid) returns void language sql security definer set search_path = tap, pg_catalog as $$
    select set_config('request.jwt', tap.token_for(s.user_id, session => s.id), true) from auth.sessions s where s.id = use_session_id.id
$$;
set local role authenticator;
select tap.use_session_id('00000000-0000-4000-8000-00000000000a') \g /dev/null
select auth.sign_out('00000000-0000-4000-8000-00000000000a', 'local') \g /dev/null
reset role;
select is(tap.live_sessions(), 3, 'local: only this session is revoked');
set local role authenticator;
select throws_ok($$select tap.refresh('token-3a', 'x')$$, 'PA001', null, 'its refresh token no longer works');
select tap.use_session_id('00000000-0000-4000-8000-00000000000b') \g /dev/null
select auth.sign_out('00000000-0000-4000-8000-00000000000b', 'others') \g /dev/null
reset role;
select is(tap.live_sessions(), 1, 'others: every other session is revoked, this one lives');
set local role authenticator;
select is(tap.refresh('token-3b', 'token-3b2'), 'ok:true:1', 'the session that signed others out still refreshes');
select auth.sign_out('00000000-0000-4000-8000-00000000000b', 'global') \g /dev/null
reset role;
select is(tap.live_sessions(), 0, 'global: every session of the user is revoked');
set local role authenticator;
select throws_ok($$select auth.sign_out(gen_random_uuid(), 'global')$$, 'PA003', 'session not found', 'sign_out of an unknown session is PA003');
select throws_ok($$select auth.sign_out('00000000-0000-4000-8000-00000000000b', 'local')$$, 'PA003', 'session not found',
                 'sign_out with a revoked session is PA003, as get_user (it answered as if it had signed out)');
reset role;

-- Prune removes old sessions, tokens and users with no session, and never a price report.
select tap.seed(user_id, 'prune:garage', 400) from signups where n = 3 \g /dev/null
update auth.sessions set revoked_at = now() - interval '31 days' where user_id = (select user_id from signups where n = 3);
update auth.users set created_at = now() - interval '40 days' where id = (select user_id from signups where n = 3);
select results_eq($$select * from auth.prune(interval '30 days')$$, $$values (4::bigint, 5::bigint, 1::bigint)$$,
                  'prune deletes the user''s 4 old sessions, their 5 tokens and the user');
select is((select count(*)::int from public.price_reports where location_id = 'prune:garage'), 1, 'prune keeps the price report');

select * from finish();
rollback;
