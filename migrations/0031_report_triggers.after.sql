-- The triggers reports.sql's functions serve: price_reports_admit (BEFORE INSERT on public.price_reports:
-- server time, maturity, replays, the per-reporter cap, receipts) and users_age_reports (AFTER UPDATE on
-- auth.users: an aged identity's reports re-dated with it).
--
-- Safe where they exist already: until this step existed reports.sql ran these same statements every
-- time it changed, so every deployed database has both; `create or replace trigger` leaves an identical
-- trigger as it is (a moment's SHARE ROW EXCLUSIVE lock on the table). Since this runs once, reports.sql
-- may redefine their functions (create or replace) but never drop them.

create or replace trigger price_reports_admit
    before insert on public.price_reports
    for each row execute function private.admit_price_report();

create or replace trigger users_age_reports
    after update on auth.users
    referencing old table as old_users new table as new_users
    for each statement execute function private.reports_follow_identity_age();
