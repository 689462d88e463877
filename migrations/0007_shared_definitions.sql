-- Definitions the repeatable files share, each written once, and the one-off steps of splitting
-- policies.sql into auth.sql, limits.sql, medians.sql, reports.sql and policies.sql.

-- The rate kinds, once: the table's check, the rate-kind domain and the median functions all read this
-- list. IMMUTABLE like the settings in 0004; to change it, add a migration that replaces the function
-- (rows already stored are not re-checked).
create function private.rate_kinds() returns text[]
    language sql immutable parallel safe
    return '{hourly,daily,flat,monthly}'::text[];

-- A known rate kind: what the median functions take. Arguments are cast to it (medians.sql), so an
-- unknown kind fails before anything is read.
create domain private.rate_kind as text
    constraint rate_kind_known check (value = any (private.rate_kinds()));

-- The table's check reads the same list. It stays a table constraint under its old name (rather than the
-- column becoming the domain), so a bad row still fails with 23514 "new row for relation "price_reports"
-- violates check constraint "price_reports_rate_kind_known"", which the service passes on to clients.
alter table public.price_reports
    drop constraint price_reports_rate_kind_known,
    add constraint price_reports_rate_kind_known check (rate_kind = any (private.rate_kinds()));

-- One median row: what price_median, price_medians and price_median_overview return (same columns, in
-- the same order, as their former RETURNS TABLE).
create type private.median_row as (
    location_id text,
    rate_kind text,
    currency text,
    median_cents integer,
    reporters integer,
    reports integer,
    last_reported_at timestamptz
);

-- Advisory-lock namespace of the per-reporter locks the cap trigger takes: the first key of
-- pg_advisory_xact_lock(int, int), 1886546275 = 0x70726963, "pric" in ASCII. The second key is the
-- reporter's hash. Distinct from `pricesvc migrate`'s session lock, a single bigint key ("pricesvc").
create function private.reporter_lock_namespace() returns integer
    language sql immutable parallel safe
    return 1886546275;

revoke execute on function private.rate_kinds() from public;
revoke execute on function private.reporter_lock_namespace() from public;

-- One-off: functions whose result type or argument names change, dropped so the repeatable files can
-- create them anew (CREATE OR REPLACE cannot change either). Their grants come back from policies.sql,
-- which runs after every repeatable file in the same `pricesvc migrate`.
-- - the median functions now return private.median_row; report_medians takes a private.rate_kind;
drop function if exists public.price_median(text, text);
drop function if exists public.price_medians(text[], text);
drop function if exists public.price_median_overview(timestamptz);
drop function if exists private.report_medians(text[], text, timestamptz);
-- - the take-a-token helper now raises PT429 itself;
drop function if exists private.take_rate_limit_token(text, bytea, integer, double precision);
-- - private helpers lose their p_ prefixes (auth.get_user is bound to user_of_live_session by its BEGIN
--   ATOMIC body, so it goes too and comes back unchanged from auth.sql).
drop function if exists auth.get_user(uuid, uuid);
drop function if exists private.user_of_live_session(uuid, uuid);
