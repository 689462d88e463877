-- Published rates (issue #10): cities' Curb Data Specification (CDS) Curbs feeds, imported by
-- `pricesvc import-rates`, and what a planned stay costs under them, beside the community medians.
-- docs/published-rates.md explains the CDS semantics implemented here.
--
-- This file holds the tables (schema cds). The loader and the cost functions are in published_rates.sql,
-- the grants and the ownership of schema cds in policies.sql (docs/contracts.md, "migrations/ layout").

------------------------------------------------------------------------------------------------------
-- Tables: one row per CDS object, keyed by the source (the NAME given to import-rates). Public data:
-- analysts read them directly; reporters only through the functions of published_rates.sql.
------------------------------------------------------------------------------------------------------

create schema cds;

-- One row per imported source: the feed's envelope and the checksum of what was loaded.
create table cds.sources (
    source text primary key,
    time_zone text not null,
    currency text not null,
    last_updated timestamptz not null,
    author text,
    license_url text,
    checksum text not null,
    imported_at timestamptz not null,
    -- The source is the prefix of location ids ("NAME:"), so no colon and nothing a person cannot type.
    constraint sources_source_name check (source ~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$'),
    constraint sources_currency_iso4217 check (currency ~ '^[A-Z]{3}$')
);

create table cds.zones (
    source text not null references cds.sources (source),
    curb_zone_id uuid not null,
    -- What apps send with their reports: NAME:user_zone_id, or NAME:curb_zone_id without one.
    location_id text not null,
    user_zone_id text,
    name text,
    start_date timestamptz not null,
    end_date timestamptz,
    published_date timestamptz not null,
    last_updated_date timestamptz not null,
    primary key (source, curb_zone_id),
    constraint zones_location_id_length check (char_length(location_id) between 1 and 200),
    constraint zones_location_id_no_control_chars check (location_id !~ '[[:cntrl:]]'),
    constraint zones_validity check (end_date is null or end_date > start_date)
);
-- A location has at most one zone per start date; the importer also refuses overlapping validity.
create unique index zones_location_id_start_key on cds.zones (location_id, start_date);

create table cds.policies (
    source text not null references cds.sources (source),
    curb_policy_id uuid not null,
    priority integer not null,
    published_date timestamptz not null,
    -- Set: the policy applies only to these data source operators, never to the general public.
    data_source_operator_ids uuid[],
    primary key (source, curb_policy_id)
);

-- A zone's curb_policy_ids: every one must be a policy of the same source.
create table cds.zone_policies (
    source text not null,
    curb_zone_id uuid not null,
    curb_policy_id uuid not null,
    primary key (source, curb_zone_id, curb_policy_id),
    foreign key (source, curb_zone_id) references cds.zones (source, curb_zone_id) on delete cascade,
    foreign key (source, curb_policy_id) references cds.policies (source, curb_policy_id) on delete cascade
);
create index zone_policies_policy_idx on cds.zone_policies (source, curb_policy_id);

create table cds.rules (
    source text not null,
    curb_policy_id uuid not null,
    rule_index integer not null,
    activity text not null,
    max_stay integer,
    max_stay_unit text not null default 'minute',
    no_return integer,
    no_return_unit text not null default 'minute',
    -- null: everyone.
    user_classes text[],
    primary key (source, curb_policy_id, rule_index),
    foreign key (source, curb_policy_id) references cds.policies (source, curb_policy_id) on delete cascade,
    constraint rules_activity_known check (activity in ('parking', 'no parking', 'loading', 'no loading', 'unloading',
        'no unloading', 'stopping', 'no stopping', 'travel', 'no travel')),
    constraint rules_max_stay_positive check (max_stay > 0),
    constraint rules_no_return_non_negative check (no_return >= 0),
    constraint rules_units_known check (
        max_stay_unit in ('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year')
        and no_return_unit in ('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year'))
);

create table cds.time_spans (
    source text not null,
    curb_policy_id uuid not null,
    span_index integer not null,
    days_of_week text[],
    days_of_month integer[],
    months integer[],
    time_of_day_start time,
    -- null: midnight at the end of the day.
    time_of_day_end time,
    start_date timestamptz,
    end_date timestamptz,
    designated_period text,
    designated_period_except boolean not null default false,
    primary key (source, curb_policy_id, span_index),
    foreign key (source, curb_policy_id) references cds.policies (source, curb_policy_id) on delete cascade,
    constraint time_spans_days_of_week_known check (days_of_week <@ '{sun,mon,tue,wed,thu,fri,sat}'::text[]),
    constraint time_spans_days_of_month_range check (1 <= all (days_of_month) and 31 >= all (days_of_month)),
    constraint time_spans_months_range check (1 <= all (months) and 12 >= all (months))
);

create table cds.rates (
    source text not null,
    curb_policy_id uuid not null,
    rule_index integer not null,
    rate_index integer not null,
    rate integer not null,
    rate_unit text not null,
    rate_unit_period text not null default 'rolling',
    increment_duration integer,
    increment_amount integer,
    start_duration integer not null default 0,
    end_duration integer,
    maximum_fee integer,
    primary key (source, curb_policy_id, rule_index, rate_index),
    foreign key (source, curb_policy_id, rule_index) references cds.rules (source, curb_policy_id, rule_index)
        on delete cascade,
    constraint rates_rate_non_negative check (rate >= 0),
    constraint rates_unit_known check (rate_unit in ('second', 'minute', 'hour', 'day', 'week', 'month', 'quarter', 'year')),
    constraint rates_period_known check (rate_unit_period in ('rolling', 'calendar')),
    constraint rates_increments_positive check (increment_duration > 0 and increment_amount > 0),
    constraint rates_durations check (start_duration >= 0 and end_duration > start_duration),
    constraint rates_maximum_fee_non_negative check (maximum_fee >= 0)
);

-- Every import that changed something: what was loaded, from which feed, and how much.
create table cds.imports (
    id bigint generated always as identity primary key,
    source text not null,
    imported_at timestamptz not null,
    last_updated timestamptz not null,
    author text,
    license_url text,
    checksum text not null,
    zones integer not null,
    policies integer not null,
    rules integer not null,
    time_spans integer not null,
    rates integer not null
);
create index imports_source_idx on cds.imports (source, imported_at desc);
