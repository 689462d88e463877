-- Anonymous identities, repeatable: token verification (auth.jwt(), auth.uid(), auth.role()), the
-- signing keys, and the sign-in functions the service calls (sign-up, refresh, sign-out, the current
-- user, pruning). The tables are in 0002_auth_schema.sql; who may call what is in policies.sql.
--
-- Every SECURITY DEFINER function sets search_path = '' and schema-qualifies every name, including the
-- types in PL/pgSQL bodies (with an empty search_path the session's pg_temp schema is still searched
-- first for relation and type names). SQL functions use BEGIN ATOMIC bodies, which bind names when they
-- are created. Operators need no qualification: with search_path = '' only pg_catalog is searched for them.
-- Each function's EXECUTE is revoked from PUBLIC right after it is created, in the same transaction;
-- policies.sql grants it to the roles that need it once the function belongs to pricesvc_owner.
-- Arguments are plain names; bodies qualify them with the function's name where a column could clash.

------------------------------------------------------------------------------------------------------
-- Token verification: auth.jwt(), auth.uid(), auth.role()
------------------------------------------------------------------------------------------------------

-- replace() and octet_length(), not translate(), rpad() and length(): those walk the text character by
-- character (multibyte-aware) and cost a few microseconds on a token; these are byte-wise.
create or replace function private.base64url_encode(data bytea) returns text
    language sql immutable strict parallel safe
    return pg_catalog.rtrim(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
        pg_catalog.encode(data, 'base64'), E'\n', ''), '+', '-'), '/', '_'), '=');

create or replace function private.base64url_decode(data text) returns bytea
    language sql immutable strict parallel safe
    return pg_catalog.decode(
        pg_catalog.replace(pg_catalog.replace(data, '-', '+'), '_', '/')
            || pg_catalog.repeat('=', (4 - pg_catalog.octet_length(data) % 4) % 4),
        'base64');

-- A UUID in its canonical text form (hex digits in either case): exactly what the cast to uuid accepts
-- there, so a checked value casts without error. 36 characters with dashes at 9, 14, 19 and 24 (LIKE),
-- exactly four dashes, and nothing but hex digits and dashes (so all of them ASCII). No regular
-- expression: a regex builds its automaton anew on every match, and two of them were a quarter of a
-- token verification. Few function calls: each is set up and permission-checked once per transaction
-- in auth.jwt().
-- (Not STRICT: a strict SQL function whose body has an AND is never inlined, and each call is planned.)
create or replace function private.is_uuid_text(value text) returns boolean
    language sql immutable parallel safe
    return value like '________-____-____-____-____________'
       and pg_catalog.octet_length(pg_catalog.replace(value, '-', '')) = 32
       and pg_catalog.ltrim(pg_catalog.lower(value), '0123456789abcdef-') = '';

-- The alg of a JWT header given in base64url, null when it is not a JSON object. Called only for a
-- token that carries our HMAC (so the header decodes) and not the service's own fixed header.
create or replace function private.jwt_header_alg(header text) returns text
    language sql immutable parallel safe
    return case when pg_catalog.jsonb_typeof(pg_catalog.convert_from(private.base64url_decode(header), 'UTF8')::pg_catalog.jsonb) = 'object'
                then pg_catalog.convert_from(private.base64url_decode(header), 'UTF8')::pg_catalog.jsonb ->> 'alg' end;

revoke all on function private.is_uuid_text(text) from public;
revoke all on function private.jwt_header_alg(text) from public;
revoke all on function private.base64url_encode(bytea) from public;
revoke all on function private.base64url_decode(text) from public;

-- The verified payload of the compact HS256 JWT in `request.jwt`, or null when none is set. The claims
-- are never taken on trust: whoever holds the service's credentials can set any GUC, but cannot sign.
-- Time is the statement's clock, not the transaction's start, so a transaction held open does not keep
-- an expired token alive. A user's token (one with `sub`) also needs its session to be live: sign-out
-- and reuse detection take effect at once, not when the token expires.
--
-- Two queries, in this order: the signature against the signing keys, then, only for a token that
-- carries our HMAC, the session. So nothing an attacker wrote is ever decoded (a token with our
-- HMAC was written by the service, or a test holding the key, and is valid base64url JSON), and no
-- exception block (a subtransaction per call) is needed. Few PL/pgSQL statements on purpose: each
-- expression PL/pgSQL evaluates is set up again in every transaction, and that, not the HMAC, was
-- most of what a verification cost (docs/benchmarks.md).
create or replace function auth.jwt() returns jsonb
    language plpgsql stable security definer set search_path = ''
as $$
declare
    token constant pg_catalog.text := pg_catalog.current_setting('request.jwt', true);
    parts pg_catalog.text[];
    verdict pg_catalog.text;
    payload pg_catalog.jsonb;
