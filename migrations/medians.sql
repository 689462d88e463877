-- Medians, repeatable: the only way to read reports. Every median function returns rows of
-- private.median_row and takes its rate kind as private.rate_kind (both in 0007_shared_definitions.sql);
-- who may call which one is in policies.sql.

-- A rate_kind argument as the domain, or 22023 naming the accepted kinds. Callers pass '' for a null
-- argument: a null rate_kind is not a rate kind.
create or replace function private.rate_kind_argument(rate_kind text) returns private.rate_kind
    language plpgsql immutable set search_path = ''
as $$
begin
    return rate_kind_argument.rate_kind::private.rate_kind;
exception when check_violation then
    raise exception using errcode = '22023',
        message = pg_catalog.format('unknown rate_kind %L', rate_kind_argument.rate_kind),
        hint = 'rate_kind is one of ' || pg_catalog.array_to_string(private.rate_kinds(), ', ');
end
$$;
revoke all on function private.rate_kind_argument(text) from public;

-- Medians per (location, rate kind, currency) over the report window, where each reporter counts once
-- (their latest report) and at least median_min_reporters() distinct reporters are needed.
-- location_ids null = every location, rate_kind null = every rate kind, since null = the whole report
-- window (the analysts' overview).
--
-- What leaves here must not give one person away:
-- - Only mature reporters count (identity older than reporter_maturity()): a median, its `reporters`
--   and `reports` ignore reports from identities made on the spot, so sybils cannot complete a
--   threshold around one victim's report. A reporter with no auth.users row was pruned, hence old.
-- - Time is coarse: last_reported_at is truncated to the hour, and `since` to the start of its UTC
--   day, so bisecting on time cannot single out one report.
create or replace function private.report_medians(location_ids text[], rate_kind private.rate_kind, since timestamptz)
    returns setof private.median_row
    language plpgsql stable set search_path = ''
as $$
declare
    -- No argument reaches further back than the report window (greatest() skips a null since).
    cutoff pg_catalog.timestamptz := greatest(
        pg_catalog.timezone('UTC', pg_catalog.date_trunc('day', pg_catalog.timezone('UTC', report_medians.since))),
        pg_catalog.clock_timestamp() - private.report_window());
    matured_before pg_catalog.timestamptz := pg_catalog.clock_timestamp() - private.reporter_maturity();
    kinds pg_catalog.text[] := case when report_medians.rate_kind is null then private.rate_kinds()
                                    else array[report_medians.rate_kind::pg_catalog.text] end;
    locations pg_catalog.text[] := report_medians.location_ids;
begin
    if pg_catalog.cardinality(locations) > private.max_median_locations() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location_ids: %s, at most %s per call',
                                        pg_catalog.cardinality(locations), private.max_median_locations());
    end if;
    if locations is null then
        locations := array(select distinct r.location_id from public.price_reports r where r.created_at > cutoff);
    end if;

    return query
    -- NOT MATERIALIZED (it has two readers): folded into each, the window is read in the median index's order
    -- (DISTINCT ON without a sort); materialized, it was a full scan plus an on-disk sort.
    with in_window as not materialized (
        select r.location_id, r.rate_kind, r.reporter_id, r.currency, r.price_cents, r.created_at, r.id
        from public.price_reports r
        where r.location_id = any (locations)
          and r.rate_kind = any (kinds)
          and r.created_at > cutoff
          and not exists (select from auth.users u where u.id = r.reporter_id and u.created_at > matured_before)
    ),
    latest as (
        select distinct on (w.location_id, w.rate_kind, w.reporter_id) w.location_id, w.rate_kind, w.currency, w.price_cents
        from in_window w
        order by w.location_id, w.rate_kind, w.reporter_id, w.created_at desc, w.id desc
    ),
    medians as (
        select l.location_id, l.rate_kind, l.currency,
               pg_catalog.round(pg_catalog.percentile_cont(0.5) within group (order by l.price_cents)::numeric)::integer
                   as median_cents,
               pg_catalog.count(*)::integer as reporters
        from latest l
        group by l.location_id, l.rate_kind, l.currency
        having pg_catalog.count(*) >= private.median_min_reporters()
    ),
    totals as (
        select w.location_id, w.rate_kind, w.currency, pg_catalog.count(*)::integer as reports,
               pg_catalog.date_trunc('hour', pg_catalog.max(w.created_at), 'UTC') as last_reported_at
        from in_window w
        group by w.location_id, w.rate_kind, w.currency
    )
    select m.location_id, m.rate_kind, m.currency, m.median_cents, m.reporters, t.reports, t.last_reported_at
    from medians m
    join totals t on t.location_id = m.location_id
                 and t.rate_kind = m.rate_kind
                 and t.currency = m.currency
    order by m.location_id, m.rate_kind, m.currency;
end
$$;
revoke all on function private.report_medians(text[], private.rate_kind, timestamptz) from public;

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
