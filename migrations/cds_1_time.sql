-- Published rates (CDS), the engine's time arithmetic: units, the instant some units after another, the
-- units elapsed between two instants, the local calendar units an interval touches, and whether a time span
-- matches an instant. docs/published-rates.md explains the semantics.
--
-- The engine is split by concern, one repeatable file each, named so that name order is an order they can
-- be created in (`pricesvc migrate` applies settings.sql, then the other repeatable files by name, then
-- policies.sql): a function with an SQL-standard body (`return ...`, `begin atomic`) or a `language sql`
-- body without SET is resolved (or inlined) from what exists when it is created, so what it calls must come
-- from settings.sql or an earlier file; PL/pgSQL is resolved when called. docs/contracts.md, "migrations/
-- layout", lists them:
--   cds_1_time.sql       this file: SQL functions the others' SQL bodies call (needs settings.sql only)
--   cds_2_price.sql      the cost of a stay (SQL bodies over cds_1_time.sql's functions)
--   cds_3_compile.sql    the compiled schedules, and the first compile that runs at migrate time (it
--                        calls what cds_1 and cds_2 define)
--   cds_4_load.sql       the loader (PL/pgSQL: calls cds_3_compile.sql and places.sql when called)
--   published_rates.sql  the public functions (after every cds_ file and medians.sql: `cds` < `medians`
--                        < `published`)
-- The tables (schema cds) are in 0010_published_rates.sql and 0019_compiled_schedules.sql; who may call
-- and read what is in policies.sql. Each function here revokes EXECUTE from PUBLIC as it is created and
-- grants nothing.

-- Seconds in a unit of fixed length; null for month, quarter and year, whose length depends on the
-- calendar. All fixed lengths divide a week, which makes week-microseconds a common denominator.
create or replace function private.cds_unit_seconds(unit text) returns integer
    language sql immutable parallel safe
    return case unit when 'second' then 1 when 'minute' then 60 when 'hour' then 3600
                     when 'day' then 86400 when 'week' then 604800 end;
revoke all on function private.cds_unit_seconds(text) from public;

create or replace function private.cds_unit_months(unit text) returns integer
    language sql immutable parallel safe
    return case unit when 'month' then 1 when 'quarter' then 3 when 'year' then 12 end;
revoke all on function private.cds_unit_months(text) from public;

-- The instant `count` units after `origin`: fixed units in elapsed real time (an hour across a DST change
-- is 3600 s, a day 86 400 s); months, quarters and years on the local calendar of `time_zone`
-- (31 January + 1 month is 28/29 February, at the same local time of day). No SET clause, so that the
-- planner inlines it (names in an SQL-standard body are resolved when it is created).
create or replace function private.cds_after(origin timestamptz, unit text, count numeric, time_zone text)
    returns timestamptz
    language sql stable parallel safe
    return case
        when private.cds_unit_seconds(unit) is not null
            then origin + pg_catalog.make_interval(secs => (count * private.cds_unit_seconds(unit))::double precision)
        else pg_catalog.timezone(time_zone, pg_catalog.timezone(time_zone, origin)
                                 + pg_catalog.make_interval(months => (count * private.cds_unit_months(unit))::integer))
    end;
revoke all on function private.cds_after(timestamptz, text, numeric, text) from public;

-- Units elapsed from `origin` to `at`. Fixed units: exact. Month, quarter, year: whole units on the local
-- calendar, plus the fraction of the current one elapsed in real time.
create or replace function private.cds_elapsed(origin timestamptz, at timestamptz, unit text, time_zone text)
    returns numeric
    language plpgsql stable parallel safe set search_path = ''
as $$
declare
    months integer := private.cds_unit_months(unit);
    local_origin pg_catalog.timestamp := pg_catalog.timezone(time_zone, origin);
    local_at pg_catalog.timestamp := pg_catalog.timezone(time_zone, at);
    whole integer;
    unit_start pg_catalog.timestamptz;
    unit_end pg_catalog.timestamptz;
begin
    if months is null then
        return extract(epoch from at - origin) / private.cds_unit_seconds(unit);
    end if;
    whole := pg_catalog.floor(((pg_catalog.date_part('year', local_at) - pg_catalog.date_part('year', local_origin)) * 12
                              + pg_catalog.date_part('month', local_at) - pg_catalog.date_part('month', local_origin))
                             / months)::integer;
    while private.cds_after(origin, unit, whole + 1, time_zone) <= at loop
        whole := whole + 1;
    end loop;
    while whole > 0 and private.cds_after(origin, unit, whole, time_zone) > at loop
        whole := whole - 1;
    end loop;
    unit_start := private.cds_after(origin, unit, whole, time_zone);
    unit_end := private.cds_after(origin, unit, whole + 1, time_zone);
    return whole + pg_catalog.round(extract(epoch from at - unit_start) / extract(epoch from unit_end - unit_start), 15);
end
$$;
revoke all on function private.cds_elapsed(timestamptz, timestamptz, text, text) from public;

-- How many local calendar units (ISO weeks start on Monday) the interval [from_at, to_at) touches.
-- No SET clause and an SQL-standard body, like cds_span_matches below: the planner inlines it into the
-- charge of each piece (as PL/pgSQL with `set search_path` each call cost about 0.1 ms).
create or replace function private.cds_calendar_units(from_at timestamptz, to_at timestamptz, unit text, time_zone text)
    returns integer
    language sql stable parallel safe
    return case
        when to_at <= from_at then 0
        when unit = 'day'
            then pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001))::pg_catalog.date
                 - pg_catalog.timezone(time_zone, from_at)::pg_catalog.date + 1
        when unit = 'week'
            then (pg_catalog.date_trunc('week', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))::pg_catalog.date
                  - pg_catalog.date_trunc('week', pg_catalog.timezone(time_zone, from_at))::pg_catalog.date) / 7 + 1
        when unit = 'month'
            then ((pg_catalog.date_part('year', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))
                   - pg_catalog.date_part('year', pg_catalog.timezone(time_zone, from_at))) * 12
                  + pg_catalog.date_part('month', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))
                  - pg_catalog.date_part('month', pg_catalog.timezone(time_zone, from_at)))::integer + 1
        when unit = 'quarter'
            then ((pg_catalog.date_part('year', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))
                   - pg_catalog.date_part('year', pg_catalog.timezone(time_zone, from_at))) * 4
                  + pg_catalog.date_part('quarter', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))
                  - pg_catalog.date_part('quarter', pg_catalog.timezone(time_zone, from_at)))::integer + 1
        when unit = 'year'
            then (pg_catalog.date_part('year', pg_catalog.timezone(time_zone, to_at - pg_catalog.make_interval(secs => 0.000001)))
                  - pg_catalog.date_part('year', pg_catalog.timezone(time_zone, from_at)))::integer + 1
        -- Seconds, minutes, hours: local clock units, which DST never splits into unequal lengths.
        else (pg_catalog.date_part('epoch', pg_catalog.date_trunc(unit, to_at - pg_catalog.make_interval(secs => 0.000001), time_zone)
                                    - pg_catalog.date_trunc(unit, from_at, time_zone))::numeric
              / private.cds_unit_seconds(unit))::integer + 1
    end;
