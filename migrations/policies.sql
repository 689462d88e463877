-- Who may do what, and the functions that enforce it. Re-applied whenever it changes, so every
-- statement here is idempotent: CREATE OR REPLACE, DROP ... IF EXISTS, REVOKE-then-GRANT.
--
-- Every SECURITY DEFINER function sets search_path = '' and schema-qualifies every name, including the
-- types in PL/pgSQL bodies (with an empty search_path the session's pg_temp schema is still searched
-- first for relation and type names). SQL functions use BEGIN ATOMIC bodies, which bind names when they
-- are created. Operators need no qualification: with search_path = '' only pg_catalog is searched for them.
-- EXECUTE is revoked from PUBLIC on each function, then granted to the roles that need it.

-- Applied by a superuser (`pricesvc migrate`): it creates roles, revokes on pg_catalog functions and
-- hands every object to pricesvc_owner. Nothing else ever needs a superuser.
do $$
begin
    if not (select r.rolsuper from pg_catalog.pg_roles r where r.rolname = current_user) then
        raise exception 'policies.sql must be applied by a superuser, not %', current_user;
    end if;
end
$$;

------------------------------------------------------------------------------------------------------
-- Roles (cluster-wide; altered only when they differ, so concurrent migrations of other databases on
-- the same cluster do not write the same catalog rows)
------------------------------------------------------------------------------------------------------

do $$
begin
    -- Owns every table and function, so SECURITY DEFINER code runs with no more than the schema's own
    -- rights: BYPASSRLS (the trigger and medians read price_reports, whose RLS is forced), never superuser.
    if not exists (select from pg_catalog.pg_roles where rolname = 'pricesvc_owner') then
        begin
            create role pricesvc_owner nologin noinherit bypassrls;
        exception when duplicate_object or unique_violation then
            null;
        end;
    end if;
    if exists (select from pg_catalog.pg_roles where rolname = 'pricesvc_owner'
               and (rolsuper or rolcanlogin or not rolbypassrls or rolcreaterole or rolcreatedb or rolinherit)) then
        alter role pricesvc_owner with nosuperuser nologin bypassrls nocreaterole nocreatedb noinherit;
    end if;
    -- The service's only login. NOINHERIT: it holds no privileges of anon/authenticated until SET ROLE.
    if exists (select from pg_catalog.pg_roles where rolname = 'authenticator' and (not rolcanlogin or rolinherit)) then
        alter role authenticator with login noinherit;
    end if;
    if exists (select from pg_catalog.pg_roles
               where rolname in ('anon', 'authenticated', 'price_analyst') and rolcanlogin) then
        alter role anon with nologin;
        alter role authenticated with nologin;
        alter role price_analyst with nologin;
    end if;
    -- The service switches to these per request, exactly as PostgREST does.
    if not pg_catalog.pg_has_role('authenticator', 'anon', 'member') then
        grant anon to authenticator;
    end if;
    if not pg_catalog.pg_has_role('authenticator', 'authenticated', 'member') then
        grant authenticated to authenticator;
    end if;
end
$$;

------------------------------------------------------------------------------------------------------
-- Database and schemas
------------------------------------------------------------------------------------------------------

-- No client role may create temporary objects: pg_temp is searched before everything else for relation
-- and type names, so a temp object is the one way to shadow names inside our functions.
do $$
begin
    execute pg_catalog.format('revoke temporary on database %I from public', pg_catalog.current_database());
end
$$;

