-- Published rates, repeatable: cities' Curb Data Specification (CDS) Curbs feeds, imported by
-- `pricesvc import-rates`, and what a planned stay costs under them, beside the community medians.
-- docs/published-rates.md explains the CDS semantics implemented here. The tables (schema cds) are in
-- 0010_published_rates.sql; who may call and read what is in policies.sql. Each function here revokes
-- EXECUTE from PUBLIC as it is created and grants nothing.
--
-- Every SECURITY DEFINER function sets search_path = '' and schema-qualifies every name, types included.
-- Functions that call what medians.sql defines (private.report_medians) are PL/pgSQL (names resolved
-- when called).

------------------------------------------------------------------------------------------------------
-- The loader: `pricesvc import-rates` validates the files (naming the file and JSON path of any
-- mistake) and sends one normalized document; this replaces the source's data in one statement.
------------------------------------------------------------------------------------------------------

-- The document: {"time_zone","currency","last_updated" (epoch ms),"author","license_url",
-- "zones":[…],"policies":[…],"rules":[…],"time_spans":[…],"rates":[…]}, one flat array per table, in
-- the tables' column names (absent keys take the CDS defaults), timestamps as epoch milliseconds. Its
-- checksum is that of its jsonb text (keys sorted), so the same data imported again is recognised
-- however the files were laid out.
-- Status 'unchanged' when the source's current data has that checksum: then nothing is written.
create or replace function private.cds_replace_source(p_source text, p_feed jsonb)
    returns table(status text, checksum text, zones integer, policies integer, rules integer,
                  time_spans integer, rates integer)
    language plpgsql volatile set search_path = ''
as $$
#variable_conflict use_column
declare
    feed_checksum pg_catalog.text := pg_catalog.encode(
        pg_catalog.sha256(pg_catalog.convert_to(p_feed::pg_catalog.text, 'UTF8')), 'hex');
    previous cds.sources;
    feed_time_zone pg_catalog.text := p_feed ->> 'time_zone';
    epoch constant pg_catalog.timestamptz := '1970-01-01 00:00:00+00';
    ms constant pg_catalog.interval := pg_catalog.make_interval(secs => 0.001);
begin
    if not exists (select from pg_catalog.pg_timezone_names z where z.name = feed_time_zone) then
        raise exception using errcode = '22023',
            message = pg_catalog.format('unknown IANA time zone %L', feed_time_zone);
    end if;

    -- Concurrent imports of one source take turns on its row; a new source's row is made first.
    insert into cds.sources as s (source, time_zone, currency, last_updated, checksum, imported_at)
    values (p_source, feed_time_zone, p_feed ->> 'currency', epoch, '', pg_catalog.clock_timestamp())
    on conflict (source) do nothing;
    select s.* into previous from cds.sources s where s.source = p_source for update;

    if previous.checksum = feed_checksum then
        return query
        select 'unchanged'::pg_catalog.text, i.checksum, i.zones, i.policies, i.rules, i.time_spans, i.rates
        from cds.imports i where i.source = p_source order by i.id desc limit 1;
        return;
    end if;

    delete from cds.zones z where z.source = p_source;
    delete from cds.policies p where p.source = p_source;

    update cds.sources s
    set time_zone = feed_time_zone, currency = p_feed ->> 'currency',
        last_updated = epoch + (p_feed ->> 'last_updated')::pg_catalog.int8 * ms,
        author = p_feed ->> 'author', license_url = p_feed ->> 'license_url',
        checksum = feed_checksum, imported_at = pg_catalog.clock_timestamp()
    where s.source = p_source;

    insert into cds.policies (source, curb_policy_id, priority, published_date, data_source_operator_ids)
    select p_source, x.curb_policy_id, x.priority, epoch + x.published_date * ms, x.data_source_operator_ids
    from pg_catalog.jsonb_to_recordset(p_feed -> 'policies')
         as x(curb_policy_id pg_catalog.uuid, priority integer, published_date pg_catalog.int8,
              data_source_operator_ids pg_catalog.uuid[]);

    insert into cds.rules (source, curb_policy_id, rule_index, activity, max_stay, max_stay_unit, no_return,
                           no_return_unit, user_classes)
    select p_source, x.curb_policy_id, x.rule_index, x.activity, x.max_stay, coalesce(x.max_stay_unit, 'minute'),
           x.no_return, coalesce(x.no_return_unit, 'minute'), x.user_classes
    from pg_catalog.jsonb_to_recordset(p_feed -> 'rules')
         as x(curb_policy_id pg_catalog.uuid, rule_index integer, activity pg_catalog.text, max_stay integer,
              max_stay_unit pg_catalog.text, no_return integer, no_return_unit pg_catalog.text,
              user_classes pg_catalog.text[]);

    insert into cds.rates (source, curb_policy_id, rule_index, rate_index, rate, rate_unit, rate_unit_period,
                           increment_duration, increment_amount, start_duration, end_duration, maximum_fee)
    select p_source, x.curb_policy_id, x.rule_index, x.rate_index, x.rate, x.rate_unit,
           coalesce(x.rate_unit_period, 'rolling'), x.increment_duration, x.increment_amount,
           coalesce(x.start_duration, 0), x.end_duration, x.maximum_fee
    from pg_catalog.jsonb_to_recordset(p_feed -> 'rates')
         as x(curb_policy_id pg_catalog.uuid, rule_index integer, rate_index integer, rate integer,
              rate_unit pg_catalog.text, rate_unit_period pg_catalog.text, increment_duration integer,
              increment_amount integer, start_duration integer, end_duration integer, maximum_fee integer);

    insert into cds.time_spans (source, curb_policy_id, span_index, days_of_week, days_of_month, months,
                                time_of_day_start, time_of_day_end, start_date, end_date, designated_period,
                                designated_period_except)
    select p_source, x.curb_policy_id, x.span_index, x.days_of_week, x.days_of_month, x.months,
           x.time_of_day_start::pg_catalog.time, x.time_of_day_end::pg_catalog.time,
           epoch + x.start_date * ms, epoch + x.end_date * ms, x.designated_period,
           coalesce(x.designated_period_except, false)
    from pg_catalog.jsonb_to_recordset(p_feed -> 'time_spans')
         as x(curb_policy_id pg_catalog.uuid, span_index integer, days_of_week pg_catalog.text[],
              days_of_month integer[], months integer[], time_of_day_start pg_catalog.text,
              time_of_day_end pg_catalog.text, start_date pg_catalog.int8, end_date pg_catalog.int8,
              designated_period pg_catalog.text, designated_period_except boolean);

    insert into cds.zones (source, curb_zone_id, location_id, user_zone_id, name, start_date, end_date,
                           published_date, last_updated_date)
    select p_source, x.curb_zone_id, x.location_id, x.user_zone_id, x.name, epoch + x.start_date * ms,
           epoch + x.end_date * ms, epoch + x.published_date * ms, epoch + x.last_updated_date * ms
    from pg_catalog.jsonb_to_recordset(p_feed -> 'zones')
         as x(curb_zone_id pg_catalog.uuid, location_id pg_catalog.text, user_zone_id pg_catalog.text,
              name pg_catalog.text, start_date pg_catalog.int8, end_date pg_catalog.int8,
              published_date pg_catalog.int8, last_updated_date pg_catalog.int8);

    -- Each location id's place: its zone's polygon (of the zone valid now, else the latest), replacing the
    -- source's places in this transaction (places.sql).
    perform private.places_replace_zones(p_source, p_feed -> 'zones');

    insert into cds.zone_policies (source, curb_zone_id, curb_policy_id)
    select distinct p_source, x.curb_zone_id, pg_catalog.unnest(x.curb_policy_ids)
    from pg_catalog.jsonb_to_recordset(p_feed -> 'zones')
         as x(curb_zone_id pg_catalog.uuid, curb_policy_ids pg_catalog.uuid[]);

    perform private.cds_compile_source(p_source);

    insert into cds.imports (source, imported_at, last_updated, author, license_url, checksum,
                             zones, policies, rules, time_spans, rates)
    select s.source, s.imported_at, s.last_updated, s.author, s.license_url, s.checksum,
           pg_catalog.jsonb_array_length(p_feed -> 'zones'), pg_catalog.jsonb_array_length(p_feed -> 'policies'),
           pg_catalog.jsonb_array_length(p_feed -> 'rules'), pg_catalog.jsonb_array_length(p_feed -> 'time_spans'),
           pg_catalog.jsonb_array_length(p_feed -> 'rates')
    from cds.sources s where s.source = p_source;

    return query
    select 'imported'::pg_catalog.text, i.checksum, i.zones, i.policies, i.rules, i.time_spans, i.rates
    from cds.imports i where i.source = p_source order by i.id desc limit 1;
