-- Attested sign-up on Android: only the service's login signs up with a verified Android key,
-- a key makes one identity, the identity reads as attested ('android_key_attestation') in sessions and
-- /user, and the report trigger marks its reports attested, so the 'attested' threshold mode counts
-- Android devices as it counts iPhones (auth.attestation_of, the one definition).
begin;
\ir _helpers.psql
select plan(16);

create function tap.key(name text) returns bytea language sql immutable return sha256(convert_to(name, 'UTF8'));
create function tap.sign_up_android(key_name text, ip text default '10.1.0.1') returns uuid language sql as $$
    select s.user_id from auth.sign_up_android_attested(tap.key('ip:' || ip), '{}', tap.key('refresh:' || key_name || ip),
                                                        100, 100, tap.key(key_name), 'org.example.pricesvc',
                                                        'TRUSTED_ENVIRONMENT', 'VERIFIED', true) s
$$;

-- Who may call it: authenticator only; nobody but the owner reads the keys or calls attestation_of.
select function_privs_are('auth', 'sign_up_android_attested',
                          array['bytea', 'jsonb', 'bytea', 'integer', 'integer', 'bytea', 'text', 'text', 'text', 'boolean'],
                          'authenticator', array['EXECUTE']);
select function_privs_are('auth', 'sign_up_android_attested',
                          array['bytea', 'jsonb', 'bytea', 'integer', 'integer', 'bytea', 'text', 'text', 'text', 'boolean'],
                          'authenticated', array[]::text[]);
select function_privs_are('auth', 'attestation_of', array['uuid'], 'authenticator', array[]::text[]);
select function_privs_are('auth', 'attestation_of', array['uuid'], 'authenticated', array[]::text[]);

set local role authenticator;
select lives_ok($$select tap.sign_up_android('android-1')$$, 'authenticator signs up with an Android key');
select throws_ok($$select tap.sign_up_android('android-1', '10.1.0.2')$$, 'PA011', 'attestation key already made an identity',
                 'the same key again is PA011');
select throws_ok($$select * from auth.android_attested_keys$$, '42501', null, 'authenticator cannot read the keys');
select throws_ok($$select auth.attestation_of(gen_random_uuid())$$, '42501', null, 'authenticator cannot call attestation_of');
select throws_ok($$select * from auth.sign_up_android_attested(tap.key('ip:x'), '{}', tap.key('r:x'), 100, 100,
                   tap.key('android-2'), 'org.example.pricesvc', 'SOFTWARE', 'VERIFIED', true)$$,
                 '23514', null, 'a software security level cannot be recorded');
reset role;

select is((select package_name || ' ' || security_level || ' ' || verified_boot_state || ' ' || device_locked
           from auth.android_attested_keys where key_id_hash = tap.key('android-1')),
          'org.example.pricesvc TRUSTED_ENVIRONMENT VERIFIED true', 'package, level and boot state stored');
select is((select count(*)::int from auth.users u where auth.attestation_of(u.id) is null
           and u.created_at > now() - interval '1 minute'), 0, 'the refused sign-ups made no identity');

-- The session and /user say which attestation made the identity.
create temporary table android_user as
    select user_id from auth.android_attested_keys where key_id_hash = tap.key('android-1');
select set_config('request.jwt', tap.token_for(s.user_id, session => s.id), true)
from auth.sessions s where s.user_id = (select user_id from android_user) \g /dev/null
select is((select u.attested::text || ' ' || u.attestation from auth.sessions s, auth.get_user(s.user_id, s.id) u
           where s.user_id = (select user_id from android_user)), 'true android_key_attestation',
          'get_user says attested by android_key_attestation');
select is(auth.attestation_of((select user_id from android_user)), 'android_key_attestation', 'attestation_of names it');
select is(auth.attestation_of(tap.bob()), null, 'an unattested identity has none');

-- Its reports are marked attested, and count under 'attested' beside App Attest identities.
select tap.seed((select user_id from android_user), 'android:a', 500) \g /dev/null
select ok((select bool_and(reporter_attested) from public.price_reports where location_id = 'android:a'),
          'the trigger marks an Android identity''s reports attested');
select tap.seed(tap.bob(), 'android:a', 500) \g /dev/null
select ok((select not reporter_attested from public.price_reports where location_id = 'android:a' and reporter_id = tap.bob()),
          'and not an unattested one''s');

select * from finish();
rollback;
