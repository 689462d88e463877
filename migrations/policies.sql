-- Who may do what: roles, database and schema privileges, table grants and RLS, every function's
-- EXECUTE, and the hand-off of every object to pricesvc_owner. Every role pricesvc uses is created here
-- and nowhere else (0001_roles.sql's old text created four of them; superseded.txt). Every grant, revoke and ownership change
-- pricesvc makes is here (versioned files numbered up to 0014 made some too; this file re-declares each
-- of them). The functions live in the other repeatable files (settings.sql, auth.sql, limits.sql,
-- median_store.sql, medians.sql, cds_*.sql, published_rates.sql, reports.sql); tables and types in the versioned
-- NNNN_*.sql files. scripts/dev/lint-migrations.py and integration/pgtap/06_layout.sql hold the tree to this.
--
-- Repeatable, and always the last file `pricesvc migrate` applies: after the versioned files and the
-- other repeatable files, and again whenever any of them ran. So every statement here is idempotent
-- (DROP ... IF EXISTS, REVOKE-then-GRANT), and it sees every object the other files created. Those files
-- revoke EXECUTE from PUBLIC as they create a function (so a new function is closed from its file's
-- commit on) and grant nothing: "Functions" below takes every privilege away from everyone but the
-- owner and grants back exactly what is listed, in the same transaction that makes pricesvc_owner the
-- owner. The catalog is then what this file says, whatever earlier versions of any file granted.

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
-- Roles (cluster-wide: another database on the same cluster, or a concurrent migrator, may have created
-- them already, so each is created only when missing and a lost race is ignored; altered only when they
-- differ, so concurrent migrations of other databases on the same cluster do not write the same catalog
-- rows). No file before this one needs a role to exist: they name roles only inside function bodies,
-- resolved when called.
------------------------------------------------------------------------------------------------------

do $$
declare
    role_name text;
begin
    -- The client roles the service switches to (anon, authenticated), the analysts' group (price_analyst)
    -- and the service's only login (authenticator): made bare here, their attributes asserted below.
    foreach role_name in array array['anon', 'authenticated', 'price_analyst', 'authenticator'] loop
        if not exists (select from pg_catalog.pg_roles where rolname = role_name) then
            begin
                execute pg_catalog.format('create role %I nologin', role_name);
            exception when duplicate_object or unique_violation then
                null;
            end;
        end if;
    end loop;
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
    -- Monitoring: what PUBLIC no longer has in this database (statistics, sizes, WAL positions; see
    -- "Catalog" below), plus pg_monitor. Grant it to a monitoring login; never to authenticator.
    if not exists (select from pg_catalog.pg_roles where rolname = 'pricesvc_monitor') then
        begin
            create role pricesvc_monitor nologin;
        exception when duplicate_object or unique_violation then
            null;
        end;
    end if;
    if not pg_catalog.pg_has_role('pricesvc_monitor', 'pg_monitor', 'member') then
        grant pg_monitor to pricesvc_monitor;
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
revoke all on schema auth from public, anon, authenticated, price_analyst, authenticator;
grant usage on schema auth to anon, authenticated, authenticator;

-- private and extensions: owner only. The SECURITY DEFINER functions use them as the owner.
revoke all on schema private from public, anon, authenticated, price_analyst, authenticator;
revoke all on schema extensions from public, anon, authenticated, price_analyst, authenticator;
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
-- The median store's folds (median_store.sql) take their group's lock only when nobody holds it.
grant execute on function pg_catalog.pg_try_advisory_xact_lock(integer, integer) to pricesvc_owner;

------------------------------------------------------------------------------------------------------
-- Catalog: statistics, sizes and large objects (privileges on pg_catalog objects are per database:
-- these hold in this database only, and every role but a superuser is bound by them)
------------------------------------------------------------------------------------------------------

-- Statistics are a side channel into the median store: whether a probe inserted a row into median_prices (a
-- price new to its group) or updated one shows in n_tup_ins, the pg_stat_get_* functions, a table's or
-- index's size and the WAL position, and about (bands + 64) probes by aged sybils find a lone reporter's
-- price. pg_locks shows the median store's fold locks, keyed by location: which location was just reported
-- at. Every client role and analysts lose them; pricesvc_monitor (with pg_monitor) keeps them for
-- monitoring. What remains is in docs/threat-model.md (pg_class.reltuples, EXPLAIN (ANALYZE, BUFFERS)).
do $$
declare
    object_name pg_catalog.text;
begin
    for object_name in select c.oid::pg_catalog.regclass::pg_catalog.text from pg_catalog.pg_class c
                       where c.relnamespace = 'pg_catalog'::pg_catalog.regnamespace and c.relkind = 'v'
                         and (c.relname ~ '^pg_stat(io)?_' or c.relname = 'pg_locks') loop
        execute pg_catalog.format('revoke all on %s from public', object_name);
        execute pg_catalog.format('grant select on %s to pricesvc_monitor', object_name);
    end loop;
    for object_name in select p.oid::pg_catalog.regprocedure::pg_catalog.text from pg_catalog.pg_proc p
                       where p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace
                         and (p.proname ~ '^pg_stat_(get_|have_stats$|clear_snapshot$|force_next_flush$)'
                              or p.proname ~ '^pg_(current|last)_wal_'
                              or p.proname ~ '^pg_control_'
                              or p.proname in ('pg_lock_status', 'pg_blocking_pids', 'pg_safe_snapshot_blocking_pids')
                              or p.proname in ('pg_relation_size', 'pg_table_size', 'pg_indexes_size',
                                               'pg_total_relation_size', 'pg_database_size', 'pg_tablespace_size')) loop
        execute pg_catalog.format('revoke execute on function %s from public', object_name);
        execute pg_catalog.format('grant execute on function %s to pricesvc_monitor', object_name);
    end loop;
end
$$;

-- Commit times: with track_commit_timestamp on (the cap counts reports by commit time),
-- pg_xact_commit_timestamp(xmin) and pg_last_committed_xact() give the exact moment of every write,
-- another reporter's included, to anyone who can name a transaction id.
-- Only the owner (the insert trigger) and monitoring keep them; superusers are not affected.
do $$
declare
    f pg_catalog.regprocedure;
begin
    for f in select p.oid::pg_catalog.regprocedure from pg_catalog.pg_proc p
             where p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace
               and p.proname in ('pg_xact_commit_timestamp', 'pg_xact_commit_timestamp_origin', 'pg_last_committed_xact') loop
        execute pg_catalog.format('revoke execute on function %s from public', f);
        execute pg_catalog.format('grant execute on function %s to pricesvc_monitor', f);
    end loop;
end
$$;
grant execute on function pg_catalog.pg_xact_commit_timestamp(xid) to pricesvc_owner;

-- Large objects are storage outside every table, quota and policy: one lo_from_bytea wrote 34 MB to
-- pg_largeobject. pricesvc uses none, so nobody but a superuser may.
do $$
declare
    f pg_catalog.regprocedure;
begin
    for f in select p.oid::pg_catalog.regprocedure from pg_catalog.pg_proc p
             where p.pronamespace = 'pg_catalog'::pg_catalog.regnamespace
               and (p.proname ~ '^lo_' or p.proname in ('loread', 'lowrite')) loop
        execute pg_catalog.format('revoke execute on function %s from public', f);
    end loop;
end
$$;

-- Analyst sessions are bounded (statement_timeout, temp_file_limit: limits.sql), on price_analyst and on
-- every analyst login that exists now; docs/operations.md says how a new one gets them.
select private.limit_analyst_sessions();

-- pricesvc_meta: authenticator reads the applied migrations for /readyz through one function.
revoke all on schema pricesvc_meta from public, anon, authenticated, price_analyst, authenticator;
grant usage on schema pricesvc_meta to authenticator;

------------------------------------------------------------------------------------------------------
-- price_reports: grants and RLS (the insert trigger is in reports.sql)
------------------------------------------------------------------------------------------------------

-- This file runs again whenever any other file ran. ALTER TABLE, ENABLE/FORCE ROW LEVEL SECURITY and
-- CREATE/DROP POLICY take an ACCESS EXCLUSIVE lock on price_reports, which queues every insert behind
-- the longest reader, so each runs only when the catalog differs from what it says (docs/upgrading.md).
-- Grants and revokes take no lock on the table.

-- A report belongs to whoever signed the token it was sent with; clients never name the reporter. The
-- default is only a cheap per-row hint (auth.sql); the policy below is what verifies it.
do $$
begin
    if (select pg_catalog.pg_get_expr(d.adbin, d.adrelid)
        from pg_catalog.pg_attrdef d
        join pg_catalog.pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum
        where d.adrelid = 'public.price_reports'::pg_catalog.regclass and a.attname = 'reporter_id')
       is distinct from 'auth.unverified_uid()' then
        alter table public.price_reports alter column reporter_id set default auth.unverified_uid();
    end if;
end
$$;

-- Clients only ever insert, and only the columns they own; reads go through the median functions.
revoke all on table public.price_reports from public, anon, authenticated, price_analyst, authenticator;
-- lat and lng (0025): where the reporter's app puts the place; stored, never readable (community places).
grant insert (location_id, rate_kind, price_cents, currency, client_report_id, lat, lng)
    on table public.price_reports to authenticated;

do $$
begin
    if not (select c.relrowsecurity and c.relforcerowsecurity from pg_catalog.pg_class c
            where c.oid = 'public.price_reports'::pg_catalog.regclass) then
        alter table public.price_reports enable row level security;
        alter table public.price_reports force row level security;
    end if;
end
$$;

-- A signed-in reporter may insert reports under their own verified id, and nothing else: no SELECT,
-- UPDATE or DELETE policy exists, so those see or touch no rows even if a grant slipped in.
-- `(select auth.uid())` is an initplan: the token is verified once per statement, at its first row,
-- and every row of the statement is compared with that one verified id. This is the check that decides
-- whose report a row is; the reporter_id default and the insert trigger only read what it will check.
-- Recreated only when it is not exactly this policy, as PostgreSQL prints it back (the text compared
-- below; a change to the policy changes both), and when no other policy exists beside it.
do $$
begin
    if (select pg_catalog.array_agg(pg_catalog.format('%s %s %s %s %s', p.polname, p.polcmd, p.polpermissive,
                                                      p.polroles::pg_catalog.regrole[],
                                                      pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid)))
        from pg_catalog.pg_policy p where p.polrelid = 'public.price_reports'::pg_catalog.regclass and p.polqual is null)
       is distinct from array['reporters_insert_own_reports a t {authenticated} (reporter_id = ( SELECT auth.uid() AS uid))']
       or exists (select from pg_catalog.pg_policy p
                  where p.polrelid = 'public.price_reports'::pg_catalog.regclass and p.polqual is not null) then
        drop policy if exists reporters_insert_own_reports on public.price_reports;
        create policy reporters_insert_own_reports on public.price_reports
            for insert to authenticated
            with check (reporter_id = (select auth.uid()));
    end if;