end
$$;
revoke all on function private.cds_replace_source(text, jsonb) from public;

------------------------------------------------------------------------------------------------------
-- Compiled at import: the tables of 0019_compiled_schedules.sql, which private.cds_stay reads
-- instead of working out the governing rule from cds.time_spans on every quote.
------------------------------------------------------------------------------------------------------

-- The years a compiled stay may fall in: time_zone_offsets covers them, and a stay outside them takes
-- the general path.
create or replace function private.cds_compiled_from() returns timestamptz
    language sql immutable parallel safe
    return '1970-01-01 00:00:00+00'::pg_catalog.timestamptz;
revoke all on function private.cds_compiled_from() from public;

create or replace function private.cds_compiled_to() returns timestamptz
    language sql immutable parallel safe
    return '2100-01-01 00:00:00+00'::pg_catalog.timestamptz;
revoke all on function private.cds_compiled_to() from public;

-- A time zone's UTC offsets from cds_compiled_from() to cds_compiled_to(), once per time zone: every
-- change of offset is found by comparing UTC midnights a day apart, then pinned to the microsecond by
-- bisection (so the few zones whose changes are not on the minute are exact too). Two changes within a
-- day that cancel out would be missed; the tz database has none since 1970. Concurrent imports of one
-- new time zone compute the same rows; the second one's are skipped.
create or replace function private.cds_compile_time_zone(p_time_zone text) returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    changes pg_catalog.timestamptz[];
    bounds pg_catalog.timestamptz[] := array[private.cds_compiled_from()];
    lo pg_catalog.timestamptz;
    hi pg_catalog.timestamptz;
    mid pg_catalog.timestamptz;
    lo_offset pg_catalog.interval;
begin
    if exists (select from cds.time_zone_offsets o where o.time_zone = p_time_zone) then
        return;
    end if;
    select pg_catalog.array_agg(d.at order by d.at) into changes
    from (select g.at, pg_catalog.timezone(p_time_zone, g.at) - pg_catalog.timezone('UTC', g.at) as utc_offset,
                 pg_catalog.lag(pg_catalog.timezone(p_time_zone, g.at) - pg_catalog.timezone('UTC', g.at))
                     over (order by g.at) as previous
          from pg_catalog.generate_series(private.cds_compiled_from(), private.cds_compiled_to(),
                                          pg_catalog.make_interval(days => 1)) g(at)) d
    where d.utc_offset <> d.previous;
    foreach hi in array coalesce(changes, '{}') loop
        lo := hi - pg_catalog.make_interval(days => 1);
        lo_offset := pg_catalog.timezone(p_time_zone, lo) - pg_catalog.timezone('UTC', lo);
        while hi - lo > pg_catalog.make_interval(secs => 0.000001) loop
            mid := lo + pg_catalog.make_interval(secs => pg_catalog.floor(extract(epoch from hi - lo) * 500000) / 1000000);
            if pg_catalog.timezone(p_time_zone, mid) - pg_catalog.timezone('UTC', mid) = lo_offset then
                lo := mid;
            else
                hi := mid;
            end if;
        end loop;
        bounds := bounds || hi;
    end loop;
    bounds := bounds || private.cds_compiled_to();
    insert into cds.time_zone_offsets (time_zone, valid_from, valid_to, utc_offset)
    select p_time_zone, b.valid_from, b.valid_to,
           pg_catalog.timezone(p_time_zone, b.valid_from) - pg_catalog.timezone('UTC', b.valid_from)
    from (select bounds[i] as valid_from, bounds[i + 1] as valid_to
          from pg_catalog.generate_subscripts(bounds, 1) i where i < pg_catalog.cardinality(bounds)) b
    on conflict do nothing;
end
$$;
revoke all on function private.cds_compile_time_zone(text) from public;

-- The source's schedules: one per distinct set of policies among its zones. For each, the local week is
-- cut at every local midnight and every span's time_of_day_start and time_of_day_end on each day (a span
-- past midnight is matched against each day on its own), and each stretch takes the
-- rule that governs at its first instant, by the rules private.cds_stay's general path applies (the
-- same candidate rules, the same order, private.cds_span_matches itself); adjacent stretches under one
-- rule are merged. Span dates cut time into epochs, each compiled on its own. A set whose spans name
-- days of the month or months is stored uncompiled.
create or replace function private.cds_compile_source(p_source text) returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    day_us constant pg_catalog.int8 := 86400000000;
    week_us constant pg_catalog.int8 := 604800000000;
    -- A Monday: local times of the week are read on it (no compiled span reads the date itself).
    monday constant pg_catalog.timestamp := '2001-01-01 00:00:00';
