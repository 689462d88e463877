-- Retention, erasure and the record of maintenance runs, repeatable.
-- The functions the owner's commands call: `pricesvc prune` (reports past retention), `pricesvc
-- forget-user` (one person's data) and the record of each successful run that the service's /metrics
-- shows. The table and index are in 0018_retention.sql; who may call what is in policies.sql (the owner
-- only, except the service's read of the run times).
--
-- Row security on price_reports is forced, and a login that is merely a member of pricesvc_owner does
-- not carry its BYPASSRLS: its `delete from public.price_reports` deletes nothing, silently. These
-- functions are SECURITY DEFINER, owned by pricesvc_owner, so they delete as the owner does.

-- The end of a group's edit by prune_reports or forget_user, after the fold and their own deletes: a
-- group left without reports loses its totals and its median_groups row, as a rebuild would leave it,
-- and the group's summary (0020) becomes the answer after the edit, not the fold's.
create or replace function private.median_close_group(location_id text, rate_kind text)
    returns void
    language plpgsql volatile set search_path = ''
as $$
begin
    if not exists (select from public.price_reports r
                   where r.location_id = median_close_group.location_id and r.rate_kind = median_close_group.rate_kind) then
        delete from private.median_totals t
        where t.location_id = median_close_group.location_id and t.rate_kind = median_close_group.rate_kind;
        delete from private.median_groups g
        where g.location_id = median_close_group.location_id and g.rate_kind = median_close_group.rate_kind;
    end if;
    perform private.median_summarize_group(median_close_group.location_id, median_close_group.rate_kind);
end
$$;
revoke all on function private.median_close_group(text, text) from public;

-- Deletes every report older than the report window plus the retention grace (settings.sql) of up to
-- max_groups median groups (location, rate kind): those of the oldest such reports. Returns the reports
-- deleted and the groups pruned; no groups pruned means nothing past retention is left (or only groups
-- being folded right now, which the next run takes).
--
-- The median store follows without a rebuild. The delete trigger would rebuild every touched location
-- under an EXCLUSIVE lock on median_queue, stalling every insert: measured 3-5 s per 100 locations of
-- 400 reports each on a loaded 2-core machine, over the service's statement timeout. Instead each group
-- is pruned under its fold lock, as an insert folds it (median_try_lock_group: a group being folded is
-- skipped, never waited for), and exactly:
-- 1. median_fold at this moment: counted reports that left the report window are subtracted from
--    median_totals and expired_through moves to the window's edge, so no later fold or reader looks at
--    the reports deleted next (all older than that edge by the grace); latest reports that left the
--    window are no longer counted in the histograms; queued reports of mature reporters are folded.
-- 2. The group's reports past retention are deleted, with the trigger's rebuild switched off for this
--    transaction (pricesvc.median_store_pruning, median_store.sql; only the owner can delete reports).
-- 3. What the store still says about them goes: their median_latest rows (uncounted since step 1; a
--    reporter's latest report is past retention only if all of theirs are) and queue rows; a group left
--    without reports loses its totals and its median_groups row, as a rebuild would leave it.
create or replace function private.prune_reports(max_groups integer)
    returns table(reports bigint, groups integer)
    language plpgsql volatile security definer set search_path = '' set timezone = 'UTC'
as $$
declare
    cutoff constant pg_catalog.timestamptz := private.report_retention_start(pg_catalog.now());
    doomed record;
    deleted bigint[];
begin
    if max_groups is null or max_groups < 1 or max_groups > 1000 then
        raise exception using errcode = '22023',
            message = pg_catalog.format('max_groups must be from 1 to 1000, got %s', coalesce(max_groups::pg_catalog.text, 'null'));
    end if;
    reports := 0;
    groups := 0;
    perform pg_catalog.set_config('pricesvc.median_store_pruning', 'on', true);
    -- The groups of the oldest reports past retention (price_reports_created_at_idx, 0018).
    for doomed in select distinct o.location_id, o.rate_kind
                  from (select r.location_id, r.rate_kind from public.price_reports r
                        where r.created_at < cutoff
                        order by r.created_at
                        limit max_groups) o loop
        continue when not private.median_try_lock_group(doomed.location_id, doomed.rate_kind);
        perform private.median_fold(doomed.location_id, doomed.rate_kind);

        with gone as (
            delete from public.price_reports r
            where r.location_id = doomed.location_id and r.rate_kind = doomed.rate_kind and r.created_at < cutoff
            returning r.id
        )
        select pg_catalog.array_agg(g.id) into deleted from gone g;
        continue when deleted is null;

        delete from private.median_latest l
        where l.location_id = doomed.location_id and l.rate_kind = doomed.rate_kind and l.report_id = any (deleted);
        delete from private.median_queue q where q.report_id = any (deleted);
        perform private.median_close_group(doomed.location_id, doomed.rate_kind);
        reports := reports + pg_catalog.cardinality(deleted);
        groups := groups + 1;
    end loop;
    perform pg_catalog.set_config('pricesvc.median_store_pruning', 'off', true);
    return next;
end
$$;
revoke all on function private.prune_reports(integer) from public;

-- Erasure of one person (`pricesvc forget-user ID`): their identity, sessions, refresh tokens and every
-- report they made, whether or not the identity still exists (reports outlive a pruned identity). Returns
-- what was deleted; all zero means nothing was stored under that id.
--
-- The median store follows group by group, exactly (as prune_reports does, without the delete trigger's
-- rebuild, which would stall every insert while it re-reads each location whole: 2.5 s for one report at
-- a location of 40 000): under the group's fold lock, waited for (median_lock_group), the group is folded
-- now; then the person's counted reports leave median_totals, their latest price leaves the histograms,
-- their rows leave median_latest and the queue, their reports are deleted, and each touched currency's
-- newest report time is taken again from what is left, so last_reported_at never shows theirs.
--
-- The reporter's insert lock (reports.sql) is taken first, so a report of theirs being inserted right
-- now either commits before and is deleted here, or waits until this commits.
create or replace function auth.forget_user(user_id uuid)
    returns table(users bigint, sessions bigint, refresh_tokens bigint, reports bigint, locations bigint)
    language plpgsql volatile security definer set search_path = '' set timezone = 'UTC'
as $$
declare
    doomed record;
    edge pg_catalog.timestamptz;
    gone_reports bigint;
    last_location text;
    currencies text[];
    prices integer[];
    deltas integer[];
    touched text[];
begin
    if forget_user.user_id is null then
        raise exception using errcode = '22004', message = 'user_id is required';
    end if;
    perform pg_catalog.pg_advisory_xact_lock(private.reporter_lock_namespace(),
                                             pg_catalog.hashtext(forget_user.user_id::pg_catalog.text));
    reports := 0;
    locations := 0;
    touched := array(select distinct r.location_id from public.price_reports r
                     where r.reporter_id = forget_user.user_id and r.lat is not null);
    perform pg_catalog.set_config('pricesvc.median_store_pruning', 'on', true);
    for doomed in select distinct r.location_id, r.rate_kind from public.price_reports r
                  where r.reporter_id = forget_user.user_id
                  order by r.location_id, r.rate_kind loop
        perform private.median_lock_group(doomed.location_id, doomed.rate_kind);
        perform private.median_fold(doomed.location_id, doomed.rate_kind);
        select g.expired_through into edge from private.median_groups g
        where g.location_id = doomed.location_id and g.rate_kind = doomed.rate_kind;

        -- Their counted reports: inside the window as of the fold, folded (not queued).
        update private.median_totals t set reports = t.reports - mine.reports
        from (select r.currency, pg_catalog.count(*) as reports
              from public.price_reports r
              where r.location_id = doomed.location_id and r.rate_kind = doomed.rate_kind
                and r.reporter_id = forget_user.user_id and r.created_at > edge
                and not exists (select from private.median_queue q where q.report_id = r.id)
              group by r.currency) mine
        where t.location_id = doomed.location_id and t.rate_kind = doomed.rate_kind and t.currency = mine.currency;

        with mine as (
            delete from private.median_latest l
            where l.location_id = doomed.location_id and l.rate_kind = doomed.rate_kind and l.reporter_id = forget_user.user_id
            returning l.currency, l.price_cents, l.counted
        )
        select pg_catalog.array_agg(m.currency), pg_catalog.array_agg(m.price_cents), pg_catalog.array_agg(-1)
        into currencies, prices, deltas
        from mine m where m.counted;
        if currencies is not null then
            perform private.median_histogram_add(doomed.location_id, doomed.rate_kind, currencies, prices, deltas);
        end if;
        delete from private.median_queue q
        where q.location_id = doomed.location_id and q.rate_kind = doomed.rate_kind and q.reporter_id = forget_user.user_id;

        with gone as (
            delete from public.price_reports r
            where r.location_id = doomed.location_id and r.rate_kind = doomed.rate_kind and r.reporter_id = forget_user.user_id
            returning 1
        )
        select pg_catalog.count(*) into gone_reports from gone;

        update private.median_totals t
        set newest = (select pg_catalog.max(r.created_at) from public.price_reports r
                      where r.location_id = t.location_id and r.rate_kind = t.rate_kind and r.currency = t.currency
                        and r.created_at > edge
                        and not exists (select from private.median_queue q where q.report_id = r.id))
        where t.location_id = doomed.location_id and t.rate_kind = doomed.rate_kind;
        perform private.median_close_group(doomed.location_id, doomed.rate_kind);
        reports := reports + gone_reports;
        -- Groups come by location (ordered), so a new location is one unlike the last.
        if last_location is distinct from doomed.location_id then
            locations := locations + 1;
            last_location := doomed.location_id;
        end if;
    end loop;
    perform pg_catalog.set_config('pricesvc.median_store_pruning', 'off', true);
    -- Their coordinates leave the community places of every location they reported at (places.sql).
    perform private.community_places_refresh(touched);

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
