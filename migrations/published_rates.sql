-- Published rates, repeatable: cities' Curb Data Specification (CDS) Curbs feeds, imported by
-- `pricesvc import-rates`, and what a planned stay costs under them, beside the community medians.
-- docs/published-rates.md explains the CDS semantics. This file holds the public functions and the bounds
-- of a call; the engine they call is in cds_1_time.sql (time arithmetic), cds_2_price.sql (the cost of a
-- stay), cds_3_compile.sql (compiled schedules) and cds_4_load.sql (the loader), which run before this
-- file (name order, see cds_1_time.sql's header). It keeps the name deployed databases recorded
-- (pricesvc_meta.schema_migrations), so an upgraded database records the same files as a fresh one.
-- The tables (schema cds) are in 0010_published_rates.sql and 0019_compiled_schedules.sql; who may call
-- and read what is in policies.sql. Each function here revokes EXECUTE from PUBLIC as it is created and
-- grants nothing.
--
-- Every SECURITY DEFINER function sets search_path = '' and schema-qualifies every name, types included.
-- Functions that call what medians.sql defines (private.report_medians) are PL/pgSQL (names resolved
-- when called).

-- Its limits, private.cds_max_stay() and private.cds_max_location_days(), are in settings.sql.

-- 22023 naming the limit when a client's call would price more than cds_max_location_days(): the cost
-- of a quote grows with locations × days, so both bounds alone still allow 50 year-long stays per call.
create or replace function private.cds_check_location_days(p_location_ids text[], p_duration interval)
    returns void
    language plpgsql immutable set search_path = ''
as $$
declare
    locations integer;
    days integer;
begin
    if p_duration is null or p_duration <= interval '0' or p_duration > private.cds_max_stay() then
        return;  -- cds_published_cost names what is wrong with the duration itself.
    end if;
    days := pg_catalog.ceil(extract(epoch from p_duration) / private.cds_unit_seconds('day'))::integer;
    -- No more locations than ids: within the bound counting every id, the distinct ones are too (and
    -- counting them is a query, most of this check's cost).
    if coalesce(pg_catalog.cardinality(p_location_ids), 0) * days <= private.cds_max_location_days() then
        return;
    end if;
    locations := (select pg_catalog.count(distinct l.id)::integer from pg_catalog.unnest(p_location_ids) l(id));
    if locations * days > private.cds_max_location_days() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location-days: %s locations x %s days = %s, at most %s per call',
                                        locations, days, locations * days, private.cds_max_location_days()),
            hint = 'Ask for fewer locations or a shorter stay, or split the call';
    end if;
end
$$;
revoke all on function private.cds_check_location_days(text[], interval) from public;

------------------------------------------------------------------------------------------------------
-- Public functions
------------------------------------------------------------------------------------------------------

-- What parking at up to max_median_locations() locations from starts_at for duration costs under the
-- published rates, at most cds_max_location_days() location-days per call. Locations without a zone
-- valid at starts_at are absent.
create or replace function public.published_cost(location_ids text[], starts_at timestamptz, duration interval)
    returns table(location_id text, currency text, cost_cents bigint, allowed boolean, reason text, source text,
                  last_updated timestamptz)
    language plpgsql stable security definer set search_path = ''
as $$
begin
    perform private.check_location_count(published_cost.location_ids);
    perform private.cds_check_location_days(published_cost.location_ids, published_cost.duration);
    return query
    select c.location_id, c.currency, c.cost_cents, c.allowed, c.reason, c.source, c.last_updated
    from private.cds_published_cost(coalesce(published_cost.location_ids, '{}'::pg_catalog.text[]),
                                    published_cost.starts_at, published_cost.duration) c;
end
$$;
revoke all on function public.published_cost(text[], timestamptz, interval) from public;

-- The community median (exactly price_medians' rules, through private.report_medians) beside the
-- published cost of a stay, one row per location that has either. The median is the one in the
-- published currency when there is published data, else the one with the most reporters.
create or replace function private.cds_price_quotes(p_location_ids text[], p_rate_kind text, p_starts_at timestamptz,
                                         p_duration interval)
    returns table(location_id text, rate_kind text, currency text, median_cents integer, reporters integer,
                  published_cents bigint, published_allowed boolean, published_reason text,
                  published_source text, published_updated_at timestamptz)
    language plpgsql stable set search_path = ''
as $$
#variable_conflict use_column
declare
    ids pg_catalog.text[] := coalesce(p_location_ids, '{}'::pg_catalog.text[]);
    kind private.rate_kind;
begin
    perform private.check_location_count(ids);
    perform private.cds_check_location_days(ids, p_duration);
    -- The one place an unknown or null rate kind becomes 22023 (medians.sql), as for price_medians; a
    -- plain cast to the domain would fail with the domain's 23514.
    kind := private.rate_kind_argument(coalesce(p_rate_kind, ''));
    return query
    with medians as (
        select m.* from private.report_medians(ids, kind, null) m
    ),
    published as (
        select p.* from private.cds_published_cost(ids, p_starts_at, p_duration) p
    )
    -- Each location's median: of its rows (one per currency) that fit, the first by reporters, then
    -- currency (distinct on). Joined rather than looked up per location: the lookup rescanned and sorted
    -- the medians once for each location.
    select distinct on (l.id)
           l.id, kind::pg_catalog.text, coalesce(p.currency, m.currency), m.median_cents, m.reporters,
           p.cost_cents, p.allowed, p.reason, p.source, p.last_updated
    from (select distinct u.id from pg_catalog.unnest(ids) u(id)) l
    left join published p on p.location_id = l.id
    left join medians m on m.location_id = l.id and (p.currency is null or m.currency = p.currency)
    where p.location_id is not null or m.location_id is not null
    order by l.id, m.reporters desc, m.currency;
end
$$;
revoke all on function private.cds_price_quotes(text[], text, timestamptz, interval) from public;

-- Up to max_median_locations() locations; a null rate_kind is not a rate kind (22023).
create or replace function public.price_quotes(location_ids text[], rate_kind text default 'hourly',
                                    starts_at timestamptz default now(), duration interval default '1 hour')
    returns table(location_id text, rate_kind text, currency text, median_cents integer, reporters integer,
                  published_cents bigint, published_allowed boolean, published_reason text,
                  published_source text, published_updated_at timestamptz)
    language sql stable security definer set search_path = ''
    begin atomic
        select q.location_id, q.rate_kind, q.currency, q.median_cents, q.reporters, q.published_cents,
               q.published_allowed, q.published_reason, q.published_source, q.published_updated_at
        from private.cds_price_quotes(price_quotes.location_ids, price_quotes.rate_kind, price_quotes.starts_at,
                                      price_quotes.duration) q;
    end;
revoke all on function public.price_quotes(text[], text, timestamptz, interval) from public;

-- Analysts: every location with both a community hourly median and a published one-hour cost at `at`
-- (same currency, parking allowed). difference = median - published: positive when drivers report
-- paying more than the posted rate.
create or replace function public.price_vs_published(at timestamptz default now())
    returns table(location_id text, currency text, median_cents integer, reporters integer, published_cents bigint,
                  difference_cents bigint, difference_percent numeric, source text, last_updated timestamptz)
    language plpgsql stable security definer set search_path = ''
as $$
#variable_conflict use_column
begin
    return query
    with medians as (
        select m.* from private.report_medians(null, 'hourly', null) m
        where exists (select from cds.zones z where z.location_id = m.location_id)
    ),
    published as (
        select p.* from private.cds_published_cost(array(select distinct m.location_id from medians m),
                                                   price_vs_published.at, interval '1 hour') p
        where p.allowed
    )
    select m.location_id, m.currency, m.median_cents, m.reporters, p.cost_cents,
           m.median_cents - p.cost_cents,
           case when p.cost_cents > 0
                then pg_catalog.round(100.0 * (m.median_cents - p.cost_cents) / p.cost_cents, 1) end,
           p.source, p.last_updated
    from medians m
    join published p on p.location_id = m.location_id and p.currency = m.currency
    order by m.location_id;
end
$$;
revoke all on function public.price_vs_published(timestamptz) from public;