begin
    if token is null or token = '' then
        return null;
    end if;
    parts := pg_catalog.string_to_array(token, '.');
    if pg_catalog.octet_length(token) > 8192 or pg_catalog.cardinality(parts) <> 3 or parts[1] = '' or parts[2] = '' then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'malformed token';
    end if;

    -- Current and previous key (during a secret rotation). The signatures are compared through SHA-256
    -- of each: `=` on text stops at the first differing byte, and hashing both sides first takes away
    -- what that timing could tell about the expected signature. EXISTS, not an aggregate over the keys:
    -- no aggregate to set up per transaction (which key verified is nothing an attacker could use).
    if not exists (select from auth.signing_keys k
                   where pg_catalog.sha256(pg_catalog.convert_to(private.base64url_encode(extensions.hmac(
                             pg_catalog.convert_to(parts[1] || '.' || parts[2], 'UTF8'), k.secret, 'sha256')), 'UTF8'))
                         = pg_catalog.sha256(pg_catalog.convert_to(parts[3], 'UTF8'))) then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'bad signature';
    end if;

    -- The claims, first failure wins. base64url of {"alg":"HS256","typ":"JWT"} (AnonAuth.HS256.encodedHeader)
    -- is the header the service always writes; any other is decoded. Checks only some tokens need sit in
    -- IFs of their own: PL/pgSQL sets an expression up (and checks EXECUTE on every function in it) once
    -- per transaction, when first reached, so the service's own tokens never pay for the others.
    -- Expressions, not a query: a query's plan was made anew for most calls (custom plans).
    if parts[1] <> 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9' then
        if private.jwt_header_alg(parts[1]) is distinct from 'HS256' then
            raise exception using errcode = 'PT401', message = 'invalid token', detail = 'alg must be HS256';
        end if;
    end if;
    payload := pg_catalog.convert_from(private.base64url_decode(parts[2]), 'UTF8')::pg_catalog.jsonb;
    verdict := case when pg_catalog.jsonb_typeof(payload) is distinct from 'object' then 'the payload must be a JSON object'
                    when payload ? 'exp' and pg_catalog.jsonb_typeof(payload -> 'exp') is distinct from 'number'
                        then 'exp must be a number'
                    when payload ? 'exp' and (payload ->> 'exp')::numeric
                         < pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())::numeric
                           - pg_catalog.date_part('epoch', private.jwt_leeway())::numeric then 'expired'
                    when payload ? 'nbf' then 'nbf'
                    when payload ? 'sub' then 'user'
                    else 'ok' end;
    if verdict = 'nbf' then
        verdict := case when pg_catalog.jsonb_typeof(payload -> 'nbf') is distinct from 'number'
                             or (payload ->> 'nbf')::numeric
                                > pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())::numeric
                                  + pg_catalog.date_part('epoch', private.jwt_leeway())::numeric
                            then 'token not valid yet'
                        when payload ? 'sub' then 'user'
                        else 'ok' end;
    end if;
    -- A sub or session_id that is not a JSON string fails too: ->> gives it as its JSON text, never a
    -- UUID's. A missing one is null, which `is not true` counts as a failure.
    if verdict = 'user' and (private.is_uuid_text(payload ->> 'sub')
                             and private.is_uuid_text(payload ->> 'session_id')) is not true then
        verdict := 'sub and session_id must be UUIDs';
    end if;

    -- A user's token: its session must be live.
    if verdict = 'user' then
        verdict := case when exists (select from auth.sessions s
                                     where s.id = (payload ->> 'session_id')::pg_catalog.uuid
                                       and s.user_id = (payload ->> 'sub')::pg_catalog.uuid
                                       and s.revoked_at is null)
                        then 'ok' else 'session' end;
    end if;
    if verdict <> 'ok' then
        if verdict = 'expired' then
            raise exception using errcode = 'PT401', message = 'token expired';
        elsif verdict = 'session' then
            raise exception using errcode = 'PT401', message = 'session not found',
                detail = 'the token''s session was signed out, revoked or pruned';
        end if;
        raise exception using errcode = 'PT401', message = 'invalid token', detail = verdict;
    end if;

    -- A hint for auth.unverified_uid() (the reporter_id default), never read by anything that decides.
    -- Written once per token: the service's submission identity statement leaves it already set.
    if payload ? 'sub' and pg_catalog.current_setting('pricesvc.hint_jwt', true) is distinct from token then
        parts := array[pg_catalog.set_config('pricesvc.hint_jwt', token, true),
                       pg_catalog.set_config('pricesvc.hint_uid', payload ->> 'sub', true)];
    end if;
    return payload;
end
$$;

-- The reporter: the verified `sub`. Null for anon keys and when no token is set.
create or replace function auth.uid() returns uuid
    language sql stable
    begin atomic
        select nullif(auth.jwt() ->> 'sub', '')::uuid;
    end;

