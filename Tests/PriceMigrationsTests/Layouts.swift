@testable import PriceMigrations

extension MigrationLayout {
    /// The names pricesvc's own layout uses (`MigrationLayout.pricesvc`, in the executable), so these
    /// tests read like its migrations/.
    static let likePricesvc = MigrationLayout(
        firstFileName: "settings.sql", finalFileName: "policies.sql", bookkeepingSchema: "pricesvc_meta",
        migratorSetting: "pricesvc.migrator_schema_version", advisoryLockKey: 0x7072_6963_6573_7663)

    /// Other names throughout, the first file after the others by name and the final one before them:
    /// what proves the planner and the runner use the layout they are given.
    static let other = MigrationLayout(
        firstFileName: "tunables.sql", finalFileName: "access.sql", bookkeepingSchema: "app_meta",
        migratorSetting: "app.migrator_schema_version", advisoryLockKey: 42)
}
