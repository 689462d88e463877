-- Attested sign-up and the 'attested' threshold mode: only the service's login signs up with
-- an attested key, a key makes one identity, and under private.threshold_counts() = 'attested' a median
-- counts only attested, mature reporters, while unattested reports are still stored and capped. The
-- mode is the owner's: authenticator (the service's credentials) cannot change it, its stored state or
-- the attested flags. The switch is made here as migrate makes it (redefine the setting, reconcile),
-- inside this file's transaction.
begin;
\ir _helpers.psql
select plan(35);

create function tap.key(name text) returns bytea language sql immutable return sha256(convert_to(name, 'UTF8'));
create function tap.point(name text) returns bytea language sql immutable
    return '\x04'::bytea || sha256(convert_to(name || 'x', 'UTF8')) || sha256(convert_to(name || 'y', 'UTF8'));
create function tap.sign_up_attested(key_name text, ip text default '10.0.0.1') returns uuid language sql as $$
    select s.user_id from auth.sign_up_attested(tap.key('ip:' || ip), '{}', tap.key('refresh:' || key_name || ip), 100, 100,
                                                tap.key(key_name), 'TEAM123456.org.example.app', 'production',
                                                tap.point(key_name), '\x0102'::bytea) s
$$;

-- Who may call it: authenticator only.
select function_privs_are('auth', 'sign_up_attested',
                          array['bytea', 'jsonb', 'bytea', 'integer', 'integer', 'bytea', 'text', 'text', 'bytea', 'bytea'],
                          'authenticator', array['EXECUTE']);
select function_privs_are('auth', 'sign_up_attested',
                          array['bytea', 'jsonb', 'bytea', 'integer', 'integer', 'bytea', 'text', 'text', 'bytea', 'bytea'],
                          'authenticated', array[]::text[]);
select function_privs_are('auth', 'sign_up_attested',
                          array['bytea', 'jsonb', 'bytea', 'integer', 'integer', 'bytea', 'text', 'text', 'bytea', 'bytea'],
                          'anon', array[]::text[]);

-- Sign-up with a key: the identity and its key, once.
set local role authenticator;
select lives_ok($$select tap.sign_up_attested('key-1')$$, 'authenticator signs up with an attested key');
select throws_ok($$select tap.sign_up_attested('key-1', '10.0.0.2')$$, 'PA011', 'attestation key already made an identity',
                 'the same key again is PA011');
select throws_ok($$select * from auth.attested_keys$$, '42501', null, 'authenticator cannot read the keys');
select throws_ok($$update private.median_rule_state set counts = 'mature'$$, '42501', null,
                 'authenticator cannot touch the threshold state');
select throws_ok($$create or replace function private.threshold_counts() returns text language sql immutable return 'mature'$$,
                 '42501', null, 'authenticator cannot redefine the threshold mode');
select throws_ok($$select private.median_rule_reconcile()$$, '42501', null, 'authenticator cannot reconcile');
select throws_ok($$select private.threshold_counts()$$, '42501', null, 'authenticator cannot even call the setting');
select throws_ok($$alter table public.price_reports alter column reporter_attested set default true$$, '42501', null,
                 'authenticator cannot change the attested flag''s default');
reset role;
select is((select count(*)::int from auth.attested_keys where key_id_hash = tap.key('key-1')), 1, 'one key row');
select is((select k.environment || ' ' || k.app_id || ' ' || octet_length(k.public_key) from auth.attested_keys k
           where k.key_id_hash = tap.key('key-1')), 'production TEAM123456.org.example.app 65', 'environment, app id and key stored');
-- get_user answers for the session's own token only (auth.sql, private.token_names_session).
select set_config('request.jwt', tap.token_for(s.user_id, session => s.id), true) from auth.sessions s
where s.user_id = (select user_id from auth.attested_keys where key_id_hash = tap.key('key-1')) \g /dev/null
select ok((select u.attested from auth.sessions s, auth.get_user(s.user_id, s.id) u
           where s.user_id = (select user_id from auth.attested_keys where key_id_hash = tap.key('key-1'))),
          'get_user says attested');
-- The refused second sign-up left no identity behind.
select is((select count(*)::int from auth.users u where auth.attestation_of(u.id) is null
           and u.created_at > now() - interval '1 minute'), 0, 'a refused attested sign-up makes no identity');
-- Attestation does not bypass the per-address sign-up limit.
create function tap.limited(n integer) returns uuid language sql as $$
    select s.user_id from auth.sign_up_attested(tap.key('ip:10.9.9.9'), '{}', tap.key('r-lim' || n), 1, 1,
                                                tap.key('key-lim-' || n), 'TEAM123456.org.example.app', 'production',
                                                tap.point('lim'), '\x00') s
$$;
set local role authenticator;
select lives_ok($$select tap.limited(1)$$, 'an attested sign-up from a fresh address');
select throws_ok($$select tap.limited(2)$$, 'PT429', null, 'the per-address limit applies to attested sign-ups too');
reset role;

-- A client cannot claim to be attested: the column is not theirs, and the trigger decides it.
set local role authenticated;
select set_config('request.jwt', tap.token_for(tap.bob()), true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents, reporter_attested)
                   values ('att:x', 'hourly', 100, true)$$, '42501', null, 'a reporter cannot write reporter_attested');
reset role;

