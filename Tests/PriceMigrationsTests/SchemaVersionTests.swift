import Testing
import PriceDB
@testable import PriceMigrations

/// Schema versions: what `VERSION` may say, what the planner refuses, and what `/readyz` accepts.
@Suite struct SchemaVersionTests {
    let layout = MigrationLayout.likePricesvc
    let schema = MigrationFile(name: "0001_schema.sql", checksum: "aaa")
    let expand = MigrationFile(name: "0002_expand.sql", checksum: "bbb")
    let medians = MigrationFile(name: "medians.sql", checksum: "old")
    let newMedians = MigrationFile(name: "medians.sql", checksum: "new")
    let policies = MigrationFile(name: "policies.sql", checksum: "ppp")
    let v1 = SchemaVersion(version: 1, compatibleFrom: 0)
    let v2 = SchemaVersion(version: 2, compatibleFrom: 1)

    func applied(_ files: [MigrationFile], recording version: SchemaVersion? = nil) -> [AppliedMigration] {
        files.map { AppliedMigration(name: $0.name, checksum: $0.checksum) }
            + (version.map { [AppliedMigration(name: SchemaVersion.recordName, checksum: $0.recordText)] } ?? [])
    }

    @Test func theDeclarationReadsBothNumbersAndIgnoresComments() throws {
        let text = "# comment\n\nversion = 3\n  compatible_from=2  \n"
        #expect(try SchemaVersion.parse(declaration: text) == SchemaVersion(version: 3, compatibleFrom: 2))
    }

    @Test(arguments: ["version = 1\n", "version = 1\ncompatible_from = 2\n", "version = 1\nversion = 2\ncompatible_from = 0\n",
                      "version = x\ncompatible_from = 0\n", "version = -1\ncompatible_from = 0\n", "release = 1\n"])
    func aBadDeclarationIsRefused(text: String) {
        #expect(throws: DatabaseError.self) { try SchemaVersion.parse(declaration: text) }
    }

    @Test func theRecordedTextRoundTripsAndNothingElseParses() {
        #expect(SchemaVersion(recordText: v2.recordText) == v2)
        #expect(v2.recordText == "version 2 compatible-from 1")
        #expect(SchemaVersion(recordText: "version 1 compatible-from 2") == nil)
        #expect(SchemaVersion(recordText: "0f3a…") == nil)
    }

    @Test func theVersionRowIsNeitherAFileNorUnknown() throws {
        let planner = MigrationPlanner(files: [schema, policies], applied: applied([schema, policies], recording: v1), layout: layout, version: v1)
        #expect(planner.databaseVersion == v1)
        #expect(try planner.plan().isUpToDate)
        #expect(planner.status().unknownApplied.isEmpty)
        #expect(planner.status().problem == nil)
    }

    @Test func aNewVersionIsRecordedEvenWhenNoFileChanged() throws {
        let plan = try MigrationPlanner(files: [schema], applied: applied([schema], recording: v1), layout: layout, version: v2).plan()
        #expect(plan.steps.isEmpty)
        #expect(plan.recordsVersion)
        #expect(!plan.isUpToDate)
        // A directory without VERSION (a layout from before schema versions) records nothing.
        #expect(!(try MigrationPlanner(files: [schema], applied: applied([schema]), layout: layout).plan().recordsVersion))
    }

    @Test func anOlderDirectoryIsRefusedBeforeAnyStepNamingBothVersions() {
        #expect {
            try MigrationPlanner(files: [schema, medians, policies],
                                 applied: applied([schema, expand, newMedians, policies], recording: v2), layout: layout, version: v1).plan()
        } throws: { error in
            let error = error as? DatabaseError
            return error?.code == .schemaNewerThanMigrations
                && error?.message.contains("schema is version 2") == true && error?.message.contains("(version 1)") == true
        }
    }

    @Test func anOlderBuildIsReadyOnANewerCompatibleSchemaWhoseFunctionsChanged() {
        let status = MigrationPlanner(files: [schema, medians, policies],
                                      applied: applied([schema, expand, newMedians, policies], recording: v2), layout: layout, version: v1).status()
        #expect(status.databaseIsNewer)
        #expect(status.pending == ["medians.sql"])
        #expect(status.problem == nil)
        #expect(status.unknownApplied == ["0002_expand.sql"])
    }

    @Test func anOlderBuildIsNotReadyAfterAContractStep() {
        let contract = SchemaVersion(version: 2, compatibleFrom: 2)
        let status = MigrationPlanner(files: [schema, medians], applied: applied([schema, newMedians], recording: contract), layout: layout,
                                      version: v1).status()
        #expect(status.problem == "the database schema is version 2, which needs pricesvc of schema version 2 or later; this one is 1")
    }

    @Test func anOlderBuildStillNeedsItsOwnVersionedFiles() {
        let status = MigrationPlanner(files: [schema, expand], applied: applied([schema], recording: v2), layout: layout, version: v1).status()
        #expect(status.problem == "migration 0002_expand.sql is not applied; run pricesvc migrate")
    }

    @Test func theSameVersionWithAChangedFileIsNotReady() {
        let status = MigrationPlanner(files: [schema, newMedians], applied: applied([schema, medians], recording: v1), layout: layout,
                                      version: v1).status()
        #expect(status.problem == "migration medians.sql is not applied; run pricesvc migrate")
    }

    @Test func aNewerBuildWaitsForItsMigration() {
        let status = MigrationPlanner(files: [schema, expand], applied: applied([schema], recording: v1), layout: layout, version: v2).status()
        #expect(!status.databaseIsNewer)
        #expect(status.problem == "migration 0002_expand.sql is not applied; run pricesvc migrate")
    }
}

/// How long `migrate` pauses between lock waits, and when it gives up.
@Suite struct LockRetryPolicyTests {
    let policy = LockRetryPolicy(lockTimeout: .seconds(2), waitLimit: .seconds(30), firstPause: .milliseconds(500),
                                 longestPause: .seconds(4))

    @Test func pausesDoubleUpToTheLongest() {
        let pauses = (1...6).map { policy.pause(afterAttempt: $0, waited: .seconds(2)) }
        #expect(pauses == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
    }

    @Test func theLastPauseEndsAtTheLimitAndThenItGivesUp() {
        #expect(policy.pause(afterAttempt: 5, waited: .seconds(29)) == .seconds(1))
        #expect(policy.pause(afterAttempt: 5, waited: .seconds(30)) == nil)
        #expect(LockRetryPolicy(waitLimit: .zero).pause(afterAttempt: 1, waited: .seconds(2)) == nil)
    }

    @Test func theLockTimeoutIsPostgreSQLsMilliseconds() {
        #expect(policy.lockTimeoutSetting == "2000ms")
        #expect(LockRetryPolicy(lockTimeout: .milliseconds(1500)).lockTimeoutSetting == "1500ms")
    }

    @Test func onlyLockTimeoutsAndDeadlocksAreRetried() {
        #expect(LockRetryPolicy.isLockWait(DatabaseError(code: .migrationFailed, sqlState: "55P03", message: "lock timeout")))
        #expect(LockRetryPolicy.isLockWait(DatabaseError(code: .server, sqlState: "40P01", message: "deadlock")))
        #expect(!LockRetryPolicy.isLockWait(DatabaseError(code: .migrationFailed, sqlState: "42P01", message: "no table")))
        #expect(!LockRetryPolicy.isLockWait(DatabaseError(code: .connectionLost, message: "gone")))
    }
}
