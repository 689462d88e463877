-- One median rule (issue 31): the settings the stored state was derived under, beside the threshold mode
-- threshold_state recorded. private.median_rule_reconcile() (medians.sql) compares them with settings.sql
-- on every migrate and re-derives what a change invalidates: stored maturity (maturity: the
-- reporter_maturity() every finite reporter_matures_at was computed with; null, unknown, is taken as the
-- current one) and the median store (store_rule, private.median_store_rule(); null forces one rebuild,
-- which the first migrate with this file does: a store kept by earlier releases may hold what issue 31's
-- reproductions left in it).
alter table private.threshold_state rename to median_rule_state;
alter table private.median_rule_state
    add column maturity interval,
    add column store_rule text;

-- Its successor, median_rule_reconcile(), applies every setting, not only the mode.
drop function if exists private.threshold_reconcile();