revoke all on function private.cds_calendar_units(timestamptz, timestamptz, text, text) from public;

-- Whether a time span matches the instant `at`, whose local time in the feed's zone is `local_at`.
-- No SET clause, so that the planner inlines it into the governing-rule lookup (with `set search_path`
-- every call was a function call: 0.13 ms each, most of a long quote's time). The body is SQL-standard,
-- so its names were resolved when it was created and no caller's search_path can change them.
create or replace function private.cds_span_matches(span cds.time_spans, at timestamptz, local_at timestamp)
    returns boolean
    language sql stable parallel safe
    return (span.start_date is null or at >= span.start_date)
       and (span.end_date is null or at < span.end_date)
       and (span.designated_period is null or span.designated_period_except)
       and (span.days_of_week is null
            or ('{sun,mon,tue,wed,thu,fri,sat}'::pg_catalog.text[])[pg_catalog.date_part('dow', local_at)::integer + 1]
               = any (span.days_of_week))
       and (span.days_of_month is null or pg_catalog.date_part('day', local_at)::integer = any (span.days_of_month))
       and (span.months is null or pg_catalog.date_part('month', local_at)::integer = any (span.months))
       and case
               -- Until midnight.
               when span.time_of_day_end is null or span.time_of_day_end = '24:00'::pg_catalog.time
                   then local_at::pg_catalog.time >= coalesce(span.time_of_day_start, '00:00'::pg_catalog.time)
               when span.time_of_day_end > coalesce(span.time_of_day_start, '00:00'::pg_catalog.time)
                   then local_at::pg_catalog.time >= coalesce(span.time_of_day_start, '00:00'::pg_catalog.time)
                    and local_at::pg_catalog.time < span.time_of_day_end
               -- An end at or before the start runs past midnight (22:00-06:00).
               else local_at::pg_catalog.time >= span.time_of_day_start or local_at::pg_catalog.time < span.time_of_day_end
           end;
revoke all on function private.cds_span_matches(cds.time_spans, timestamptz, timestamp) from public;
