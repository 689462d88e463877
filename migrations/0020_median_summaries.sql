-- Each group's answer, ready to return (issue 22: a median read that is mostly a lookup). A fold, a
-- rebuild and the maintenance fold write it (median_store.sql: median_summarize); a reader returns it as
-- it is while nothing it depends on has changed since (medians.sql: report_medians), and computes the
-- group exactly otherwise. So a summary can only ever be used when it equals the exact answer.
--
-- Rows: what report_medians returns for the group (only currencies at or above the threshold), possibly
-- none, with last_reported_at exact (readers coarsen it to the hour). median_groups.summarized_at says the group has a summary (null: none, or no longer usable);
-- summary_until is when its oldest report in the window leaves it (a reader past it computes exactly);
-- summary_rule names the settings it was made under (threshold and window), so a changed setting
-- retires every summary without a rewrite.
create table private.median_summaries (
    location_id text not null,
    rate_kind text not null,
    currency text not null,
    median_cents integer not null,
    reporters integer not null,
    reports integer not null,
    last_reported_at timestamptz,
    primary key (location_id, rate_kind, currency)
);

alter table private.median_groups
    add column summarized_at timestamptz,
    add column summary_until timestamptz,
    add column summary_rule text;
