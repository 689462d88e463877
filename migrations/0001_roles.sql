-- Schemas and extensions everything else builds on.
--
-- The name is older than the text: this file once created the client roles and a copy of the migration
-- bookkeeping table too. Roles now have one home, policies.sql (re-applied whenever anything changes, so
-- it creates and asserts every role pricesvc uses), and the bookkeeping one definition, the runner's
-- (MigrationRunner.bookkeepingSQL, created before any file runs). migrations/superseded.txt lists the
-- old text: every database that applied it has the same roles and table.

create schema if not exists extensions;
create extension if not exists pgcrypto with schema extensions;

-- Settings and internal helpers; no client role gets USAGE on it.
create schema if not exists private;
