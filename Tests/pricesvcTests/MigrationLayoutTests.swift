import PriceMigrations
import PriceSQL
import Testing
@testable import pricesvc

@Suite("pricesvc's migration layout: what its migrations/ and every deployed database are called")
struct MigrationLayoutTests {
    let layout = MigrationLayout.pricesvc

    @Test("the bookkeeping, the migrator's setting and the lock key are the ones deployed databases know")
    func bookkeepingNamesArePinned() {
        #expect(layout.bookkeepingSchema == "pricesvc_meta")
        #expect(layout.migratorSetting == "pricesvc.migrator_schema_version")
        let bytesOfPricesvc = "pricesvc".utf8.reduce(Int64(0)) { $0 << 8 | Int64($1) }
        #expect(layout.advisoryLockKey == bytesOfPricesvc)
    }

    @Test("settings.sql runs first and policies.sql last, and migrations/ has both")
    func firstAndFinalFilesAreInMigrations() throws {
        #expect(layout.firstFileName == "settings.sql" && layout.finalFileName == "policies.sql")
        let names = try MigrationRunner.files(in: MigrationsLocation.sourceTreePath).map(\.name)
        #expect(names.contains(layout.firstFileName) && names.contains(layout.finalFileName))
    }

    @Test("/readyz reads the applied migrations from the layout's bookkeeping schema")
    func readinessReadsTheLayoutsBookkeeping() {
        #expect(Statements.appliedMigrations.sql.contains(" \(layout.bookkeepingSchema).applied_migrations()"))
    }
}
