-- Hardening against an active attacker (see docs/threat-model.md): the tunables the new rules need, and
-- the functions whose signature or result type changed, dropped so policies.sql can create them anew.

-- A report counts toward a median (its value, `reporters`, `reports` and the threshold) only once its
-- reporter's identity is this old: sybils made on the spot cannot complete a threshold.
create function private.reporter_maturity() returns interval
    language sql immutable parallel safe
    return interval '24 hours';

-- A transaction that inserted reports must commit within this long of its insert. Rows carry the
-- insert's clock time; the cap counts over cap_window() + commit_grace(), so holding a transaction open
-- cannot move rows into the past of the sliding window.
create function private.commit_grace() returns interval
    language sql immutable parallel safe
    return interval '5 seconds';

revoke execute on function private.reporter_maturity() from public;
revoke execute on function private.commit_grace() from public;

-- get_user now also needs the token's session; refresh_session returns the chain to the live token.
drop function if exists auth.get_user(uuid);
drop function if exists auth.refresh_session(bytea, bytea, bytea, integer, integer, integer);

-- One-off from the receipts change (was in policies.sql).
drop function if exists private.append_receipt(bigint, timestamptz, boolean);
drop function if exists private.user_by_id(uuid);
