-- What a counted report is, repeatable: the one definition admission (reports.sql), the median store
-- (median_store.sql), every reader (medians.sql) and maintenance (maintenance.sql) use. The rule:
--
--   At an instant `at`, a report counts toward the median of its (location, rate kind, currency) when
--   it was created after report_window_start(at) (the boundary itself is outside) and its reporter had
--   matured by then (reporter_matures_at <= at). Each reporter counts once per (location, rate kind):
--   with their latest counted report (by created_at, then id). `reports` is the number of counted
--   reports, every one, not only the latest ones. A median needs median_min_reporters() reporters in
--   one currency.
--
-- counted_reports() below is that rule as a query over price_reports; the median store keeps the same
-- thing incrementally and must equal it (docs/median-store.md; integration/differential/median_rule.py checks
-- it after every step of random histories).
--
-- Time is elapsed time, whatever the session's TimeZone: `timestamptz - interval '180 days'` is 180
-- calendar days in the session's zone, an hour more or less across a DST change, so a window once depended
-- on the session. So each setting's interval is taken as the seconds it stands for (a day is 24 hours)
-- before it meets a timestamp, here; and every function of the store, the readers and maintenance that does
-- time arithmetic also runs with SET timezone = 'UTC'.
--
-- The helpers that read a setting are PL/pgSQL, never inlined: a SQL function inlined into a caller's
-- plan folds the settings it calls into constants without recording that the plan depends on them, so
-- a caller's cached plan kept the old window after a migrate redefined report_window() (measured: a
-- session's report_medians kept it across transactions). A PL/pgSQL body names the setting itself, and
-- its plan is invalidated when the setting is redefined.

-- An interval as the elapsed time it stands for: days as 24 hours, months as 30 days.
create or replace function private.elapsed(duration interval) returns interval
    language sql immutable parallel safe
    return pg_catalog.make_interval(secs => pg_catalog.date_part('epoch', elapsed.duration));
revoke all on function private.elapsed(interval) from public;

-- The start of the report window at `at`: reports created after it may count.
create or replace function private.report_window_start(at timestamptz) returns timestamptz
    language plpgsql stable parallel safe set search_path = ''
as $$
begin
    return report_window_start.at - private.elapsed(private.report_window());
end
$$;
revoke all on function private.report_window_start(timestamptz) from public;

-- Reports created before this are deleted by `pricesvc prune`: the window plus the retention grace.
create or replace function private.report_retention_start(at timestamptz) returns timestamptz
    language plpgsql stable parallel safe set search_path = ''
as $$
begin
    return report_retention_start.at - private.elapsed(private.report_window() + private.report_retention_grace());
end
$$;
revoke all on function private.report_retention_start(timestamptz) from public;

-- When a report starts to count, fixed on admission and re-derived only when a setting it depends on
-- changes (private.median_rule_reconcile(), medians.sql): reporter_maturity() after the reporter's
-- identity was made, or after `admitted_at` for a reporter without one (only the owner can name such a
-- reporter: taken as made that instant, never as old); never ('infinity') for an unattested reporter
-- under the 'attested' threshold mode.
create or replace function private.report_matures_at(identity_created_at timestamptz, attested boolean,
                                                     admitted_at timestamptz) returns timestamptz
    language plpgsql stable parallel safe set search_path = ''
as $$
begin
    if private.threshold_counts() = 'attested' and not report_matures_at.attested then
        return 'infinity';
    end if;
    return coalesce(report_matures_at.identity_created_at, report_matures_at.admitted_at)
           + private.elapsed(private.reporter_maturity());
end
$$;
revoke all on function private.report_matures_at(timestamptz, boolean, timestamptz) from public;

-- The counted reports of the given locations and rate kinds at `at`, in a window that starts at
-- window_start (report_window_start(at), or later for an overview narrowed by `since`; never earlier:
-- the caller computes it once, as a bound for the index), and for each
-- whether it is its reporter's latest counted one in the group. Reads by index, so for a handful of
-- groups it costs one row per report in their windows.
create or replace function private.counted_reports(locations text[], kinds text[], window_start timestamptz,
                                                   at timestamptz)
    returns table(location_id text, rate_kind text, reporter_id uuid, currency text, price_cents integer,
                  created_at timestamptz, id bigint, latest boolean)
    language sql stable set search_path = ''
    begin atomic
        select r.location_id, r.rate_kind, r.reporter_id, r.currency, r.price_cents, r.created_at, r.id,
               pg_catalog.row_number() over (partition by r.location_id, r.rate_kind, r.reporter_id
                                             order by r.created_at desc, r.id desc) = 1
        from public.price_reports r
        where r.location_id = any (counted_reports.locations)
          and r.rate_kind = any (counted_reports.kinds)
          and r.created_at > counted_reports.window_start
          and r.reporter_matures_at <= counted_reports.at;
    end;
revoke all on function private.counted_reports(text[], text[], timestamptz, timestamptz) from public;

-- The counted positions of the given locations at `at`: each reporter's latest counted report that
-- carries coordinates (lat, lng; 0025), one row per (location, reporter), of any rate kind. Counted is
-- counted_reports()'s rule above (window, maturity), not a copy of it; "latest" here is among a
-- reporter's counted reports with coordinates, by created_at then id, so a later report without them
-- leaves the earlier position standing. Community places (places.sql) are the per-coordinate medians
-- of these rows.
create or replace function private.counted_positions(locations text[], at timestamptz)
    returns table(location_id text, reporter_id uuid, lat double precision, lng double precision,
                  created_at timestamptz, id bigint)
    language sql stable set search_path = ''
    begin atomic
        select distinct on (c.location_id, c.reporter_id)
               c.location_id, c.reporter_id, r.lat, r.lng, c.created_at, c.id
        from private.counted_reports(counted_positions.locations, private.rate_kinds(),
                                     private.report_window_start(counted_positions.at), counted_positions.at) c
        join public.price_reports r on r.id = c.id
        where r.lat is not null
        order by c.location_id, c.reporter_id, c.created_at desc, c.id desc;
    end;
revoke all on function private.counted_positions(text[], timestamptz) from public;