begin
    perform private.cds_compile_time_zone((select s.time_zone from cds.sources s where s.source = p_source));

    update cds.zones z set schedule_id = null where z.source = p_source and z.schedule_id is not null;
    delete from cds.schedules s where s.source = p_source;

    -- A feed whose zones nearly all have policies of their own (thousands of sets) is left to the general
    -- path, decided before anything is written: matching thousands of sets against the spans never
    -- finished for 20 000 such zones, where the import alone takes seconds (a known limitation).
    -- Its zones keep no schedule, and cds_stay prices them piece by piece, as before compiling existed.
    if (select pg_catalog.count(distinct d.policy_ids)
        from (select pg_catalog.array_agg(zp.curb_policy_id order by zp.curb_policy_id) as policy_ids
              from cds.zone_policies zp where zp.source = p_source
              group by zp.curb_zone_id) d) > private.cds_compiled_max_schedules() then
        return;
    end if;

    -- One schedule per distinct set; then each zone finds its own by its set (an index probe each: 20 000
    -- zones take well under a second).
    insert into cds.schedules (source, schedule_id, policy_ids, compiled)
    select p_source, (pg_catalog.row_number() over (order by d.policy_ids))::integer, d.policy_ids,
           not exists (select from pg_catalog.unnest(d.policy_ids) u(curb_policy_id)
                       join cds.time_spans t on t.source = p_source and t.curb_policy_id = u.curb_policy_id
                       where t.days_of_month is not null or t.months is not null)
    from (select distinct (select coalesce(pg_catalog.array_agg(zp.curb_policy_id order by zp.curb_policy_id), '{}')
                           from cds.zone_policies zp
                           where zp.source = z.source and zp.curb_zone_id = z.curb_zone_id) as policy_ids
          from cds.zones z where z.source = p_source) d;

    update cds.zones z
    set schedule_id = sc.schedule_id
    from cds.zones z2
    cross join lateral (select coalesce(pg_catalog.array_agg(zp.curb_policy_id order by zp.curb_policy_id), '{}') as policy_ids
                        from cds.zone_policies zp
                        where zp.source = z2.source and zp.curb_zone_id = z2.curb_zone_id) ps
    join cds.schedules sc on sc.source = z2.source and sc.policy_ids = ps.policy_ids
    where z.source = p_source and z2.source = p_source and z2.curb_zone_id = z.curb_zone_id;

    -- (Zones without policies share the empty set, which the count above did not see.)
    if (select pg_catalog.count(*) from cds.schedules sc where sc.source = p_source) > private.cds_compiled_max_schedules() then
        update cds.schedules sc set compiled = false where sc.source = p_source;
        return;
    end if;

    insert into cds.schedule_intervals (source, schedule_id, valid_from, valid_to, week_from, week_to,
                                        curb_policy_id, rule_index)
    with schedule_rules as materialized (
        -- Exactly the candidates of cds_stay's general path (zone_rules there).
        select sc.schedule_id, p.curb_policy_id, r.rule_index, p.priority,
               pg_catalog.cardinality(r.user_classes) as classes,
               array(select t from cds.time_spans t
                     where t.source = p.source and t.curb_policy_id = p.curb_policy_id) as spans
        from cds.schedules sc
        cross join lateral pg_catalog.unnest(sc.policy_ids) u(curb_policy_id)
        join cds.policies p on p.source = sc.source and p.curb_policy_id = u.curb_policy_id
        join cds.rules r on r.source = p.source and r.curb_policy_id = p.curb_policy_id
        where sc.source = p_source and sc.compiled
          and coalesce(pg_catalog.cardinality(p.data_source_operator_ids), 0) = 0
          and (r.user_classes is null or r.user_classes <@ '{car}'::pg_catalog.text[])
    ),
    schedule_spans as (
        select distinct sr.schedule_id, t.time_of_day_start, t.time_of_day_end, t.start_date, t.end_date
        from schedule_rules sr, pg_catalog.unnest(sr.spans) t
    ),
    compiled as (
        select sc.schedule_id from cds.schedules sc where sc.source = p_source and sc.compiled
    ),
    -- Joins and unions throughout, never a lookup per schedule: a feed of 20 000 zones with their own
    -- policies has 20 000 schedules.
    epoch_bounds as (
        select c.schedule_id, '-infinity'::pg_catalog.timestamptz as at from compiled c
        union
        select c.schedule_id, 'infinity'::pg_catalog.timestamptz from compiled c
        union
        select ss.schedule_id, ss.start_date from schedule_spans ss where ss.start_date is not null
        union
        select ss.schedule_id, ss.end_date from schedule_spans ss where ss.end_date is not null
    ),
    epochs as (
        select e.* from (
            select eb.schedule_id, eb.at as valid_from,
                   pg_catalog.lead(eb.at) over (partition by eb.schedule_id order by eb.at) as valid_to
            from epoch_bounds eb) e
        where e.valid_to is not null
    ),
    cuts as (
        select c.schedule_id, d * day_us as at from compiled c, pg_catalog.generate_series(0, 6) d
        union
        select c.schedule_id, week_us from compiled c
        union
        select ss.schedule_id, d * day_us + (extract(epoch from x.tod) * 1000000)::pg_catalog.int8
        from schedule_spans ss, pg_catalog.generate_series(0, 6) d,
             lateral (values (ss.time_of_day_start), (ss.time_of_day_end)) x(tod)
        where x.tod is not null and d * day_us + (extract(epoch from x.tod) * 1000000)::pg_catalog.int8 < week_us
    ),
    stretches as (
        select s.* from (
            select c.schedule_id, c.at as week_from,
                   pg_catalog.lead(c.at) over (partition by c.schedule_id order by c.at) as week_to
            from cuts c) s
        where s.week_to is not null
    ),
    -- Each stretch takes the first matching rule in cds_stay's order (distinct on keeps the first).
    governed as (
        select distinct on (e.schedule_id, e.valid_from, s.week_from)
               e.schedule_id, e.valid_from, e.valid_to, s.week_from, s.week_to, sr.curb_policy_id, sr.rule_index
        from epochs e
        join stretches s on s.schedule_id = e.schedule_id
        left join schedule_rules sr
          on sr.schedule_id = e.schedule_id
         and (pg_catalog.cardinality(sr.spans) = 0
              or exists (select from pg_catalog.unnest(sr.spans) t
                         where private.cds_span_matches(t, e.valid_from,
                                                        monday + pg_catalog.make_interval(secs => s.week_from / 1000000.0))))
        order by e.schedule_id, e.valid_from, s.week_from,
                 sr.priority, sr.classes desc nulls last, sr.curb_policy_id, sr.rule_index
    ),
    numbered as (
        select g.*,
               pg_catalog.sum(case when prev_policy is not distinct from g.curb_policy_id
                                    and prev_rule is not distinct from g.rule_index and prev_to is not null
                                   then 0 else 1 end)
                   over (partition by g.schedule_id, g.valid_from order by g.week_from) as stretch_run
        from (select g.*,
                     pg_catalog.lag(g.curb_policy_id) over w as prev_policy,
                     pg_catalog.lag(g.rule_index) over w as prev_rule,
                     pg_catalog.lag(g.week_to) over w as prev_to
              from governed g
              window w as (partition by g.schedule_id, g.valid_from order by g.week_from)) g
    )
    select p_source, n.schedule_id, n.valid_from, n.valid_to, pg_catalog.min(n.week_from), pg_catalog.max(n.week_to),
           n.curb_policy_id, n.rule_index
    from numbered n
    group by n.schedule_id, n.valid_from, n.valid_to, n.stretch_run, n.curb_policy_id, n.rule_index;
end
$$;
revoke all on function private.cds_compile_source(text) from public;

------------------------------------------------------------------------------------------------------
-- Time: units, calendar arithmetic in the feed's time zone, and time spans
------------------------------------------------------------------------------------------------------

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

------------------------------------------------------------------------------------------------------
-- The cost of a stay in one zone
------------------------------------------------------------------------------------------------------

