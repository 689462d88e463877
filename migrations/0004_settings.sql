-- Every tunable rule in one place. IMMUTABLE SQL functions, so the planner folds them into constants.
-- To change one, add a migration that replaces the function.

create function private.median_min_reporters() returns integer
    language sql immutable parallel safe
    return 3;

create function private.report_window() returns interval
    language sql immutable parallel safe
    return interval '180 days';

create function private.reporter_cap() returns integer
    language sql immutable parallel safe
    return 10;

create function private.cap_window() returns interval
    language sql immutable parallel safe
    return interval '1 hour';

create function private.max_median_locations() returns integer
    language sql immutable parallel safe
    return 50;

create function private.jwt_leeway() returns interval
    language sql immutable parallel safe
    return interval '30 seconds';

revoke execute on all functions in schema private from public;
