-- Community-reported parking prices. Every rule on the data is a CHECK constraint, so bad rows cannot
-- get in even around the service. Who may write what, the hourly cap and server-side created_at live in
-- policies.sql (RLS, grants and the BEFORE INSERT trigger), as does the reporter_id default auth.uid().

create table public.price_reports (
    id bigint generated always as identity primary key,
    reporter_id uuid not null,
    location_id text not null,
    rate_kind text not null,
    price_cents integer not null,
    currency text not null default 'USD',
    client_report_id uuid,
    created_at timestamptz not null default now(),
    -- Provider-qualified ids such as 'sfmta:garage-123' or 'mapkit:...'.
    constraint price_reports_location_id_length check (char_length(location_id) between 1 and 200),
    constraint price_reports_location_id_no_control_chars check (location_id !~ '[[:cntrl:]]'),
    constraint price_reports_rate_kind_known check (rate_kind in ('hourly', 'daily', 'flat', 'monthly')),
    constraint price_reports_price_cents_range check (price_cents > 0 and price_cents <= 1000000),
    constraint price_reports_currency_iso4217 check (currency ~ '^[A-Z]{3}$')
);

-- Idempotent retries: one row per (reporter, client_report_id).
create unique index price_reports_client_report_id_key
    on public.price_reports (reporter_id, client_report_id) where client_report_id is not null;

-- The hourly cap counts a reporter's recent rows.
create index price_reports_reporter_recent_idx on public.price_reports (reporter_id, created_at desc);

-- Medians: each reporter's latest report per location and rate kind, read in index order
-- (DISTINCT ON), covering price and currency so the scan stays in the index.
create index price_reports_median_idx
    on public.price_reports (location_id, rate_kind, reporter_id, created_at desc, id desc)
    include (price_cents, currency);
