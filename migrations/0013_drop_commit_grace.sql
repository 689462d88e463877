-- private.commit_grace() (0005) was never used: the cap counts reports by commit time
-- (pg_xact_commit_timestamp), which leaves a held-open transaction nothing to gain without a grace.
drop function if exists private.commit_grace();
