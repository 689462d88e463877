-- Published rates (CDS), the cost of a stay: what one piece is charged, a stay in one zone (cds_stay: the
-- general path, which is the reference, and the compiled one), the compiled zones of a quote in one
-- statement (cds_compiled_costs), and a call's locations (cds_published_cost). docs/published-rates.md
-- explains the semantics.
--
-- After cds_1_time.sql (file order: see its header): cds_piece_charge's SQL body inlines its functions.
-- The PL/pgSQL functions here read the settings (settings.sql) and the compiled schedules' years
-- (cds_3_compile.sql) when called. Each function here revokes EXECUTE from PUBLIC as it is created and
-- grants nothing.

-- What one piece (a stretch of a run under one rate tier, piece_from to piece_to) is charged, times
-- cds_week_microseconds(), so that fixed units stay exact until the total is rounded:
-- rate per unit, prorated (rolling) or per local calendar unit touched (calendar), after rounding up to
-- whole increment_duration units; units of a month or more count from the stay's start (cds_elapsed).
-- Shared by cds_stay and cds_compiled_costs. A SQL function without SET, called with plain columns, so
-- the planner inlines it (and cds_calendar_units in it). Inlined, it is one expression that every
-- execution of a plan holding it compiles anew, so cds_calendar_units (most of it) appears once: a whole
-- number of units divided by 1 and rounded up is itself, so no increment_duration is an increment of 1.
create or replace function private.cds_piece_charge(rate integer, rate_unit text, rate_unit_period text,
                                                    increment_duration integer, piece_from timestamptz,
                                                    piece_to timestamptz, stay_start timestamptz, time_zone text)
    returns numeric
    language sql stable parallel safe
    return case
        when rate_unit_period = 'calendar' then
            rate * private.cds_week_microseconds()::numeric
                 * (pg_catalog.ceil(private.cds_calendar_units(piece_from, piece_to, rate_unit, time_zone)
                                    / coalesce(increment_duration, 1)::numeric) * coalesce(increment_duration, 1))
        when private.cds_unit_seconds(rate_unit) is not null then
            case when increment_duration is null
                 then rate * extract(epoch from piece_to - piece_from)
                      * (private.cds_week_microseconds() / private.cds_unit_seconds(rate_unit))
                 else rate * private.cds_week_microseconds()::numeric * increment_duration
                      * pg_catalog.ceil(extract(epoch from piece_to - piece_from)
                                        / (private.cds_unit_seconds(rate_unit)::numeric * increment_duration)) end
        else
            pg_catalog.round(rate * private.cds_week_microseconds()::numeric * case
                when increment_duration is null
                    then private.cds_elapsed(stay_start, piece_to, rate_unit, time_zone)
                         - private.cds_elapsed(stay_start, piece_from, rate_unit, time_zone)
                else pg_catalog.ceil((private.cds_elapsed(stay_start, piece_to, rate_unit, time_zone)
                                      - private.cds_elapsed(stay_start, piece_from, rate_unit, time_zone))
                                     / increment_duration) * increment_duration end)
    end;
revoke all on function private.cds_piece_charge(integer, text, text, integer, timestamptz, timestamptz, timestamptz, text)
    from public;

-- Runs: consecutive pieces under one rule merged (gaps and islands: a new run starts where the rule
-- changes; a null rule, where nothing governs, is a rule too). The pieces come in any order (they never
-- overlap, so their starts order them) and cover a stretch of time without gaps. The one definition of a
-- run: cds_stay and cds_compiled_costs merge governed pieces with it, and cds_compile_source a week's
-- stretches. SQL without SET, so that callers' plans inline it.
create or replace function private.cds_runs(p_policies uuid[], p_rules integer[], p_from timestamptz[],
                                            p_to timestamptz[])
    returns table(curb_policy_id uuid, rule_index integer, run_from timestamptz, run_to timestamptz)
    language sql immutable parallel safe