-- Reporters: 1-4 attested, 5-8 not; all a month old. att:a has attested 1-3; att:b attested 1-2 and
-- unattested 5; att:c unattested 5-7.
create table tap.r (n integer, reporter uuid);
insert into tap.r select g, md5('att-' || g)::uuid from generate_series(1, 8) g;
select tap.session_for(reporter) from tap.r \g /dev/null
insert into auth.attested_keys (key_id_hash, user_id, app_id, environment, public_key, receipt)
select tap.key('r' || n), reporter, 'TEAM123456.org.example.app', 'production', tap.point('r' || n), '\x00' from tap.r where n <= 4;
select tap.seed(reporter, 'att:a', 100 * n) from tap.r where n between 1 and 3 \g /dev/null
select tap.seed(reporter, 'att:b', 100 * n) from tap.r where n in (1, 2, 5) \g /dev/null
select tap.seed(reporter, 'att:c', 100 * n) from tap.r where n between 5 and 7 \g /dev/null

select is((select count(*)::int from public.price_reports where location_id like 'att:%' and reporter_attested), 5,
          'the trigger marks attested reporters'' reports');
select results_eq($$select location_id, reporters from public.price_medians(array['att:a', 'att:b', 'att:c']) order by 1$$,
                  $$values ('att:a', 3), ('att:b', 3), ('att:c', 3)$$, 'mode mature: every mature reporter counts');

-- The owner switches to 'attested' (what editing settings.sql and `pricesvc migrate` do).
create or replace function private.threshold_counts() returns text language sql immutable parallel safe return 'attested';
select private.median_rule_reconcile();
select is((select counts from private.median_rule_state), 'attested', 'the state records the mode');
select results_eq($$select location_id, reporters from public.price_medians(array['att:a', 'att:b', 'att:c']) order by 1$$,
                  $$values ('att:a', 3)$$, 'mode attested: only attested reporters count');
select is_empty($$select * from public.price_median_overview() where location_id in ('att:b', 'att:c')$$,
                'the overview agrees');
select is((select count(*)::int from public.price_reports where location_id like 'att:%'
           and not reporter_attested and reporter_matures_at <> 'infinity'), 0, 'unattested reports never mature');
-- Ageing identities (what operators and tests do as the superuser) re-dates their reports, and keeps an
-- unattested reporter's unmatured.
update auth.users set created_at = created_at - interval '1 day' where id in (select reporter from tap.r);
select is((select count(*)::int from public.price_reports where location_id like 'att:%'
           and not reporter_attested and reporter_matures_at <> 'infinity'), 0, 'unattested reports never mature, aged or not');
select results_eq($$select location_id, reporters from public.price_medians(array['att:a', 'att:b', 'att:c']) order by 1$$,
                  $$values ('att:a', 3)$$, 'and still only attested reporters count');

-- New reports under 'attested': stored, capped, not counted.
select tap.seed(reporter, 'att:d', 300) from tap.r where n between 5 and 8 \g /dev/null
select is((select count(*)::int from public.price_reports where location_id = 'att:d'), 4, 'unattested reports are stored');
select is_empty($$select * from public.price_medians(array['att:d'])$$, 'and never counted');
select tap.seed(reporter, 'att:e', 400 + n) from tap.r where n between 2 and 4 \g /dev/null
select results_eq($$select location_id, reporters from public.price_medians(array['att:d', 'att:e']) order by 1$$,
                  $$values ('att:e', 3)$$, 'three attested reporters do count');
select tap.seed(tap.r.reporter, 'att:cap', 100) from tap.r, generate_series(1, 8) where n = 8 \g /dev/null
set local role authenticated;
select set_config('request.jwt', tap.token_for(md5('att-8')::uuid), true) \g /dev/null
select throws_ok($$insert into public.price_reports (location_id, rate_kind, price_cents)
                   select 'att:cap', 'hourly', 100 from generate_series(1, 2)$$,
                 'PT429', null, 'an unattested reporter is capped as before (10 an hour)');
select lives_ok($$insert into public.price_reports (location_id, rate_kind, price_cents) values ('att:cap', 'hourly', 100)$$,
                'up to the cap');
reset role;

-- After a fold of every group, the store still answers the same.
select private.median_fold(location_id, rate_kind) from (select distinct location_id, rate_kind from public.price_reports
                                                        where location_id like 'att:%') g \g /dev/null
select results_eq($$select location_id, reporters from public.price_median_overview() where location_id like 'att:%' order by 1$$,
                  $$values ('att:a', 3), ('att:e', 3)$$, 'folded: the same medians');
-- No published median stands on an unattested report.
select is_empty($$select m.location_id from public.price_median_overview() m
                  where m.reporters > (select count(distinct r.reporter_id) from public.price_reports r
                                       where r.location_id = m.location_id and r.rate_kind = m.rate_kind
                                         and r.reporter_attested and r.reporter_matures_at <= now())$$,
                'no median counts more reporters than attested mature ones');

-- And back to 'mature': every unattested report matures as its identity does.
create or replace function private.threshold_counts() returns text language sql immutable parallel safe return 'mature';
select private.median_rule_reconcile();
select results_eq($$select location_id, reporters from public.price_medians(array['att:a', 'att:b', 'att:c', 'att:d', 'att:e']) order by 1$$,
                  $$values ('att:a', 3), ('att:b', 3), ('att:c', 3), ('att:d', 4), ('att:e', 3)$$,
                  'mode mature again: every mature reporter counts');
select is((select count(*)::int from public.price_reports where reporter_matures_at = 'infinity'), 0, 'nothing is left unmatured');

select * from finish();
rollback;
