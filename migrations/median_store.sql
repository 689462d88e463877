-- The median store, repeatable: the triggers and functions that keep the tables of
-- 0012_median_store.sql in step with public.price_reports. medians.sql reads them.
--
-- Invariant: at every commit, for every group (location, rate kind), each report is either in
-- median_queue or folded, and the folded state is what a fold at its own clock made of the folded
-- reports (median_fold below). Readers start from the folded state and correct it exactly, so no
-- result depends on when the last fold happened; only the number of rows a reader corrects with does.
-- Inserts keep it incrementally (median_enqueue); UPDATE, DELETE and TRUNCATE (maintenance by the owner,
-- test fixtures) rebuild the groups they touched, but for the deletes of `pricesvc prune` and
-- `forget-user` (maintenance.sql), which fold and trim the groups they touch instead; a bulk load with session_replication_role = replica
-- skips every trigger, so it names each row's reporter_matures_at itself and must call
-- private.median_rebuild() before it commits.
--
-- Maturity is the report's reporter_matures_at (set on admission, reports.sql), never auth.users: an
-- identity pruned since counts exactly as it did while it existed.

-- Adds reporters per (currency, price) to a group's two histograms, deltas positive or negative; drops
-- the rows that reach zero.
create or replace function private.median_histogram_add(location_id text, rate_kind text,
                                                        currencies text[], prices integer[], deltas integer[])
    returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    width constant integer := private.median_band_cents();
begin
    insert into private.median_prices as p (location_id, rate_kind, currency, price_cents, reporters)
    select median_histogram_add.location_id, median_histogram_add.rate_kind, d.currency, d.price_cents, pg_catalog.sum(d.delta)
    from rows from (pg_catalog.unnest(currencies), pg_catalog.unnest(prices), pg_catalog.unnest(deltas)) d(currency, price_cents, delta)
    group by d.currency, d.price_cents
    having pg_catalog.sum(d.delta) <> 0
    on conflict on constraint median_prices_pkey do update set reporters = p.reporters + excluded.reporters;

    insert into private.median_price_bands as b (location_id, rate_kind, currency, band, reporters)
    select median_histogram_add.location_id, median_histogram_add.rate_kind, d.currency, d.price_cents / width,
           pg_catalog.sum(d.delta)
    from rows from (pg_catalog.unnest(currencies), pg_catalog.unnest(prices), pg_catalog.unnest(deltas)) d(currency, price_cents, delta)
    group by d.currency, d.price_cents / width
    having pg_catalog.sum(d.delta) <> 0
    on conflict on constraint median_price_bands_pkey do update set reporters = b.reporters + excluded.reporters;

    delete from private.median_prices p
    where p.location_id = median_histogram_add.location_id and p.rate_kind = median_histogram_add.rate_kind
      and p.reporters = 0
      and (p.currency, p.price_cents) in (select d.currency, d.price_cents from rows from (pg_catalog.unnest(currencies), pg_catalog.unnest(prices)) d(currency, price_cents));
    delete from private.median_price_bands b
    where b.location_id = median_histogram_add.location_id and b.rate_kind = median_histogram_add.rate_kind
      and b.reporters = 0
      and (b.currency, b.band) in (select d.currency, d.price_cents / width from rows from (pg_catalog.unnest(currencies), pg_catalog.unnest(prices)) d(currency, price_cents));
end
$$;
revoke all on function private.median_histogram_add(text, text, text[], integer[], integer[]) from public;

-- Folds one group at the statement's clock: counted reports and latest prices that left the report
-- window are taken out, and queued reports of reporters that are mature (by median_fold_margin() at
-- least) are taken in. The caller holds the group's advisory lock (median_lock_namespace()), or an
-- EXCLUSIVE lock on median_queue (median_rebuild). Every read here is one group's index range;
-- enable_seqscan keeps it so when the queue's statistics are dominated by a few locations (see
-- median_queued in medians.sql), or a fold would scan the whole queue.
create or replace function private.median_fold_reports(location_id text, rate_kind text)
    returns void
    language plpgsql volatile set search_path = '' set enable_seqscan = off set timezone = 'UTC'
as $$
declare
    folded_at constant pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    cutoff constant pg_catalog.timestamptz := private.report_window_start(folded_at);
    expired_through pg_catalog.timestamptz;
    taken private.median_queue[];
    currencies text[];
    prices integer[];
    deltas integer[];
