-- Published rates (CDS), compiled at import: each time zone's UTC offsets and each source's
-- schedules (the tables of 0019_compiled_schedules.sql), which private.cds_stay and cds_compiled_costs
-- (cds_2_price.sql) read instead of working out the governing rule from cds.time_spans on every quote; and,
-- at the end of this file, the first compile of sources imported before 0019.
--
-- PL/pgSQL, resolved when called; after cds_1_time.sql and cds_2_price.sql (file order: see
-- cds_1_time.sql's header) because that first compile runs when this file is applied and reads what they
-- define. Each function here revokes EXECUTE from PUBLIC as it is created and grants nothing.

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
    week_us constant pg_catalog.int8 := private.cds_week_microseconds();
    day_us constant pg_catalog.int8 := week_us / 7;
    -- A Monday: local times of the week are read on it (no compiled span reads the date itself).
    monday constant pg_catalog.timestamp := '2001-01-01 00:00:00';
    -- Any instant: cds_runs merges stretches as instants, week_origin + their microseconds.
    week_origin constant pg_catalog.timestamptz := '2001-01-01 00:00:00+00';
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
        -- The candidates of cds_stay's general path, ranked the same (cds_candidate_rules).
        select sc.schedule_id, cr.curb_policy_id, cr.rule_index, cr.rank, cr.spans
        from cds.schedules sc
        cross join lateral private.cds_candidate_rules(sc.source, sc.policy_ids) cr
        where sc.source = p_source and sc.compiled
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
         and exists (select from private.cds_policy_applies(sr.spans, e.valid_from,
                                                            monday + pg_catalog.make_interval(secs => s.week_from / 1000000.0)))
        order by e.schedule_id, e.valid_from, s.week_from, sr.rank
    ),
    -- Adjacent stretches under one rule merged, per schedule and epoch: cds_runs, on a line where a week's
    -- microsecond w is the instant week_origin + w.
    stretch_runs as (
        select g.schedule_id, g.valid_from, g.valid_to, r.curb_policy_id, r.rule_index, r.run_from, r.run_to
        from (select g.schedule_id, g.valid_from, g.valid_to, pg_catalog.array_agg(g.curb_policy_id) as policies,
                     pg_catalog.array_agg(g.rule_index) as rules,
                     pg_catalog.array_agg(week_origin + g.week_from * interval '1 microsecond') as froms,
                     pg_catalog.array_agg(week_origin + g.week_to * interval '1 microsecond') as tos
              from governed g
              group by g.schedule_id, g.valid_from, g.valid_to) g
        cross join lateral private.cds_runs(g.policies, g.rules, g.froms, g.tos) r
    )
    select p_source, sr.schedule_id, sr.valid_from, sr.valid_to,
           (extract(epoch from sr.run_from - week_origin) * 1000000)::pg_catalog.int8,
           (extract(epoch from sr.run_to - week_origin) * 1000000)::pg_catalog.int8,
           sr.curb_policy_id, sr.rule_index
    from stretch_runs sr;
end
$$;
revoke all on function private.cds_compile_source(text) from public;
