import PriceMigrations

extension MigrationLayout {
    /// pricesvc's `migrations/` (docs/contracts.md, "migrations/ layout") and the bookkeeping every
    /// deployed database has: what `migrate` and `/readyz` pass to PriceMigrations.
    ///
    /// - Important: Only the file names may ever change, and only with the files. The schema, the setting
    ///   and the lock key are recorded in (or met on by) every deployed database and release
    ///   (MigrationLayoutTests pins them).
    static let pricesvc = MigrationLayout(
        // Every tunable: each other file's functions may read them.
        firstFileName: "settings.sql",
        // Every grant, revoke and owner, RLS: reading it alone tells who may do what.
        finalFileName: "policies.sql",
        // A changed median setting re-derives the stored maturities and rebuilds the median store in
        // settings.sql's own transaction, so no admission or reader sees the new settings with state
        // derived under the old ones (docs/median-store.md). A no-op when nothing changed; absent on a
        // fresh database, where 0030_median_rule_reconcile.after.sql makes the first call.
        firstFileFollowUp: """
            do $$
            begin
                if pg_catalog.to_regprocedure('private.median_rule_reconcile()') is not null then
                    perform private.median_rule_reconcile();
                end if;
            end
            $$;
            """,
        // schema_migrations and applied_migrations(), which policies.sql grants to authenticator for /readyz.
        bookkeepingSchema: "pricesvc_meta",
        migratorSetting: "pricesvc.migrator_schema_version",
        // The bytes of "pricesvc" as a bigint.
        advisoryLockKey: 0x7072_6963_6573_7663)
}