begin
    insert into private.median_groups (location_id, rate_kind, expired_through)
    values (median_fold_reports.location_id, median_fold_reports.rate_kind, cutoff)
    on conflict on constraint median_groups_pkey do nothing;
    select g.expired_through into expired_through from private.median_groups g
    where g.location_id = median_fold_reports.location_id and g.rate_kind = median_fold_reports.rate_kind;

    -- Counted reports that left the window since the last fold. Queued ones were never counted.
    if expired_through < cutoff then
        update private.median_totals t set reports = t.reports - gone.reports
        from (select r.currency, pg_catalog.count(*) as reports
              from public.price_reports r
              where r.location_id = median_fold_reports.location_id and r.rate_kind = median_fold_reports.rate_kind
                and r.created_at > expired_through and r.created_at <= cutoff
                and not exists (select from private.median_queue q where q.report_id = r.id)
              group by r.currency) gone
        where t.location_id = median_fold_reports.location_id and t.rate_kind = median_fold_reports.rate_kind
          and t.currency = gone.currency;
        update private.median_groups g set expired_through = cutoff
        where g.location_id = median_fold_reports.location_id and g.rate_kind = median_fold_reports.rate_kind;
    end if;

    -- Latest prices that left the window leave the histograms.
    with gone as (
        update private.median_latest l set counted = false
        where l.location_id = median_fold_reports.location_id and l.rate_kind = median_fold_reports.rate_kind
          and l.counted and l.created_at <= cutoff
        returning l.currency, l.price_cents
    )
    select pg_catalog.array_agg(g.currency), pg_catalog.array_agg(g.price_cents), pg_catalog.array_agg(-1)
    into currencies, prices, deltas
    from gone g;
    if currencies is not null then
        perform private.median_histogram_add(median_fold_reports.location_id, median_fold_reports.rate_kind, currencies, prices, deltas);
    end if;

    -- Queued reports that never count (an unattested reporter's under the 'attested' threshold mode:
    -- matures_at 'infinity') leave the queue once they left the window, never counted and so
    -- never subtracted: the queue keeps at most a window of them.
    delete from private.median_queue q
    where q.location_id = median_fold_reports.location_id and q.rate_kind = median_fold_reports.rate_kind
      and q.matures_at = 'infinity' and q.created_at <= cutoff;

    -- Queued reports of reporters mature by the margin are taken in: matures_at is the report's
    -- reporter_matures_at, the one definition of maturity readers use too.
    with moved as (
        delete from private.median_queue q
        where q.location_id = median_fold_reports.location_id and q.rate_kind = median_fold_reports.rate_kind
          and q.matures_at <= folded_at - private.median_fold_margin()
        returning q
    )
    select pg_catalog.array_agg(m.q) into taken from moved m;
    if taken is null then
        return;
    end if;

    insert into private.median_totals as t (location_id, rate_kind, currency, reports, newest)
    select median_fold_reports.location_id, median_fold_reports.rate_kind, x.currency, pg_catalog.count(*), pg_catalog.max(x.created_at)
    from pg_catalog.unnest(taken) x
    where x.created_at > cutoff
    group by x.currency
    on conflict on constraint median_totals_pkey
    do update set reports = t.reports + excluded.reports, newest = greatest(t.newest, excluded.newest);

    -- Each reporter's newest taken report replaces their folded latest one if it is newer.
    with candidate as (
        select distinct on (x.reporter_id) x.*
        from pg_catalog.unnest(taken) x
        order by x.reporter_id, x.created_at desc, x.report_id desc
    ),
    previous as (
        select l.* from private.median_latest l join candidate c on c.reporter_id = l.reporter_id
        where l.location_id = median_fold_reports.location_id and l.rate_kind = median_fold_reports.rate_kind
    ),
    newer as (
        select c.* from candidate c left join previous p on p.reporter_id = c.reporter_id
        where p.reporter_id is null or (c.created_at, c.report_id) > (p.created_at, p.report_id)
    ),
    stored as (
        insert into private.median_latest as l (location_id, rate_kind, reporter_id, currency, price_cents, created_at,
                                                report_id, counted)
        select median_fold_reports.location_id, median_fold_reports.rate_kind, n.reporter_id, n.currency, n.price_cents, n.created_at,
               n.report_id, n.created_at > cutoff
        from newer n
        on conflict on constraint median_latest_pkey
        do update set currency = excluded.currency, price_cents = excluded.price_cents, created_at = excluded.created_at,
                      report_id = excluded.report_id, counted = excluded.counted
    ),
    changes as (
        select p.currency, p.price_cents, -1 as delta
        from previous p join newer n on n.reporter_id = p.reporter_id
        where p.counted
        union all
        select n.currency, n.price_cents, 1 from newer n where n.created_at > cutoff
    )
    select pg_catalog.array_agg(c.currency), pg_catalog.array_agg(c.price_cents), pg_catalog.array_agg(c.delta)
    into currencies, prices, deltas
    from changes c;
    if currencies is not null then
        perform private.median_histogram_add(median_fold_reports.location_id, median_fold_reports.rate_kind, currencies, prices, deltas);
    end if;
