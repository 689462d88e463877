-- Types the repeatable files share, each written once, and the one-off steps of splitting policies.sql
-- into auth.sql, limits.sql, medians.sql, reports.sql and policies.sql. The shared constants
-- (private.rate_kinds(), private.reporter_lock_namespace()) are functions and live in settings.sql.

-- A known rate kind: what the median functions take. Arguments are cast to it (medians.sql), so an
-- unknown kind fails before anything is read. Its check, `rate_kind_known`, calls private.rate_kinds(),
-- which only exists once settings.sql has run: settings.sql adds the check to this domain, and gives
-- public.price_reports' check constraint the same list.
create domain private.rate_kind as text;

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