begin atomic
    with pieces as (
        select u.policy, u.rule_index, u.piece_from, u.piece_to,
               case when pg_catalog.lag(u.policy) over w is not distinct from u.policy
                     and pg_catalog.lag(u.rule_index) over w is not distinct from u.rule_index
                     and pg_catalog.lag(u.piece_from) over w is not null
                    then 0 else 1 end as starts_run
        from rows from (pg_catalog.unnest(p_policies), pg_catalog.unnest(p_rules), pg_catalog.unnest(p_from),
                        pg_catalog.unnest(p_to)) as u(policy, rule_index, piece_from, piece_to)
        window w as (order by u.piece_from)
    ),
    numbered as (
        select p.policy, p.rule_index, p.piece_from, p.piece_to,
               pg_catalog.sum(p.starts_run) over (order by p.piece_from) as run
        from pieces p
    )
    select n.policy, n.rule_index, pg_catalog.min(n.piece_from), pg_catalog.max(n.piece_to)
    from numbered n
    group by n.run, n.policy, n.rule_index;
end;
revoke all on function private.cds_runs(uuid[], integer[], timestamptz[], timestamptz[]) from public;

-- The governed pieces of the stretch p_start to p_end in a zone whose policies compiled to schedule
-- (p_source, p_schedule), in time zone p_time_zone: the stretch is cut where the UTC offset changes and
-- where the schedule's epoch does; in each part local time is the instant plus one offset, so each local
-- week the part touches reads the schedule's intervals as they are and maps them back to instants exactly
-- (a skipped local hour is never read, a repeated one is read twice). Only a lookup: what the pieces
-- cost is worked out as for the general path's (cds_runs, cds_stop, cds_total). For a stay within
-- cds_compiled_from() and cds_compiled_to().
create or replace function private.cds_schedule_pieces(p_source text, p_schedule integer, p_time_zone text,
                                                       p_start timestamptz, p_end timestamptz)
    returns table(curb_policy_id uuid, rule_index integer, piece_from timestamptz, piece_to timestamptz)
    language sql stable parallel safe
begin atomic
    with epochs as (
        select distinct i.valid_from, i.valid_to from cds.schedule_intervals i
        where i.source = p_source and i.schedule_id = p_schedule
          and i.valid_from < p_end and i.valid_to > p_start
    ),
    offsets as (
        select o.valid_from, o.valid_to, o.utc_offset from cds.time_zone_offsets o
        where o.time_zone = p_time_zone and o.valid_from < p_end
          and o.valid_from >= (select o2.valid_from from cds.time_zone_offsets o2
                               where o2.time_zone = p_time_zone and o2.valid_from <= p_start
                               order by o2.valid_from desc limit 1)
    ),
    parts as (
        select greatest(o.valid_from, e.valid_from, p_start) as part_from,
               least(o.valid_to, e.valid_to, p_end) as part_to, o.utc_offset, e.valid_from as epoch
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
        select i.curb_policy_id, i.rule_index,
               greatest(w.part_from, pg_catalog.timezone('UTC', w.monday - w.utc_offset
                                                         + i.week_from * interval '1 microsecond')) as piece_from,
               least(w.part_to, pg_catalog.timezone('UTC', w.monday - w.utc_offset
                                                    + i.week_to * interval '1 microsecond')) as piece_to
        from weeks w
        join cds.schedule_intervals i on i.source = p_source and i.schedule_id = p_schedule and i.valid_from = w.epoch
    )
    select p.curb_policy_id, p.rule_index, p.piece_from, p.piece_to from pieces p where p.piece_from < p.piece_to;
end;
revoke all on function private.cds_schedule_pieces(text, integer, text, timestamptz, timestamptz) from public;

-- Where a stay under these runs (cds_runs, of the stay from p_start to p_end in a zone whose data ends at
-- p_zone_end) stops being allowed, and why; no row when it is allowed to its end. The first instant it is
-- not: a governing activity other than parking (no_parking), time under a rule past its max_stay counted
-- from the stay's start (max_stay), or time past the zone's end_date (no_data); at the same instant, in
-- that order. max_stay is worked out once per rule, not per run. The one definition of the stops:
-- cds_stay and cds_compiled_costs both ask it.
create or replace function private.cds_stop(p_source text, p_time_zone text, p_start timestamptz, p_end timestamptz,
                                            p_zone_end timestamptz, p_policies uuid[], p_rules integer[],
                                            p_from timestamptz[], p_to timestamptz[])
    returns table(reason text)
    language sql stable parallel safe