end
$$;

-- The median store (0012, median_store.sql): derived from price_reports, the owner's only.
revoke all on all tables in schema private from public, anon, authenticated, price_analyst, authenticator;
revoke all on all sequences in schema private from public, anon, authenticated, price_analyst, authenticator;

------------------------------------------------------------------------------------------------------
-- Functions: each belongs to pricesvc_owner, and nobody else may call it but as granted below
------------------------------------------------------------------------------------------------------

-- Every function pricesvc made (in auth, private, pricesvc_meta and cds, and its own in public): owned by
-- pricesvc_owner, and every privilege of every other role taken away (PUBLIC's default EXECUTE
-- included), whoever granted it and whenever. The grants below are then all there is.
do $$
declare
    f pg_catalog.text;
    grantee pg_catalog.text;
    -- public is shared with whatever else lives in the database: only pricesvc's own functions there.
    public_functions pg_catalog.name[] := array['price_median', 'price_medians', 'price_median_overview',
                                                'published_cost', 'price_quotes', 'price_vs_published',
                                                'places_nearby', 'places_match'];
begin
    for f in select p.oid::pg_catalog.regprocedure::pg_catalog.text
             from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where (n.nspname in ('auth', 'private', 'pricesvc_meta', 'cds')
                    or (n.nspname = 'public' and p.proname = any (public_functions)))
               and not exists (select from pg_catalog.pg_depend d
                               where d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                                 and d.objid = p.oid and d.deptype = 'e') loop
        if (select p.proowner from pg_catalog.pg_proc p where p.oid = f::pg_catalog.regprocedure)
           <> 'pricesvc_owner'::pg_catalog.regrole then
            execute pg_catalog.format('alter routine %s owner to pricesvc_owner', f);
        end if;
        for grantee in select distinct case a.grantee when 0 then 'public'
                                       else pg_catalog.quote_ident(a.grantee::pg_catalog.regrole::pg_catalog.text) end
                       from pg_catalog.pg_proc p,
                            pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
                       where p.oid = f::pg_catalog.regprocedure and a.grantee <> p.proowner loop
            execute pg_catalog.format('revoke all on function %s from %s cascade', f, grantee);
        end loop;
    end loop;