-- Nobody but the owner creates objects in public (PostgreSQL 15's default, stated here on purpose).
revoke create on schema public from public;

-- auth: clients may call auth.uid()/auth.jwt()/auth.role() (policies and the reporter_id default need them);
-- authenticator calls the sign-in functions. Tables stay unreachable (no table grants below).
revoke all on schema auth from public;
grant usage on schema auth to anon, authenticated, authenticator;

-- private and extensions: owner only. The SECURITY DEFINER functions use them as the owner.
revoke all on schema private from public;
revoke all on schema extensions from public;
grant usage on schema extensions to pricesvc_owner;

-- Advisory locks belong to the owner: the cap trigger serialises a reporter's inserts on one, and any
-- role that could take the same key could stall that reporter. Superusers (migrate) are not affected.
do $$
declare
    f pg_catalog.regprocedure;
begin
    for f in select p.oid::pg_catalog.regprocedure from pg_catalog.pg_proc p
             where p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace and p.proname ~ 'advisory' loop
        execute pg_catalog.format('revoke execute on function %s from public', f);
    end loop;
end
$$;
grant execute on function pg_catalog.pg_advisory_xact_lock(integer, integer) to pricesvc_owner;

-- pricesvc_meta: authenticator reads the applied migrations for /readyz through one function.
revoke all on schema pricesvc_meta from public;
grant usage on schema pricesvc_meta to authenticator;

------------------------------------------------------------------------------------------------------
-- Token verification: auth.jwt(), auth.uid(), auth.role(), auth.install_signing_keys()
------------------------------------------------------------------------------------------------------

create or replace function private.base64url_encode(data bytea) returns text
    language sql immutable strict parallel safe
    return pg_catalog.translate(pg_catalog.encode(data, 'base64'), E'+/=\n', '-_');

create or replace function private.base64url_decode(data text) returns bytea
    language sql immutable strict parallel safe
    return pg_catalog.decode(
        pg_catalog.rpad(pg_catalog.translate(data, '-_', '+/'), ((pg_catalog.length(data) + 3) / 4) * 4, '='),
        'base64');

revoke all on function private.base64url_encode(bytea) from public;
revoke all on function private.base64url_decode(text) from public;

-- The verified payload of the compact HS256 JWT in `request.jwt`, or null when none is set. The claims
-- are never taken on trust: whoever holds the service's credentials can set any GUC, but cannot sign.
-- Time is the statement's clock, not the transaction's start, so a transaction held open does not keep
-- an expired token alive. A user's token (one with `sub`) also needs its session to be live: sign-out
-- and reuse detection take effect at once, not when the token expires.
create or replace function auth.jwt() returns jsonb
    language plpgsql stable security definer set search_path = ''
as $$
declare
    token pg_catalog.text := pg_catalog.current_setting('request.jwt', true);
    parts pg_catalog.text[];
    header pg_catalog.jsonb;
    payload pg_catalog.jsonb;
    signing_input pg_catalog.bytea;
    signature_ok boolean := false;
    key_secret pg_catalog.bytea;
    leeway_seconds numeric := pg_catalog.date_part('epoch', private.jwt_leeway())::numeric;
    now_seconds numeric := pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())::numeric;
    uuid_pattern constant pg_catalog.text := '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
begin
    if token is null or token = '' then
        return null;
    end if;
    if pg_catalog.length(token) > 8192
       or token !~ '^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$' then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'malformed token';
    end if;
    parts := pg_catalog.string_to_array(token, '.');

    begin
        header := pg_catalog.convert_from(private.base64url_decode(parts[1]), 'UTF8')::pg_catalog.jsonb;
        payload := pg_catalog.convert_from(private.base64url_decode(parts[2]), 'UTF8')::pg_catalog.jsonb;
    exception when others then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'undecodable header or payload';
    end;
    if pg_catalog.jsonb_typeof(header) is distinct from 'object' or pg_catalog.jsonb_typeof(payload) is distinct from 'object' then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'header and payload must be JSON objects';
    end if;
    -- Exactly HS256: 'none', 'RS256', 'hs256' and friends are all rejected.
    if (header ->> 'alg') is distinct from 'HS256' then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'alg must be HS256';
    end if;

    signing_input := pg_catalog.convert_to(parts[1] || '.' || parts[2], 'UTF8');
    -- Current and previous key (during a secret rotation). Every key is tried, so timing does not tell which.
    for key_secret in select k.secret from auth.signing_keys k order by k.slot loop
        if private.base64url_encode(extensions.hmac(signing_input, key_secret, 'sha256')) = parts[3] then
            signature_ok := true;
        end if;
    end loop;
    if not signature_ok then
        raise exception using errcode = 'PT401', message = 'invalid token', detail = 'bad signature';
    end if;

    if payload ? 'exp' then
        if pg_catalog.jsonb_typeof(payload -> 'exp') is distinct from 'number' then
            raise exception using errcode = 'PT401', message = 'invalid token', detail = 'exp must be a number';
        end if;
        if (payload ->> 'exp')::numeric < now_seconds - leeway_seconds then
            raise exception using errcode = 'PT401', message = 'token expired';
        end if;
    end if;
    if payload ? 'nbf' then
        if pg_catalog.jsonb_typeof(payload -> 'nbf') is distinct from 'number'
           or (payload ->> 'nbf')::numeric > now_seconds + leeway_seconds then
            raise exception using errcode = 'PT401', message = 'invalid token', detail = 'token not valid yet';
        end if;
    end if;
    if payload ? 'sub' then
        if pg_catalog.jsonb_typeof(payload -> 'sub') is distinct from 'string'
           or pg_catalog.lower(payload ->> 'sub') !~ uuid_pattern
           or pg_catalog.jsonb_typeof(payload -> 'session_id') is distinct from 'string'
           or pg_catalog.lower(payload ->> 'session_id') !~ uuid_pattern then
            raise exception using errcode = 'PT401', message = 'invalid token',
                detail = 'sub and session_id must be UUIDs';
        end if;
        if not exists (select from auth.sessions s
                       where s.id = (payload ->> 'session_id')::pg_catalog.uuid
                         and s.user_id = (payload ->> 'sub')::pg_catalog.uuid
                         and s.revoked_at is null) then
            raise exception using errcode = 'PT401', message = 'session not found',
                detail = 'the token''s session was signed out, revoked or pruned';
        end if;
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