-- What one piece (a stretch of a run under one rate tier, piece_from to piece_to) is charged, times
-- 604 800 000 000 (microseconds in a week), so that fixed units stay exact until the total is rounded:
-- rate per unit, prorated (rolling) or per local calendar unit touched (calendar), after rounding up to
-- whole increment_duration units; units of a month or more count from the stay's start (cds_elapsed).
-- Shared by cds_stay and cds_compiled_costs. A SQL function without SET, called with plain columns, so
-- the planner inlines it (and cds_calendar_units in it).
create or replace function private.cds_piece_charge(rate integer, rate_unit text, rate_unit_period text,
                                                    increment_duration integer, piece_from timestamptz,
                                                    piece_to timestamptz, stay_start timestamptz, time_zone text)
    returns numeric
    language sql stable parallel safe
    return case
        when rate_unit_period = 'calendar' then
            rate * 604800000000::numeric
                 * case when increment_duration is null
                        then private.cds_calendar_units(piece_from, piece_to, rate_unit, time_zone)
                        else pg_catalog.ceil(private.cds_calendar_units(piece_from, piece_to, rate_unit, time_zone)
                                             / increment_duration::numeric) * increment_duration end
        when private.cds_unit_seconds(rate_unit) is not null then
            case when increment_duration is null
                 then rate * extract(epoch from piece_to - piece_from) * 1000000
                      * (604800 / private.cds_unit_seconds(rate_unit))
                 else rate * 604800000000::numeric * increment_duration
                      * pg_catalog.ceil(extract(epoch from piece_to - piece_from)
                                        / (private.cds_unit_seconds(rate_unit)::numeric * increment_duration)) end
        else
            pg_catalog.round(rate * 604800000000::numeric * case
                when increment_duration is null
                    then private.cds_elapsed(stay_start, piece_to, rate_unit, time_zone)
                         - private.cds_elapsed(stay_start, piece_from, rate_unit, time_zone)
                else pg_catalog.ceil((private.cds_elapsed(stay_start, piece_to, rate_unit, time_zone)
                                      - private.cds_elapsed(stay_start, piece_from, rate_unit, time_zone))
                                     / increment_duration) * increment_duration end)
    end;
revoke all on function private.cds_piece_charge(integer, text, text, integer, timestamptz, timestamptz, timestamptz, text)
    from public;

-- What parking in zone (p_source, p_zone) from p_start to p_end costs, and whether it is allowed.
--
-- 1. The stay is cut where the governing rule may change: local midnights, every time span's start and
--    end on each local day, span and zone dates, and every quarter hour of a day whose UTC offset
--    changes (a local time that a DST change skips or repeats has no single instant).
-- 2. Each piece is governed by the lowest-priority-number policy that applies at its start and has a
--    rule for the general public (no user_classes, or only car; a car rule beats an everyone rule; a
--    policy for named data source operators has none).
--    No such policy: the feed regulates nothing then, so parking is allowed and free.
--    Whether a span matches depends only on the piece's local weekday, day of month (when a span names
--    days of month), month (when a span names months), local time of day, and on which side of each
--    span date it lies: the governing rule is looked up once per such pattern, not once per piece, so a
--    year-long stay costs a few dozen lookups, not thousands.
-- 3. Consecutive pieces under one rule form a run. The stay stops at the first run that is not allowed:
--    a governing activity other than parking (no_parking), time under a rule past its max_stay counted
--    from the stay's start (max_stay), or time past the zone's end_date (no_data); at the same instant,
--    in that order. Nothing is charged then. The stay's first day is looked at first, alone: a stay that
--    stops within it costs a day's work however long it was meant to be.
-- 4. Runs are cut again by rate tiers (start_duration and end_duration count rate units from the stay's
--    start). Each (run, tier) is charged rate per unit, prorated (rolling) or per local calendar unit
--    touched (calendar), after rounding up to whole increment_duration units. Sums are exact: fixed
--    units are kept in week-microsecond fractions.
-- 5. Total: rounded up to a minor unit once, then to a multiple of the largest increment_amount among the
--    tiers charged, then capped at the smallest maximum_fee among them. A total beyond 2^53 - 1 (what a
--    JSON client holds exactly) is a feed error (22003), as is any arithmetic the feed's values overflow.
-- Generic plans: planning the pattern query took longer (7 ms) than running it for a month-long stay, and
-- its shape does not depend on the arguments.
create or replace function private.cds_stay(p_source text, p_zone uuid, p_start timestamptz, p_end timestamptz)
    returns table(cost_cents bigint, allowed boolean, reason text)
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    tz pg_catalog.text;
    zone_end pg_catalog.timestamptz;
    -- Runs: consecutive pieces under one rule (policy null: nothing governs). Each path first fills
    -- these with its governed pieces, one per element; the shared step below merges them into runs.
    run_policy pg_catalog.uuid[];
    run_rule integer[];
    run_from pg_catalog.timestamptz[];
    run_to pg_catalog.timestamptz[];
    stop_reason pg_catalog.text;
    window_end pg_catalog.timestamptz;
    week_us constant numeric := 604800000000;
    scaled numeric;
    largest_increment integer;
    smallest_maximum integer;
    total numeric;
    schedule integer;