end
$$;

-- The table's rate-kind check (0007) calls this list as the inserting role.
grant execute on function private.rate_kinds() to authenticated;

-- Token verification: policies and the reporter_id default evaluate these as the client role;
-- authenticator too, because the service's identity statement verifies the token as it switches role,
-- and function privileges are checked before that switch.
grant execute on function auth.jwt() to anon, authenticated, authenticator;
grant execute on function auth.uid() to anon, authenticated;
grant execute on function auth.unverified_uid() to authenticated;
grant execute on function auth.role() to anon, authenticated;
-- Every instance re-reads the signing keys (each wrapped for the key it holds, never in the clear) and
-- the hashes of the publishable keys.
grant execute on function auth.signing_key_ring(text) to authenticator;
grant execute on function auth.publishable_key_hashes() to authenticator;
-- Installing, adding, promoting and retiring signing keys and making or revoking publishable keys:
-- owner only (`pricesvc migrate` and `pricesvc keys`), since whoever installs keys can mint identities.

-- Medians: reporters (through the service) and analysts; nobody reads raw reports.
grant execute on function public.price_medians(text[], text) to authenticated, price_analyst;
grant execute on function public.price_median(text, text) to authenticated, price_analyst;
-- The overview lists every location: analysts only.
grant execute on function public.price_median_overview(timestamptz) to price_analyst;

