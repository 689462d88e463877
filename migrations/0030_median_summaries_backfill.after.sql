-- Groups without a summary (made before summaries existed, by 0020_median_summaries.sql's release, or by a
-- load that skipped the triggers) get one, set-based; afterwards folds and rebuilds keep them
-- (private.median_summarize(), median_store.sql).
--
-- Safe on a database that has them: until this step existed medians.sql ran the same block every time it
-- changed, and it touches only groups whose summarized_at is null (none, where that already ran).
do $$
begin
    perform private.median_summarize(pg_catalog.array_agg(g.location_id), pg_catalog.array_agg(g.rate_kind))
    from private.median_groups g
    where g.summarized_at is null;
end
$$;
