-- Each report carries the moment its reporter's identity matures (issue 19, reproduction 6). The median
-- code counted maturity from auth.users and read a missing row as an old identity, so three sybils that
-- reported, signed out and were pruned (`pricesvc prune --older-than 1s`) counted at once. Now maturity
-- is fixed when the report is admitted (reports.sql: the insert trigger sets it; no client role may
-- write the column) and never depends on a row still existing.

alter table public.price_reports add column reporter_matures_at timestamptz;

-- Backfill. No trigger runs (the median store's would rebuild per statement; it is rebuilt from the
-- column below instead). Only a database that has reports has anything to fill, and it has
-- private.reporter_maturity() (settings.sql) from an earlier migrate; on a fresh database this file runs
-- before any repeatable file, with no reports and no such function, so the block does nothing (PL/pgSQL
-- resolves the function only when the statement runs).
set local session_replication_role = replica;
do $$
begin
    if exists (select from public.price_reports) then
        update public.price_reports r set reporter_matures_at = u.created_at + private.reporter_maturity()
        from auth.users u
        where u.id = r.reporter_id;
        -- Reporters already pruned: their identity existed at their first report, so it matured at most
        -- a maturity after it. Exactly that errs towards young, never towards mature.
        update public.price_reports r set reporter_matures_at = f.first_report + private.reporter_maturity()
        from (select p.reporter_id, min(p.created_at) as first_report
              from public.price_reports p
              where p.reporter_matures_at is null
              group by p.reporter_id) f
        where r.reporter_id = f.reporter_id and r.reporter_matures_at is null;
    end if;
end
$$;
set local session_replication_role = origin;

alter table public.price_reports alter column reporter_matures_at set not null;

-- The median store was folded with maturity as auth.users told it, pruned sybils included. Emptied so
-- that median_store.sql, which runs after this file, rebuilds it from the column (its first-build step).
-- median_queue.matures_at (0012) is from now on the report's reporter_matures_at.
truncate private.median_queue, private.median_groups, private.median_latest, private.median_prices,
         private.median_price_bands, private.median_totals;

-- Its last argument is now the moment maturity is judged at, not a creation cutoff (medians.sql).
drop function if exists private.report_medians_scanned(text[], text[], timestamptz, timestamptz);
