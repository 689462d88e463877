-- Least privilege in the catalog. As price_analyst or authenticator, n_tup_ins of the median store's tables
-- and pg_stat_get_tuples_inserted() told whether a probe price was new to its group, and about (bands + 64)
-- probes by aged sybils found a lone reporter's price; and any role could write large objects (one
-- lo_from_bytea wrote 34 MB). In this database, statistics, sizes, WAL positions and large objects are now
-- for superusers and pricesvc_monitor only. Analyst logins carry a statement_timeout and a temp_file_limit.
begin;
\ir _helpers.psql
select plan(42);

select 'private.median_prices'::regclass::oid as prices_oid \gset

-- Each client role, analysts and the service's login: no statistics, sizes or WAL positions of the
-- median store, and no large objects.
create function tap.denied(who text) returns setof text language plpgsql as $$
declare
    prices oid := 'private.median_prices'::regclass::oid;
    probe text;
begin
    foreach probe in array array[
        format('select n_tup_ins from pg_catalog.pg_stat_user_tables where relid = %s', prices),
        format('select n_tup_ins from pg_catalog.pg_stat_xact_user_tables where relid = %s', prices),
        format('select heap_blks_hit from pg_catalog.pg_statio_user_tables where relid = %s', prices),
        format('select pg_catalog.pg_stat_get_tuples_inserted(%s)', prices),
        format('select pg_catalog.pg_stat_get_xact_tuples_inserted(%s)', prices),
        format('select pg_catalog.pg_relation_size(%s)', prices),
        format('select pg_catalog.pg_total_relation_size(%s)', prices),
        'select pg_catalog.pg_current_wal_insert_lsn()',
        'select count(*) from pg_catalog.pg_locks',
        $q$select pg_catalog.lo_from_bytea(0, '\x00')$q$,
        'select pg_catalog.lo_create(0)',
        'select pg_catalog.lo_creat(-1)',
        -- Commit times of other reporters' writes.
        'select pg_catalog.pg_xact_commit_timestamp(''3''::xid)',
        'select pg_catalog.pg_last_committed_xact()'] loop
        execute format('set local role %I', who);
        return next throws_ok(probe, '42501', null, who || ' may not: ' || probe);
        reset role;
    end loop;
end
$$;
select tap.denied('price_analyst');
select tap.denied('authenticator');

-- The whole class, not just the probes above: nothing of it is left to PUBLIC.
select is_empty($$select c.relname from pg_catalog.pg_class c
                  where c.relnamespace = 'pg_catalog'::regnamespace and c.relkind = 'v'
                    and (c.relname ~ '^pg_stat(io)?_' or c.relname = 'pg_locks')
                    and exists (select from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a where a.grantee = 0)$$,
                'no pg_stat_*, pg_statio_* view, nor pg_locks, is readable by PUBLIC');
select is_empty($$select p.oid::regprocedure from pg_catalog.pg_proc p
                  where p.pronamespace = 'pg_catalog'::regnamespace
                    and (p.proname ~ '^pg_stat_get_' or p.proname ~ '^lo_' or p.proname in ('loread', 'lowrite')
                         or p.proname ~ '^pg_(current|last)_wal_')
                    and exists (select from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a where a.grantee = 0)$$,
                'no pg_stat_get_*, WAL position or large-object function is executable by PUBLIC');

select is_empty($$select p.oid::regprocedure from pg_catalog.pg_proc p
                  where p.pronamespace = 'pg_catalog'::regnamespace
                    and p.proname in ('pg_xact_commit_timestamp', 'pg_xact_commit_timestamp_origin', 'pg_last_committed_xact')
                    and exists (select from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a where a.grantee = 0)$$,
                'no commit-time function is executable by PUBLIC');

-- Monitoring keeps them.
set local role pricesvc_monitor;
select lives_ok(format('select n_tup_ins from pg_catalog.pg_stat_user_tables where relid = %s', :'prices_oid'),
                'pricesvc_monitor reads pg_stat_user_tables');
select lives_ok(format('select pg_catalog.pg_stat_get_tuples_inserted(%s), pg_catalog.pg_relation_size(%s)', :'prices_oid', :'prices_oid'),
                'and calls the pg_stat_get_* and size functions');
select lives_ok('select count(*) from pg_catalog.pg_stat_activity', 'and sees pg_stat_activity');
select lives_ok('select pg_catalog.pg_last_committed_xact()', 'and the last commit''s time');
reset role;
select ok(pg_has_role('pricesvc_monitor', 'pg_monitor', 'member'), 'pricesvc_monitor is a member of pg_monitor');
select ok(not pg_has_role('authenticator', 'pricesvc_monitor', 'member'), 'authenticator is not a monitor');

-- Analyst sessions: role defaults, applied at login.
select ok((select array['statement_timeout=60s', 'temp_file_limit=512MB'] <@ s.setconfig from pg_catalog.pg_db_role_setting s
           where s.setrole = 'price_analyst'::regrole and s.setdatabase = 0),
          'price_analyst carries statement_timeout and temp_file_limit');
create role tap_analyst_login login in role price_analyst;
select is(private.limit_analyst_sessions(), array['tap_analyst_login'], 'a new analyst login gets them too');
select ok((select array['statement_timeout=60s', 'temp_file_limit=512MB'] <@ s.setconfig from pg_catalog.pg_db_role_setting s
           where s.setrole = 'tap_analyst_login'::regrole and s.setdatabase = 0),
          'and carries them');
select is(private.limit_analyst_sessions(), '{}'::text[], 'applying them again changes nothing');
select is((select count(*)::int from pg_catalog.pg_db_role_setting s where s.setrole = 'authenticator'::regrole
           and exists (select from unnest(s.setconfig) c where c like 'statement_timeout=%' or c like 'temp_file_limit=%')), 0,
          'authenticator is no analyst: the service sets its own timeouts');

select * from finish();
rollback;
