-- The first reconcile of the median rule (private.median_rule_reconcile(), medians.sql): on a fresh
-- database settings.sql runs before medians.sql defines it, so `pricesvc migrate`'s call after
-- settings.sql (MigrationLayout.pricesvc's firstFileFollowUp) finds nothing to call; this step records the
-- settings the (empty) store was built under in private.median_rule_state.
--
-- Safe on a database that has it: until this step existed medians.sql called it every time it changed,
-- and the function returns at once when the recorded settings are the current ones. Later setting
-- changes are reconciled in settings.sql's own transaction; a change of what the store depends on made
-- elsewhere (private.median_store_rule(), median_store.sql) needs an after-step that calls it again.
do $$
begin
    perform private.median_rule_reconcile();
end
$$;