end
$$;
revoke all on function private.median_fold_reports(text, text) from public;

-- Every setting the store's state depends on, as one text: the threshold, the window, what counts
-- (threshold_counts()) and when (reporter_maturity()), the band width and the fold margin. When it
-- differs from the one the store was built under (private.median_rule_state), `pricesvc migrate`
-- rebuilds the store (private.median_rule_reconcile(), medians.sql): no summary, band or total made
-- under other settings survives a change of them.
-- PL/pgSQL, so that its plan follows a redefined setting (see counted_reports.sql).
create or replace function private.median_store_rule() returns text
    language plpgsql stable set search_path = ''
as $$
begin
    return pg_catalog.format('threshold %s, counts %s, window %s s, maturity %s s, band %s, fold margin %s s',
        private.median_min_reporters(), private.threshold_counts(),
        pg_catalog.date_part('epoch', private.report_window()),
        pg_catalog.date_part('epoch', private.reporter_maturity()), private.median_band_cents(),
        pg_catalog.date_part('epoch', private.median_fold_margin()));
end
$$;
revoke all on function private.median_store_rule() from public;

-- Writes one group's summary, if median_groups knows the group: what report_medians_exact (medians.sql)
-- returns for it at this clock, and until when that can hold without another report (the group's oldest
-- report in the window leaving it). The caller holds what a fold holds for the group (its lock, or an
-- EXCLUSIVE lock on median_queue).
create or replace function private.median_summarize_group(location_id text, rate_kind text)
    returns void
    language plpgsql volatile set search_path = '' set timezone = 'UTC'
as $$
declare
    made_at constant pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    window_length constant interval := private.elapsed(private.report_window());
begin
    delete from private.median_summaries s
    where s.location_id = median_summarize_group.location_id and s.rate_kind = median_summarize_group.rate_kind;
    insert into private.median_summaries (location_id, rate_kind, currency, median_cents, reporters, reports, last_reported_at)
    select e.location_id, e.rate_kind, e.currency, e.median_cents, e.reporters, e.reports, e.last_reported_at
    from private.report_medians_exact(array[median_summarize_group.location_id], array[median_summarize_group.rate_kind],
                                      made_at) e;
    update private.median_groups mg
    set summarized_at = made_at,
        summary_until = coalesce((select r.created_at + window_length from public.price_reports r
                                  where r.location_id = median_summarize_group.location_id
                                    and r.rate_kind = median_summarize_group.rate_kind
                                    and r.created_at > private.report_window_start(made_at)
                                  order by r.created_at
                                  limit 1),
                                 'infinity')
    where mg.location_id = median_summarize_group.location_id and mg.rate_kind = median_summarize_group.rate_kind;
end
$$;
revoke all on function private.median_summarize_group(text, text) from public;

-- Summarizes the given groups (location_ids[i], rate_kinds[i]) one by one: a group costs what one read
-- of it costs (set-based over all 20 000 groups of the bench, the exact query ran for over 10 minutes).
create or replace function private.median_summarize(location_ids text[], rate_kinds text[])
    returns void
    language plpgsql volatile set search_path = ''
as $$
begin
    for i in 1 .. coalesce(pg_catalog.cardinality(median_summarize.location_ids), 0) loop
        perform private.median_summarize_group(median_summarize.location_ids[i], median_summarize.rate_kinds[i]);
    end loop;
