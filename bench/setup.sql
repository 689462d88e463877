-- Bench fixtures, run as the superuser after `pricesvc migrate`. Idempotent.
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
