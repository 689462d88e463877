-- Hardening against an active attacker (see docs/threat-model.md). Its tunables, the reporter maturity
-- (settings.sql) and the unused commit grace (dropped by 0013), are functions and live in repeatable
-- files; what stays here are the one-off drops of functions whose signature or result type changed, so
-- the repeatable files can create them anew.

-- get_user now also needs the token's session; refresh_session returns the chain to the live token.
drop function if exists auth.get_user(uuid);
drop function if exists auth.refresh_session(bytea, bytea, bytea, integer, integer, integer);

-- One-off from the receipts change (was in policies.sql).
drop function if exists private.append_receipt(bigint, timestamptz, boolean);
drop function if exists private.user_by_id(uuid);
