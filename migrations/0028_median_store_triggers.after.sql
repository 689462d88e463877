-- The median store's triggers on public.price_reports (their functions are median_store.sql's) and its
-- first build from the reports.
--
-- Safe where they exist already: until this step existed median_store.sql ran these same statements
-- every time it changed, so every deployed database has the triggers and a built store.
-- `create or replace trigger` replaces each with the same definition (a moment's SHARE ROW EXCLUSIVE lock),
-- and the first build runs only when the store is empty while reports exist. Since this runs once,
-- median_store.sql may redefine the trigger functions (create or replace) but never drop them; and a
-- versioned file that empties the store rebuilds it with an after-step of its own.

-- Creating the triggers locks price_reports against inserts until this step commits, so the first build
-- below sees every report and misses none.
create or replace trigger price_reports_median_store
    after insert on public.price_reports
    for each row execute function private.median_enqueue();
create or replace trigger price_reports_median_store_update
    after update on public.price_reports
    referencing old table as old_reports new table as new_reports
    for each statement execute function private.median_rebuild_changed();
create or replace trigger price_reports_median_store_delete
    after delete on public.price_reports
    referencing old table as old_reports
    for each statement execute function private.median_rebuild_changed();
create or replace trigger price_reports_median_store_truncate
    after truncate on public.price_reports
    for each statement execute function private.median_rebuild_changed();

-- First build (and after anything emptied the store by hand): the store is empty while reports exist.
do $$
begin
    if not exists (select from private.median_groups) and not exists (select from private.median_queue)
       and exists (select from public.price_reports) then
        perform private.median_rebuild(null);
    end if;
end
$$;
