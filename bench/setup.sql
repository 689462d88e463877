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

-- The floor (bench/run.sh row 2): the same table, constraints, indexes, triggers, median store and RLS
-- policy as public.price_reports, with the reporter taken from a plain setting (bench.uid) instead of a
-- verified token. Generated from the live definitions each time this file runs, so it cannot drift:
-- the table and store tables are copied with LIKE ... INCLUDING ALL, the trigger functions with
-- pg_get_functiondef() with names moved to schema bench, the policy and the column grants from the
-- catalog, each with auth.uid() replaced by bench.plain_uid().
create or replace function bench.plain_uid() returns uuid
    language sql stable
    return nullif(pg_catalog.current_setting('bench.uid', true), '')::uuid;

create or replace function bench.build_floor() returns void
language plpgsql as $build$
declare
    store_tables text[] := array['median_queue', 'median_groups', 'median_latest', 'median_prices',
                                 'median_price_bands', 'median_totals'];
    functions text[] := array['private.admit_price_report()', 'private.reporter_is_caller(uuid)',
                              'private.median_enqueue()', 'private.median_fold(text,text)',
                              'private.median_histogram_add(text,text,text[],integer[],integer[])'];
    t text;
    f text;
    definition text;
    policy record;
    grant_columns text;
begin
    drop table if exists bench.price_reports cascade;
    execute 'create table bench.price_reports (like public.price_reports including all)';
    alter table bench.price_reports alter column reporter_id set default bench.plain_uid();
    foreach t in array store_tables loop
        execute format('drop table if exists bench.%I cascade', t);
        execute format('create table bench.%I (like private.%I including all)', t, t);
        execute format('alter table bench.%I owner to pricesvc_owner', t);
    end loop;
    alter table bench.price_reports owner to pricesvc_owner;

    foreach f in array functions loop
        definition := pg_get_functiondef(f::regprocedure);
        definition := replace(definition, 'public.price_reports', 'bench.price_reports');
        foreach t in array store_tables loop
            definition := replace(definition, 'private.' || t || ' ', 'bench.' || t || ' ');
            definition := replace(definition, 'private.' || t || E'\n', 'bench.' || t || E'\n');
            definition := replace(definition, 'private.' || t || '[', 'bench.' || t || '[');
        end loop;
        definition := replace(definition, 'private.admit_price_report(', 'bench.admit_price_report(');
        definition := replace(definition, 'private.reporter_is_caller(', 'bench.reporter_is_caller(');
        definition := replace(definition, 'private.median_enqueue(', 'bench.median_enqueue(');
        definition := replace(definition, 'private.median_fold(', 'bench.median_fold(');
        definition := replace(definition, 'private.median_histogram_add(', 'bench.median_histogram_add(');
        definition := replace(definition, 'auth.uid()', 'bench.plain_uid()');
        execute definition;
        execute format('alter function %s owner to pricesvc_owner', replace(f, 'private.', 'bench.'));
    end loop;

    create trigger price_reports_admit before insert on bench.price_reports
        for each row execute function bench.admit_price_report();
    create trigger price_reports_median_store after insert on bench.price_reports
        for each row execute function bench.median_enqueue();

    alter table bench.price_reports enable row level security;
    alter table bench.price_reports force row level security;
    for policy in select p.policyname, p.cmd, p.roles, p.with_check from pg_catalog.pg_policies p
                  where p.schemaname = 'public' and p.tablename = 'price_reports' loop
        execute format('create policy %I on bench.price_reports for %s to %s with check (%s)',
                       policy.policyname, policy.cmd, array_to_string(policy.roles, ', '),
                       replace(policy.with_check, 'auth.uid()', 'bench.plain_uid()'));
    end loop;
    select string_agg(quote_ident(c.column_name), ', ' order by c.column_name) into grant_columns
    from information_schema.column_privileges c
    where c.table_schema = 'public' and c.table_name = 'price_reports' and c.grantee = 'authenticated'
      and c.privilege_type = 'INSERT';
    execute format('grant insert (%s) on bench.price_reports to authenticated', grant_columns);
end
$build$;

grant usage on schema bench to authenticated, pricesvc_owner;
grant execute on function bench.plain_uid() to authenticated, pricesvc_owner;
select bench.build_floor();
