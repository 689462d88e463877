-- A price report on its way in, repeatable: the BEFORE INSERT trigger that sets server time, answers
-- replays, enforces the per-reporter cap and writes receipts. The table is in 0003_price_reports.sql;
-- its grants and RLS policy are in policies.sql.

-- One receipt per row the insert trigger saw, for `Prefer: return=representation` without SELECT:
-- what the server decided (id, time, the currency after defaults) and whether it was a replay.
create or replace function private.append_receipt(report_id bigint, created_at timestamptz, currency text,
                                                  replayed boolean)
    returns void
    language plpgsql volatile set search_path = ''
as $$
declare
    receipts pg_catalog.text := pg_catalog.current_setting('pricesvc.receipts', true);
    receipt pg_catalog.text := pg_catalog.format('{"id":%s,"created_at":%s,"currency":%s,"replayed":%s}', report_id,
        pg_catalog.to_json(pg_catalog.to_char(pg_catalog.timezone('UTC', created_at), 'YYYY-MM-DD"T"HH24:MI:SS.US"+00:00"')),
        pg_catalog.to_json(currency), pg_catalog.to_json(replayed));
begin
    if receipts is null or receipts !~ '^\[.*\]$' then
        receipts := '[]';
    end if;
    if receipts = '[]' then
        receipts := '[' || receipt || ']';
    else
        receipts := pg_catalog.left(receipts, -1) || ',' || receipt || ']';
    end if;
    perform pg_catalog.set_config('pricesvc.receipts', receipts, true);
end
$$;
revoke all on function private.append_receipt(bigint, timestamptz, text, boolean) from public;

