-- Medians, repeatable: the only way to read reports. Every median function returns rows of
-- private.median_row and takes its rate kind as private.rate_kind (both in 0007_shared_definitions.sql);
-- who may call which one is in policies.sql.

-- A rate_kind argument as the domain, or 22023 naming the accepted kinds. Callers pass '' for a null
-- argument: a null rate_kind is not a rate kind.
create or replace function private.rate_kind_argument(rate_kind text) returns private.rate_kind
    language plpgsql immutable set search_path = ''
as $$
begin
    -- A known kind (the domain's own check, rate_kind_known) is returned outside the exception block: a
    -- block with a handler starts a subtransaction on every entry, which every search paid for.
    if rate_kind_argument.rate_kind = any (private.rate_kinds()) then
        return rate_kind_argument.rate_kind::private.rate_kind;
    end if;
    begin
        return rate_kind_argument.rate_kind::private.rate_kind;
    exception when check_violation then
        raise exception using errcode = '22023',
            message = pg_catalog.format('unknown rate_kind %L', rate_kind_argument.rate_kind),
            hint = 'rate_kind is one of ' || pg_catalog.array_to_string(private.rate_kinds(), ', ');
    end;
end
$$;
revoke all on function private.rate_kind_argument(text) from public;

-- A location_ids argument of at most max_median_locations() ids, or 22023 naming the bound: the one check
-- of it, for price_medians (report_medians), published_cost and price_quotes. A null list passes (callers
-- read it as none); a location named twice counts twice.
create or replace function private.check_location_count(location_ids text[]) returns void
    language plpgsql immutable set search_path = ''
as $$
begin
    if pg_catalog.cardinality(check_location_count.location_ids) > private.max_median_locations() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location_ids: %s, at most %s per call',
                                        pg_catalog.cardinality(check_location_count.location_ids),
                                        private.max_median_locations());
    end if;
end
$$;
revoke all on function private.check_location_count(text[]) from public;

