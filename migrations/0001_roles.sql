-- Roles, schemas and extensions everything else builds on.
-- Roles are cluster-wide: another database on the same cluster (or a concurrent migrator) may have
-- created them already, so each is created only when missing and a lost race is ignored.

do $$
declare
    role_name text;
begin
    foreach role_name in array array['anon', 'authenticated', 'price_analyst', 'authenticator'] loop
        if not exists (select from pg_catalog.pg_roles where rolname = role_name) then
            begin
                execute format('create role %I nologin', role_name);
            exception when duplicate_object or unique_violation then
                null;
            end;
        end if;
    end loop;
end
$$;

-- Attributes are (re)asserted in policies.sql, which is re-applied whenever it changes.

create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;

-- Settings and internal helpers; no client role gets USAGE on it.
create schema if not exists private;

-- Migration bookkeeping. `pricesvc migrate` creates the same table itself before applying anything;
-- keep both definitions identical.
create schema if not exists pricesvc_meta;
create table if not exists pricesvc_meta.schema_migrations (
    name text primary key,
    checksum text not null,
    applied_at timestamptz not null default now()
);