begin
    select s.time_zone, z.end_date, case when sc.compiled then z.schedule_id end into tz, zone_end, schedule
    from cds.zones z join cds.sources s on s.source = z.source
    left join cds.schedules sc on sc.source = z.source and sc.schedule_id = z.schedule_id
    where z.source = p_source and z.curb_zone_id = p_zone;
    if p_start < private.cds_compiled_from() or p_end > private.cds_compiled_to() then
        schedule := null;
    end if;

    -- First the stay's first day alone: most stays that are not allowed stop within it (a max_stay of
    -- hours, a no-parking window), and then the rest of a year-long stay is never looked at.
    window_end := least(p_end, p_start + interval '1 day');
    loop
        if schedule is not null then
        -- Compiled: the stay is cut where the UTC offset changes and where the schedule's epoch does; in
        -- each part local time is the instant plus one offset, so each local week the part touches reads
        -- the schedule's intervals as they are and maps them back to instants exactly (a skipped local
        -- hour is never read, a repeated one is read twice).
        with epochs as (
            select distinct i.valid_from, i.valid_to from cds.schedule_intervals i
            where i.source = p_source and i.schedule_id = schedule
              and i.valid_from < window_end and i.valid_to > p_start
        ),
        offsets as (
            select o.valid_from, o.valid_to, o.utc_offset from cds.time_zone_offsets o
            where o.time_zone = tz and o.valid_from < window_end
              and o.valid_from >= (select o2.valid_from from cds.time_zone_offsets o2
                                   where o2.time_zone = tz and o2.valid_from <= p_start
                                   order by o2.valid_from desc limit 1)
        ),
        parts as (
            select greatest(o.valid_from, e.valid_from, p_start) as part_from,
                   least(o.valid_to, e.valid_to, window_end) as part_to, o.utc_offset, e.valid_from as epoch
            from offsets o join epochs e on e.valid_from < o.valid_to and e.valid_to > o.valid_from
        ),
        weeks as (
            select p.part_from, p.part_to, p.utc_offset, p.epoch, w.monday
            from parts p,
                 pg_catalog.generate_series(
                     pg_catalog.date_trunc('week', pg_catalog.timezone('UTC', p.part_from) + p.utc_offset),
                     pg_catalog.date_trunc('week', pg_catalog.timezone('UTC', p.part_to) + p.utc_offset
                                                   - pg_catalog.make_interval(secs => 0.000001)),
                     pg_catalog.make_interval(days => 7)) w(monday)
            where p.part_from < p.part_to
        ),
        pieces as (
            select greatest(w.part_from, pg_catalog.timezone('UTC', w.monday - w.utc_offset
                                                             + i.week_from * interval '1 microsecond')) as piece_from,
                   least(w.part_to, pg_catalog.timezone('UTC', w.monday - w.utc_offset
                                                        + i.week_to * interval '1 microsecond')) as piece_to,
                   i.curb_policy_id, i.rule_index
            from weeks w
            join cds.schedule_intervals i on i.source = p_source and i.schedule_id = schedule and i.valid_from = w.epoch
        ),
        governed as (
            select p.piece_from, p.piece_to, p.curb_policy_id, p.rule_index
            from pieces p
            where p.piece_from < p.piece_to
        )
        select pg_catalog.array_agg(g.curb_policy_id), pg_catalog.array_agg(g.rule_index),
               pg_catalog.array_agg(g.piece_from), pg_catalog.array_agg(g.piece_to)
          into run_policy, run_rule, run_from, run_to
        from governed g;
        else
        with spans as (
            select s.* from cds.time_spans s
            join cds.zone_policies zp on zp.source = s.source and zp.curb_policy_id = s.curb_policy_id
            where zp.source = p_source and zp.curb_zone_id = p_zone
        ),
        -- Span dates: which side of each a piece lies on is part of its pattern.
        span_dates as (
            select array(select distinct d from spans s, lateral (values (s.start_date), (s.end_date)) v(d)
                         where d is not null order by d) as bounds,
                   exists (select from spans s where s.days_of_month is not null) as uses_day_of_month,
                   exists (select from spans s where s.months is not null) as uses_month
        ),
        days as (
            select d::pg_catalog.date as day
            from pg_catalog.generate_series(pg_catalog.timezone(tz, p_start)::pg_catalog.date - 1,
                                            pg_catalog.timezone(tz, window_end)::pg_catalog.date + 1,
                                            pg_catalog.make_interval(days => 1)) d
        ),
        candidates as (
            select p_start as at
            union all
            select window_end
            union all
            select pg_catalog.timezone(tz, d.day::pg_catalog.timestamp) from days d
            union all
            select pg_catalog.timezone(tz, d.day + s.time_of_day_start) from days d, spans s
            where s.time_of_day_start is not null
            union all
            select pg_catalog.timezone(tz, d.day + s.time_of_day_end) from days d, spans s
            where s.time_of_day_end is not null
            union all
            select s.start_date from spans s
            union all
            select s.end_date from spans s
            union all
            select zone_end
            union all
            select q from days d,
                 pg_catalog.generate_series(pg_catalog.timezone(tz, d.day::pg_catalog.timestamp),
                                            pg_catalog.timezone(tz, (d.day + 1)::pg_catalog.timestamp),
                                            pg_catalog.make_interval(mins => 15)) q
            where pg_catalog.timezone(tz, pg_catalog.timezone(tz, d.day::pg_catalog.timestamp))
                  - pg_catalog.timezone('UTC', pg_catalog.timezone(tz, d.day::pg_catalog.timestamp))
               <> pg_catalog.timezone(tz, pg_catalog.timezone(tz, (d.day + 1)::pg_catalog.timestamp))
                  - pg_catalog.timezone('UTC', pg_catalog.timezone(tz, (d.day + 1)::pg_catalog.timestamp))
        ),
        cuts as (
            select distinct c.at from candidates c where c.at >= p_start and c.at <= window_end
        ),
        pieces as (
            select c.at as piece_from, pg_catalog.lead(c.at) over (order by c.at) as piece_to,
                   pg_catalog.timezone(tz, c.at) as local_at
            from cuts c
        ),
        -- What cds_span_matches reads of a piece's start, and nothing else.
        patterned as (
            select p.piece_from, p.piece_to,
                   pg_catalog.date_part('dow', p.local_at)::integer as dow,
                   -- 0: no span reads it (so every day is alike there).
                   case when sd.uses_day_of_month then pg_catalog.date_part('day', p.local_at)::integer else 0 end as day_of_month,
                   case when sd.uses_month then pg_catalog.date_part('month', p.local_at)::integer else 0 end as month,
                   p.local_at::pg_catalog.time as time_of_day,
                   (select pg_catalog.count(*) from pg_catalog.unnest(sd.bounds) b where b <= p.piece_from) as date_side
            from pieces p, span_dates sd
            where p.piece_to is not null
        ),
        patterns as (
            select pg_catalog.min(p.piece_from) as sample_at, p.dow, p.day_of_month, p.month, p.time_of_day, p.date_side
            from patterned p
            group by p.dow, p.day_of_month, p.month, p.time_of_day, p.date_side
        ),
        -- The zone's rules for the general public, with their policy's spans: read once, then every
        -- pattern is matched against this handful instead of the whole of cds.rules and cds.time_spans.
        zone_rules as materialized (
            select p.curb_policy_id, r.rule_index, p.priority, pg_catalog.cardinality(r.user_classes) as classes,
                   array(select s from cds.time_spans s
                         where s.source = p.source and s.curb_policy_id = p.curb_policy_id) as spans
            from cds.zone_policies zp
            join cds.policies p on p.source = zp.source and p.curb_policy_id = zp.curb_policy_id
            join cds.rules r on r.source = p.source and r.curb_policy_id = p.curb_policy_id
            where zp.source = p_source and zp.curb_zone_id = p_zone
              and coalesce(pg_catalog.cardinality(p.data_source_operator_ids), 0) = 0
              and (r.user_classes is null or r.user_classes <@ '{car}'::pg_catalog.text[])
        ),
        -- Materialized: otherwise the planner may look the rule up once per piece after the join below.
        governed_patterns as materialized (
            select pt.dow, pt.day_of_month, pt.month, pt.time_of_day, pt.date_side, g.curb_policy_id, g.rule_index
            from patterns pt
            left join lateral (
                select zr.curb_policy_id, zr.rule_index
                from zone_rules zr
                where pg_catalog.cardinality(zr.spans) = 0
                   or exists (select from pg_catalog.unnest(zr.spans) s
                              where private.cds_span_matches(s, pt.sample_at, pg_catalog.timezone(tz, pt.sample_at)))
                order by zr.priority, zr.classes desc nulls last, zr.curb_policy_id, zr.rule_index
                limit 1) g on true
        ),
        governed as (
            select p.piece_from, p.piece_to, g.curb_policy_id, g.rule_index
            from patterned p
            join governed_patterns g
              on g.dow = p.dow and g.day_of_month = p.day_of_month and g.month = p.month
             and g.time_of_day = p.time_of_day and g.date_side = p.date_side
        )
        select pg_catalog.array_agg(g.curb_policy_id), pg_catalog.array_agg(g.rule_index),
               pg_catalog.array_agg(g.piece_from), pg_catalog.array_agg(g.piece_to)
          into run_policy, run_rule, run_from, run_to
        from governed g;
        end if;

        -- Both paths gave the governed pieces, in no particular order (pieces never overlap, so their starts
        -- order them: one sort, here). Consecutive pieces under one rule form a run (gaps and islands: a
        -- new run starts where the rule changes).
        with governed as (
            select u.piece_from, u.piece_to, u.policy, u.rule_index,
                   case when pg_catalog.lag(u.policy) over w is not distinct from u.policy
                         and pg_catalog.lag(u.rule_index) over w is not distinct from u.rule_index
                         and pg_catalog.lag(u.piece_from) over w is not null
                        then 0 else 1 end as starts_run
            from rows from (pg_catalog.unnest(run_policy), pg_catalog.unnest(run_rule), pg_catalog.unnest(run_from),
                            pg_catalog.unnest(run_to)) as u(policy, rule_index, piece_from, piece_to)
            window w as (order by u.piece_from)
        ),
        numbered as (
            select g.*, pg_catalog.sum(g.starts_run) over (order by g.piece_from) as run
            from governed g
        ),
        runs as (
            select n.run, n.policy, n.rule_index, pg_catalog.min(n.piece_from) as run_from,
                   pg_catalog.max(n.piece_to) as run_to
            from numbered n
            group by n.run, n.policy, n.rule_index
        )
        select pg_catalog.array_agg(r.policy order by r.run), pg_catalog.array_agg(r.rule_index order by r.run),
               pg_catalog.array_agg(r.run_from order by r.run), pg_catalog.array_agg(r.run_to order by r.run)
          into run_policy, run_rule, run_from, run_to
        from runs r;

        -- The first instant the stay is not allowed, if any: the stay stops there and nothing is charged.
        -- max_stay is worked out once per rule, not per run.
        with rules as (
            select u.policy, u.rule_index, pg_catalog.min(u.run_from) as first_from, pg_catalog.max(u.run_to) as last_to
            from rows from (pg_catalog.unnest(run_policy), pg_catalog.unnest(run_rule), pg_catalog.unnest(run_from),
                            pg_catalog.unnest(run_to)) as u(policy, rule_index, run_from, run_to)
            where u.policy is not null
            group by u.policy, u.rule_index
        ),
        stops as (
            select x.first_from as at, 1 as rank, 'no_parking'::pg_catalog.text as reason
            from rules x join cds.rules r on r.source = p_source and r.curb_policy_id = x.policy and r.rule_index = x.rule_index
            where r.activity <> 'parking'
            union all
            select y.limit_at, 2, 'max_stay'
            from (select x.policy, x.rule_index, private.cds_after(p_start, r.max_stay_unit, r.max_stay, tz) as limit_at
                  from rules x join cds.rules r on r.source = p_source and r.curb_policy_id = x.policy
                                               and r.rule_index = x.rule_index
                  where r.max_stay is not null and r.activity = 'parking') y
            cross join lateral (
                select pg_catalog.min(greatest(u.run_from, y.limit_at)) as at
                from rows from (pg_catalog.unnest(run_policy), pg_catalog.unnest(run_rule), pg_catalog.unnest(run_from),
                                pg_catalog.unnest(run_to)) as u(policy, rule_index, run_from, run_to)
                where u.policy = y.policy and u.rule_index = y.rule_index and u.run_to > y.limit_at) w
            where w.at is not null
            union all
            select zone_end, 3, 'no_data' where zone_end < window_end
        )
        select s.reason into stop_reason from stops s order by s.at, s.rank limit 1;

        if stop_reason is not null then
            return query select null::pg_catalog.int8, false, stop_reason;
            return;
        end if;
        exit when window_end = p_end;
        window_end := p_end;
    end loop;

    with runs as (
        select u.* from rows from (pg_catalog.unnest(run_policy), pg_catalog.unnest(run_rule), pg_catalog.unnest(run_from),
                                   pg_catalog.unnest(run_to)) as u(policy, rule_index, run_from, run_to)
    ),
    -- Each tier's bounds once, not once per run.
    tiers as materialized (
        select t.*, private.cds_after(p_start, t.rate_unit, t.start_duration, tz) as tier_from,
               case when t.end_duration is null then 'infinity'::pg_catalog.timestamptz
                    else private.cds_after(p_start, t.rate_unit, t.end_duration, tz) end as tier_to
        from cds.rates t
        where t.source = p_source
          and exists (select from runs u where u.policy = t.curb_policy_id and u.rule_index = t.rule_index)
    ),
    -- Materialized: see cds_compiled_costs' charge_pieces.
    pieces as materialized (
        select t.*, greatest(u.run_from, t.tier_from) as piece_from, least(u.run_to, t.tier_to) as piece_to
        from runs u
        join tiers t on t.curb_policy_id = u.policy and t.rule_index = u.rule_index
    ),
    charged as (
        select p.*,
               private.cds_piece_charge(p.rate, p.rate_unit, p.rate_unit_period, p.increment_duration, p.piece_from,
                                        p.piece_to, p_start, tz) as scaled_charge
        from pieces p
        where p.piece_to > p.piece_from
    )
    select pg_catalog.sum(c.scaled_charge), pg_catalog.max(c.increment_amount), pg_catalog.min(c.maximum_fee)
      into scaled, largest_increment, smallest_maximum
    from charged c;

    total := pg_catalog.ceil(coalesce(scaled, 0) / week_us);
    if largest_increment is not null then
        total := pg_catalog.ceil(total / largest_increment::numeric) * largest_increment;
    end if;
    if smallest_maximum is not null then
        total := least(total, smallest_maximum);
    end if;
    if total > 9007199254740991 then
        raise exception using errcode = '22003',
            message = pg_catalog.format('published cost %s is beyond 2^53 - 1 cents', total);
    end if;
    return query select total::pg_catalog.int8, true, null::pg_catalog.text;
