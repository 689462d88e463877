-- The median store (issue 9): what the median functions need, kept per location and rate kind by the
-- insert path, so that a median reads about as many rows as there are distinct price bands, not every
-- report of a popular location. medians.sql reads it, reports.sql and median_store.sql keep it; nothing
-- else writes it. Every table here is derived from public.price_reports and can be rebuilt from it
-- (private.median_rebuild(), median_store.sql), which this migration's successor run does once.
--
-- Shape of the data, for one group (location, rate kind):
-- - a new report goes to median_queue (insert-only: concurrent inserts never wait on one another);
-- - a fold (every median_fold_every()-th report, by whoever holds the group's advisory lock; never a
--   reader) moves queued reports of mature reporters on: into median_totals (count and newest per
--   currency), and each reporter's latest into median_latest and the two histograms, median_prices
--   (one row per price) and median_price_bands (one row per median_band_cents() of price);
-- - ageing out of the window and maturing need no write: a reader corrects the folded state with the
--   few rows that changed meaning since the last fold (queued reports, latest reports that aged out,
--   reports in price_reports between the group's expired_through and the reader's window edge).

-- Its constants (median_band_cents(), median_fold_every(), median_fold_margin(),
-- median_lock_namespace()) are functions and live in settings.sql.

-- Reports not folded yet. matures_at is when the reporter's identity becomes old enough to count
-- (auth.users.created_at + reporter_maturity(), -infinity without a users row), as of the insert: folds
-- look only at rows past it (a reader checks maturity itself, live).
create table private.median_queue (
    report_id bigint primary key,
    location_id text not null,
    rate_kind text not null,
    reporter_id uuid not null,
    currency text not null,
    price_cents integer not null,
    created_at timestamptz not null,
    matures_at timestamptz not null
);
create index median_queue_group_idx on private.median_queue (location_id, rate_kind, matures_at);

-- Per group: every counted report created at or before expired_through has been subtracted from
-- median_totals (by the fold that moved it there).
create table private.median_groups (
    location_id text not null,
    rate_kind text not null,
    expired_through timestamptz not null,
    primary key (location_id, rate_kind)
);

-- Each folded reporter's latest report in the group. counted: its price is in the histograms (it was
-- inside the report window at the last fold).
create table private.median_latest (
    location_id text not null,
    rate_kind text not null,
    reporter_id uuid not null,
    currency text not null,
    price_cents integer not null,
    created_at timestamptz not null,
    report_id bigint not null,
    counted boolean not null,
    primary key (location_id, rate_kind, reporter_id)
);
-- Rows whose counted flag a reader must correct: counted ones at the old end of the window, and (a
-- reader whose clock trails the folder's) uncounted ones inside it.
create index median_latest_counted_idx on private.median_latest (location_id, rate_kind, created_at) where counted;
create index median_latest_uncounted_idx on private.median_latest (location_id, rate_kind, created_at) where not counted;

-- Histograms of counted latest prices: reporters per price, and per band of median_band_cents().
create table private.median_prices (
    location_id text not null,
    rate_kind text not null,
    currency text not null,
    price_cents integer not null,
    reporters integer not null,
    primary key (location_id, rate_kind, currency, price_cents)
);
create table private.median_price_bands (
    location_id text not null,
    rate_kind text not null,
    currency text not null,
    band integer not null,
    reporters integer not null,
    primary key (location_id, rate_kind, currency, band)
);

-- Counted reports per group and currency (folded, and not yet subtracted as expired), and the newest.
create table private.median_totals (
    location_id text not null,
    rate_kind text not null,
    currency text not null,
    reports bigint not null,
    newest timestamptz,
    primary key (location_id, rate_kind, currency)
);

-- Closed to every client role: policies.sql revokes all on the tables of schema private.

-- Reports of a group by time: what aged out since a fold (folds and readers), and the scan behind an
-- overview narrowed with `since`. It replaces the per-reporter median index, which only the old median
-- query read.
create index price_reports_location_time_idx
    on public.price_reports (location_id, rate_kind, created_at) include (currency, id);
drop index public.price_reports_median_idx;