end
$$;
revoke all on function private.median_summarize(text[], text[]) from public;

-- Folds one group (median_fold_reports), writes its summary and refreshes its location's community
-- place. The caller holds the group's advisory
-- lock (median_lock_namespace()), or an EXCLUSIVE lock on median_queue.
create or replace function private.median_fold(location_id text, rate_kind text)
    returns void
    language plpgsql volatile set search_path = ''
as $$
begin
    perform private.median_fold_reports(median_fold.location_id, median_fold.rate_kind);
    perform private.median_summarize_group(median_fold.location_id, median_fold.rate_kind);
    -- The location's community place (places.sql) at this clock: what the fold took in or let go (a
    -- reporter matured, a report left the window) may move it.
    perform private.community_places_refresh(array[median_fold.location_id]);
end
$$;
revoke all on function private.median_fold(text, text) from public;

-- Recomputes the store of the given locations (null: of every location) from price_reports, under an
-- EXCLUSIVE lock on median_queue, so no insert (they all queue) or fold runs meanwhile. Set-based: the
-- same state a fold of every report would leave, at this statement's clock.
create or replace function private.median_rebuild(location_ids text[] default null)
    returns void
    language plpgsql volatile set search_path = '' set timezone = 'UTC'
as $$
declare
    rebuilt_at constant pg_catalog.timestamptz := pg_catalog.clock_timestamp();
    cutoff constant pg_catalog.timestamptz := private.report_window_start(rebuilt_at);
    -- Reports whose reporter matured by this are folded; the others wait in the queue.
    mature_by constant pg_catalog.timestamptz := rebuilt_at - private.median_fold_margin();
    width constant integer := private.median_band_cents();
begin
    lock table private.median_queue in exclusive mode;
    if location_ids is null then
        truncate private.median_queue, private.median_groups, private.median_latest, private.median_prices,
                 private.median_price_bands, private.median_totals, private.median_summaries;
    else
        delete from private.median_queue x where x.location_id = any (location_ids);
        delete from private.median_groups x where x.location_id = any (location_ids);
        delete from private.median_latest x where x.location_id = any (location_ids);
        delete from private.median_prices x where x.location_id = any (location_ids);
        delete from private.median_price_bands x where x.location_id = any (location_ids);
        delete from private.median_totals x where x.location_id = any (location_ids);
        delete from private.median_summaries x where x.location_id = any (location_ids);
    end if;

    -- Reports of identities not mature (by the margin) wait in the queue, as a fold would leave them.
    insert into private.median_queue (report_id, location_id, rate_kind, reporter_id, currency, price_cents,
                                      created_at, matures_at)
    select r.id, r.location_id, r.rate_kind, r.reporter_id, r.currency, r.price_cents, r.created_at,
           r.reporter_matures_at
    from public.price_reports r
    where (location_ids is null or r.location_id = any (location_ids))
      and r.reporter_matures_at > mature_by;

    insert into private.median_groups (location_id, rate_kind, expired_through)
    select distinct r.location_id, r.rate_kind, cutoff
    from public.price_reports r
    where location_ids is null or r.location_id = any (location_ids);

    insert into private.median_totals (location_id, rate_kind, currency, reports, newest)
    select r.location_id, r.rate_kind, r.currency, pg_catalog.count(*), pg_catalog.max(r.created_at)
    from public.price_reports r
    where (location_ids is null or r.location_id = any (location_ids))
      and r.created_at > cutoff
      and r.reporter_matures_at <= mature_by
    group by r.location_id, r.rate_kind, r.currency;

    insert into private.median_latest (location_id, rate_kind, reporter_id, currency, price_cents, created_at,
                                       report_id, counted)
    select distinct on (r.location_id, r.rate_kind, r.reporter_id)
           r.location_id, r.rate_kind, r.reporter_id, r.currency, r.price_cents, r.created_at, r.id, r.created_at > cutoff
    from public.price_reports r
    where (location_ids is null or r.location_id = any (location_ids))
      and r.reporter_matures_at <= mature_by
    order by r.location_id, r.rate_kind, r.reporter_id, r.created_at desc, r.id desc;

    insert into private.median_prices (location_id, rate_kind, currency, price_cents, reporters)
    select l.location_id, l.rate_kind, l.currency, l.price_cents, pg_catalog.count(*)
    from private.median_latest l
    where (location_ids is null or l.location_id = any (location_ids)) and l.counted
    group by l.location_id, l.rate_kind, l.currency, l.price_cents;

    insert into private.median_price_bands (location_id, rate_kind, currency, band, reporters)
    select l.location_id, l.rate_kind, l.currency, l.price_cents / width, pg_catalog.count(*)
    from private.median_latest l
    where (location_ids is null or l.location_id = any (location_ids)) and l.counted
    group by l.location_id, l.rate_kind, l.currency, l.price_cents / width;

    -- The rebuilt groups' summaries (a first build, before medians.sql defines what they hold, leaves
    -- them to medians.sql).
    if pg_catalog.to_regprocedure('private.report_medians_exact(text[], text[], timestamp with time zone)') is not null then
        perform private.median_summarize(pg_catalog.array_agg(g.location_id), pg_catalog.array_agg(g.rate_kind))
        from private.median_groups g
        where location_ids is null or g.location_id = any (location_ids);
    end if;
    -- The rebuilt locations' community places, from scratch as well (a first build, before places.sql
    -- defines the refresh, has no report with coordinates to place: they came with 0025).
    if pg_catalog.to_regprocedure('private.community_places_refresh(text[])') is not null then
        perform private.community_places_refresh(location_ids);
    end if;