create or replace function auth.role() returns text
    language sql stable
    begin atomic
        select auth.jwt() ->> 'role';
    end;

-- Replaces the verification keys: current always, previous during a secret rotation.
create or replace function auth.install_signing_keys(current_secret bytea, previous_secret bytea default null)
    returns void
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    delete from auth.signing_keys;
    insert into auth.signing_keys (slot, secret) values ('current', current_secret);
    if previous_secret is not null and previous_secret <> current_secret then
        insert into auth.signing_keys (slot, secret) values ('previous', previous_secret);
    end if;
end
$$;

-- Policies and the reporter_id default evaluate these as the client role.
revoke all on function auth.jwt() from public;
revoke all on function auth.uid() from public;
revoke all on function auth.role() from public;
-- authenticator too: the service's identity statement verifies the token as it switches role, and
-- function privileges are checked before that switch.
grant execute on function auth.jwt() to anon, authenticated, authenticator;
grant execute on function auth.uid() to anon, authenticated;
grant execute on function auth.role() to anon, authenticated;
-- Owner only: whoever installs keys can mint identities.
revoke all on function auth.install_signing_keys(bytea, bytea) from public;

------------------------------------------------------------------------------------------------------
-- price_reports: grants, RLS, the insert trigger
------------------------------------------------------------------------------------------------------

-- A report belongs to whoever signed the token it was sent with; clients never name the reporter.
alter table public.price_reports alter column reporter_id set default auth.uid();

-- Clients only ever insert, and only the columns they own; reads go through the median functions.
revoke all on table public.price_reports from public, anon, authenticated, price_analyst, authenticator;
grant insert (location_id, rate_kind, price_cents, currency, client_report_id)
    on table public.price_reports to authenticated;

alter table public.price_reports enable row level security;
alter table public.price_reports force row level security;

-- A signed-in reporter may insert reports under their own verified id, and nothing else: no SELECT,
-- UPDATE or DELETE policy exists, so those see or touch no rows even if a grant slipped in.
drop policy if exists reporters_insert_own_reports on public.price_reports;
create policy reporters_insert_own_reports on public.price_reports
    for insert to authenticated
    with check (reporter_id = (select auth.uid()));

