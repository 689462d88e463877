-- Every tunable rule and shared constant, in one place: the first repeatable file `pricesvc migrate`
-- applies (MigrationLayout.pricesvc.firstFileName), so every other file's functions may read these.
-- IMMUTABLE SQL functions, so the planner folds them into constants. To change one, edit it here: the
-- next `pricesvc migrate` replaces it. Rows already stored are not re-checked, but for what the medians
-- depend on: the threshold, the window, maturity, the threshold mode, the band width and the fold margin.
-- A change of any of those re-derives the stored maturity and rebuilds the median store in this file's
-- transaction (private.median_rule_reconcile(), which `pricesvc migrate` calls right after this file:
-- MigrationLayout.pricesvc's firstFileFollowUp), with admissions held until it commits
-- (docs/median-store.md): on a large database that is a rebuild's time, minutes at 10 M reports.
-- Functions only: the checks that call rate_kinds() are 0027_rate_kind_checks.after.sql's.
--
-- The first versions were created by versioned files (0004, 0005, 0007, 0012); each is redefined here
-- with the same signature. Who may call them is in policies.sql (nobody but the owner, except
-- private.rate_kinds(), which the table's check constraint calls as the inserting role). Each file
-- revokes EXECUTE from PUBLIC as it creates a function (policies.sql re-declares it), so a new
-- function is closed from the moment its file commits.

------------------------------------------------------------------------------------------------------
-- Medians
------------------------------------------------------------------------------------------------------

-- A median is published once this many distinct, mature reporters back it.
create or replace function private.median_min_reporters() returns integer
    language sql immutable parallel safe
    return 3;
revoke all on function private.median_min_reporters() from public;

-- Reports older than this no longer count toward a median (counted_reports.sql: always as elapsed time in
-- UTC, so '180 days' is 4 320 hours whatever a session's TimeZone).
create or replace function private.report_window() returns interval
    language sql immutable parallel safe
    return interval '180 days';
revoke all on function private.report_window() from public;

-- Reports are deleted (`pricesvc prune`) once they are this much older than the report window: no
-- median, overview or cap reads them any more, and a reporter id with a timestamp is a record of where
-- one person parked. The grace keeps them past the window's edge for readers whose clocks trail.
create or replace function private.report_retention_grace() returns interval
    language sql immutable parallel safe
    return interval '7 days';
revoke all on function private.report_retention_grace() from public;

-- The most locations one price_medians call may ask for.
create or replace function private.max_median_locations() returns integer
    language sql immutable parallel safe
    return 50;
revoke all on function private.max_median_locations() from public;

-- A report counts toward a median (its value, `reporters`, `reports` and the threshold) only once its
-- reporter's identity is this old: sybils made on the spot cannot complete a threshold.
create or replace function private.reporter_maturity() returns interval
    language sql immutable parallel safe
    return interval '24 hours';
revoke all on function private.reporter_maturity() from public;

-- What a median counts: 'mature' (identities at least reporter_maturity() old: the default) or
-- 'attested' (identities made by an App Attest sign-up, and mature). Under 'attested', an unattested
-- identity's reports are stored and capped like any other, and never counted. Only the owner or
-- `pricesvc migrate` can change it (edit it here and migrate): the service's roles cannot redefine a
-- function. Changing it recomputes every stored report's maturity (private.median_rule_reconcile(), called
-- at the end of this file).
create or replace function private.threshold_counts() returns text
    language sql immutable parallel safe
    return 'mature';
revoke all on function private.threshold_counts() from public;

------------------------------------------------------------------------------------------------------
-- The median store (median_store.sql)
------------------------------------------------------------------------------------------------------

-- Width of a histogram band in cents: a median reads every band of its group, then the prices of the one
-- or two bands holding the middle ranks.
create or replace function private.median_band_cents() returns integer
    language sql immutable parallel safe
    return 64;
revoke all on function private.median_band_cents() from public;

-- A group is folded when a report's id is a multiple of this, so a group holds about this many queued
-- reports; reads correct the folded state with each of them.
create or replace function private.median_fold_every() returns integer
    language sql immutable parallel safe
    return 16;
revoke all on function private.median_fold_every() from public;

-- A reporter is folded in only once their identity is this much older than maturity requires: a replica
-- whose clock trails the primary's by less than this still sees every folded reporter as mature.
create or replace function private.median_fold_margin() returns interval
    language sql immutable parallel safe
    return interval '5 minutes';
revoke all on function private.median_fold_margin() from public;

------------------------------------------------------------------------------------------------------
-- Reports
------------------------------------------------------------------------------------------------------

-- The rate kinds, once: the table's check, the private.rate_kind domain (0007) and the median functions
-- all read this list.
create or replace function private.rate_kinds() returns text[]
    language sql immutable parallel safe
    return '{hourly,daily,flat,monthly}'::text[];
revoke all on function private.rate_kinds() from public;

-- The hourly cap: at most reporter_cap() reports per reporter within cap_window().
create or replace function private.reporter_cap() returns integer
    language sql immutable parallel safe
    return 10;
revoke all on function private.reporter_cap() from public;

create or replace function private.cap_window() returns interval
    language sql immutable parallel safe
    return interval '1 hour';
revoke all on function private.cap_window() from public;

------------------------------------------------------------------------------------------------------
-- Tokens and sessions
------------------------------------------------------------------------------------------------------

-- Clock skew tolerated on a token's exp, nbf and iat.
create or replace function private.jwt_leeway() returns interval
    language sql immutable parallel safe
    return interval '30 seconds';
revoke all on function private.jwt_leeway() from public;

-- What an analyst session may spend: a statement runs at most this long, and spills at most this much
-- to temporary files. name=value, as pg_db_role_setting stores a role default; applied by
-- private.limit_analyst_sessions() (limits.sql).
create or replace function private.analyst_session_limits() returns text[]
    language sql immutable parallel safe
    return array['statement_timeout=60s', 'temp_file_limit=512MB'];
revoke all on function private.analyst_session_limits() from public;

------------------------------------------------------------------------------------------------------
-- Published rates (cds_*.sql, published_rates.sql)
------------------------------------------------------------------------------------------------------

-- The longest stay priced in one call.
create or replace function private.cds_max_stay() returns interval
    language sql immutable parallel safe
    return interval '366 days';
revoke all on function private.cds_max_stay() from public;

-- The most location-days one quote may price: locations × days of the stay (each started day counts).
-- 5 year-long stays, or 50 locations for 36 days. A year-long stay at a metered location costs about
-- 18 ms and 50 locations for 36 days about 0.29 s (pgbench, 2 busy shared cores): room for a machine
-- several times busier within the expensive-call statement timeout (1.5 s).
create or replace function private.cds_max_location_days() returns integer
    language sql immutable parallel safe
    return 1830;
revoke all on function private.cds_max_location_days() from public;

-- The largest published cost the engine answers, 2^53 - 1 minor units: what a JSON client holds exactly.
-- A larger total is a feed error (the importer's bounds keep feeds below it).
create or replace function private.cds_max_safe_integer() returns bigint
    language sql immutable parallel safe
    return 9007199254740991;
revoke all on function private.cds_max_safe_integer() from public;

-- Microseconds in a week: every fixed unit divides it, so charges are summed exactly as fractions of it,
-- and a compiled schedule measures its local week in it (0019's check on cds.schedule_intervals repeats
-- the number: a versioned file cannot call a function).
create or replace function private.cds_week_microseconds() returns bigint
    language sql immutable parallel safe
    return 604800000000;
revoke all on function private.cds_week_microseconds() from public;

------------------------------------------------------------------------------------------------------
-- Places (places.sql)
------------------------------------------------------------------------------------------------------

-- The widest search places_nearby makes, in metres: 5 km around a destination is already a drive, and
-- the cost of a search grows with the places inside its radius.
create or replace function private.places_max_radius_m() returns integer
    language sql immutable parallel safe
    return 5000;
revoke all on function private.places_max_radius_m() from public;

-- The most places one places_nearby call returns.
create or replace function private.places_max_results() returns integer
    language sql immutable parallel safe
    return 100;
revoke all on function private.places_max_results() from public;

------------------------------------------------------------------------------------------------------
-- Advisory-lock namespaces: the first key of pg_advisory_xact_lock(int, int), distinct from
-- `pricesvc migrate`'s session lock, a single bigint key ("pricesvc").
------------------------------------------------------------------------------------------------------

-- The per-reporter locks the cap trigger takes: 1886546275 = 0x70726963, "pric" in ASCII. The second key
-- is the reporter's hash.
create or replace function private.reporter_lock_namespace() returns integer
    language sql immutable parallel safe
    return 1886546275;
revoke all on function private.reporter_lock_namespace() from public;

-- The per-group lock that serialises the median store's folds: 1835361390 = "medn" in ASCII.
create or replace function private.median_lock_namespace() returns integer
    language sql immutable parallel safe
    return 1835361390;
revoke all on function private.median_lock_namespace() from public;

-- places_match: the widest radius a name is matched in (its default, 150 m, is in its signature), the most
-- candidates it returns, and the longest name it compares.
create or replace function private.places_max_match_radius_m() returns integer
    language sql immutable parallel safe
    return 1000;
revoke all on function private.places_max_match_radius_m() from public;

create or replace function private.places_match_results() returns integer
    language sql immutable parallel safe
    return 5;
revoke all on function private.places_match_results() from public;

create or replace function private.places_max_name_length() returns integer
    language sql immutable parallel safe
    return 200;
revoke all on function private.places_max_name_length() from public;

-- The lock one source's place imports take turns on: 1886151027 = "plas" in ASCII.
create or replace function private.places_lock_namespace() returns integer
    language sql immutable parallel safe
    return 1886151027;
revoke all on function private.places_lock_namespace() from public;

-- Sources with more distinct policy sets than this are not compiled (cds_3_compile.sql,
-- cds_compile_source): their quotes take the general path.
create or replace function private.cds_compiled_max_schedules() returns integer
    language sql immutable parallel safe
    return 1000;
revoke all on function private.cds_compiled_max_schedules() from public;