end
$$;
revoke all on function private.median_rebuild(text[]) from public;

-- A group's key under median_lock_namespace(): the one definition of the fold lock's key, for both ways
-- of taking it below.
create or replace function private.median_group_lock_key(location_id text, rate_kind text) returns integer
    language sql immutable parallel safe
    return pg_catalog.hashtext(location_id || '/' || rate_kind);
revoke all on function private.median_group_lock_key(text, text) from public;

-- Takes the group's fold lock for the rest of the transaction if no other transaction holds it; false if
-- one does (it is folding the group now). Every fold path asks here.
create or replace function private.median_try_lock_group(location_id text, rate_kind text)
    returns boolean
    language sql volatile set search_path = ''
    return pg_catalog.pg_try_advisory_xact_lock(private.median_lock_namespace(),
        private.median_group_lock_key(median_try_lock_group.location_id, median_try_lock_group.rate_kind));
revoke all on function private.median_try_lock_group(text, text) from public;

-- The same lock, waited for: for the owner's erasure (auth.forget_user, maintenance.sql), which must
-- change a group a fold may be changing right now. Inserts never call this.
create or replace function private.median_lock_group(location_id text, rate_kind text)
    returns void
    language sql volatile set search_path = ''
    return pg_catalog.pg_advisory_xact_lock(private.median_lock_namespace(),
        private.median_group_lock_key(median_lock_group.location_id, median_lock_group.rate_kind));
revoke all on function private.median_lock_group(text, text) from public;

-- AFTER INSERT, per row: after the insert trigger and the RLS policy accepted the row, so only reports
-- that are really stored reach the store. Queues it, and every median_fold_every()-th report folds its
-- group if no other transaction is folding it (try-lock: an insert never waits for a fold).
create or replace function private.median_enqueue() returns trigger
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    insert into private.median_queue (report_id, location_id, rate_kind, reporter_id, currency, price_cents,
                                      created_at, matures_at)
    values (new.id, new.location_id, new.rate_kind, new.reporter_id, new.currency, new.price_cents, new.created_at,
            new.reporter_matures_at);
    -- A report with coordinates may make its location's community place visible or move it (places.sql),
    -- now or when it matures: the refresh records either.
    if new.lat is not null then
        perform private.community_places_refresh(array[new.location_id]);
    end if;
    if new.id % private.median_fold_every() = 0 and private.median_try_lock_group(new.location_id, new.rate_kind) then
        perform private.median_fold(new.location_id, new.rate_kind);
    end if;
    return null;
end
$$;
revoke all on function private.median_enqueue() from public;