begin atomic
    with runs as (
        select u.policy, u.rule_index, u.run_from, u.run_to
        from rows from (pg_catalog.unnest(p_policies), pg_catalog.unnest(p_rules), pg_catalog.unnest(p_from),
                        pg_catalog.unnest(p_to)) as u(policy, rule_index, run_from, run_to)
    ),
    rules as (
        select x.policy, x.rule_index, x.first_from, r.activity, r.max_stay, r.max_stay_unit
        from (select u.policy, u.rule_index, pg_catalog.min(u.run_from) as first_from
              from runs u where u.policy is not null
              group by u.policy, u.rule_index) x
        join cds.rules r on r.source = p_source and r.curb_policy_id = x.policy and r.rule_index = x.rule_index
    ),
    stops as (
        select x.first_from as at, 1 as rank, 'no_parking'::pg_catalog.text as reason
        from rules x where x.activity <> 'parking'
        union all
        select w.at, 2, 'max_stay'
        from (select x.policy, x.rule_index, private.cds_after(p_start, x.max_stay_unit, x.max_stay, p_time_zone) as limit_at
              from rules x where x.max_stay is not null and x.activity = 'parking') y
        cross join lateral (
            select pg_catalog.min(greatest(u.run_from, y.limit_at)) as at
            from runs u
            where u.policy = y.policy and u.rule_index = y.rule_index and u.run_to > y.limit_at) w
        where w.at is not null
        union all
        select p_zone_end, 3, 'no_data' where p_zone_end < p_end
    )
    select s.reason from stops s order by s.at, s.rank limit 1;
end;
revoke all on function private.cds_stop(text, text, timestamptz, timestamptz, timestamptz, uuid[], integer[],
                                        timestamptz[], timestamptz[]) from public;