-- Whether reporter is the caller, by the token itself (auth.uid()), for the moments the insert trigger is
-- about to refuse a row or answer for an earlier one. False, never an error, for a token that does not
-- verify: an error here, raised only on these paths, would tell a forger that the reporter they named is
-- at the cap. A session that could write around the policy anyway is trusted to name reporter_id: a
-- superuser, or a login that is no member of `authenticated` (fixtures, bulk loads). That is decided by
-- session_user, which no statement can change (SET SESSION AUTHORIZATION needs a superuser's login),
-- never by a setting such as `role`, which the INSERT's own source query can change between two rows
-- (a statement that changed `role` halfway once passed for a fixture).
create or replace function private.reporter_is_caller(reporter uuid) returns boolean
    language plpgsql stable set search_path = ''
as $$
begin
    if (select r.rolsuper or not pg_catalog.pg_has_role(r.oid, 'authenticated', 'MEMBER')
        from pg_catalog.pg_roles r where r.rolname = session_user) then
        return true;
    end if;
    return coalesce(reporter = auth.uid(), false);
exception when sqlstate 'PT401' then
    return false;
end
$$;
revoke all on function private.reporter_is_caller(uuid) from public;

-- BEFORE INSERT on price_reports: server time, when the reporter matures, idempotent replays, and the
-- per-reporter sliding cap.
--
-- The row's reporter_id is the default's cheap, unverified hint (auth.unverified_uid(); clients have no
-- privilege on the column). The RLS policy checks it against the verified token right after this
-- trigger, and that check, once per statement, is what decides. So this trigger takes the reporter's
-- lock and counts without verifying anything (a forged row is refused by the policy microseconds later,
-- its transaction rolled back and the lock released), and verifies only before it would refuse a row or
-- answer with an earlier report (replay, conflict, cap): those answers are about one reporter and must
-- never go to anyone else.
--
-- At the cap, or on a replay, a row whose caller this trigger cannot verify is refused all the same,
-- never passed on for the policy to judge: the policy's `(select auth.uid())` is evaluated once, at the
-- statement's first row, and a later row can change request.jwt and the hint settings so that only the
-- trigger's per-row check fails (one statement once stored 209 reports in an hour). Its reporter_id
-- becomes null, which the policy refuses with its own 42501 (checked before the NOT NULL constraint),
-- exactly as it refuses a forged row below the cap: the error tells nothing about the reporter named.
--
-- The cap counts reports by the time their transaction committed (pg_xact_commit_timestamp; needs
-- track_commit_timestamp = on), not by created_at: a transaction that inserts and then stays open would
-- otherwise land its rows in the past of the window. Because the lock below serialises a reporter's
-- transactions, commit order is created_at order, so the cap-th most recent row by created_at is also
-- the cap-th most recent by commit time, and one indexed lookup of `cap` rows suffices.
create or replace function private.admit_price_report() returns trigger
    language plpgsql volatile security definer set search_path = ''
as $$
declare
    earlier record;
    cap_th record;
    counted_at pg_catalog.timestamptz;
    wait_seconds integer;
begin
    -- When the reporter's identity matures, fixed now: medians count the report from then on, whatever
    -- happens to the identity later (`pricesvc prune` deletes it). A reporter with no identity (only the
    -- owner or a superuser can name one) is taken as made this instant, never as old.
    -- Whether the reporter is an attested identity, fixed now like maturity. Under the 'attested'
    -- threshold mode (settings.sql) an unattested reporter's report never matures, so it is stored and
    -- capped like any other and never counted. The rule is private.report_matures_at()
    -- (counted_reports.sql); private.median_rule_reconcile() re-derives it when a setting changes.
    new.reporter_attested := auth.attestation_of(new.reporter_id) is not null;
    new.reporter_matures_at := private.report_matures_at(
        (select u.created_at from auth.users u where u.id = new.reporter_id), new.reporter_attested,
        pg_catalog.clock_timestamp());

    -- No reporter: the RLS check rejects it (no lock, no count, no receipt).
    if new.reporter_id is null then
        new.created_at := pg_catalog.clock_timestamp();
        return new;
    end if;

    -- Serialises one reporter's inserts until commit, so the count below sees every earlier one.
    -- Only READ COMMITTED takes a fresh snapshot after the lock is granted.
    if pg_catalog.current_setting('transaction_isolation') <> 'read committed' then
        raise exception using errcode = '0A000',
            message = 'price reports must be inserted in a READ COMMITTED transaction',
            detail = 'the per-reporter cap is only exact when each insert sees every committed earlier one';
    end if;
    -- Only the owner may take advisory locks, so no other role can hold a reporter's.
    perform pg_catalog.pg_advisory_xact_lock(private.reporter_lock_namespace(),
                                             pg_catalog.hashtext(new.reporter_id::pg_catalog.text));

    -- Server time, taken after the lock: later than every earlier report's commit. A client cannot
    -- backdate a report to dodge the cap or the report window.
    new.created_at := pg_catalog.clock_timestamp();

    -- A retry of a report this reporter already sent inserts nothing and does not count. A retry must
    -- repeat the original report: the same id with other values is a conflict, never a silent 201.
    if new.client_report_id is not null then
        select r.id, r.created_at, r.currency, r.location_id, r.rate_kind, r.price_cents, r.lat, r.lng into earlier
        from public.price_reports r
        where r.reporter_id = new.reporter_id
          and r.client_report_id = new.client_report_id;
        if found then
            if not private.reporter_is_caller(new.reporter_id) then
                new.reporter_id := null;
                return new;
            end if;
            if (earlier.location_id, earlier.rate_kind, earlier.price_cents, earlier.currency, earlier.lat, earlier.lng)
               is distinct from (new.location_id, new.rate_kind, new.price_cents, new.currency, new.lat, new.lng) then
                raise exception using errcode = '23505',
                    message = pg_catalog.format('client_report_id %s was already used for a different report',
                                                new.client_report_id),
                    detail = 'A retry must repeat the original report; a new report needs a new client_report_id.';
            end if;
            perform private.append_receipt(earlier.id, earlier.created_at, earlier.currency, true);
            return null;
        end if;
    end if;

    -- Cap reached when the cap-th most recent report counts inside the window; a slot frees up when
    -- that one leaves it. Its time is its commit time; a row of this transaction (no commit time yet,
    -- created after the transaction began) counts as now; an old row whose commit time is no longer
    -- kept counts at created_at.
    select r.created_at, pg_catalog.pg_xact_commit_timestamp(r.xmin) as committed_at into cap_th
    from public.price_reports r
    where r.reporter_id = new.reporter_id
    order by r.created_at desc
    offset private.reporter_cap() - 1
    limit 1;
    if found then
        counted_at := case when cap_th.committed_at is not null then cap_th.committed_at
                           when cap_th.created_at >= pg_catalog.now() then new.created_at
                           else cap_th.created_at end;
        if counted_at > new.created_at - private.cap_window() then
            if not private.reporter_is_caller(new.reporter_id) then
                new.reporter_id := null;
                return new;
            end if;
            wait_seconds := greatest(1, pg_catalog.ceil(pg_catalog.date_part('epoch',
                counted_at + private.cap_window() - new.created_at)))::integer;
            raise exception using errcode = 'PT429',
                message = pg_catalog.format('reporter cap reached: at most %s price reports in any %s minutes',
                                            private.reporter_cap(),
                                            pg_catalog.date_part('epoch', private.cap_window())::integer / 60),
                detail = pg_catalog.format('The oldest report in the window leaves it in %s seconds.', wait_seconds),
                hint = pg_catalog.format('Retry after %s seconds', wait_seconds);
        end if;
    end if;

    perform private.append_receipt(new.id, new.created_at, new.currency, false);
    return new;
end
$$;
-- Fired by the trigger only; nobody calls it directly.
revoke all on function private.admit_price_report() from public;

-- AFTER UPDATE on auth.users, per statement: a report's reporter_matures_at follows its identity's
-- created_at while the identity exists. Nothing in pricesvc updates users; an operator or a test that
-- ages identities as the superuser (README, tests) re-dates their reports with them, and the median
-- store rebuilds the locations those reports are at (median_store.sql).
create or replace function private.reports_follow_identity_age() returns trigger
    language plpgsql volatile security definer set search_path = ''
as $$
begin
    -- Only when a created_at changed: an update of price_reports rebuilds the store even for no rows.
    if exists (select from new_users n join old_users o on o.id = n.id
               where n.created_at is distinct from o.created_at
                 and exists (select from public.price_reports r where r.reporter_id = n.id)) then
        -- Under the 'attested' threshold mode an unattested reporter's reports never mature, aged or not.
        update public.price_reports r
        set reporter_matures_at = private.report_matures_at(n.created_at, r.reporter_attested, null)
        from new_users n join old_users o on o.id = n.id
        where r.reporter_id = n.id and n.created_at is distinct from o.created_at
          and r.reporter_matures_at is distinct from private.report_matures_at(n.created_at, r.reporter_attested, null);
    end if;
    return null;
end
$$;
revoke all on function private.reports_follow_identity_age() from public;