end
$$;
revoke all on function private.cds_stay(text, uuid, timestamptz, timestamptz) from public;

-- The stay priced in every zone of `p_zones` whose schedule is compiled, in one statement: what
-- cds_stay does per zone (its compiled path, then the same stops and the same charges), with the runs
-- worked out once per schedule (zones that share their policies share them) and every location of a
-- quote priced by one plan instead of three statements each (as separate statements, starting their
-- plans cost more than running them: about 0.4 ms per location for a 2-hour stay). The whole stay is
-- looked at, not its first day first: compiled runs are cheap, and a location-days bound holds the rest.
-- Zones without a compiled schedule are absent. An error (an overflow the feed's values cause) ends the
-- statement: the caller then prices each zone on its own with cds_stay, which stops at the first piece
-- not allowed and answers feed_error only for the zone concerned. A total beyond 2^53 - 1 is returned
-- as it is, for the caller to refuse.
create or replace function private.cds_compiled_costs(p_zones cds.zones[], p_start timestamptz, p_end timestamptz)
    returns table(source text, curb_zone_id uuid, cost_cents numeric, allowed boolean, reason text)
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan
as $$
#variable_conflict use_column
declare
    week_us constant numeric := 604800000000;
begin
    if p_start < private.cds_compiled_from() or p_end > private.cds_compiled_to() then
        return;
    end if;
    return query
    with zones as (
        select z.source, z.curb_zone_id, z.end_date as zone_end, z.schedule_id
        from pg_catalog.unnest(p_zones) z
        join cds.schedules sc on sc.source = z.source and sc.schedule_id = z.schedule_id
        where sc.compiled
    ),
    schedules as (
        select distinct z.source, z.schedule_id, s.time_zone as tz
        from zones z join cds.sources s on s.source = z.source
    ),
    epochs as (
        select distinct sc.source, sc.schedule_id, sc.tz, i.valid_from, i.valid_to
        from schedules sc
        join cds.schedule_intervals i on i.source = sc.source and i.schedule_id = sc.schedule_id
        where i.valid_from < p_end and i.valid_to > p_start
    ),
    parts as (
        select e.source, e.schedule_id, greatest(o.valid_from, e.valid_from, p_start) as part_from,
               least(o.valid_to, e.valid_to, p_end) as part_to, o.utc_offset, e.valid_from as epoch
        from epochs e
        join cds.time_zone_offsets o
          on o.time_zone = e.tz and o.valid_from < least(e.valid_to, p_end) and o.valid_to > greatest(e.valid_from, p_start)
         and o.valid_from >= (select o2.valid_from from cds.time_zone_offsets o2
                              where o2.time_zone = e.tz and o2.valid_from <= p_start
                              order by o2.valid_from desc limit 1)
    ),
    pieces as (
        select p.source, p.schedule_id,
               greatest(p.part_from, pg_catalog.timezone('UTC', w.monday - p.utc_offset
                                                         + i.week_from * interval '1 microsecond')) as piece_from,
               least(p.part_to, pg_catalog.timezone('UTC', w.monday - p.utc_offset
                                                    + i.week_to * interval '1 microsecond')) as piece_to,
               i.curb_policy_id, i.rule_index
        from parts p
        cross join lateral pg_catalog.generate_series(
                 pg_catalog.date_trunc('week', pg_catalog.timezone('UTC', p.part_from) + p.utc_offset),
                 pg_catalog.date_trunc('week', pg_catalog.timezone('UTC', p.part_to) + p.utc_offset
                                               - pg_catalog.make_interval(secs => 0.000001)),
                 pg_catalog.make_interval(days => 7)) w(monday)
        join cds.schedule_intervals i
          on i.source = p.source and i.schedule_id = p.schedule_id and i.valid_from = p.epoch
    ),
    -- Runs: consecutive pieces under one rule (gaps and islands), per schedule.
    numbered as (
        select g.*, pg_catalog.sum(g.starts_run) over (partition by g.source, g.schedule_id order by g.piece_from) as run
        from (select p.*,
                     case when pg_catalog.lag(p.curb_policy_id) over w is not distinct from p.curb_policy_id
                           and pg_catalog.lag(p.rule_index) over w is not distinct from p.rule_index
                           and pg_catalog.lag(p.piece_from) over w is not null
                          then 0 else 1 end as starts_run
              from pieces p
              where p.piece_from < p.piece_to
              window w as (partition by p.source, p.schedule_id order by p.piece_from)) g
    ),
    runs as materialized (
        select n.source, n.schedule_id, n.curb_policy_id, n.rule_index, pg_catalog.min(n.piece_from) as run_from,
               pg_catalog.max(n.piece_to) as run_to
        from numbered n
        group by n.source, n.schedule_id, n.run, n.curb_policy_id, n.rule_index
    ),
    run_rules as materialized (
        select u.source, u.schedule_id, sc.tz, u.curb_policy_id, u.rule_index, r.activity, r.max_stay, r.max_stay_unit,
               pg_catalog.min(u.run_from) as first_from
        from runs u
        join schedules sc on sc.source = u.source and sc.schedule_id = u.schedule_id
        join cds.rules r on r.source = u.source and r.curb_policy_id = u.curb_policy_id and r.rule_index = u.rule_index
        group by u.source, u.schedule_id, sc.tz, u.curb_policy_id, u.rule_index, r.activity, r.max_stay, r.max_stay_unit
    ),
    -- The same stops as cds_stay: the first instant not allowed, no_parking before max_stay before no_data.
    schedule_stops as (
        select x.source, x.schedule_id, x.first_from as at, 1 as rank, 'no_parking'::pg_catalog.text as reason
        from run_rules x where x.activity <> 'parking'
        union all
        select y.source, y.schedule_id, w.at, 2, 'max_stay'
        from (select x.*, private.cds_after(p_start, x.max_stay_unit, x.max_stay, x.tz) as limit_at
              from run_rules x where x.max_stay is not null and x.activity = 'parking') y
        cross join lateral (
            select pg_catalog.min(greatest(u.run_from, y.limit_at)) as at
            from runs u
            where u.source = y.source and u.schedule_id = y.schedule_id and u.curb_policy_id = y.curb_policy_id
              and u.rule_index = y.rule_index and u.run_to > y.limit_at) w
        where w.at is not null
    ),
    stops as (
        select z.source, z.curb_zone_id,
               (select t.reason
                from (select ss.at, ss.rank, ss.reason from schedule_stops ss
                      where ss.source = z.source and ss.schedule_id = z.schedule_id
                      union all
                      select z.zone_end, 3, 'no_data' where z.zone_end < p_end) t
                order by t.at, t.rank limit 1) as reason
        from zones z
    ),
    tiers as (
        select t.source, t.curb_policy_id, t.rule_index, t.rate, t.rate_unit, t.rate_unit_period, t.increment_duration,
               t.increment_amount, t.maximum_fee, x.schedule_id, x.tz,
               private.cds_after(p_start, t.rate_unit, t.start_duration, x.tz) as tier_from,
               case when t.end_duration is null then 'infinity'::pg_catalog.timestamptz
                    else private.cds_after(p_start, t.rate_unit, t.end_duration, x.tz) end as tier_to
        from run_rules x
        join cds.rates t on t.source = x.source and t.curb_policy_id = x.curb_policy_id and t.rule_index = x.rule_index
        -- Only what an allowed stay is charged: a schedule that stops for every zone is not priced.
        where exists (select from zones z join stops st on st.source = z.source and st.curb_zone_id = z.curb_zone_id
                      where z.source = x.source and z.schedule_id = x.schedule_id and st.reason is null)
    ),
    -- Materialized: piece bounds as plain columns, so that cds_calendar_units is inlined (an argument
    -- that is an expression and read several times in its body keeps it a function call, planned anew
    -- on every call).
    charge_pieces as materialized (
        select t.*, greatest(u.run_from, t.tier_from) as piece_from, least(u.run_to, t.tier_to) as piece_to
        from runs u
        join tiers t on t.source = u.source and t.schedule_id = u.schedule_id and t.curb_policy_id = u.curb_policy_id
                    and t.rule_index = u.rule_index
    ),
    charged as (
        select p.source, p.schedule_id, p.increment_amount, p.maximum_fee,
               private.cds_piece_charge(p.rate, p.rate_unit, p.rate_unit_period, p.increment_duration, p.piece_from,
                                        p.piece_to, p_start, p.tz) as scaled_charge
        from charge_pieces p
        where p.piece_to > p.piece_from
    ),
    totals as (
        select c.source, c.schedule_id, pg_catalog.ceil(pg_catalog.sum(c.scaled_charge) / week_us) as total,
               pg_catalog.max(c.increment_amount) as largest_increment, pg_catalog.min(c.maximum_fee) as smallest_maximum
        from charged c
        group by c.source, c.schedule_id
    )
    select z.source, z.curb_zone_id,
           case when st.reason is null then
               (select case when t.smallest_maximum is null then v.total else least(v.total, t.smallest_maximum) end
                from (select case when t.largest_increment is null then coalesce(t.total, 0)
                                  else pg_catalog.ceil(coalesce(t.total, 0) / t.largest_increment::numeric)
                                       * t.largest_increment end as total) v)
           end,
           st.reason is null, st.reason
    from zones z
    join stops st on st.source = z.source and st.curb_zone_id = z.curb_zone_id
    left join totals t on t.source = z.source and t.schedule_id = z.schedule_id;
end
$$;
revoke all on function private.cds_compiled_costs(cds.zones[], timestamptz, timestamptz) from public;

-- Published costs of one stay for any number of locations: the zone valid at the stay's start.
-- Each location is priced on its own: a zone whose values the engine cannot compute with (an overflow,
-- a total beyond 2^53 - 1: a feed the importer's bounds predate, or one loaded around them) answers
-- reason 'feed_error' for that location, and the other locations of the call are unaffected. A
-- cancellation (statement timeout) is not caught: it ends the call. Generic plans: custom ones were
-- planned anew on every call, which cost more than running them.
create or replace function private.cds_published_cost(p_location_ids text[], p_starts_at timestamptz, p_duration interval)
    returns table(location_id text, currency text, cost_cents bigint, allowed boolean, reason text, source text,
                  last_updated timestamptz)
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan set enable_seqscan = on
as $$
#variable_conflict use_column
declare
    stay_end pg_catalog.timestamptz;
    zone record;
    -- What cds_compiled_costs priced, by source/curb_zone_id.
    priced_keys pg_catalog.text[];
    priced_costs numeric[];
    priced_allowed boolean[];
    priced_reasons pg_catalog.text[];
    k integer;
begin
    if p_starts_at is null or p_duration is null then
        raise exception using errcode = '22023', message = 'starts_at and duration are required';
    end if;
    if not pg_catalog.isfinite(p_starts_at) then
        raise exception using errcode = '22023', message = 'starts_at must be a finite time';
    end if;
    -- A stay is elapsed time: an interval's days count 24 hours, its months 30 days.
    if p_duration <= interval '0' or p_duration > private.cds_max_stay() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('duration must be more than 0 and at most %s', private.cds_max_stay());
    end if;
    stay_end := p_starts_at + pg_catalog.make_interval(secs => extract(epoch from p_duration)::double precision);

    -- Compiled zones first, all in one statement; whatever it cannot price (an error in it, a total
    -- beyond 2^53 - 1, a zone not compiled) is priced below on its own.
    begin
        select pg_catalog.array_agg(c.source || '/' || c.curb_zone_id::pg_catalog.text), pg_catalog.array_agg(c.cost_cents),
               pg_catalog.array_agg(c.allowed), pg_catalog.array_agg(c.reason)
          into priced_keys, priced_costs, priced_allowed, priced_reasons
        from private.cds_compiled_costs(
                 array(select z.v from (select distinct l.id from pg_catalog.unnest(p_location_ids) l(id)) ids
                       join lateral (
                           select v from cds.zones v
                           where v.location_id = ids.id and v.start_date <= p_starts_at
                             and (v.end_date is null or v.end_date > p_starts_at)
                           order by v.start_date desc
                           limit 1) z on true),
                 p_starts_at, stay_end) c
        where c.cost_cents is null or c.cost_cents <= 9007199254740991;
    exception when data_exception or program_limit_exceeded then
        priced_keys := null;
    end;

    for zone in
        select z.location_id, z.source, z.curb_zone_id, s.currency, s.last_updated
        from (select distinct l.id from pg_catalog.unnest(p_location_ids) l(id)) ids
        join lateral (
            select v.* from cds.zones v
            where v.location_id = ids.id and v.start_date <= p_starts_at
              and (v.end_date is null or v.end_date > p_starts_at)
            order by v.start_date desc
            limit 1) z on true
        join cds.sources s on s.source = z.source
        order by z.location_id
    loop
        location_id := zone.location_id;
        currency := zone.currency;
        source := zone.source;
        last_updated := zone.last_updated;
        k := pg_catalog.array_position(priced_keys, zone.source || '/' || zone.curb_zone_id::pg_catalog.text);
        if k is not null then
            cost_cents := priced_costs[k]::pg_catalog.int8;
            allowed := priced_allowed[k];
            reason := priced_reasons[k];
            return next;
            continue;
        end if;
        begin
            select c.cost_cents, c.allowed, c.reason into cost_cents, allowed, reason
            from private.cds_stay(zone.source, zone.curb_zone_id, p_starts_at, stay_end) c;
        exception when data_exception or program_limit_exceeded then
            cost_cents := null;
            allowed := false;
            reason := 'feed_error';
        end;
        return next;
    end loop;
end
$$;
revoke all on function private.cds_published_cost(text[], timestamptz, interval) from public;

-- Its limits, private.cds_max_stay() and private.cds_max_location_days(), are in settings.sql.

-- 22023 naming the limit when a client's call would price more than cds_max_location_days(): the cost
-- of a quote grows with locations × days, so both bounds alone still allow 50 year-long stays per call.
create or replace function private.cds_check_location_days(p_location_ids text[], p_duration interval)
    returns void
    language plpgsql immutable set search_path = ''
as $$
declare
    locations integer := (select pg_catalog.count(distinct l.id)::integer from pg_catalog.unnest(p_location_ids) l(id));
    days integer;
begin
    if p_duration is null or p_duration <= interval '0' or p_duration > private.cds_max_stay() then
        return;  -- cds_published_cost names what is wrong with the duration itself.
    end if;
    days := pg_catalog.ceil(extract(epoch from p_duration) / 86400)::integer;
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
    if pg_catalog.cardinality(published_cost.location_ids) > private.max_median_locations() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location_ids: %s, at most %s per call',
                                        pg_catalog.cardinality(published_cost.location_ids), private.max_median_locations());
    end if;
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
    if pg_catalog.cardinality(ids) > private.max_median_locations() then
        raise exception using errcode = '22023',
            message = pg_catalog.format('too many location_ids: %s, at most %s per call',
                                        pg_catalog.cardinality(ids), private.max_median_locations());
    end if;
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
    select l.id, kind::pg_catalog.text, coalesce(p.currency, m.currency), m.median_cents, m.reporters,
           p.cost_cents, p.allowed, p.reason, p.source, p.last_updated
    from (select distinct u.id from pg_catalog.unnest(ids) u(id)) l
    left join published p on p.location_id = l.id
    left join lateral (
        select m.* from medians m
        where m.location_id = l.id and (p.currency is null or m.currency = p.currency)
        order by m.reporters desc, m.currency
        limit 1) m on true
    where p.location_id is not null or m.location_id is not null
    order by l.id;
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

-- First compile: sources imported before 0019_compiled_schedules.sql (or whose compiled tables were
-- emptied by hand) are compiled here, so that every zone has its schedule after `pricesvc migrate`.
do $$
declare
    stale pg_catalog.text;
begin
    for stale in select distinct z.source from cds.zones z where z.schedule_id is null order by 1 loop
        perform private.cds_compile_source(stale);
    end loop;
end
$$;