-- What an allowed stay under these runs costs, in minor units, from its start p_start (steps 4 and 5 of
-- cds_stay): runs cut again by rate tiers (start_duration and end_duration count rate units from the
-- stay's start), each (run, tier) charged by cds_piece_charge in week-microsecond fractions, the sum
-- rounded up to a minor unit once, then to a multiple of the largest increment_amount among the tiers
-- charged, then capped at the smallest maximum_fee among them. Not checked against
-- cds_max_safe_integer(): callers refuse a larger total their own way. The one definition of charging:
-- cds_stay and cds_compiled_costs both ask it.
create or replace function private.cds_total(p_source text, p_time_zone text, p_start timestamptz, p_policies uuid[],
                                             p_rules integer[], p_from timestamptz[], p_to timestamptz[])
    returns table(total numeric)
    language sql stable parallel safe
begin atomic
    with runs as (
        select u.policy, u.rule_index, u.run_from, u.run_to
        from rows from (pg_catalog.unnest(p_policies), pg_catalog.unnest(p_rules), pg_catalog.unnest(p_from),
                        pg_catalog.unnest(p_to)) as u(policy, rule_index, run_from, run_to)
    ),
    -- Each tier's bounds once, not once per run.
    tiers as materialized (
        select t.curb_policy_id, t.rule_index, t.rate, t.rate_unit, t.rate_unit_period, t.increment_duration,
               t.increment_amount, t.maximum_fee,
               private.cds_after(p_start, t.rate_unit, t.start_duration, p_time_zone) as tier_from,
               case when t.end_duration is null then 'infinity'::pg_catalog.timestamptz
                    else private.cds_after(p_start, t.rate_unit, t.end_duration, p_time_zone) end as tier_to
        from cds.rates t
        where t.source = p_source
          and exists (select from runs u where u.policy = t.curb_policy_id and u.rule_index = t.rule_index)
    ),
    -- Materialized: piece bounds as plain columns, so that cds_piece_charge and cds_calendar_units in it
    -- are inlined (an argument that is an expression and read several times in its body keeps it a
    -- function call, planned anew on every call).
    pieces as materialized (
        select t.rate, t.rate_unit, t.rate_unit_period, t.increment_duration, t.increment_amount, t.maximum_fee,
               greatest(u.run_from, t.tier_from) as piece_from, least(u.run_to, t.tier_to) as piece_to
        from runs u
        join tiers t on t.curb_policy_id = u.policy and t.rule_index = u.rule_index
    ),
    charged as (
        select pg_catalog.sum(private.cds_piece_charge(p.rate, p.rate_unit, p.rate_unit_period, p.increment_duration,
                                                       p.piece_from, p.piece_to, p_start, p_time_zone)) as scaled,
               pg_catalog.max(p.increment_amount) as largest_increment, pg_catalog.min(p.maximum_fee) as smallest_maximum
        from pieces p
        where p.piece_to > p.piece_from
    ),
    minor_units as (
        select pg_catalog.ceil(coalesce(c.scaled, 0) / private.cds_week_microseconds()::numeric) as total,
               c.largest_increment, c.smallest_maximum
        from charged c
    ),
    incremented as (
        select case when m.largest_increment is null then m.total
                    else pg_catalog.ceil(m.total / m.largest_increment::numeric) * m.largest_increment end as total,
               m.smallest_maximum
        from minor_units m
    )
    select case when i.smallest_maximum is null then i.total else least(i.total, i.smallest_maximum) end
    from incremented i;
end;
revoke all on function private.cds_total(text, text, timestamptz, uuid[], integer[], timestamptz[], timestamptz[])
    from public;

-- The rules that may govern a zone whose policies are p_policy_ids, each with its policy's time spans and
-- its rank: only rules for the general public (no user_classes or an empty list, or exactly car; a policy
-- for named data source operators has none). At an instant, the first by rank whose policy applies then
-- (one of its spans matches, or it has none) governs: the lowest priority number, a car rule before an
-- everyone rule, then the lowest policy id and rule index (for determinism). The one definition of the
-- candidates and their order: cds_stay's general path reads them per pattern, cds_compile_source per
-- stretch of a schedule's week.
create or replace function private.cds_candidate_rules(p_source text, p_policy_ids uuid[])
    returns table(curb_policy_id uuid, rule_index integer, rank bigint, spans cds.time_spans[])
    language sql stable parallel safe
begin atomic
    select p.curb_policy_id, r.rule_index,
           pg_catalog.row_number() over (order by p.priority, pg_catalog.cardinality(r.user_classes) desc nulls last,
                                                  p.curb_policy_id, r.rule_index),
           array(select t from cds.time_spans t where t.source = p.source and t.curb_policy_id = p.curb_policy_id)
    from cds.policies p
    join cds.rules r on r.source = p.source and r.curb_policy_id = p.curb_policy_id
    where p.source = p_source and p.curb_policy_id = any (p_policy_ids)
      and coalesce(pg_catalog.cardinality(p.data_source_operator_ids), 0) = 0
      and (r.user_classes is null or r.user_classes <@ '{car}'::pg_catalog.text[]);
end;
revoke all on function private.cds_candidate_rules(text, uuid[]) from public;

-- One row when a policy whose time spans are `spans` applies at `at` (local time `local_at`): one of its
-- spans matches, or it has none; no row otherwise. The one definition: cds_stay's general path and
-- cds_compile_source ask it, inside EXISTS, for each candidate rule (a set-returning SQL function, so
-- that it is inlined there; a boolean one holding EXISTS would be a function call each time).
create or replace function private.cds_policy_applies(spans cds.time_spans[], at timestamptz, local_at timestamp)
    returns table(applies boolean)
    language sql stable parallel safe
begin atomic
    select true
    where pg_catalog.cardinality(spans) = 0
       or exists (select from pg_catalog.unnest(spans) s where private.cds_span_matches(s, at, local_at));
end;
revoke all on function private.cds_policy_applies(cds.time_spans[], timestamptz, timestamp) from public;

-- What parking in zone (p_source, p_zone) from p_start to p_end costs, and whether it is allowed: the
-- reference, one path from a stay to its cost. A compiled schedule only replaces steps 1 and 2 (the
-- governed pieces, looked up by cds_schedule_pieces); steps 3 to 5 are the same functions either way
-- (cds_runs, cds_stop, cds_total), and cds_compiled_costs calls them too.
--
-- 1. The stay is cut where the governing rule may change: local midnights, every time span's start and
--    end on each local day, span and zone dates, and every quarter hour of a day whose UTC offset
--    changes (a local time that a DST change skips or repeats has no single instant).
-- 2. Each piece is governed by the first candidate rule (cds_candidate_rules: the general public's, by
--    policy priority, car before everyone) whose policy applies at its start.
--    No such policy: the feed regulates nothing then, so parking is allowed and free.
--    Whether a span matches depends only on the piece's local weekday, day of month (when a span names
--    days of month), month (when a span names months), local time of day, and on which side of each
--    span date it lies: the governing rule is looked up once per such pattern, not once per piece, so a
--    year-long stay costs a few dozen lookups, not thousands.
-- 3. Consecutive pieces under one rule form a run (cds_runs). The stay stops (cds_stop) at the first run that is not allowed:
--    a governing activity other than parking (no_parking), time under a rule past its max_stay counted
--    from the stay's start (max_stay), or time past the zone's end_date (no_data); at the same instant,
--    in that order. Nothing is charged then. The stay's first day is looked at first, alone: a stay that
--    stops within it costs a day's work however long it was meant to be.
-- 4. Runs are cut again (cds_total) by rate tiers (start_duration and end_duration count rate units from the stay's
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
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan set enable_seqscan = on
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
        -- Compiled: the schedule's governed pieces, looked up (cds_schedule_pieces).
        select pg_catalog.array_agg(g.curb_policy_id), pg_catalog.array_agg(g.rule_index),
               pg_catalog.array_agg(g.piece_from), pg_catalog.array_agg(g.piece_to)
          into run_policy, run_rule, run_from, run_to
        from private.cds_schedule_pieces(p_source, schedule, tz, p_start, window_end) g;
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
            select cr.curb_policy_id, cr.rule_index, cr.rank, cr.spans
            from (select pg_catalog.array_agg(zp.curb_policy_id) as ids from cds.zone_policies zp
                  where zp.source = p_source and zp.curb_zone_id = p_zone) z
            cross join lateral private.cds_candidate_rules(p_source, z.ids) cr
        ),
        -- Materialized: otherwise the planner may look the rule up once per piece after the join below.
        governed_patterns as materialized (
            select pt.dow, pt.day_of_month, pt.month, pt.time_of_day, pt.date_side, g.curb_policy_id, g.rule_index
            from patterns pt
            left join lateral (
                select zr.curb_policy_id, zr.rule_index
                from zone_rules zr
                where exists (select from private.cds_policy_applies(zr.spans, pt.sample_at,
                                                                     pg_catalog.timezone(tz, pt.sample_at)))
                order by zr.rank
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

        -- Both paths gave the governed pieces, in no particular order: cds_runs merges them into runs.
        select pg_catalog.array_agg(r.curb_policy_id order by r.run_from),
               pg_catalog.array_agg(r.rule_index order by r.run_from),
               pg_catalog.array_agg(r.run_from order by r.run_from), pg_catalog.array_agg(r.run_to order by r.run_from)
          into run_policy, run_rule, run_from, run_to
        from private.cds_runs(run_policy, run_rule, run_from, run_to) r;

        -- The first instant the stay is not allowed, if any (cds_stop): the stay stops there and nothing is
        -- charged.
        select s.reason into stop_reason
        from private.cds_stop(p_source, tz, p_start, window_end, zone_end, run_policy, run_rule, run_from, run_to) s;

        if stop_reason is not null then
            return query select null::pg_catalog.int8, false, stop_reason;
            return;
        end if;
        exit when window_end = p_end;
        window_end := p_end;
    end loop;

    select t.total into total
    from private.cds_total(p_source, tz, p_start, run_policy, run_rule, run_from, run_to) t;
    if total > private.cds_max_safe_integer() then
        raise exception using errcode = '22003',
            message = pg_catalog.format('published cost %s is beyond 2^53 - 1 cents', total);
    end if;
    return query select total::pg_catalog.int8, true, null::pg_catalog.text;
end
$$;
revoke all on function private.cds_stay(text, uuid, timestamptz, timestamptz) from public;

-- The stay priced in every zone of `p_zones` whose schedule is compiled, in one statement: what
-- cds_stay's compiled path does per zone, with the same functions (cds_schedule_pieces, cds_runs,
-- cds_stop, cds_total), the runs and the total worked out once per schedule (zones that share their
-- policies share them), the stops once per schedule and zone end_date, and every location of a
-- quote priced by one plan instead of three statements each (as separate statements, starting their
-- plans cost more than running them: about 0.4 ms per location for a 2-hour stay). Starting this plan is
-- still about a third of its cost. No sequential scans: the generic plan read cds.time_zone_offsets
-- whole (the rows of every time zone) and filtered it, once per schedule, where an index probe reads
-- one row (0.03 ms a schedule, measured on the benchmark's feed). The whole stay is
-- looked at, not its first day first: compiled runs are cheap, and a location-days bound holds the rest.
-- Zones without a compiled schedule are absent. An error (an overflow the feed's values cause) ends the
-- statement: the caller then prices each zone on its own with cds_stay, which stops at the first piece
-- not allowed and answers feed_error only for the zone concerned. A total beyond 2^53 - 1 is returned
-- as it is, for the caller to refuse.
create or replace function private.cds_compiled_costs(p_zones cds.zones[], p_start timestamptz, p_end timestamptz)
    returns table(source text, curb_zone_id uuid, cost_cents numeric, allowed boolean, reason text)
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan
    set enable_seqscan = off
as $$
#variable_conflict use_column
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
    -- Each schedule's runs, once for the zones that share it: its governed pieces looked up
    -- (cds_schedule_pieces), merged (cds_runs). The runs' arrays are in no particular order (the four in
    -- the same one): cds_stop and cds_total read them as a set.
    schedule_runs as materialized (
        select sc.source, sc.schedule_id, sc.tz, r.policies, r.rules, r.froms, r.tos
        from schedules sc
        cross join lateral (
            select pg_catalog.array_agg(p.curb_policy_id) as policies, pg_catalog.array_agg(p.rule_index) as rules,
                   pg_catalog.array_agg(p.piece_from) as froms, pg_catalog.array_agg(p.piece_to) as tos
            from private.cds_schedule_pieces(sc.source, sc.schedule_id, sc.tz, p_start, p_end) p) g
        cross join lateral (
            select pg_catalog.array_agg(x.curb_policy_id) as policies,
                   pg_catalog.array_agg(x.rule_index) as rules,
                   pg_catalog.array_agg(x.run_from) as froms,
                   pg_catalog.array_agg(x.run_to) as tos
            from private.cds_runs(g.policies, g.rules, g.froms, g.tos) x) r
    ),
    -- The same stops as cds_stay's (cds_stop), once per schedule and zone end_date (the only thing of a
    -- zone's own that a stop reads): the zones that share both share the answer.
    schedule_stops as materialized (
        select sr.source, sr.schedule_id, e.zone_end, st.reason
        from schedule_runs sr
        join (select distinct z.source, z.schedule_id, z.zone_end from zones z) e
          on e.source = sr.source and e.schedule_id = sr.schedule_id
        left join lateral private.cds_stop(sr.source, sr.tz, p_start, p_end, e.zone_end, sr.policies, sr.rules,
                                           sr.froms, sr.tos) st on true
    ),
    zone_stops as (
        select z.source, z.curb_zone_id, z.schedule_id, ss.reason
        from zones z
        join schedule_stops ss on ss.source = z.source and ss.schedule_id = z.schedule_id
                              and ss.zone_end is not distinct from z.zone_end
    ),
    -- The same charges (cds_total), per schedule, and only where a zone's stay is allowed: a schedule
    -- that stops for every zone is not priced. Materialized: joined to the zones, it would be worked out
    -- again for each of them.
    totals as materialized (
        select sr.source, sr.schedule_id, t.total
        from schedule_runs sr
        cross join lateral private.cds_total(sr.source, sr.tz, p_start, sr.policies, sr.rules, sr.froms, sr.tos) t
        where exists (select from zone_stops zs
                      where zs.source = sr.source and zs.schedule_id = sr.schedule_id and zs.reason is null)
    )
    select zs.source, zs.curb_zone_id, case when zs.reason is null then t.total end, zs.reason is null, zs.reason
    from zone_stops zs
    left join totals t on t.source = zs.source and t.schedule_id = zs.schedule_id;
end
$$;
revoke all on function private.cds_compiled_costs(cds.zones[], timestamptz, timestamptz) from public;

-- Published costs of one stay for any number of locations: the zone valid at the stay's start.
-- Each location is priced on its own: a zone whose values the engine cannot compute with (an overflow,
-- a total beyond 2^53 - 1: a feed the importer's bounds predate, or one loaded around them) answers
-- reason 'feed_error' for that location, and the other locations of the call are unaffected. A
-- cancellation (statement timeout) is not caught: it ends the call. Generic plans: custom ones were
-- planned anew on every call, which cost more than running them. No sequential scans: a plan kept for the
-- session must not depend on how few zones there were when it was made (over the benchmark's 13, each
-- location's zone was a scan and a sort instead of one probe of zones_location_id_start_key).
-- cds_stay, the general path, sets them back on for its own plans, as they were planned before.
create or replace function private.cds_published_cost(p_location_ids text[], p_starts_at timestamptz, p_duration interval)
    returns table(location_id text, currency text, cost_cents bigint, allowed boolean, reason text, source text,
                  last_updated timestamptz)
    language plpgsql stable set search_path = '' set plan_cache_mode = force_generic_plan set enable_seqscan = off
as $$
#variable_conflict use_column
declare
    stay_end pg_catalog.timestamptz;
    zones cds.zones[];
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

    -- Each location's zone valid at the stay's start (the latest to start), once for both ways below.
    zones := array(select z.v from (select distinct l.id from pg_catalog.unnest(p_location_ids) l(id)) ids
                   join lateral (
                       select v from cds.zones v
                       where v.location_id = ids.id and v.start_date <= p_starts_at
                         and (v.end_date is null or v.end_date > p_starts_at)
                       order by v.start_date desc
                       limit 1) z on true);

    -- Compiled zones first, all in one statement; whatever it cannot price (an error in it, a total
    -- beyond 2^53 - 1, a zone not compiled) is priced below on its own.
    begin
        select pg_catalog.array_agg(c.source || '/' || c.curb_zone_id::pg_catalog.text), pg_catalog.array_agg(c.cost_cents),
               pg_catalog.array_agg(c.allowed), pg_catalog.array_agg(c.reason)
          into priced_keys, priced_costs, priced_allowed, priced_reasons
        from private.cds_compiled_costs(zones, p_starts_at, stay_end) c
        where c.cost_cents is null or c.cost_cents <= private.cds_max_safe_integer();
    exception when data_exception or program_limit_exceeded then
        priced_keys := null;
    end;

    -- Every zone priced there (the usual case: one row per zone, none left out): the rows the loop below
    -- would return, one per zone in location order, returned by one statement instead.
    if pg_catalog.cardinality(priced_keys) = pg_catalog.cardinality(zones) then
        return query
        select z.location_id, s.currency, c.cost::pg_catalog.int8, c.allowed, c.reason, z.source, s.last_updated
        from pg_catalog.unnest(zones) z
        join cds.sources s on s.source = z.source
        join rows from (pg_catalog.unnest(priced_keys), pg_catalog.unnest(priced_costs), pg_catalog.unnest(priced_allowed),
                        pg_catalog.unnest(priced_reasons)) c(key, cost, allowed, reason)
          on c.key = z.source || '/' || z.curb_zone_id::pg_catalog.text
        order by z.location_id;
        return;
    end if;

    for zone in
        select z.location_id, z.source, z.curb_zone_id, s.currency, s.last_updated
        from pg_catalog.unnest(zones) z
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