-- A group's queued reports. A function of its own so that the planner sees a group's usual handful
-- (ROWS), and always reads them by index (enable_seqscan): the queue's statistics are dominated by
-- whichever locations day-old identities report at (a benchmark's fresh reporters, a sybil flood).
-- From them, a join was planned as a hash over the whole queue and then over the whole of
-- median_latest, and this lookup as a scan of the whole queue per group (270 ms a call, measured).
-- Without JIT: the body is planned without its arguments' values, so those statistics also estimate
-- millions of rows for every group, and past jit_above_cost every call compiled its expressions
-- (1.5-3 ms each, 12 times per price_medians call: 7 times slower, measured with 4.7 M queued rows).
create or replace function private.median_queued(location_id text, rate_kind text)
    returns setof private.median_queue
    language sql stable rows 16 set search_path = '' set enable_seqscan = off set jit = off
    begin atomic
        select q.* from private.median_queue q
        where q.location_id = median_queued.location_id and q.rate_kind = median_queued.rate_kind;
    end;
revoke all on function private.median_queued(text, text) from public;

-- The medians of the given groups (location_ids[i], rate_kinds[i]) at now_at, over the whole report window,
-- computed from the median store: per group, the price bands, the prices of the one or two bands that hold
-- the middle ranks, the totals, and the rows that changed meaning since the group was last folded (queued
-- reports; latest reports and counted reports that left the window since). So a call reads about
-- (bands + 2 × band width + queue) rows per group, not one per report or per reporter. What
-- report_medians returns for a group whose summary it cannot use, and what median_summarize stores.
-- last_reported_at is the newest counted report's exact time: report_medians coarsens it.
-- Without JIT, whoever calls it (migrate's session has it on): past jit_above_cost each call compiled its
-- expressions, 8 ms for one group. Custom plans: a generic one read 12 groups in 17 ms instead of 9 (loaded).
-- Sequential scans allowed again (report_medians, its caller, turns them off for its own lookups).
create or replace function private.report_medians_exact(group_locations text[], group_kinds text[], now_at timestamptz)
    returns setof private.median_row
    language plpgsql stable set search_path = '' set jit = off set enable_seqscan = on set timezone = 'UTC'
as $$
declare
    cutoff constant pg_catalog.timestamptz := private.report_window_start(report_medians_exact.now_at);
    width constant integer := private.median_band_cents();
begin
    if pg_catalog.cardinality(report_medians_exact.group_locations) is distinct from
       pg_catalog.cardinality(report_medians_exact.group_kinds) then
        raise exception using errcode = '22023', message = 'group_locations and group_kinds differ in length';
    end if;
    if coalesce(pg_catalog.cardinality(report_medians_exact.group_locations), 0) = 0 then
        return;
    end if;
    return query
    with groups as (
        select g.location_id, g.rate_kind
        from rows from (pg_catalog.unnest(report_medians_exact.group_locations),
                        pg_catalog.unnest(report_medians_exact.group_kinds)) g(location_id, rate_kind)
    ),
    queued as (
        select q.*, q.matures_at <= report_medians_exact.now_at as mature
        from groups g
        cross join lateral private.median_queued(g.location_id, g.rate_kind) q
    ),
    -- A reporter with queued reports that count now: their effective latest report is the newest of those
    -- and their folded one. A queued report not mature yet changes nothing: it is not counted, so it cannot
    -- be anyone's latest counted report (the exact path once dropped such a reporter altogether).
    queued_latest as (
        select distinct on (q.location_id, q.rate_kind, q.reporter_id) q.*
        from queued q
        where q.mature
        order by q.location_id, q.rate_kind, q.reporter_id, q.created_at desc, q.report_id desc
    ),
    effective as (
        select ql.location_id, ql.rate_kind, ql.mature, l.counted as folded_counted,
               l.currency as folded_currency, l.price_cents as folded_price,
               case when l.report_id is null or (ql.created_at, ql.report_id) > (l.created_at, l.report_id)
                    then ql.currency else l.currency end as currency,
               case when l.report_id is null or (ql.created_at, ql.report_id) > (l.created_at, l.report_id)
                    then ql.price_cents else l.price_cents end as price_cents,
               greatest(ql.created_at, l.created_at) as created_at
        from queued_latest ql
        left join private.median_latest l
               on l.location_id = ql.location_id and l.rate_kind = ql.rate_kind and l.reporter_id = ql.reporter_id
    ),
    -- (group, currency, price, ±1) on top of the histograms.
    changes as (
        select e.location_id, e.rate_kind, e.folded_currency as currency, e.folded_price as price_cents, -1 as delta
        from effective e where e.folded_counted
        union all
        select e.location_id, e.rate_kind, e.currency, e.price_cents, 1
        from effective e where e.created_at > cutoff
        union all
        -- Folded latest reports whose counted flag is out of date: aged out since the last fold, or
        -- (a clock behind the folder's) still inside the window for this reader.
        select l.location_id, l.rate_kind, l.currency, l.price_cents, -1
        from groups g
        join private.median_latest l on l.location_id = g.location_id and l.rate_kind = g.rate_kind
        where l.counted and l.created_at <= cutoff
          and not exists (select from queued_latest ql where ql.location_id = l.location_id
                          and ql.rate_kind = l.rate_kind and ql.reporter_id = l.reporter_id)
        union all
        select l.location_id, l.rate_kind, l.currency, l.price_cents, 1
        from groups g
        join private.median_latest l on l.location_id = g.location_id and l.rate_kind = g.rate_kind
        -- (Folded means mature by the fold margin: mature for this reader too.)
        where not l.counted and l.created_at > cutoff
          and not exists (select from queued_latest ql where ql.location_id = l.location_id
                          and ql.rate_kind = l.rate_kind and ql.reporter_id = l.reporter_id)
    ),
    bands as (
        select b.location_id, b.rate_kind, b.currency, b.band, pg_catalog.sum(b.reporters)::bigint as reporters
        from (select b.location_id, b.rate_kind, b.currency, b.band, b.reporters
              from groups g
              join private.median_price_bands b on b.location_id = g.location_id and b.rate_kind = g.rate_kind
              union all
              select c.location_id, c.rate_kind, c.currency, c.price_cents / width, c.delta from changes c) b
        group by b.location_id, b.rate_kind, b.currency, b.band
        having pg_catalog.sum(b.reporters) <> 0
    ),
    counted_bands as (
        select b.*,
               (pg_catalog.sum(b.reporters) over (partition by b.location_id, b.rate_kind, b.currency order by b.band))::bigint
                   - b.reporters as below,
               (pg_catalog.sum(b.reporters) over (partition by b.location_id, b.rate_kind, b.currency))::bigint
                   as reporters_in_group
        from bands b
    ),
    -- The band of each middle rank (0-based): (n - 1) / 2 and n / 2, equal when n is odd.
    middle_bands as (
        select cb.location_id, cb.rate_kind, cb.currency, cb.band, cb.reporters_in_group, m.rank_in_group,
               m.rank_in_group - cb.below as rank_in_band
        from counted_bands cb
        cross join lateral (values ((cb.reporters_in_group - 1) / 2), (cb.reporters_in_group / 2)) m(rank_in_group)
        where cb.reporters_in_group >= private.median_min_reporters()
          and m.rank_in_group >= cb.below and m.rank_in_group < cb.below + cb.reporters
    ),
    wanted_bands as (
        select distinct mb.location_id, mb.rate_kind, mb.currency, mb.band from middle_bands mb
    ),
    band_prices as (
        select p.location_id, p.rate_kind, p.currency, p.band, p.price_cents, pg_catalog.sum(p.reporters)::bigint as reporters
        from (select p.location_id, p.rate_kind, p.currency, w.band, p.price_cents, p.reporters
              from wanted_bands w
              join private.median_prices p
                on p.location_id = w.location_id and p.rate_kind = w.rate_kind and p.currency = w.currency
               and p.price_cents >= w.band * width and p.price_cents < (w.band + 1) * width
              union all
              select c.location_id, c.rate_kind, c.currency, w.band, c.price_cents, c.delta
              from changes c
              join wanted_bands w on w.location_id = c.location_id and w.rate_kind = c.rate_kind
                                 and w.currency = c.currency and w.band = c.price_cents / width) p
        group by p.location_id, p.rate_kind, p.currency, p.band, p.price_cents
        having pg_catalog.sum(p.reporters) <> 0
    ),
    counted_prices as (
        select bp.*,
               (pg_catalog.sum(bp.reporters) over (partition by bp.location_id, bp.rate_kind, bp.currency, bp.band
                                                   order by bp.price_cents))::bigint - bp.reporters as below
        from band_prices bp
    ),
    medians as (
        -- percentile_cont(0.5): the lower middle value plus half the distance to the upper one when n is
        -- even, in double precision, rounded as numeric (what the straightforward query computes).
        select mb.location_id, mb.rate_kind, mb.currency, mb.reporters_in_group,
               pg_catalog.round((pg_catalog.min(cp.price_cents)::double precision
                   + (pg_catalog.max(cp.price_cents) - pg_catalog.min(cp.price_cents))::double precision
                     * (0.5::double precision * (mb.reporters_in_group - 1) - (mb.reporters_in_group - 1) / 2))::numeric)::integer
                   as median_cents
        from middle_bands mb
        join counted_prices cp on cp.location_id = mb.location_id and cp.rate_kind = mb.rate_kind
                              and cp.currency = mb.currency and cp.band = mb.band
                              and mb.rank_in_band >= cp.below and mb.rank_in_band < cp.below + cp.reporters
        group by mb.location_id, mb.rate_kind, mb.currency, mb.reporters_in_group
    ),
    -- Per group, the span of report times whose counting changed since its last fold. Materialized, so
    -- that the span reaches the index scan of price_reports below as its bounds. Joined the other way,
    -- as it was planned once statistics were fresh, each call read every report of each group (100 000
    -- for a popular place, 1.3 s a call instead of 10 ms: bench row 5 at 0.03).
    expiry as materialized (
        select g.location_id, g.rate_kind,
               least(mg.expired_through, cutoff) as after, greatest(mg.expired_through, cutoff) as through
        from groups g
        join private.median_groups mg on mg.location_id = g.location_id and mg.rate_kind = g.rate_kind
    ),
    totals as (
        select t.location_id, t.rate_kind, t.currency, pg_catalog.sum(t.reports) as reports, pg_catalog.max(t.newest) as newest
        from (select t.location_id, t.rate_kind, t.currency, t.reports,
                     case when t.newest > cutoff then t.newest end as newest
              from groups g
              join private.median_totals t on t.location_id = g.location_id and t.rate_kind = g.rate_kind
              union all
              -- Counted reports that left the window since the group's last fold (or, for a clock behind
              -- the folder's, are still inside it for this reader). Queued ones were never counted.
              select r.location_id, r.rate_kind, r.currency, case when r.created_at <= cutoff then -1 else 1 end, null
              from expiry e
              join public.price_reports r
                on r.location_id = e.location_id and r.rate_kind = e.rate_kind
               and r.created_at > e.after and r.created_at <= e.through
              where not exists (select from private.median_queue q where q.report_id = r.id)
              union all
              select q.location_id, q.rate_kind, q.currency, 1, q.created_at
              from queued q
              where q.mature and q.created_at > cutoff) t
        group by t.location_id, t.rate_kind, t.currency
    )
    select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters_in_group::integer, t.reports::integer,
           t.newest
    from medians m
    join totals t on t.location_id = m.location_id and t.rate_kind = m.rate_kind and t.currency = m.currency
    order by m.location_id, m.rate_kind, m.currency;
end
$$;
revoke all on function private.report_medians_exact(text[], text[], timestamptz) from public;

-- Medians per (location, rate kind, currency) over the report window, where each reporter counts once
-- (their latest report) and at least median_min_reporters() distinct reporters are needed.
-- location_ids null = every location, rate_kind null = every rate kind, since null = the whole report
-- window (the analysts' overview).
--
-- What leaves here must not give one person away:
-- - Only mature reporters count (identity older than reporter_maturity()): a median, its `reporters`
--   and `reports` ignore reports from identities made on the spot, so sybils cannot complete a
--   threshold around one victim's report. When a reporter matures is part of each report
--   (reporter_matures_at, fixed on admission): pruning the identity changes nothing.
-- - Each location counts once, however often location_ids names it: a repeated id would otherwise add
--   the folded histograms once per repeat.
-- - Time is coarse: last_reported_at is truncated to the hour, and `since` to the start of its UTC
--   day, so bisecting on time cannot single out one report.
--
-- Each group is read from its summary (0020_median_summaries.sql) when that is still the exact answer:
-- made by a clock not ahead of this one, before its oldest report left the window, and with no queued
-- report mature by now (one that is not mature changes nothing). A changed setting rebuilds every
-- summary (private.median_rule_reconcile() below), so none outlives the rule it was made under. Otherwise it is computed from the median store (report_medians_exact). So a
-- group costs a few index probes when nothing changed, and what it cost before otherwise; the answer is
-- the same either way (pgTAP 58 and 63 hold both paths to the reference). An overview narrowed by
-- `since` has no store behind it and scans the reports (report_medians_scanned).
-- Its statements keep one generic plan per session: a lookup's plan does not depend on the ids, and
-- planning it anew each call cost about as much as running it (report_medians_exact plans each call: its
-- best plan does depend on the groups). A plan kept for the session must not depend on the statistics of
-- the moment it was made either: planned while the queue was empty, the queue probe below was a
-- sequential scan, and stayed one after new reporters had queued 140 000 reports (bench row 14: 4
-- searches a second; pgTAP 64). So no sequential scans here (enable_seqscan); the functions it calls
-- set their own.
create or replace function private.report_medians(location_ids text[], rate_kind private.rate_kind, since timestamptz)
    returns setof private.median_row
    language plpgsql stable set search_path = '' set jit = off set plan_cache_mode = force_generic_plan
    set enable_seqscan = off set timezone = 'UTC'
as $$
declare
    now_at constant pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    window_start constant pg_catalog.timestamptz := private.report_window_start(now_at);
    -- No argument reaches further back than the report window (greatest() skips a null since).
    cutoff constant pg_catalog.timestamptz := greatest(
        pg_catalog.timezone('UTC', pg_catalog.date_trunc('day', pg_catalog.timezone('UTC', report_medians.since))),
        window_start);
    kinds constant pg_catalog.text[] := case when report_medians.rate_kind is null then private.rate_kinds()
                                             else array[report_medians.rate_kind::pg_catalog.text] end;
    locations pg_catalog.text[] := report_medians.location_ids;
begin
    perform private.check_location_count(locations);
    -- Bounded by what the caller sent, then each location once.
    if locations is not null then
        locations := array(select distinct l.location_id from pg_catalog.unnest(locations) l(location_id)
                           where l.location_id is not null);
    end if;
    if cutoff > window_start then
        return query select * from private.report_medians_scanned(locations, kinds, cutoff, now_at);
        return;
    end if;
    if locations is null then
        locations := array(select g.location_id from private.median_groups g
                           union select q.location_id from private.median_queue q);
    end if;

    return query
    with groups as (
        select l.location_id, k.rate_kind
        from pg_catalog.unnest(locations) l(location_id) cross join pg_catalog.unnest(kinds) k(rate_kind)
    ),
    checked as materialized (
        select g.location_id, g.rate_kind,
               coalesce(mg.summarized_at is not null
                        and now_at >= mg.summarized_at and now_at < mg.summary_until
                        -- A scalar subquery with a limit is never turned into a join, and with no
                        -- sequential scans it is one probe of the queue's index per group, whatever
                        -- the queue's statistics say (see median_queued). A queued report not mature
                        -- by now changes nothing (report_medians_exact), so only a mature one retires
                        -- the summary.
                        and (select 1 from private.median_queue q
                             where q.location_id = g.location_id and q.rate_kind = g.rate_kind
                               and q.matures_at <= now_at
                             limit 1) is null,
                        false) as ready
        from groups g
        left join private.median_groups mg on mg.location_id = g.location_id and mg.rate_kind = g.rate_kind
    )
    select a.location_id, a.rate_kind, a.currency, a.median_cents, a.reporters, a.reports,
           pg_catalog.date_trunc('hour', a.last_reported_at, 'UTC')
    from (select s.location_id, s.rate_kind, s.currency, s.median_cents, s.reporters, s.reports, s.last_reported_at
          from checked c
          join private.median_summaries s on s.location_id = c.location_id and s.rate_kind = c.rate_kind
          where c.ready
          union all
          -- Called only when some group is not ready: for none it answers nothing, and calling it (its
          -- settings set and reset) took 0.009 ms of a call whose every group was read from its summary.
          select e.*
          from (select array(select c.location_id from checked c where not c.ready order by c.location_id, c.rate_kind)
                           as locations,
                       array(select c.rate_kind from checked c where not c.ready order by c.location_id, c.rate_kind)
                           as kinds) x
          cross join lateral private.report_medians_exact(x.locations, x.kinds, now_at) e
          where pg_catalog.cardinality(x.locations) > 0) a
    order by 1, 2, 3;
end
$$;
revoke all on function private.report_medians(text[], private.rate_kind, timestamptz) from public;
-- Summaries no longer carry the settings they were made under: a change of them rebuilds them all.
drop function if exists private.median_summary_rule();

-- The same medians computed from the reports themselves (private.counted_reports(), the definition the
-- store must equal), for a window that starts at `cutoff` and reporters mature at `mature_at`: what an
-- overview narrowed by `since` needs, which the store (kept for the whole report window) cannot answer.
-- percentile_cont(0.5) is the mean of the two middle prices when the count is even, rounded half away
-- from zero to a whole cent.
create or replace function private.report_medians_scanned(locations text[], kinds text[], cutoff timestamptz,
                                                          mature_at timestamptz)
    returns setof private.median_row
    language plpgsql stable set search_path = '' set enable_seqscan = on set timezone = 'UTC'
as $$
begin
    if locations is null then
        locations := array(select distinct r.location_id from public.price_reports r where r.created_at > cutoff);
    end if;

    return query
    with counted as materialized (
        select c.* from private.counted_reports(locations, kinds, cutoff, mature_at) c
    ),
    medians as (
        select c.location_id, c.rate_kind, c.currency,
               pg_catalog.round(pg_catalog.percentile_cont(0.5) within group (order by c.price_cents)::numeric)::integer
                   as median_cents,
               pg_catalog.count(*)::integer as reporters
        from counted c
        where c.latest
        group by c.location_id, c.rate_kind, c.currency
        having pg_catalog.count(*) >= private.median_min_reporters()
    ),
    totals as (
        select c.location_id, c.rate_kind, c.currency, pg_catalog.count(*)::integer as reports,
               pg_catalog.date_trunc('hour', pg_catalog.max(c.created_at), 'UTC') as last_reported_at
        from counted c
        group by c.location_id, c.rate_kind, c.currency
    )
    select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, t.reports, t.last_reported_at
    from medians m
    join totals t on t.location_id = m.location_id
                 and t.rate_kind = m.rate_kind
                 and t.currency = m.currency
    order by m.location_id, m.rate_kind, m.currency;
end
$$;
revoke all on function private.report_medians_scanned(text[], text[], timestamptz, timestamptz) from public;

-- Up to max_median_locations() candidates in one call. A null rate_kind is not a rate kind (22023).
create or replace function public.price_medians(location_ids text[], rate_kind text default 'hourly')
    returns setof private.median_row
    language sql stable security definer set search_path = ''
    begin atomic
        select m.* from private.report_medians(coalesce(price_medians.location_ids, '{}'::pg_catalog.text[]),
                                               private.rate_kind_argument(coalesce(price_medians.rate_kind, '')),
                                               null) m;
    end;

create or replace function public.price_median(location_id text, rate_kind text default 'hourly')
    returns setof private.median_row
    language sql stable security definer set search_path = ''
    begin atomic
        select m.* from private.report_medians(array[price_median.location_id],
                                               private.rate_kind_argument(coalesce(price_median.rate_kind, '')),
                                               null) m;
    end;

-- Every location and rate kind that meets the threshold; `since` can narrow the window, never widen it,
-- and is taken to the start of its UTC day. Its default, null, is the whole report window
-- (private.report_window(), 180 days); a default expression naming that function would run as the
-- analyst, who may not call it.
create or replace function public.price_median_overview(since timestamptz default null)
    returns setof private.median_row
    language sql stable security definer set search_path = ''
    begin atomic
        select m.* from private.report_medians(null, null, price_median_overview.since) m;
    end;

revoke all on function public.price_medians(text[], text) from public;
revoke all on function public.price_median(text, text) from public;
revoke all on function public.price_median_overview(timestamptz) from public;

------------------------------------------------------------------------------------------------------
-- Settings changes (settings.sql)
------------------------------------------------------------------------------------------------------

-- Applies the settings the stored state depends on, once after any of them changed: settings.sql calls
-- this at its end, in the same transaction that redefines them (`pricesvc migrate`), and this file at
-- its end (the first migrate that has it). Atomic with respect to admissions: price_reports is locked
-- against inserts first (SHARE ROW EXCLUSIVE, which every INSERT's ROW EXCLUSIVE waits for, and which
-- waits for every insert in flight), so a report is admitted either before, and re-derived here, or
-- after the commit, under the new definitions. Then:
-- - reporter_maturity() changed: every finite reporter_matures_at moves by the difference (each was
--   made as some moment plus the old maturity, report_matures_at());
-- - threshold_counts() changed: under 'attested' every report of an unattested reporter never matures;
--   back under 'mature' such a report matures when its reporter's identity does, or, for a reporter
--   pruned since, a maturity after their first report (0014's rule: it errs towards young);
-- - anything the median store depends on (median_store_rule()) changed: the store is rebuilt from the
--   reports, every summary with it.
-- The owner's only: no role is granted it. Readers wait for the rebuild's commit (it truncates the store).
create or replace function private.median_rule_reconcile() returns void
    language plpgsql volatile set search_path = '' set timezone = 'UTC'
as $$
declare
    state record;
begin
    select s.* into state from private.median_rule_state s;
    if found and state.counts is not distinct from private.threshold_counts()
       and state.maturity is not distinct from private.reporter_maturity()
       and state.store_rule is not distinct from private.median_store_rule() then
        return;
    end if;
    lock table public.price_reports in share row exclusive mode;
    select s.* into state from private.median_rule_state s for update;
    -- The UPDATEs below would each rebuild the locations they touch; one rebuild of everything follows.
    perform pg_catalog.set_config('pricesvc.median_store_rebuilding', 'on', true);
    if state.maturity is not null and state.maturity is distinct from private.reporter_maturity() then
        update public.price_reports r
        set reporter_matures_at = r.reporter_matures_at - private.elapsed(state.maturity) + private.elapsed(private.reporter_maturity())
        where r.reporter_matures_at <> 'infinity';
    end if;
    if state.counts is distinct from private.threshold_counts() then
        if private.threshold_counts() = 'attested' then
            update public.price_reports r set reporter_matures_at = 'infinity'
            where not r.reporter_attested and r.reporter_matures_at <> 'infinity';
        else
            update public.price_reports r
            set reporter_matures_at = private.report_matures_at(
                (select u.created_at from auth.users u where u.id = r.reporter_id), r.reporter_attested,
                (select pg_catalog.min(p.created_at) from public.price_reports p where p.reporter_id = r.reporter_id))
            where r.reporter_matures_at = 'infinity';
        end if;
    end if;
    perform pg_catalog.set_config('pricesvc.median_store_rebuilding', 'off', true);
    perform private.median_rebuild(null);
    update private.median_rule_state
    set counts = private.threshold_counts(), maturity = private.reporter_maturity(),
        store_rule = private.median_store_rule();
end
$$;
revoke all on function private.median_rule_reconcile() from public;
