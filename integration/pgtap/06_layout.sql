-- The SQL layout (docs/contracts.md, "migrations/ layout"): every function in pricesvc's schemas is
-- defined in a repeatable file, belongs to pricesvc_owner, and may be called by exactly the roles
-- policies.sql grants it to. The expected grants are written out below, apart from policies.sql, so a
-- grant that slips in anywhere (a versioned file, a repeatable file, a hand-run GRANT that policies.sql
-- failed to take back) fails here. Run from the repository root (pg_prove as scripts/dev/test.sh runs it):
-- psql reads migrations/ through scripts/dev/lint-migrations.py.
begin;
\ir _helpers.psql
select plan(6);

-- The functions migrations/*.sql repeatable files create (schema.name), read on the client side.
\set repeatable_functions `python3 scripts/dev/lint-migrations.py --repeatable-functions`
create temporary table repeatable_functions on commit drop as
select unnest(string_to_array(:'repeatable_functions', ',')) as name;

-- pricesvc's functions: everything in its schemas but what an extension owns. public counts whole: in
-- the test database nothing else puts functions there.
create temporary table project_functions on commit drop as
select p.oid, p.oid::regprocedure::text as signature, n.nspname || '.' || p.proname as name, p.proowner, p.proacl
from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
where n.nspname in ('auth', 'private', 'pricesvc_meta', 'cds', 'public')
  and not exists (select from pg_catalog.pg_depend d
                  where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e');

-- Who may call what: every privilege any role but the owner holds on a pricesvc function. Each line is
-- a grant in policies.sql; every function not listed is the owner's alone.
create temporary table expected_grants (signature text, grantee text) on commit drop;
insert into expected_grants values
    -- Token verification, as the client role (policies, the reporter_id default) and as the service's
    -- login while it switches role.
    ('auth.jwt()', 'anon'), ('auth.jwt()', 'authenticated'), ('auth.jwt()', 'authenticator'),
    ('auth.uid()', 'anon'), ('auth.uid()', 'authenticated'),
    ('auth.role()', 'anon'), ('auth.role()', 'authenticated'),
    ('auth.unverified_uid()', 'authenticated'),
    -- The sign-in endpoints: the service's login only.
    ('auth.sign_up_anonymous(bytea,jsonb,bytea,integer,integer)', 'authenticator'),
    ('auth.refresh_session(bytea,bytea,bytea,integer,integer,integer)', 'authenticator'),
    ('auth.sign_out(uuid,text)', 'authenticator'),
    ('auth.get_user(uuid,uuid)', 'authenticator'),
    ('auth.spend_signup_challenge(bytea,timestamp with time zone)', 'authenticator'),
    ('auth.signing_key_ring(text)', 'authenticator'),
    ('auth.publishable_key_hashes()', 'authenticator'),
    ('auth.sign_up_attested(bytea,jsonb,bytea,integer,integer,bytea,text,text,bytea,bytea)', 'authenticator'),
    ('auth.sign_up_android_attested(bytea,jsonb,bytea,integer,integer,bytea,text,text,text,boolean)', 'authenticator'),
    -- The table's rate-kind check runs as the inserting role.
    ('private.rate_kinds()', 'authenticated'),
    -- Medians and quotes: reporters (through the service) and analysts; overviews: analysts.
    ('price_medians(text[],text)', 'authenticated'), ('price_medians(text[],text)', 'price_analyst'),
    ('price_median(text,text)', 'authenticated'), ('price_median(text,text)', 'price_analyst'),
    ('price_median_overview(timestamp with time zone)', 'price_analyst'),
    ('published_cost(text[],timestamp with time zone,interval)', 'authenticated'),
    ('published_cost(text[],timestamp with time zone,interval)', 'price_analyst'),
    ('price_quotes(text[],text,timestamp with time zone,interval)', 'authenticated'),
    ('price_quotes(text[],text,timestamp with time zone,interval)', 'price_analyst'),
    ('price_vs_published(timestamp with time zone)', 'price_analyst'),
    -- Places near a point, with their medians: as price_medians.
    ('places_nearby(double precision,double precision,integer,text,timestamp with time zone,interval,integer)', 'authenticated'),
    ('places_nearby(double precision,double precision,integer,text,timestamp with time zone,interval,integer)', 'price_analyst'),
    ('places_match(text,double precision,double precision,integer)', 'authenticated'),
    ('places_match(text,double precision,double precision,integer)', 'price_analyst'),
    -- /readyz, and /metrics's maintenance series.
    ('pricesvc_meta.applied_migrations()', 'authenticator'),
    ('pricesvc_meta.maintenance_runs()', 'authenticator');

select cmp_ok((select count(*) from project_functions), '>=', 60::bigint,
              'the project''s functions are found (auth, private, pricesvc_meta, cds, public)');

select is_empty(
    $$select f.signature from project_functions f
      where f.name not in (select r.name from repeatable_functions r)$$,
    'every function in pricesvc''s schemas is created by a repeatable file (or the migration runner)');

select is_empty(
    $$select f.signature || ' owned by ' || f.proowner::regrole from project_functions f
      where f.proowner <> 'pricesvc_owner'::regrole$$,
    'every function belongs to pricesvc_owner');

select set_eq(
    $$select f.signature, case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end
      from project_functions f, aclexplode(coalesce(f.proacl, acldefault('f', f.proowner))) a
      where a.grantee <> f.proowner$$,
    $$select signature, grantee from expected_grants$$,
    'every function may be called by exactly the roles policies.sql grants it to, and PUBLIC by none');

select is_empty(
    $$select f.signature || ' ' || a.privilege_type || ' to ' || a.grantee::regrole
      from project_functions f, aclexplode(coalesce(f.proacl, acldefault('f', f.proowner))) a
      where a.grantee <> f.proowner and (a.privilege_type <> 'EXECUTE' or a.is_grantable)$$,
    'what is granted is EXECUTE, never with GRANT OPTION');

-- The check above can fail: a grant policies.sql does not make shows up as a difference.
grant execute on function private.reporter_cap() to anon;
select isnt_empty(
    $$select f.signature, case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end
      from project_functions f, aclexplode(coalesce((select p.proacl from pg_proc p where p.oid = f.oid),
                                                   acldefault('f', f.proowner))) a
      where a.grantee <> f.proowner
      except select signature, grantee from expected_grants$$,
    'a stray GRANT shows up against the expected table');

select * from finish();
rollback;
