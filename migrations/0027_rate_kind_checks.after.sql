-- The checks that read private.rate_kinds() (settings.sql): versioned files create tables and types
-- before any function exists, so 0003 gave price_reports a literal list and 0007 created the
-- private.rate_kind domain bare; this step, once the function does, gives both the check that calls it.
--
-- Until this step existed settings.sql ran the same block every time it changed, so every deployed
-- database already has both checks: each is added only when missing, so a database that has them takes
-- no lock here.
do $$
begin
    if not exists (select from pg_catalog.pg_constraint c
                   where c.contypid = 'private.rate_kind'::pg_catalog.regtype and c.conname = 'rate_kind_known') then
        alter domain private.rate_kind
            add constraint rate_kind_known check (value = any (private.rate_kinds()));
    end if;
    -- By the catalog's dependency, not the constraint's text (which prints names as search_path sees them):
    -- a changed table constraint is checked against every row under an ACCESS EXCLUSIVE lock.
    if not exists (select from pg_catalog.pg_constraint c
                   join pg_catalog.pg_depend d on d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass
                                              and d.objid = c.oid
                                              and d.refobjid = 'private.rate_kinds()'::pg_catalog.regprocedure
                   where c.conrelid = 'public.price_reports'::pg_catalog.regclass
                     and c.conname = 'price_reports_rate_kind_known') then
        alter table public.price_reports
            drop constraint if exists price_reports_rate_kind_known,
            add constraint price_reports_rate_kind_known check (rate_kind = any (private.rate_kinds()));
    end if;
end
$$;
