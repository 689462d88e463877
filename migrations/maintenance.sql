-- Retention, erasure and the record of maintenance runs, repeatable (issue 24, reproductions 3 and 5).
-- The functions the owner's commands call: `pricesvc prune` (reports past retention), `pricesvc
-- forget-user` (one person's data) and the record of each successful run that the service's /metrics
-- shows. The table and index are in 0018_retention.sql; who may call what is in policies.sql (the owner
-- only, except the service's read of the run times).
--
-- Row security on price_reports is forced, and a login that is merely a member of pricesvc_owner does
-- not carry its BYPASSRLS: its `delete from public.price_reports` deletes nothing, silently. These
-- functions are SECURITY DEFINER, owned by pricesvc_owner, so they delete as the owner does.

-- Deletes every report older than the report window plus the retention grace (settings.sql) of up to
-- max_locations locations: those of the oldest such reports. One statement, so the median store's delete
-- trigger (median_store.sql) rebuilds each of those locations once, under its EXCLUSIVE lock on
-- median_queue: inserts wait for the rebuild, so a batch is kept to what rebuilds in well under a
-- statement timeout (`pricesvc prune` commits each batch before the next). Returns the reports deleted
-- and the locations they were at; no locations means nothing past retention is left.
create or replace function private.prune_reports(max_locations integer)
    returns table(reports bigint, locations integer)
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    cutoff constant pg_catalog.timestamptz := pg_catalog.now() - private.report_window() - private.report_retention_grace();
    batch text[];
begin
    if max_locations is null or max_locations < 1 or max_locations > 10000 then
        raise exception using errcode = '22023',
            message = pg_catalog.format('max_locations must be from 1 to 10000, got %s', coalesce(max_locations::pg_catalog.text, 'null'));
    end if;
    -- The locations of the oldest reports past retention (price_reports_created_at_idx, 0018).
    batch := array(select distinct o.location_id
                   from (select r.location_id from public.price_reports r
                         where r.created_at < cutoff
                         order by r.created_at
                         limit max_locations) o);
    locations := pg_catalog.cardinality(batch);
    if locations = 0 then
        reports := 0;
        return next;
        return;
    end if;
    with gone as (
        delete from public.price_reports r
        where r.location_id = any (batch) and r.created_at < cutoff
        returning 1
    )
    select pg_catalog.count(*) into reports from gone;
    return next;
end
$$;
revoke all on function private.prune_reports(integer) from public;

-- Erasure of one person (`pricesvc forget-user ID`): their identity, sessions, refresh tokens and every
-- report they made, whether or not the identity still exists (reports outlive a pruned identity). The
-- median store rebuilds the locations of the deleted reports (its delete trigger), so no median keeps
-- counting them. Returns what was deleted; all zero means nothing was stored under that id.
--
-- The reporter's insert lock (reports.sql) is taken first, so a report of theirs being inserted right
-- now either commits before and is deleted here, or waits until this commits.
create or replace function auth.forget_user(user_id uuid)
    returns table(users bigint, sessions bigint, refresh_tokens bigint, reports bigint, locations bigint)
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if forget_user.user_id is null then
        raise exception using errcode = '22004', message = 'user_id is required';
    end if;
    perform pg_catalog.pg_advisory_xact_lock(private.reporter_lock_namespace(),
                                             pg_catalog.hashtext(forget_user.user_id::pg_catalog.text));

    with gone as (
        delete from auth.refresh_tokens t
        using auth.sessions s
        where t.session_id = s.id and s.user_id = forget_user.user_id
        returning 1
    )
    select pg_catalog.count(*) into refresh_tokens from gone;

    with gone as (
        delete from auth.sessions s where s.user_id = forget_user.user_id
        returning 1
    )
    select pg_catalog.count(*) into sessions from gone;

    with gone as (
        delete from public.price_reports r where r.reporter_id = forget_user.user_id
        returning r.location_id
    )
    select pg_catalog.count(*), pg_catalog.count(distinct g.location_id) into reports, locations from gone g;

    with gone as (
        delete from auth.users u where u.id = forget_user.user_id
        returning 1
    )
    select pg_catalog.count(*) into users from gone;

    return next;
end
$$;
revoke all on function auth.forget_user(uuid) from public;

-- A maintenance command succeeded just now (`pricesvc prune`, `pricesvc import-rates`).
create or replace function private.record_maintenance_run(task text)
    returns void
    language sql volatile set search_path = ''
    begin atomic
        insert into private.maintenance_runs as m (task, succeeded_at)
        values (record_maintenance_run.task, pg_catalog.now())
        on conflict on constraint maintenance_runs_pkey do update set succeeded_at = excluded.succeeded_at;
    end;
revoke all on function private.record_maintenance_run(text) from public;

-- When each maintenance command last succeeded, for the service's /metrics (admin listener): times only,
-- nothing about what they deleted or loaded.
create or replace function pricesvc_meta.maintenance_runs()
    returns table(task text, succeeded_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select m.task, m.succeeded_at from private.maintenance_runs m order by m.task;
    end;
revoke all on function pricesvc_meta.maintenance_runs() from public;