-- The sign-in endpoints run as authenticator itself (before any role switch); nobody else calls them.
grant execute on function auth.sign_up_anonymous(bytea, jsonb, bytea, integer, integer) to authenticator;
grant execute on function auth.refresh_session(bytea, bytea, bytea, integer, integer, integer) to authenticator;
grant execute on function auth.sign_out(uuid, text) to authenticator;
grant execute on function auth.get_user(uuid, uuid) to authenticator;
-- Spent sign-up challenges: only the service's login spends them, as part of POST /auth/v1/signup.
grant execute on function auth.spend_signup_challenge(bytea, timestamptz) to authenticator;
-- Attested sign-up (App Attest): the service's login, after it verified the attestation.
grant execute on function auth.sign_up_attested(bytea, jsonb, bytea, integer, integer, bytea, text, text, bytea, bytea)
    to authenticator;
-- Attested sign-up (Android Key Attestation): the same.
grant execute on function auth.sign_up_android_attested(bytea, jsonb, bytea, integer, integer, bytea, text, text, text, boolean)
    to authenticator;
-- auth.prune(): owner only, since `pricesvc prune` runs with the owner's credentials.
-- auth.forget_user() and private.prune_reports() (maintenance.sql): owner only, for `pricesvc forget-user`
-- and `pricesvc prune`; they delete around forced row security, so no client role may reach them.

-- No client role and not authenticator may read or write any auth table directly.
revoke all on all tables in schema auth from public, anon, authenticated, price_analyst, authenticator;
revoke all on all sequences in schema auth from public, anon, authenticated, price_analyst, authenticator;

------------------------------------------------------------------------------------------------------
-- Published rates (schema cds; the functions are in cds_*.sql and published_rates.sql)
------------------------------------------------------------------------------------------------------

-- Published rates are public data: analysts read the tables directly. Nobody else reads or writes them:
-- `pricesvc import-rates` loads them through private.cds_replace_source with the owner's credentials.
revoke all on schema cds from public, anon, authenticated, price_analyst, authenticator;
revoke all on all tables in schema cds from public, anon, authenticated, price_analyst, authenticator;
revoke all on all sequences in schema cds from public, anon, authenticated, price_analyst, authenticator;
grant usage on schema cds to price_analyst;
grant select on all tables in schema cds to price_analyst;

