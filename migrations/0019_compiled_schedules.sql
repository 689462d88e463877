-- Compiled published rates (issue 22): what a quote needs of a zone's CDS policies, worked out once at
-- import instead of on every quote. published_rates.sql fills these tables (private.cds_compile_source,
-- called by the loader) and reads them (private.cds_stay); everything here is derived from the other
-- cds tables and can be rebuilt from them.
--
-- A schedule is one set of policies (zones that share their policies share it: 20 000 zones over 6
-- policies compile to a handful). Its intervals say, for each stretch of the local week (Monday 00:00
-- to the next Monday 00:00, in microseconds), which rule governs: the lowest-priority-number policy
-- with a rule for the general public, exactly as private.cds_stay reads cds.time_spans. Span dates
-- (start_date, end_date) split time into epochs, each with its own week. A schedule whose spans name
-- days of the month or months is not compiled (compiled = false): those zones keep the general path.

create table cds.schedules (
    source text not null references cds.sources (source) on delete cascade,
    schedule_id integer not null,
    -- The zone's curb_policy_ids, sorted: zones with the same set share the schedule.
    policy_ids uuid[] not null,
    compiled boolean not null,
    primary key (source, schedule_id)
);
-- Each zone finds its schedule by its set of policies.
create unique index schedules_policy_ids_key on cds.schedules (source, policy_ids);

-- Null until the source is compiled (a feed imported before 0019: published_rates.sql compiles it).
alter table cds.zones add column schedule_id integer;
alter table cds.zones add constraint zones_schedule_fkey foreign key (source, schedule_id)
    references cds.schedules (source, schedule_id);
-- Replacing a source deletes its schedules: the foreign key's check finds the zones by this index.
create index zones_schedule_idx on cds.zones (source, schedule_id);

create table cds.schedule_intervals (
    source text not null,
    schedule_id integer not null,
    -- The epoch: instants from valid_from (inclusive) to valid_to (exclusive); '-infinity'/'infinity'
    -- when no span has dates.
    valid_from timestamptz not null,
    valid_to timestamptz not null,
    -- Local time since Monday 00:00, microseconds: [week_from, week_to) within [0, 604 800 000 000).
    week_from bigint not null,
    week_to bigint not null,
    -- Null: no policy governs (parking allowed and free).
    curb_policy_id uuid,
    rule_index integer,
    primary key (source, schedule_id, valid_from, week_from),
    foreign key (source, schedule_id) references cds.schedules (source, schedule_id) on delete cascade,
    constraint schedule_intervals_epoch check (valid_to > valid_from),
    constraint schedule_intervals_week check (0 <= week_from and week_from < week_to and week_to <= 604800000000)
);

-- UTC offsets of a time zone, between its transitions: within one row local time is the instant plus
-- utc_offset, so a stay's local weeks map back to instants exactly, on both sides of a DST change.
-- Computed from PostgreSQL's own tz data for the years a stay may fall in (published_rates.sql,
-- private.cds_compile_time_zone); a stay outside them takes the general path.
create table cds.time_zone_offsets (
    time_zone text not null,
    valid_from timestamptz not null,
    valid_to timestamptz not null,
    utc_offset interval not null,
    primary key (time_zone, valid_from),
    constraint time_zone_offsets_range check (valid_to > valid_from)
);
