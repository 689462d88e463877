-- Bench fixtures, run as the superuser after `pricesvc migrate`. Idempotent.
-- Reruns are the normal case: no notices for objects that already exist or are dropped before use.
set client_min_messages = warning;
-- bench.tokens: this run's reporters (COPY'd from bench/tokens.py output); pgbench reads them.
create schema if not exists bench;
create table if not exists bench.tokens (
    run_id text not null,
    side text not null,
    idx integer not null,
    uid uuid not null,
    sid uuid,
    token text not null,
    primary key (side, idx)
);
-- Tokens carry a session id, and the database accepts only tokens of live sessions.
alter table bench.tokens add column if not exists sid uuid;
create table if not exists bench.seeded (what text primary key, at timestamptz not null default now());
grant usage on schema bench to authenticator;
grant select on bench.tokens to authenticator;

-- Every reporter must exist wherever price_reports.reporter_id points (the anonymous users table):
-- insert ids into the referenced table, whatever the migrations named it.
create or replace function bench.ensure_users(ids uuid[]) returns bigint
language plpgsql as $$
declare
    target regclass;
    target_column name;
    added bigint := 0;
begin
    select c.confrelid::regclass, a.attname into target, target_column
    from pg_catalog.pg_constraint c
    join pg_catalog.pg_attribute a on a.attrelid = c.confrelid and a.attnum = c.confkey[1]
    where c.conrelid = 'public.price_reports'::regclass and c.contype = 'f'
      and c.conkey = array[(select attnum from pg_catalog.pg_attribute
                            where attrelid = 'public.price_reports'::regclass and attname = 'reporter_id')];
    if target is null then
        -- No foreign key (today's schema): still make them real anonymous users.
        if pg_catalog.to_regclass('auth.users') is null then
            return 0;
        end if;
        target := 'auth.users'::regclass;
        target_column := 'id';
    end if;
    execute format('insert into %s (%I) select u from unnest($1) u on conflict do nothing', target, target_column)
        using ids;
    get diagnostics added = row_count;
    return added;
end $$;

-- What the live-session check inside auth.jwt() costs: microseconds per full token verification
-- (signature, claims and the session lookup) and per session lookup alone, timed inside one backend so
-- the network and the client do not blur them.
create or replace function bench.session_check_cost(token text, calls integer)
returns table(verify_us double precision, lookup_us double precision)
language plpgsql as $$
declare
    started timestamptz;
    the_session uuid;
    the_user uuid;
    live boolean;
begin
    perform set_config('request.jwt', token, true);
    the_user := (auth.jwt() ->> 'sub')::uuid;
    the_session := (auth.jwt() ->> 'session_id')::uuid;
    started := clock_timestamp();
    for i in 1..calls loop
        perform auth.jwt();
    end loop;
    verify_us := extract(epoch from clock_timestamp() - started) * 1e6 / calls;
    started := clock_timestamp();
    for i in 1..calls loop
        live := exists (select from auth.sessions s
                        where s.id = the_session and s.user_id = the_user and s.revoked_at is null);
    end loop;
    lookup_us := extract(epoch from clock_timestamp() - started) * 1e6 / calls;
    return next;
end $$;

-- The floor (bench/run.sh row 2): the same INSERT into the same table (public.price_reports: its
-- constraints, indexes, cap trigger, median store and reporter_id default), as a role whose RLS policy
-- takes the reporter from a plain setting instead of verifying the token. The floor's pgbench script is
-- the submission script itself with role bench_floor and reporters of its own (side 'floor'), so the one
-- difference between the two sides is the policy's check: `(select auth.uid())`, which verifies the
-- token, against `(select bench.plain_uid())`, which reads pricesvc.hint_uid, the sub the identity
-- statement recorded. bench_floor holds exactly what authenticated holds (copied from the catalog each
-- time this file runs, so it cannot drift) and is no member of it, so authenticated's policy never
-- applies to it. Reporter ids stay apart from the verified side's, so neither side's cap counts the other's.
create or replace function bench.plain_uid() returns uuid
    language sql stable
    return nullif(pg_catalog.current_setting('pricesvc.hint_uid', true), '')::uuid;

-- Earlier versions built the floor on copies of the table and the store (bench.price_reports ...).
drop function if exists bench.build_floor();
drop table if exists bench.price_reports, bench.median_queue, bench.median_groups, bench.median_latest,
                     bench.median_prices, bench.median_price_bands, bench.median_totals cascade;
drop function if exists bench.admit_price_report(), bench.reporter_is_caller(uuid), bench.median_enqueue(),
                        bench.median_fold(text, text), bench.median_histogram_add(text, text, text[], integer[], integer[]);

do $floor$
declare
    target record;
    grant_columns text;
    policy_check text;
begin
    if not exists (select from pg_catalog.pg_roles where rolname = 'bench_floor') then
        create role bench_floor nologin;
    end if;
    grant bench_floor to authenticator;
    -- authenticated's schema usage and EXECUTE grants (the default, the check constraint's rate kinds).
    for target in select n.nspname from pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
                  where a.grantee = 'authenticated'::regrole and a.privilege_type = 'USAGE' loop
        execute format('grant usage on schema %I to bench_floor', target.nspname);
    end loop;
    for target in select p.oid::regprocedure as f from pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
                  where a.grantee = 'authenticated'::regrole and a.privilege_type = 'EXECUTE' loop
        execute format('grant execute on function %s to bench_floor', target.f);
    end loop;
    select string_agg(quote_ident(c.column_name), ', ' order by c.column_name) into grant_columns
    from information_schema.column_privileges c
    where c.table_schema = 'public' and c.table_name = 'price_reports' and c.grantee = 'authenticated'
      and c.privilege_type = 'INSERT';
    execute format('grant insert (%s) on public.price_reports to bench_floor', grant_columns);
    -- The policy: authenticated's own, with the verified id replaced by the plain setting.
    select p.with_check into policy_check from pg_catalog.pg_policies p
    where p.schemaname = 'public' and p.tablename = 'price_reports' and p.policyname = 'reporters_insert_own_reports';
    if position('auth.uid()' in coalesce(policy_check, '')) = 0 then
        raise exception 'bench/setup.sql: no price_reports policy reporters_insert_own_reports calling auth.uid() (found: %)',
            coalesce(policy_check, 'none');
    end if;
    drop policy if exists bench_floor_insert on public.price_reports;
    execute format('create policy bench_floor_insert on public.price_reports for insert to bench_floor with check (%s)',
                   replace(policy_check, 'auth.uid()', 'bench.plain_uid()'));
end
$floor$;

grant usage on schema bench to authenticated, bench_floor, pricesvc_owner;
grant execute on function bench.plain_uid() to bench_floor, pricesvc_owner;

-- No autovacuum on the tables the runs write or read per request: a vacuum of a 10 M-row table that
-- starts in the middle of a round takes CPU from whichever side is running then (seen as row 3 at
-- 0.77, pgbench's side charged with it). bench/run.sh vacuums them itself before the measured runs.
alter table public.price_reports set (autovacuum_enabled = false);
alter table private.median_queue set (autovacuum_enabled = false);
alter table auth.users set (autovacuum_enabled = false);
alter table auth.sessions set (autovacuum_enabled = false);
alter table bench.tokens set (autovacuum_enabled = false);
