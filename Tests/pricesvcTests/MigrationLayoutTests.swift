import Foundation
@testable import PriceMigrations
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

    @Test("the bookkeeping table has one definition, the runner's: no migration file creates it")
    func noMigrationFileDefinesTheBookkeepingTable() throws {
        let directory = MigrationsLocation.sourceTreePath
        let runner = MigrationRunner(conninfo: "", directory: directory, layout: layout)
        #expect(runner.bookkeepingSQL.contains("create table if not exists \(layout.bookkeepingSchema).schema_migrations ("))
        for file in try MigrationRunner.files(in: directory) {
            let sql = try String(contentsOfFile: directory + "/" + file.name, encoding: .utf8)
            #expect(!sql.contains("\(layout.bookkeepingSchema).schema_migrations ("), "\(file.name) defines the bookkeeping table")
        }
    }

    @Test("a changed settings.sql reconciles the median rule in its own transaction, through the layout, not the file")
    func theSettingsFollowUpIsTheGuardedReconcile() throws {
        let followUp = try #require(layout.firstFileFollowUp)
        #expect(followUp.contains("to_regprocedure('private.median_rule_reconcile()') is not null"))
        #expect(followUp.contains("perform private.median_rule_reconcile();"))
        let settings = try String(contentsOfFile: MigrationsLocation.sourceTreePath + "/settings.sql", encoding: .utf8)
        #expect(!settings.contains("perform private.median_rule_reconcile()"), "settings.sql holds definitions only")
    }

    @Test("/readyz reads the applied migrations from the layout's bookkeeping schema")
    func readinessReadsTheLayoutsBookkeeping() {
        #expect(Statements.appliedMigrations.sql.contains(" \(layout.bookkeepingSchema).applied_migrations()"))
    }
}