-- Groups whose readers have been correcting the folded state with the same rows for longer than
-- older_than, because no insert folded them since: a queued report that a fold would take in (its
-- reporter mature by median_fold_margin()), or a report that left the report window after the group's
-- last fold. due_at: when the oldest such row started to need a fold. A group that stops receiving
-- reports is stale until one fold after its last report leaves the window, and never again.
-- Reads the whole queue (a few rows per group) and probes price_reports once per group ever folded (by index).
create or replace function private.median_stale_groups(older_than interval)
    returns table(location_id text, rate_kind text, due_at timestamptz)
    language sql stable set search_path = '' set timezone = 'UTC'
    begin atomic
        select s.location_id, s.rate_kind, pg_catalog.min(s.due_at)
        from (select q.location_id, q.rate_kind,
                     greatest(q.created_at, q.matures_at + private.median_fold_margin()) as due_at
              from private.median_queue q
              union all
              -- Only the group's oldest report after expired_through: if it has not left the window that
              -- long ago, no later one has.
              select g.location_id, g.rate_kind, oldest.created_at + private.elapsed(private.report_window())
              from private.median_groups g
              cross join lateral (select r.created_at from public.price_reports r
                                  where r.location_id = g.location_id and r.rate_kind = g.rate_kind
                                    and r.created_at > g.expired_through
                                  order by r.created_at
                                  limit 1) oldest) s
        where s.due_at <= pg_catalog.clock_timestamp() - median_stale_groups.older_than
        group by s.location_id, s.rate_kind;
    end;
revoke all on function private.median_stale_groups(interval) from public;

-- The maintenance fold (`pricesvc prune`): folds up to max_groups stale groups (median_stale_groups),
-- longest due first, and returns how many it folded. Inserts fold only the groups they land in, so a
-- group nobody reports at any more would otherwise make every read of it correct with more and more rows.
-- - Each group is folded under its lock, taken as the insert path takes it (median_try_lock_group): a
--   group whose lock is held is being folded by that transaction now, so it is skipped, not waited
--   for; a run never waits on an insert or on another run.
-- - The locks are held until the caller commits, one entry per folded group in the shared lock table
--   (sized max_locks_per_transaction × max_connections): max_groups keeps one transaction well inside it.
--   A caller wanting more folds again in a new transaction.
create or replace function private.median_fold_stale(older_than interval, max_groups integer default 1000)
    returns integer
    language plpgsql volatile security definer set search_path = '' set timezone = 'UTC'
as $$
declare
    stale record;
    folded integer := 0;
begin
    if older_than is null or older_than < interval '0' then
        raise exception using errcode = '22023', message = 'older_than must be a non-negative interval';
    end if;
    if max_groups is null or max_groups < 1 then
        raise exception using errcode = '22023', message = 'max_groups must be a positive integer';
    end if;
    for stale in select s.location_id, s.rate_kind from private.median_stale_groups(median_fold_stale.older_than) s
                 order by s.due_at, s.location_id, s.rate_kind loop
        exit when folded >= max_groups;
        if private.median_try_lock_group(stale.location_id, stale.rate_kind) then
            perform private.median_fold(stale.location_id, stale.rate_kind);
            folded := folded + 1;
        end if;
    end loop;
    -- The community places whose span has ended (places.sql), under the same bound: searches compute them
    -- until then.
    perform private.community_places_refresh_stale(median_fold_stale.older_than, median_fold_stale.max_groups);
    return folded;
end
$$;
revoke all on function private.median_fold_stale(interval, integer) from public;

-- AFTER UPDATE, DELETE or TRUNCATE, per statement: rebuilds every location the statement touched. Not
-- for the deletes of private.prune_reports and auth.forget_user (maintenance.sql), which keep the store
-- exact themselves and say so in a transaction-local setting; only the owner may delete reports at all,
-- so no client can skip it.
create or replace function private.median_rebuild_changed() returns trigger
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    if tg_op = 'DELETE' and pg_catalog.current_setting('pricesvc.median_store_pruning', true) = 'on' then
        return null;
    end if;
    -- private.median_rule_reconcile() (medians.sql) rebuilds every location after its updates.
    if tg_op = 'UPDATE' and pg_catalog.current_setting('pricesvc.median_store_rebuilding', true) = 'on' then
        return null;
    end if;
    if tg_op = 'TRUNCATE' then
        perform private.median_rebuild(null);
    elsif tg_op = 'UPDATE' then
        perform private.median_rebuild(array(select o.location_id from old_reports o
                                             union select n.location_id from new_reports n));
    else
        perform private.median_rebuild(array(select distinct o.location_id from old_reports o));
    end if;
    return null;
end
$$;
revoke all on function private.median_rebuild_changed() from public;
