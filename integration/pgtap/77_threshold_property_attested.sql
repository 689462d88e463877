-- The threshold property of 58_threshold_property.sql under the 'attested' threshold mode:
-- the owner's switch (redefine private.threshold_counts(), reconcile), then 58 whole, in one transaction
-- that 58's rollback undoes (its own BEGIN only warns). Every check of 58 must hold: its raw count reads
-- reporter_matures_at, which under 'attested' never comes for an unattested reporter's report.
begin;
create or replace function private.threshold_counts() returns text language sql immutable parallel safe return 'attested';
select private.median_rule_reconcile() \g /dev/null
\ir 58_threshold_property.sql
