-- Retention and the record of maintenance runs (issue 24, reproductions 3 and 5). The functions are in
-- maintenance.sql, the grants in policies.sql.

-- `pricesvc prune` finds the reports past retention (the report window plus a grace, settings.sql) by
-- age, across every location; without this it would read the whole table each run.
create index price_reports_created_at_idx on public.price_reports (created_at);

-- When each maintenance command last succeeded. They run as separate processes (cron, a systemd timer),
-- so the service learns of them only through the database: /metrics on the admin listener shows these
-- times, and docs/alerts.yml fires when prune has not succeeded for a day.
create table private.maintenance_runs (
    task text primary key,
    succeeded_at timestamptz not null,
    constraint maintenance_runs_task_known check (task in ('prune', 'import-rates'))
);