-- The engine (private.cds_*) is the owner's (no grants): reachable only through these public functions.
-- Reporters (through the service) and analysts price stays; the comparison lists every location: analysts.
grant execute on function public.published_cost(text[], timestamptz, interval) to authenticated, price_analyst;
grant execute on function public.price_quotes(text[], text, timestamptz, interval) to authenticated, price_analyst;
grant execute on function public.price_vs_published(timestamptz) to price_analyst;

------------------------------------------------------------------------------------------------------
-- Places (table in 0023_places.sql, functions in places.sql; PostGIS and pg_trgm in extensions, above)
------------------------------------------------------------------------------------------------------

-- Where places are is reached only through places_nearby, which answers medians by the same rule as
-- price_medians: reporters (through the service) and analysts, as for the median and quote functions.
-- The table and the search helpers (private.places_*) are the owner's.
grant execute on function public.places_nearby(double precision, double precision, integer, text, timestamptz,
                                               interval, integer) to authenticated, price_analyst;
-- Which existing place an app's candidate is: the same callers.
grant execute on function public.places_match(text, double precision, double precision, integer)
    to authenticated, price_analyst;

------------------------------------------------------------------------------------------------------
-- Migration bookkeeping (defined by the runner: MigrationRunner.bookkeepingSQL)
------------------------------------------------------------------------------------------------------

-- /readyz compares the applied migrations with the files the service ships.
grant execute on function pricesvc_meta.applied_migrations() to authenticator;
-- /metrics (admin listener) shows when prune and import-rates last succeeded: times, nothing else.
grant execute on function pricesvc_meta.maintenance_runs() to authenticator;
revoke all on table pricesvc_meta.schema_migrations from public, anon, authenticated, price_analyst, authenticator;

------------------------------------------------------------------------------------------------------
-- Ownership: everything pricesvc made belongs to pricesvc_owner (NOLOGIN, BYPASSRLS, not superuser), so
-- SECURITY DEFINER code runs with the schema's own rights and nothing more. Runs last, after every file
-- that creates objects; a superuser replacing an object later keeps this owner. Functions are handed
-- over in "Functions" above, with their privileges.
------------------------------------------------------------------------------------------------------

do $$
declare
    object_name pg_catalog.text;
    -- public is shared with whatever else lives in the database: only pricesvc's own objects there.
    public_tables pg_catalog.oid[] := array['public.price_reports'::pg_catalog.regclass::pg_catalog.oid];
begin
    for object_name in select n.nspname from pg_catalog.pg_namespace n
                       where n.nspname in ('auth', 'private', 'pricesvc_meta', 'cds')
                         and n.nspowner <> 'pricesvc_owner'::pg_catalog.regrole loop
        execute pg_catalog.format('alter schema %I owner to pricesvc_owner', object_name);
    end loop;
    -- Tables (their identity sequences and row types follow), skipping anything an extension owns.
    for object_name in select c.oid::pg_catalog.regclass::pg_catalog.text
                       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
                       where (n.nspname in ('auth', 'private', 'pricesvc_meta', 'cds')
                              or c.oid = any (public_tables))
                         and c.relkind in ('r', 'p', 'v', 'm')
                         and c.relowner <> 'pricesvc_owner'::pg_catalog.regrole
                         and not exists (select from pg_catalog.pg_depend d
                                         where d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                                           and d.objid = c.oid and d.deptype = 'e') loop
        execute pg_catalog.format('alter table %s owner to pricesvc_owner', object_name);
    end loop;
    -- Composite types and domains (a table's row type follows its table).
    for object_name in select pg_catalog.format(case t.typtype when 'd' then 'alter domain %s' else 'alter type %s' end,
                                                t.oid::pg_catalog.regtype)
                       from pg_catalog.pg_type t join pg_catalog.pg_namespace n on n.oid = t.typnamespace
                       left join pg_catalog.pg_class c on c.oid = t.typrelid
                       where n.nspname in ('auth', 'private', 'pricesvc_meta', 'cds')
                         and (t.typtype = 'd' or (t.typtype = 'c' and c.relkind = 'c'))
                         and t.typowner <> 'pricesvc_owner'::pg_catalog.regrole
                         and not exists (select from pg_catalog.pg_depend d
                                         where d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                                           and d.objid = t.oid and d.deptype = 'e') loop
        execute object_name || ' owner to pricesvc_owner';
    end loop;
end
$$;