-- One receipt per row the insert trigger saw, for `Prefer: return=representation` without SELECT:
-- what the server decided (id, time, the currency after defaults) and whether it was a replay.
create or replace function private.append_receipt(report_id bigint, created_at timestamptz, currency text,
                                                  replayed boolean)
    returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    receipts pg_catalog.text := pg_catalog.current_setting('pricesvc.receipts', true);
    receipt pg_catalog.text := pg_catalog.format('{"id":%s,"created_at":%s,"currency":%s,"replayed":%s}', report_id,
        pg_catalog.to_json(pg_catalog.to_char(pg_catalog.timezone('UTC', created_at), 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')),
        pg_catalog.to_json(currency), pg_catalog.to_json(replayed));
begin
    if receipts is null or receipts !~ '^\[.*\]$' then
        receipts := '[]';
    end if;
    if receipts = '[]' then
        receipts := '[' || receipt || ']';
    else
        receipts := pg_catalog.left(receipts, -1) || ',' || receipt || ']';
    end if;
    perform pg_catalog.set_config('pricesvc.receipts', receipts, true);
end
$$;
revoke all on function private.append_receipt(bigint, timestamptz, text, boolean) from public;

-- BEFORE INSERT on price_reports: server time, idempotent replays, and the per-reporter sliding cap.
--
-- The cap counts reports by the time their transaction committed (pg_xact_commit_timestamp; needs
-- track_commit_timestamp = on), not by created_at: a transaction that inserts and then stays open would
-- otherwise land its rows in the past of the window. Because the lock below serialises a reporter's
-- transactions, commit order is created_at order, so the cap-th most recent row by created_at is also
-- the cap-th most recent by commit time, and one indexed lookup of `cap` rows suffices.
create or replace function private.admit_price_report() returns trigger
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    caller pg_catalog.uuid := auth.uid();
    earlier record;
    cap_th record;
    counted_at pg_catalog.timestamptz;
    wait_seconds integer;
begin
    -- A row that is not the caller's own is left to the RLS check, which rejects it: no lock, no
    -- count, no receipt, and no hint whether the other reporter is at the cap.
    if new.reporter_id is null or (caller is not null and new.reporter_id <> caller) then
        new.created_at := pg_catalog.clock_timestamp();
        return new;
    end if;

    -- Serialises one reporter's inserts until commit, so the count below sees every earlier one.
    -- Only READ COMMITTED takes a fresh snapshot after the lock is granted.
    if pg_catalog.current_setting('transaction_isolation') <> 'read committed' then
        raise exception using errcode = '0A000',
            message = 'price reports must be inserted in a READ COMMITTED transaction',
            detail = 'the per-reporter cap is only exact when each insert sees every committed earlier one';
    end if;
    -- Key space: classid 1886546275 is "pric" in ASCII, pricesvc's namespace for per-reporter locks.
    -- Only the owner may take advisory locks, so no other role can hold a reporter's.
    perform pg_catalog.pg_advisory_xact_lock(1886546275, pg_catalog.hashtext(new.reporter_id::pg_catalog.text));

    -- Server time, taken after the lock: later than every earlier report's commit. A client cannot
    -- backdate a report to dodge the cap or the report window.
    new.created_at := pg_catalog.clock_timestamp();

    -- A retry of a report this reporter already sent inserts nothing and does not count. A retry must
    -- repeat the original report: the same id with other values is a conflict, never a silent 201.
    if new.client_report_id is not null then
        select r.id, r.created_at, r.currency, r.location_id, r.rate_kind, r.price_cents into earlier
        from public.price_reports r
        where r.reporter_id = new.reporter_id
          and r.client_report_id = new.client_report_id;
        if found then
            if (earlier.location_id, earlier.rate_kind, earlier.price_cents, earlier.currency)
               is distinct from (new.location_id, new.rate_kind, new.price_cents, new.currency) then
                raise exception using errcode = '23505',
                    message = pg_catalog.format('client_report_id %s was already used for a different report',
                                                new.client_report_id),
                    detail = 'A retry must repeat the original report; a new report needs a new client_report_id.';
            end if;
            perform private.append_receipt(earlier.id, earlier.created_at, earlier.currency, true);
            return null;
        end if;
    end if;

    -- Cap reached when the cap-th most recent report counts inside the window; a slot frees up when
    -- that one leaves it. Its time is its commit time; a row of this transaction (no commit time yet,
    -- created after the transaction began) counts as now; an old row whose commit time is no longer
    -- kept counts at created_at.
    select r.created_at, pg_catalog.pg_xact_commit_timestamp(r.xmin) as committed_at into cap_th
    from public.price_reports r
    where r.reporter_id = new.reporter_id
    order by r.created_at desc
    offset private.reporter_cap() - 1
    limit 1;
    if found then
        counted_at := case when cap_th.committed_at is not null then cap_th.committed_at
                           when cap_th.created_at >= pg_catalog.now() then new.created_at
                           else cap_th.created_at end;
        if counted_at > new.created_at - private.cap_window() then
            wait_seconds := greatest(1, pg_catalog.ceil(pg_catalog.date_part('epoch',
                counted_at + private.cap_window() - new.created_at)))::integer;
            raise exception using errcode = 'PT429',
                message = pg_catalog.format('reporter cap reached: at most %s price reports in any %s minutes',
                                            private.reporter_cap(),
                                            pg_catalog.date_part('epoch', private.cap_window())::integer / 60),
                detail = pg_catalog.format('The oldest report in the window leaves it in %s seconds.', wait_seconds),
                hint = pg_catalog.format('Retry after %s seconds', wait_seconds);
        end if;
    end if;

    perform private.append_receipt(new.id, new.created_at, new.currency, false);
    return new;
end
$$;
-- Fired by the trigger only; nobody calls it directly.
revoke all on function private.admit_price_report() from public;

create or replace trigger price_reports_admit
    before insert on public.price_reports
    for each row execute function private.admit_price_report();

------------------------------------------------------------------------------------------------------
-- Medians: the only way to read reports
------------------------------------------------------------------------------------------------------

-- Medians per (location, rate kind, currency) over the report window, where each reporter counts once
-- (their latest report) and at least median_min_reporters() distinct reporters are needed.
-- p_location_ids null = every location, p_rate_kind null = every rate kind (the analysts' overview).
--
-- What leaves here must not give one person away:
-- - Only mature reporters count (identity older than reporter_maturity()): a median, its `reporters`
--   and `reports` ignore reports from identities made on the spot, so sybils cannot complete a
--   threshold around one victim's report. A reporter with no auth.users row was pruned, hence old.
-- - Time is coarse: last_reported_at is truncated to the hour, and `since` to the start of its UTC
--   day, so bisecting on time cannot single out one report.
create or replace function private.report_medians(p_location_ids text[], p_rate_kind text, p_since timestamptz)
    returns table(location_id text, rate_kind text, currency text, median_cents integer,
                  reporters integer, reports integer, last_reported_at timestamptz)
    language plpgsql stable set search_path = ''
as $$
#variable_conflict use_column
declare
    -- No argument reaches further back than the report window.
    cutoff pg_catalog.timestamptz := greatest(
        pg_catalog.timezone('UTC', pg_catalog.date_trunc('day', pg_catalog.timezone('UTC', p_since))),
        pg_catalog.clock_timestamp() - private.report_window());
    matured_before pg_catalog.timestamptz := pg_catalog.clock_timestamp() - private.reporter_maturity();
    kinds pg_catalog.text[];
begin
    if p_rate_kind is not null and p_rate_kind <> all ('{hourly,daily,flat,monthly}'::pg_catalog.text[]) then
        raise exception using errcode = '22023', message = pg_catalog.format('unknown rate_kind %L', p_rate_kind),
            hint = 'rate_kind is one of hourly, daily, flat, monthly';
    end if;
    if pg_catalog.cardinality(p_location_ids) > private.max_median_locations() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location_ids: %s, at most %s per call',
                                        pg_catalog.cardinality(p_location_ids), private.max_median_locations());
    end if;

    kinds := case when p_rate_kind is null then '{hourly,daily,flat,monthly}'::pg_catalog.text[]
                  else array[p_rate_kind] end;
    if p_location_ids is null then
        p_location_ids := array(select distinct r.location_id from public.price_reports r
                                where r.created_at > cutoff);
    end if;

    return query
    -- NOT MATERIALIZED (it has two readers): folded into each, the window is read in the median index's order
    -- (DISTINCT ON without a sort); materialized, it was a full scan plus an on-disk sort.
    with in_window as not materialized (
        select r.location_id, r.rate_kind, r.reporter_id, r.currency, r.price_cents, r.created_at, r.id
        from public.price_reports r
        where r.location_id = any (p_location_ids)
          and r.rate_kind = any (kinds)
          and r.created_at > cutoff
          and not exists (select from auth.users u where u.id = r.reporter_id and u.created_at > matured_before)
    ),
    latest as (
        select distinct on (w.location_id, w.rate_kind, w.reporter_id) w.location_id, w.rate_kind, w.currency, w.price_cents
        from in_window w
        order by w.location_id, w.rate_kind, w.reporter_id, w.created_at desc, w.id desc
    ),
    medians as (
        select l.location_id, l.rate_kind, l.currency,
               pg_catalog.round(pg_catalog.percentile_cont(0.5) within group (order by l.price_cents)::numeric)::integer
                   as median_cents,
               pg_catalog.count(*)::integer as reporters
        from latest l
        group by l.location_id, l.rate_kind, l.currency
        having pg_catalog.count(*) >= private.median_min_reporters()
    ),
    totals as (
        select w.location_id, w.rate_kind, w.currency, pg_catalog.count(*)::integer as reports,
               pg_catalog.date_trunc('hour', pg_catalog.max(w.created_at), 'UTC') as last_reported_at
        from in_window w
        group by w.location_id, w.rate_kind, w.currency
    )
    select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, t.reports, t.last_reported_at
    from medians m
    join totals t on t.location_id = m.location_id
                 and t.rate_kind = m.rate_kind
                 and t.currency = m.currency
    order by m.location_id, m.rate_kind, m.currency;
end
$$;
revoke all on function private.report_medians(text[], text, timestamptz) from public;

-- Up to max_median_locations() candidates in one call. A null rate_kind is not a rate kind (22023).
create or replace function public.price_medians(location_ids text[], rate_kind text default 'hourly')
    returns table(location_id text, rate_kind text, currency text, median_cents integer,
                  reporters integer, reports integer, last_reported_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, m.reports, m.last_reported_at
        from private.report_medians(coalesce(price_medians.location_ids, '{}'::pg_catalog.text[]),
                                    coalesce(price_medians.rate_kind, ''), null) m;
    end;

create or replace function public.price_median(location_id text, rate_kind text default 'hourly')
    returns table(location_id text, rate_kind text, currency text, median_cents integer,
                  reporters integer, reports integer, last_reported_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, m.reports, m.last_reported_at
        from private.report_medians(array[price_median.location_id], coalesce(price_median.rate_kind, ''), null) m;
    end;

-- Every location and rate kind that meets the threshold; `since` can narrow the window, never widen it,
-- and is taken to the start of its UTC day.
create or replace function public.price_median_overview(since timestamptz default now() - interval '180 days')
    returns table(location_id text, rate_kind text, currency text, median_cents integer,
                  reporters integer, reports integer, last_reported_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, m.reports, m.last_reported_at
        from private.report_medians(null, null, price_median_overview.since) m;
    end;

-- Reporters (through the service) and analysts read medians; nobody reads raw reports.
revoke all on function public.price_medians(text[], text) from public;
revoke all on function public.price_median(text, text) from public;
revoke all on function public.price_median_overview(timestamptz) from public;
grant execute on function public.price_medians(text[], text) to authenticated, price_analyst;
grant execute on function public.price_median(text, text) to authenticated, price_analyst;
-- The overview lists every location: analysts only.
grant execute on function public.price_median_overview(timestamptz) to price_analyst;

------------------------------------------------------------------------------------------------------
-- Anonymous sign-in: users, sessions, rotating refresh tokens, per-IP limits
------------------------------------------------------------------------------------------------------

-- Takes one token from an IP's bucket (capacity `capacity`, refilled at `per_second`). Returns 0 when a
-- token was taken, else the whole seconds until one is available. Callers raise PT429 on a refusal,
-- which also rolls the bucket update back.
create or replace function private.take_rate_limit_token(p_bucket text, p_ip_key bytea, p_capacity integer,
                                                         p_per_second double precision)
    returns integer
    language plpgsql volatile set search_path = ''
as $$
declare
    left_over double precision;
begin
    if p_ip_key is null or p_capacity is null or p_capacity < 1
       or p_per_second is null or p_per_second <= 0 then
        raise exception using errcode = '22023', message = 'rate limit needs an ip_key and a positive capacity and rate';
    end if;
    insert into auth.rate_limit_buckets as b (bucket, ip_key, tokens, updated_at)
    values (p_bucket, p_ip_key, p_capacity - 1, pg_catalog.clock_timestamp())
    on conflict (bucket, ip_key) do update
    set tokens = least(p_capacity::double precision,
                       b.tokens + greatest(0, pg_catalog.date_part('epoch',
                           pg_catalog.clock_timestamp() - b.updated_at)) * p_per_second)
                 - 1,
        updated_at = greatest(b.updated_at, pg_catalog.clock_timestamp())
    returning b.tokens into left_over;
    if left_over >= 0 then
        return 0;
    end if;
    return greatest(1, pg_catalog.ceil(-left_over / p_per_second))::integer;
end
$$;
revoke all on function private.take_rate_limit_token(text, bytea, integer, double precision) from public;

-- Creates an anonymous user with one session and its first refresh token (stored as its SHA-256).
-- PT429 when the IP's sign-up bucket (burst, refilled at per_hour) is empty.
create or replace function auth.sign_up_anonymous(ip_key bytea, user_metadata jsonb, refresh_token_hash bytea,
                                                  per_hour integer, burst integer)
    returns table(user_id uuid, session_id uuid, created_at timestamptz, updated_at timestamptz)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    wait_seconds integer;
    new_user auth.users;
    new_session_id pg_catalog.uuid;
begin
    if per_hour is null or per_hour < 1 then
        raise exception using errcode = '22023', message = 'per_hour must be at least 1';
    end if;
    wait_seconds := private.take_rate_limit_token('sign_up', sign_up_anonymous.ip_key, sign_up_anonymous.burst,
                                                  per_hour::double precision / 3600);
    if wait_seconds > 0 then
        raise exception using errcode = 'PT429', message = 'too many anonymous sign-ups from this address',
            hint = pg_catalog.format('Retry after %s seconds', wait_seconds);
    end if;

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
                  user_metadata jsonb, generations integer, live_token_hash bytea)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    wait_seconds integer;
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
    wait_seconds := private.take_rate_limit_token('refresh', refresh_session.ip_key, per_window,
                                                  per_window::double precision / window_seconds);
    if wait_seconds > 0 then
        raise exception using errcode = 'PT429', message = 'too many token refreshes from this address',
            hint = pg_catalog.format('Retry after %s seconds', wait_seconds);
    end if;

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
    return next;
end
$$;

-- Revokes sessions and their refresh tokens. global: every session of this session's user;
-- local: this one; others: every other one. PA003 when the session does not exist.
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
    select s.* into session from auth.sessions s where s.id = sign_out.session_id;
    if not found then
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
create or replace function private.user_of_live_session(p_user_id uuid, p_session_id uuid)
    returns table(id uuid, created_at timestamptz, updated_at timestamptz, user_metadata jsonb)
    language plpgsql stable set search_path = ''
as $$
begin
    if not exists (select from auth.sessions s
                   where s.id = p_session_id and s.user_id = p_user_id and s.revoked_at is null) then
        raise exception using errcode = 'PA003', message = 'session not found';
    end if;
    return query
    select u.id, u.created_at, u.updated_at, u.user_metadata from auth.users u where u.id = p_user_id;
    if not found then
        raise exception using errcode = 'PA003', message = 'user not found';
    end if;
end
$$;
revoke all on function private.user_of_live_session(uuid, uuid) from public;

create or replace function auth.get_user(user_id uuid, session_id uuid)
    returns table(user_id uuid, created_at timestamptz, updated_at timestamptz, user_metadata jsonb)
    language sql stable security definer set search_path = ''
    begin atomic
        select u.id, u.created_at, u.updated_at, u.user_metadata
        from private.user_of_live_session(get_user.user_id, get_user.session_id) u;
    end;

-- Housekeeping: sessions revoked or idle (not refreshed) for longer than older_than, refresh tokens
-- rotated or revoked that long ago or belonging to those sessions, and anonymous users left with no
-- session. Price reports are never touched: they keep their reporter id for the cap and the threshold.
create or replace function auth.prune(older_than interval)
    returns table(sessions bigint, refresh_tokens bigint, users bigint)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    cutoff pg_catalog.timestamptz;
begin
    if older_than is null or older_than < interval '0' then
        raise exception using errcode = '22023', message = 'older_than must be a non-negative interval';
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

-- The sign-in endpoints run as authenticator itself (before any role switch); nobody else calls them.
revoke all on function auth.sign_up_anonymous(bytea, jsonb, bytea, integer, integer) from public;
revoke all on function auth.refresh_session(bytea, bytea, bytea, integer, integer, integer) from public;
revoke all on function auth.sign_out(uuid, text) from public;
revoke all on function auth.get_user(uuid, uuid) from public;
grant execute on function auth.sign_up_anonymous(bytea, jsonb, bytea, integer, integer) to authenticator;
grant execute on function auth.refresh_session(bytea, bytea, bytea, integer, integer, integer) to authenticator;
grant execute on function auth.sign_out(uuid, text) to authenticator;
grant execute on function auth.get_user(uuid, uuid) to authenticator;
-- Owner only: `pricesvc prune` runs with the owner's credentials.
revoke all on function auth.prune(interval) from public;

-- No client role and not authenticator may read or write any auth table directly.
revoke all on all tables in schema auth from public, anon, authenticated, price_analyst, authenticator;
revoke all on all sequences in schema auth from public, anon, authenticated, price_analyst, authenticator;

------------------------------------------------------------------------------------------------------
-- Migration bookkeeping (the runner creates the same function if it is missing)
------------------------------------------------------------------------------------------------------

create or replace function pricesvc_meta.applied_migrations() returns table(name text, checksum text)
    language sql stable security definer set search_path = ''
    as 'select m.name, m.checksum from pricesvc_meta.schema_migrations m order by m.applied_at, m.name';
revoke all on function pricesvc_meta.applied_migrations() from public;
-- /readyz compares the applied migrations with the files the service ships.
grant execute on function pricesvc_meta.applied_migrations() to authenticator;
revoke all on table pricesvc_meta.schema_migrations from public, anon, authenticated, price_analyst, authenticator;

------------------------------------------------------------------------------------------------------
-- Ownership: everything pricesvc made belongs to pricesvc_owner (NOLOGIN, BYPASSRLS, not superuser), so
-- SECURITY DEFINER code runs with the schema's own rights and nothing more. Runs last, after every
-- CREATE above; a superuser replacing an object later keeps this owner.
------------------------------------------------------------------------------------------------------

do $$
declare
    object_name pg_catalog.text;
    -- public is shared with whatever else lives in the database: only pricesvc's own objects there.
    public_tables pg_catalog.oid[] := array['public.price_reports'::pg_catalog.regclass::pg_catalog.oid];
    public_functions pg_catalog.name[] := array['price_median', 'price_medians', 'price_median_overview'];
begin
    for object_name in select n.nspname from pg_catalog.pg_namespace n
                       where n.nspname in ('auth', 'private', 'pricesvc_meta')
                         and n.nspowner <> 'pricesvc_owner'::pg_catalog.regrole loop
        execute pg_catalog.format('alter schema %I owner to pricesvc_owner', object_name);
    end loop;
    -- Tables (their identity sequences and row types follow), skipping anything an extension owns.
    for object_name in select c.oid::pg_catalog.regclass::pg_catalog.text
                       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
                       where (n.nspname in ('auth', 'private', 'pricesvc_meta')
                              or c.oid = any (public_tables))
                         and c.relkind in ('r', 'p', 'v', 'm')
                         and c.relowner <> 'pricesvc_owner'::pg_catalog.regrole
                         and not exists (select from pg_catalog.pg_depend d
                                         where d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                           and d.objid = c.oid and d.deptype = 'e') loop
        execute pg_catalog.format('alter table %s owner to pricesvc_owner', object_name);
    end loop;
    for object_name in select p.oid::pg_catalog.regprocedure::pg_catalog.text
                       from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
                       where (n.nspname in ('auth', 'private', 'pricesvc_meta')
                              or (n.nspname = 'public' and p.proname = any (public_functions)))
                         and p.proowner <> 'pricesvc_owner'::pg_catalog.regrole
                         and not exists (select from pg_catalog.pg_depend d
                                         where d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                                           and d.objid = p.oid and d.deptype = 'e') loop
        execute pg_catalog.format('alter routine %s owner to pricesvc_owner', object_name);
    end loop;
end
$$;
