-- What a migrated database is, as text that two databases can be compared by (integration/e2e/test_migration_layout.py):
-- every object pricesvc's migrations make or change, with owner, privileges and definition; no OIDs, no
-- timestamps. One line per fact, sorted.
with schemas as (
    select n.oid, n.nspname from pg_namespace n
    where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast', 'tap') and n.nspname !~ '^pg_(toast_)?temp_'
)
select line from (
    -- Schemas: owner and privileges.
    select format('schema %s owner=%s acl=%s', n.nspname, n.nspowner::regrole,
                  (select string_agg(format('%s:%s:%s', a.grantee::regrole, a.privilege_type, a.is_grantable), ',' order by 1)
                   from aclexplode(coalesce(n.nspacl, acldefault('n', n.nspowner))) a)) as line
    from pg_namespace n join schemas s on s.oid = n.oid
    union all
    -- Functions: owner, privileges, and a hash of the whole definition (body, volatility, SECURITY
    -- DEFINER, SET search_path and every other setting).
    select format('function %s owner=%s acl=%s definition=%s', p.oid::regprocedure, p.proowner::regrole,
                  (select string_agg(format('%s:%s:%s', case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end,
                                            a.privilege_type, a.is_grantable), ',' order by 1)
                   from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a),
                  md5(case when p.prokind in ('f', 'p', 'w') then pg_get_functiondef(p.oid) else p.prosrc end))
    from pg_proc p join schemas s on s.oid = p.pronamespace
    union all
    -- pg_catalog functions whose privileges the migrations changed (advisory locks, statistics, large objects).
    select format('catalog function %s acl=%s', p.oid::regprocedure,
                  (select string_agg(format('%s:%s', case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end,
                                            a.privilege_type), ',' order by 1) from aclexplode(p.proacl) a))
    from pg_proc p where p.pronamespace = 'pg_catalog'::regnamespace and p.proacl is not null
    union all
    select format('catalog relation %s acl=%s', c.oid::regclass,
                  (select string_agg(format('%s:%s', case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end,
                                            a.privilege_type), ',' order by 1) from aclexplode(c.relacl) a))
    from pg_class c where c.relnamespace = 'pg_catalog'::regnamespace and c.relacl is not null
    union all
    -- Relations: kind, owner, privileges, row security.
    select format('relation %s kind=%s owner=%s rls=%s/%s acl=%s', c.oid::regclass, c.relkind, c.relowner::regrole,
                  c.relrowsecurity, c.relforcerowsecurity,
                  (select string_agg(format('%s:%s:%s', case a.grantee when 0 then 'PUBLIC' else a.grantee::regrole::text end,
                                            a.privilege_type, a.is_grantable), ',' order by 1)
                   from aclexplode(c.relacl) a))
    from pg_class c join schemas s on s.oid = c.relnamespace where c.relkind <> 't'
    union all
    -- Columns: type, nullability, default, column privileges.
    select format('column %s.%s %s notnull=%s identity=%s default=%s acl=%s', c.oid::regclass, a.attname,
                  format_type(a.atttypid, a.atttypmod), a.attnotnull, a.attidentity, pg_get_expr(d.adbin, d.adrelid),
                  (select string_agg(format('%s:%s', case x.grantee when 0 then 'PUBLIC' else x.grantee::regrole::text end,
                                            x.privilege_type), ',' order by 1) from aclexplode(a.attacl) x))
    from pg_attribute a join pg_class c on c.oid = a.attrelid join schemas s on s.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attnum > 0 and not a.attisdropped and c.relkind in ('r', 'p', 'v', 'm', 'c', 'f')
    union all
    select format('constraint %s on %s: %s', con.conname,
                  coalesce(con.conrelid::regclass::text, con.contypid::regtype::text), pg_get_constraintdef(con.oid))
    from pg_constraint con join schemas s on s.oid = con.connamespace
    union all
    select format('index %s', pg_get_indexdef(i.indexrelid))
    from pg_index i join pg_class c on c.oid = i.indexrelid join schemas s on s.oid = c.relnamespace
    union all
    select format('trigger %s', pg_get_triggerdef(t.oid))
    from pg_trigger t join pg_class c on c.oid = t.tgrelid join schemas s on s.oid = c.relnamespace
    where not t.tgisinternal
    union all
    select format('policy %s on %s.%s %s to %s using (%s) check (%s)', p.policyname, p.schemaname, p.tablename,
                  p.cmd, p.roles, p.qual, p.with_check)
    from pg_policies p
    union all
    select format('type %s kind=%s owner=%s', t.oid::regtype, t.typtype, t.typowner::regrole)
    from pg_type t join schemas s on s.oid = t.typnamespace
    where t.typtype in ('c', 'd', 'e') and (t.typrelid = 0 or (select relkind from pg_class where oid = t.typrelid) = 'c')
    union all
    select format('extension %s version=%s schema=%s', e.extname, e.extversion, e.extnamespace::regnamespace)
    from pg_extension e where e.extname <> 'pgtap'
    union all
    select format('database acl=%s', (select string_agg(format('%s:%s', case a.grantee when 0 then 'PUBLIC'
                                                                   else a.grantee::regrole::text end, a.privilege_type), ',' order by 1)
                                      from aclexplode(d.datacl) a))
    from pg_database d where d.datname = current_database()
    union all
    select format('default privileges %s', d.defaclacl) from pg_default_acl d
    union all
    -- Role settings: the cluster-wide ones and this database's (other databases' are not this one's).
    select format('role setting %s database=%s %s', coalesce(s.setrole::regrole::text, '-'),
                  case s.setdatabase when 0 then '-' else 'this' end, s.setconfig)
    from pg_db_role_setting s
    where s.setdatabase in (0, (select oid from pg_database where datname = current_database()))
    union all
    select format('role %s super=%s login=%s inherit=%s bypassrls=%s createrole=%s createdb=%s member of %s',
                  r.rolname, r.rolsuper, r.rolcanlogin, r.rolinherit, r.rolbypassrls, r.rolcreaterole, r.rolcreatedb,
                  (select string_agg(m.roleid::regrole::text, ',' order by 1) from pg_auth_members m where m.member = r.oid))
    from pg_roles r where r.rolname in ('anon', 'authenticated', 'price_analyst', 'authenticator', 'pricesvc_owner',
                                       'pricesvc_monitor')
    union all
    select format('migration %s %s', m.name, m.checksum) from pricesvc_meta.schema_migrations m
) facts
order by line;