-- The reporter a new report is filed under before the table's RLS policy checks it: price_reports'
-- reporter_id default, evaluated once per row. It is the sub recorded for the token request.jwt still
-- holds (pricesvc.hint_uid while pricesvc.hint_jwt is that token): the service's submission identity
-- statement records the sub it verified in-process, and auth.jwt() records each sub it verifies.
-- Otherwise it is auth.uid() itself.
--
-- - Important: This is a hint, not an identity. Both settings it reads can be written by whoever runs
--   the statement, even between two rows (from the INSERT's own source query). What makes it safe is
--   that a wrong value can only be refused: the policy compares reporter_id with `(select auth.uid())`,
--   which verifies the token once per statement, and the insert trigger verifies before it refuses or
--   answers anything about a reporter (reports.sql). Nothing that decides may call this.
create or replace function auth.unverified_uid() returns uuid
    language sql stable
    begin atomic
        select case when pg_catalog.current_setting('pricesvc.hint_jwt', true)
                         = pg_catalog.current_setting('request.jwt', true)
                    then nullif(pg_catalog.current_setting('pricesvc.hint_uid', true), '')::uuid
                    else auth.uid() end;
    end;

create or replace function auth.role() returns text
    language sql stable
    begin atomic
        select auth.jwt() ->> 'role';
    end;

------------------------------------------------------------------------------------------------------
-- Signing keys: three-step rotation (add, promote, retire) and the key ring the instances read
------------------------------------------------------------------------------------------------------

-- A key's public name: the first 8 bytes of HMAC-SHA256(key, 'pricesvc signing key id v1'), in hex.
-- It says which key is which (in logs, `pricesvc keys list`, /readyz) and tells nothing about the key.
-- AnonAuth.SigningKeyRing.keyID computes the same.
create or replace function private.signing_key_id(secret bytea) returns text
    language sql immutable strict parallel safe
    return pg_catalog.encode(pg_catalog.substr(extensions.hmac(
        pg_catalog.convert_to('pricesvc signing key id v1', 'UTF8'), secret, 'sha256'), 1, 8), 'hex');

-- `secret` wrapped for whoever holds `holder`: secret XOR a key stream of HMAC-SHA256(holder,
-- 'pricesvc signing key wrap v1:' || id of secret || ':' || block number) blocks. Only a holder of
-- `holder` can unwrap it (AnonAuth.SigningKeyRing.unwrap), and checks the result against its id.
create or replace function private.signing_key_wrap(secret bytea, holder bytea) returns bytea
    language plpgsql immutable strict parallel safe set search_path = ''
as $$
declare
    secret_id constant pg_catalog.text := private.signing_key_id(signing_key_wrap.secret);
    stream pg_catalog.bytea := ''::pg_catalog.bytea;
    wrapped pg_catalog.bytea := signing_key_wrap.secret;
    block pg_catalog.int4 := 0;
begin
    while pg_catalog.octet_length(stream) < pg_catalog.octet_length(signing_key_wrap.secret) loop
        stream := stream || extensions.hmac(
            pg_catalog.convert_to('pricesvc signing key wrap v1:' || secret_id || ':' || block::pg_catalog.text, 'UTF8'),
            signing_key_wrap.holder, 'sha256');
        block := block + 1;
    end loop;
    for i in 0 .. pg_catalog.octet_length(signing_key_wrap.secret) - 1 loop
        wrapped := pg_catalog.set_byte(wrapped, i,
                                       pg_catalog.get_byte(signing_key_wrap.secret, i) # pg_catalog.get_byte(stream, i));
    end loop;
    return wrapped;
end
$$;

revoke all on function private.signing_key_id(bytea) from public;
revoke all on function private.signing_key_wrap(bytea, bytea) from public;

-- What each instance reads, every few seconds (authenticator): every key's id and slot, and each key
-- wrapped for the key `holder_key_id` names (the instance's own, from its secret) when that key is in
-- the set and the key is shared with it. So an instance holding any key of the set verifies tokens
-- signed with every other and signs with the current one, without a restart; whoever holds only the
-- service's credentials learns ids, never a key. A key added with shared = false (after a leak) is
-- wrapped for its own holders only.
create or replace function auth.signing_key_ring(holder_key_id text)
    returns table(key_id text, slot text, wrapped bytea)
    language sql stable security definer set search_path = ''
    begin atomic
        select private.signing_key_id(k.secret), k.slot,
               case when h.slot is not null and (k.shared or k.slot = h.slot)
                    then private.signing_key_wrap(k.secret, h.secret) end
        from auth.signing_keys k
        left join auth.signing_keys h on private.signing_key_id(h.secret) = signing_key_ring.holder_key_id
        order by k.slot;
    end;

-- `pricesvc migrate`: installs the first key of an empty set as the current one. Otherwise changes
-- nothing and says where the key is ('current', 'next', 'previous'), or 'unknown' when it is not in the
-- set (rotation is `pricesvc keys`, never migrate).
create or replace function auth.install_first_signing_key(secret bytea) returns text
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    found_slot pg_catalog.text;
begin
    lock table auth.signing_keys in share row exclusive mode;
    if not exists (select from auth.signing_keys) then
        insert into auth.signing_keys (slot, secret) values ('current', install_first_signing_key.secret);
        return 'installed';
    end if;
    select k.slot into found_slot from auth.signing_keys k where k.secret = install_first_signing_key.secret;
    return coalesce(found_slot, 'unknown');
end
$$;

-- Step 1, `pricesvc keys add`: the next key. PostgreSQL verifies tokens signed with it at once, and every
-- instance once it has re-read the ring; nothing signs with it yet. Returns its id.
create or replace function auth.add_signing_key(secret bytea, shared boolean default true) returns text
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    present pg_catalog.text;
begin
    if add_signing_key.secret is null or pg_catalog.octet_length(add_signing_key.secret) < 32 then
        raise exception using errcode = '22023', message = 'a signing key needs at least 32 bytes';
    end if;
    lock table auth.signing_keys in share row exclusive mode;
    select k.slot into present from auth.signing_keys k where k.secret = add_signing_key.secret;
    if present is not null then
        raise exception using errcode = '55000', message = pg_catalog.format('this key is already the %s key', present);
    end if;
    select private.signing_key_id(k.secret) into present from auth.signing_keys k where k.slot = 'next';
    if present is not null then
        raise exception using errcode = '55000',
            message = pg_catalog.format('key %s is already added and not promoted', present),
            hint = 'promote it (pricesvc keys promote) or drop it (pricesvc keys retire --slot next) first';
    end if;
    insert into auth.signing_keys (slot, secret, shared)
    values ('next', add_signing_key.secret, coalesce(add_signing_key.shared, true));
    return private.signing_key_id(add_signing_key.secret);
end
$$;

-- Step 2, `pricesvc keys promote`: the next key becomes the current one (every instance signs with it
-- once it has re-read the ring), the current one the previous (still verified). Returns the new
-- current key's id.
create or replace function auth.promote_signing_key() returns text
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    present pg_catalog.text;
begin
    lock table auth.signing_keys in share row exclusive mode;
    select private.signing_key_id(k.secret) into present from auth.signing_keys k where k.slot = 'previous';
    if present is not null then
        raise exception using errcode = '55000',
            message = pg_catalog.format('the previous key %s is still accepted', present),
            hint = 'retire it first (pricesvc keys retire)';
    end if;
    if not exists (select from auth.signing_keys k where k.slot = 'next') then
        raise exception using errcode = '55000', message = 'there is no next key to promote',
            hint = 'add one first (pricesvc keys add)';
    end if;
    -- Two statements: the slot is the primary key, checked row by row.
    update auth.signing_keys k set slot = 'previous', installed_at = pg_catalog.now() where k.slot = 'current';
    update auth.signing_keys k set slot = 'current', installed_at = pg_catalog.now() where k.slot = 'next'
    returning private.signing_key_id(k.secret) into present;
    return present;
end
$$;

-- Step 3, `pricesvc keys retire`: drops the previous key (or a next key that will not be promoted).
-- Tokens signed with it are refused by PostgreSQL at once, and by every instance once it has re-read
-- the ring. Returns its id.
create or replace function auth.retire_signing_key(slot text default 'previous') returns text
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    gone pg_catalog.text;
begin
    if retire_signing_key.slot is distinct from 'previous' and retire_signing_key.slot is distinct from 'next' then
        raise exception using errcode = '22023', message = 'only the previous or the next key can be retired';
    end if;
    delete from auth.signing_keys k where k.slot = retire_signing_key.slot
    returning private.signing_key_id(k.secret) into gone;
    if gone is null then
        raise exception using errcode = '55000',
            message = pg_catalog.format('there is no %s key to retire', retire_signing_key.slot);
    end if;
    return gone;
end
$$;

-- `pricesvc keys list`: the set, without the keys.
create or replace function auth.signing_key_list()
    returns table(key_id text, slot text, shared boolean, installed_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select private.signing_key_id(k.secret), k.slot, k.shared, k.installed_at
        from auth.signing_keys k
        order by case k.slot when 'current' then 1 when 'next' then 2 else 3 end;
    end;

revoke all on function auth.signing_key_ring(text) from public;
revoke all on function auth.install_first_signing_key(bytea) from public;
revoke all on function auth.add_signing_key(bytea, boolean) from public;
revoke all on function auth.promote_signing_key() from public;
revoke all on function auth.retire_signing_key(text) from public;
revoke all on function auth.signing_key_list() from public;

------------------------------------------------------------------------------------------------------
-- Publishable API keys (sb_publishable_…): the apikey apps send, independent of the signing keys
------------------------------------------------------------------------------------------------------

-- What each instance reads with the key ring: the SHA-256 of every key not revoked. A hash of 32 random
-- bytes tells nothing of the key.
create or replace function auth.publishable_key_hashes()
    returns table(key_hash bytea)
    language sql stable security definer set search_path = ''
    begin atomic
        select p.key_hash from auth.publishable_keys p where p.revoked_at is null order by p.created_at;
    end;

-- `pricesvc keys publishable create`: the service makes the key and prints it once; only its hash and
-- its first characters are stored.
create or replace function auth.create_publishable_key(name text, key_hash bytea, display text)
    returns table(id uuid, created_at timestamptz)
    language sql volatile security definer set search_path = ''
    begin atomic
        insert into auth.publishable_keys (name, key_hash, display)
        values (create_publishable_key.name, create_publishable_key.key_hash, create_publishable_key.display)
        returning publishable_keys.id, publishable_keys.created_at;
    end;

create or replace function auth.publishable_key_list()
    returns table(id uuid, name text, display text, created_at timestamptz, revoked_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select p.id, p.name, p.display, p.created_at, p.revoked_at from auth.publishable_keys p order by p.created_at;
    end;

-- `pricesvc keys publishable revoke ID`: apps sending it get 401 once the instances re-read the keys.
-- The row stays (who had which key, and when it stopped working). False when there is no such live key.
create or replace function auth.revoke_publishable_key(id uuid) returns boolean
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    update auth.publishable_keys p set revoked_at = pg_catalog.now()
    where p.id = revoke_publishable_key.id and p.revoked_at is null;
    return found;
end
$$;

revoke all on function auth.publishable_key_hashes() from public;
revoke all on function auth.create_publishable_key(text, bytea, text) from public;
revoke all on function auth.publishable_key_list() from public;
revoke all on function auth.revoke_publishable_key(uuid) from public;

revoke all on function auth.jwt() from public;
revoke all on function auth.uid() from public;
revoke all on function auth.unverified_uid() from public;
revoke all on function auth.role() from public;

------------------------------------------------------------------------------------------------------
-- Anonymous sign-in: users, sessions, rotating refresh tokens (per-IP limits: limits.sql)
------------------------------------------------------------------------------------------------------

-- Creates an anonymous user with one session and its first refresh token (stored as its SHA-256).
-- PT429 when the IP's sign-up bucket (burst, refilled at per_hour) is empty.
create or replace function auth.sign_up_anonymous(ip_key bytea, user_metadata jsonb, refresh_token_hash bytea,
                                                  per_hour integer, burst integer)
    returns table(user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    new_user auth.users;
    new_session_id pg_catalog.uuid;
begin
    if per_hour is null or per_hour < 1 then
        raise exception using errcode = '22023', message = 'per_hour must be at least 1';
    end if;
    perform private.take_rate_limit_token('sign_up', sign_up_anonymous.ip_key, sign_up_anonymous.burst,
                                          per_hour::double precision / 3600,
                                          'too many anonymous sign-ups from this address');

    -- The statement's clock: maturity counts from here, and a transaction held open must not age an identity.
    insert into auth.users (user_metadata, created_at, updated_at)
    values (coalesce(sign_up_anonymous.user_metadata, '{}'::pg_catalog.jsonb),
            pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp())
    returning * into new_user;
    insert into auth.sessions (user_id) values (new_user.id) returning id into new_session_id;
    insert into auth.refresh_tokens (token_hash, session_id) values (sign_up_anonymous.refresh_token_hash, new_session_id);

    user_id := new_user.id;
    session_id := new_session_id;
    created_at := new_user.created_at;
    updated_at := new_user.updated_at;
    return next;
end
$$;

-- Which attested sign-up made the identity: 'app_attest' (auth.attested_keys), 'android_key_attestation'
-- (auth.android_attested_keys), or null for an unattested one. The one definition of "attested" that
-- sessions, /user and the report trigger (reports.sql) read.
create or replace function auth.attestation_of(user_id uuid)
    returns text
    language sql stable security definer set search_path = ''
    begin atomic
        select case
            when exists (select from auth.attested_keys k where k.user_id = attestation_of.user_id) then 'app_attest'
            when exists (select from auth.android_attested_keys k where k.user_id = attestation_of.user_id)
                then 'android_key_attestation'
        end;
    end;

-- Exchanges a refresh token (by hash) for its child. The service derives a token's child from the token
-- itself (an HMAC under its secret), so the database never needs a plaintext token and presenting the
-- same token twice cannot fork a session:
-- - status 'ok', generations 1: the token was live; it is rotated and child_hash becomes the live token.
-- - status 'ok', generations n > 1... : the token was rotated within reuse_seconds (a client that lost the
--   answer, or concurrent presentations): nothing new is made; the answer names the session's live token,
--   `generations` derivations below the presented one, and its hash for the service to check.
-- - status 'reused': presented again later, so it may be stolen; the session is revoked and that
--   revocation commits (hence no error).
-- PA001: unknown token or revoked session. PT429: the IP's refresh bucket is empty.
create or replace function auth.refresh_session(token_hash bytea, child_hash bytea, ip_key bytea,
                                                per_window integer, window_seconds integer, reuse_seconds integer)
    returns table(status text, user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz,
                  user_metadata jsonb, generations integer, live_token_hash bytea, attested boolean,
                  attestation text)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    presented auth.refresh_tokens;
    session auth.sessions;
    owner auth.users;
    live auth.refresh_tokens;
    child auth.refresh_tokens;
    depth integer := 0;
begin
    if window_seconds is null or window_seconds < 1 then
        raise exception using errcode = '22023', message = 'window_seconds must be at least 1';
    end if;
    perform private.take_rate_limit_token('refresh', refresh_session.ip_key, per_window,
                                          per_window::double precision / window_seconds,
                                          'too many token refreshes from this address');

    -- Locks serialise concurrent refreshes of one session: the second sees the first's rotation.
    select t.* into presented from auth.refresh_tokens t
    where t.token_hash = refresh_session.token_hash
    for update;
    if found then
        select s.* into session from auth.sessions s
        where s.id = presented.session_id
        for update;
    end if;
    if presented.id is null or session.revoked_at is not null or presented.revoked_at is not null then
        raise exception using errcode = 'PA001', message = 'refresh token not found';
    end if;

    if presented.rotated_at is not null
       and presented.rotated_at <
           pg_catalog.clock_timestamp() - pg_catalog.make_interval(secs => greatest(reuse_seconds, 0)) then
        update auth.sessions s set revoked_at = pg_catalog.clock_timestamp() where s.id = session.id;
        update auth.refresh_tokens t set revoked_at = pg_catalog.clock_timestamp()
        where t.session_id = session.id and t.revoked_at is null;
        status := 'reused';
        return next;
        return;
    end if;

    if presented.rotated_at is null then
        update auth.refresh_tokens t set rotated_at = pg_catalog.clock_timestamp() where t.id = presented.id;
        insert into auth.refresh_tokens (token_hash, session_id, parent_id)
        values (refresh_session.child_hash, session.id, presented.id);
        update auth.sessions s set refreshed_at = pg_catalog.clock_timestamp() where s.id = session.id;
        depth := 1;
        live_token_hash := refresh_session.child_hash;
    else
        -- Within the reuse window: follow the chain down to the token that is live now.
        live := presented;
        loop
            select t.* into child from auth.refresh_tokens t
            where t.parent_id = live.id
            order by t.id desc
            limit 1;
            exit when not found;
            live := child;
            depth := depth + 1;
            exit when live.rotated_at is null or depth >= 64;
        end loop;
        if depth = 0 or live.rotated_at is not null then
            raise exception using errcode = 'PA001', message = 'refresh token not found';
        end if;
        live_token_hash := live.token_hash;
    end if;

    select u.* into owner from auth.users u where u.id = session.user_id;
    status := 'ok';
    user_id := owner.id;
    session_id := session.id;
    created_at := owner.created_at;
    updated_at := owner.updated_at;
    user_metadata := owner.user_metadata;
    generations := depth;
    attestation := auth.attestation_of(owner.id);
    attested := attestation is not null;
    return next;
end
$$;

-- Whether the token in request.jwt, verified now (auth.jwt(): the signing keys as they are now, the session
-- live), is `user_id`'s token for `session_id`. auth.get_user and auth.sign_out act on a session only for
-- its own token, as the REST routes act only for a verified one: a caller holding the service's
-- credentials, or an instance still holding a retired key, cannot act on a session by naming its id. A
-- token that fails raises its own PT401 ('session not found' for a session signed out or revoked).
create or replace function private.token_names_session(user_id uuid, session_id uuid) returns boolean
    language plpgsql stable set search_path = ''
as $$
declare
    claims constant pg_catalog.jsonb := auth.jwt();
begin
    return coalesce((claims ->> 'sub')::pg_catalog.uuid = token_names_session.user_id
                    and (claims ->> 'session_id')::pg_catalog.uuid = token_names_session.session_id, false);
end
$$;
revoke all on function private.token_names_session(uuid, uuid) from public;

-- Revokes sessions and their refresh tokens. global: every session of this session's user;
-- local: this one; others: every other one. PA003 when the session does not exist or is revoked, or
-- request.jwt is not its token (private.token_names_session).
create or replace function auth.sign_out(session_id uuid, scope text)
    returns void
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    session auth.sessions;
    revoked pg_catalog.uuid[];
begin
    if scope is null or scope <> all ('{global,local,others}'::pg_catalog.text[]) then
        raise exception using errcode = '22023', message = pg_catalog.format('unknown sign-out scope %L', scope),
            hint = 'scope is one of global, local, others';
    end if;
    -- A revoked session is as gone as a deleted one: sign-out with its token is refused like
    -- auth.get_user (PA003, 403 session_not_found), not answered as if it had done something.
    select s.* into session from auth.sessions s where s.id = sign_out.session_id and s.revoked_at is null;
    if not found or not private.token_names_session(session.user_id, sign_out.session_id) then
        raise exception using errcode = 'PA003', message = 'session not found';
    end if;

    with gone as (
        update auth.sessions s set revoked_at = pg_catalog.now()
        where s.user_id = session.user_id
          and s.revoked_at is null
          and case scope when 'local' then s.id = session.id
                         when 'others' then s.id <> session.id
                         else true end
        returning s.id
    )
    select pg_catalog.array_agg(g.id) into revoked from gone g;

    update auth.refresh_tokens t set revoked_at = pg_catalog.now()
    where t.session_id = any (revoked) and t.revoked_at is null;
end
$$;

-- The user behind a verified access token, whose session must still be live: PA003 'session not found'
-- right after sign-out or reuse detection (Supabase Auth answers 403 session_not_found), and PA003
-- 'user not found' when the user was pruned.
create or replace function private.user_of_live_session(user_id uuid, session_id uuid)
    returns table(id uuid, created_at timestamptz, updated_at timestamptz, user_metadata jsonb)
    language plpgsql stable set search_path = ''
as $$
begin
    if not exists (select from auth.sessions s
                   where s.id = user_of_live_session.session_id and s.user_id = user_of_live_session.user_id
                     and s.revoked_at is null)
       or not private.token_names_session(user_of_live_session.user_id, user_of_live_session.session_id) then
        raise exception using errcode = 'PA003', message = 'session not found';
    end if;
    return query
    select u.id, u.created_at, u.updated_at, u.user_metadata from auth.users u
    where u.id = user_of_live_session.user_id;
    if not found then
        raise exception using errcode = 'PA003', message = 'user not found';
    end if;
end
$$;
revoke all on function private.user_of_live_session(uuid, uuid) from public;

-- attested: the identity was made by an attested sign-up; attestation: which (auth.attestation_of).
create or replace function auth.get_user(user_id uuid, session_id uuid)
    returns table(user_id uuid, created_at timestamptz, updated_at timestamptz, user_metadata jsonb, attested boolean,
                  attestation text)
    language sql stable security definer set search_path = ''
    begin atomic
        select u.id, u.created_at, u.updated_at, u.user_metadata, a.provider is not null, a.provider
        from private.user_of_live_session(get_user.user_id, get_user.session_id) u
        cross join lateral (select auth.attestation_of(u.id) as provider) a;
    end;

-- Housekeeping: sessions revoked or idle (not refreshed) for longer than older_than, refresh tokens
-- rotated or revoked that long ago or belonging to those sessions, and anonymous users left with no
-- session. Price reports are never touched: they keep their reporter id for the cap and the threshold,
-- and when their reporter matures (reporter_matures_at).
-- older_than is at least the reporter maturity plus the median fold margin, so no identity young enough to
-- matter to a median is ever removed (`--older-than 1s` once made pruned sybils count at once).
create or replace function auth.prune(older_than interval)
    returns table(sessions bigint, refresh_tokens bigint, users bigint)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    youngest_prunable constant pg_catalog.interval := private.reporter_maturity() + private.median_fold_margin();
    cutoff pg_catalog.timestamptz;
begin
    if older_than is null or older_than < youngest_prunable then
        raise exception using errcode = '22023',
            message = pg_catalog.format('older_than must be at least %s (reporter maturity %s plus the median fold margin %s), got %s',
                                        youngest_prunable, private.reporter_maturity(), private.median_fold_margin(),
                                        coalesce(older_than::pg_catalog.text, 'null')),
            hint = 'younger identities are kept: they must still count as young';
    end if;
    cutoff := pg_catalog.now() - older_than;

    with doomed as (
        select s.id from auth.sessions s
        where coalesce(s.revoked_at, s.refreshed_at) < cutoff
    ), gone as (
        delete from auth.refresh_tokens t
        where t.session_id = any (array(select d.id from doomed d))
           or coalesce(t.revoked_at, t.rotated_at) < cutoff
        returning 1
    )
    select pg_catalog.count(*) into refresh_tokens from gone;

    with gone as (
        delete from auth.sessions s
        where coalesce(s.revoked_at, s.refreshed_at) < cutoff
        returning 1
    )
    select pg_catalog.count(*) into sessions from gone;

    with gone as (
        delete from auth.users u
        where u.created_at < cutoff
          and not exists (select from auth.sessions s where s.user_id = u.id)
        returning 1
    )
    select pg_catalog.count(*) into users from gone;

    -- Idle buckets are full again; dropping them changes nothing (never sooner than a day).
    delete from auth.rate_limit_buckets b
    where b.updated_at < pg_catalog.now() - greatest(older_than, interval '1 day');

    return next;
end
$$;

-- Spent sign-up challenges (PRICESVC_SIGNUP_CHALLENGE; the table is in 0006_signup_challenges.sql).
-- Records a challenge as spent, in the sign-up's own transaction: a refused sign-up spends nothing, and
-- of two sign-ups racing with one solution the second waits for the first and then gets PA010.
-- Each call also removes a few rows expired for over ten minutes (more than the service's tolerated
-- clock skew), so the table stays about one challenge lifetime of sign-ups without a separate job;
-- SKIP LOCKED keeps concurrent sign-ups from queueing on each other's clean-up.
create or replace function auth.spend_signup_challenge(challenge_hash pg_catalog.bytea, expires_at pg_catalog.timestamptz)
    returns void
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if spend_signup_challenge.challenge_hash is null or spend_signup_challenge.expires_at is null then
        raise exception using errcode = '22004', message = 'challenge_hash and expires_at are required';
    end if;

    delete from auth.spent_signup_challenges s
    where s.challenge_hash = any (array(
        select x.challenge_hash from auth.spent_signup_challenges x
        where x.expires_at < pg_catalog.now() - pg_catalog.make_interval(mins => 10)
        order by x.expires_at
        limit 16
        for update skip locked));

    insert into auth.spent_signup_challenges (challenge_hash, expires_at)
    values (spend_signup_challenge.challenge_hash, spend_signup_challenge.expires_at)
    on conflict on constraint spent_signup_challenges_pkey do nothing;
    if not found then
        raise exception using errcode = 'PA010', message = 'sign-up challenge already used';
    end if;
end
$$;

------------------------------------------------------------------------------------------------------
-- Attested sign-up (App Attest; the table is in 0015_app_attest.sql)
------------------------------------------------------------------------------------------------------

-- An anonymous sign-up (the same per-address limit: attestation does not bypass it) whose identity is
-- attested by an App Attest key the service verified. The key is recorded in the sign-up's transaction,
-- after the challenge (auth.spend_signup_challenge, the same transaction) and the identity: of two
-- sign-ups racing with one key, the second waits for the first and then gets PA011, and a refused
-- sign-up records nothing. A key makes one identity, ever: its row outlives the identity.
create or replace function auth.sign_up_attested(ip_key bytea, user_metadata jsonb, refresh_token_hash bytea,
                                                 per_hour integer, burst integer, key_id_hash bytea, app_id text,
                                                 environment text, public_key bytea, receipt bytea)
    returns table(user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz)
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if sign_up_attested.key_id_hash is null or sign_up_attested.app_id is null or sign_up_attested.environment is null
       or sign_up_attested.public_key is null or sign_up_attested.receipt is null then
        raise exception using errcode = '22004', message = 'key_id_hash, app_id, environment, public_key and receipt are required';
    end if;
    select s.user_id, s.session_id, s.created_at, s.updated_at
    into sign_up_attested.user_id, sign_up_attested.session_id, sign_up_attested.created_at, sign_up_attested.updated_at
    from auth.sign_up_anonymous(sign_up_attested.ip_key, sign_up_attested.user_metadata,
                                sign_up_attested.refresh_token_hash, sign_up_attested.per_hour,
                                sign_up_attested.burst) s;

    insert into auth.attested_keys (key_id_hash, user_id, app_id, environment, public_key, receipt)
    values (sign_up_attested.key_id_hash, sign_up_attested.user_id, sign_up_attested.app_id,
            sign_up_attested.environment, sign_up_attested.public_key, sign_up_attested.receipt)
    on conflict on constraint attested_keys_pkey do nothing;
    if not found then
        raise exception using errcode = 'PA011', message = 'attestation key already made an identity';
    end if;
    return next;
end
$$;

-- The same for an Android Keystore key (the table is in 0022_android_key_attestation.sql): the
-- identity, then the key, in the sign-up's transaction; PA011 when the key already made an identity.
create or replace function auth.sign_up_android_attested(ip_key bytea, user_metadata jsonb, refresh_token_hash bytea,
                                                         per_hour integer, burst integer, key_id_hash bytea,
                                                         package_name text, security_level text,
                                                         verified_boot_state text, device_locked boolean)
    returns table(user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz)
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if sign_up_android_attested.key_id_hash is null or sign_up_android_attested.package_name is null
       or sign_up_android_attested.security_level is null or sign_up_android_attested.verified_boot_state is null
       or sign_up_android_attested.device_locked is null then
        raise exception using errcode = '22004',
            message = 'key_id_hash, package_name, security_level, verified_boot_state and device_locked are required';
    end if;
    select s.user_id, s.session_id, s.created_at, s.updated_at
    into sign_up_android_attested.user_id, sign_up_android_attested.session_id, sign_up_android_attested.created_at,
         sign_up_android_attested.updated_at
    from auth.sign_up_anonymous(sign_up_android_attested.ip_key, sign_up_android_attested.user_metadata,
                                sign_up_android_attested.refresh_token_hash, sign_up_android_attested.per_hour,
                                sign_up_android_attested.burst) s;

    insert into auth.android_attested_keys (key_id_hash, user_id, package_name, security_level, verified_boot_state,
                                            device_locked)
    values (sign_up_android_attested.key_id_hash, sign_up_android_attested.user_id, sign_up_android_attested.package_name,
            sign_up_android_attested.security_level, sign_up_android_attested.verified_boot_state,
            sign_up_android_attested.device_locked)
    on conflict on constraint android_attested_keys_pkey do nothing;
    if not found then
        raise exception using errcode = 'PA011', message = 'attestation key already made an identity';
    end if;
    return next;
end
$$;

revoke all on function auth.sign_up_anonymous(bytea, jsonb, bytea, integer, integer) from public;
revoke all on function auth.sign_up_attested(bytea, jsonb, bytea, integer, integer, bytea, text, text, bytea, bytea) from public;
revoke all on function auth.sign_up_android_attested(bytea, jsonb, bytea, integer, integer, bytea, text, text, text, boolean) from public;
revoke all on function auth.attestation_of(uuid) from public;
revoke all on function auth.refresh_session(bytea, bytea, bytea, integer, integer, integer) from public;
revoke all on function auth.sign_out(uuid, text) from public;
revoke all on function auth.get_user(uuid, uuid) from public;
revoke all on function auth.prune(interval) from public;
revoke all on function auth.spend_signup_challenge(bytea, timestamptz) from public;
