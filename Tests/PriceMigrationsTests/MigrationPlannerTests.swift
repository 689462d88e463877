import Testing
import PriceDB
@testable import PriceMigrations

/// Which migration files run, in what order, and which situations are refused.
@Suite struct MigrationPlannerTests {
    let layout = MigrationLayout.likePricesvc
    let schema = MigrationFile(name: "0001_schema.sql", checksum: "aaa")
    let reports = MigrationFile(name: "0002_reports.sql", checksum: "bbb")
    let tenth = MigrationFile(name: "0010_auth.sql", checksum: "ccc")
    let policies = MigrationFile(name: "policies.sql", checksum: "ppp")
    let auth = MigrationFile(name: "auth.sql", checksum: "rra")
    let medians = MigrationFile(name: "medians.sql", checksum: "rrm")
    let reportsRules = MigrationFile(name: "reports.sql", checksum: "rrr")

    func applied(_ files: MigrationFile...) -> [AppliedMigration] {
        files.map { AppliedMigration(name: $0.name, checksum: $0.checksum) }
    }

    func names(_ plan: MigrationPlan) -> [String] { plan.steps.map(\.file.name) }

    @Test func aFreshDatabaseGetsEveryVersionedFileByNumberThenPolicies() throws {
        let plan = try MigrationPlanner(files: [policies, tenth, reports, schema], applied: [], layout: layout).plan()
        #expect(names(plan) == ["0001_schema.sql", "0002_reports.sql", "0010_auth.sql", "policies.sql"])
        #expect(plan.steps.allSatisfy { !$0.isReapplication })
        #expect(!plan.isUpToDate)
    }

    @Test func aSecondRunFindsNothingToDo() throws {
        let plan = try MigrationPlanner(files: [schema, reports, policies], applied: applied(schema, reports, policies), layout: layout).plan()
        #expect(plan.isUpToDate)
        #expect(plan.unknownApplied.isEmpty)
    }

    @Test func aChangedVersionedFileIsRefusedByName() {
        var edited = reports
        edited.checksum = "changed"
        #expect {
            try MigrationPlanner(files: [schema, edited, tenth], applied: applied(schema, reports), layout: layout).plan()
        } throws: { error in
            let error = error as? DatabaseError
            return error?.code == .migrationChecksumMismatch && error?.message.contains("0002_reports.sql") == true
        }
    }

    @Test func aChangedPolicyFileIsAppliedAgain() throws {
        var edited = policies
        edited.checksum = "new"
        let plan = try MigrationPlanner(files: [schema, edited], applied: applied(schema, policies), layout: layout).plan()
        #expect(plan.steps == [MigrationStep(file: edited, isReapplication: true)])
    }

    @Test func policiesRunAgainAfterANewVersionedFile() throws {
        let plan = try MigrationPlanner(files: [schema, reports, policies], applied: applied(schema, policies), layout: layout).plan()
        #expect(names(plan) == ["0002_reports.sql", "policies.sql"])
        #expect(plan.steps.last?.isReapplication == true)
    }

    @Test func onlyNewFilesRunAfterEarlierOnes() throws {
        let plan = try MigrationPlanner(files: [schema, reports, tenth], applied: applied(schema), layout: layout).plan()
        #expect(names(plan) == ["0002_reports.sql", "0010_auth.sql"])
    }

    @Test func appliedMigrationsWithoutAFileAreReportedNotFatal() throws {
        let gone = AppliedMigration(name: "0003_removed.sql", checksum: "zzz")
        let plan = try MigrationPlanner(files: [schema, tenth], applied: applied(schema) + [gone], layout: layout).plan()
        #expect(names(plan) == ["0010_auth.sql"])
        #expect(plan.unknownApplied == ["0003_removed.sql"])
    }

    @Test func aNewFileNumberedBelowAnAppliedOneIsRefused() {
        #expect {
            try MigrationPlanner(files: [schema, reports, tenth], applied: applied(schema, tenth), layout: layout).plan()
        } throws: { error in
            (error as? DatabaseError)?.code == .migrationFailed && "\(error)".contains("0002_reports.sql")
        }
    }

    @Test func repeatableFilesRunAfterVersionedOnesByNameWithPoliciesLast() throws {
        let plan = try MigrationPlanner(files: [policies, reportsRules, tenth, medians, schema, auth], applied: [], layout: layout).plan()
        #expect(names(plan) == ["0001_schema.sql", "0010_auth.sql", "auth.sql", "medians.sql", "reports.sql", "policies.sql"])
    }

    @Test func settingsRunFirstAmongRepeatableFilesSoEveryOtherFileMayReadThem() throws {
        let settings = MigrationFile(name: "settings.sql", checksum: "sss")
        let plan = try MigrationPlanner(files: [policies, settings, reportsRules, tenth, medians, schema, auth], applied: [], layout: layout).plan()
        #expect(names(plan) == ["0001_schema.sql", "0010_auth.sql", "settings.sql", "auth.sql", "medians.sql", "reports.sql",
                                "policies.sql"])
        let status = MigrationPlanner(files: [policies, auth, settings], applied: [], layout: layout).status()
        #expect(status.pending == ["settings.sql", "auth.sql", "policies.sql"])
    }

    @Test func anotherLayoutRunsItsOwnFirstAndFinalFilesAndPricesvcsNamesAreOrdinaryToIt() throws {
        let tunables = MigrationFile(name: "tunables.sql", checksum: "ttt")
        let access = MigrationFile(name: "access.sql", checksum: "acc")
        let settings = MigrationFile(name: "settings.sql", checksum: "sss")
        let files = [policies, access, settings, reportsRules, tenth, tunables, schema, auth]

        let other = try MigrationPlanner(files: files, applied: [], layout: .other).plan()
        #expect(names(other) == ["0001_schema.sql", "0010_auth.sql", "tunables.sql", "auth.sql", "policies.sql", "reports.sql",
                                 "settings.sql", "access.sql"])
        #expect(MigrationPlanner(files: files, applied: [], layout: .other).status().pending == names(other))
        let pricesvcs = try MigrationPlanner(files: files, applied: [], layout: layout).plan()
        #expect(names(pricesvcs) == ["0001_schema.sql", "0010_auth.sql", "settings.sql", "access.sql", "auth.sql", "reports.sql",
                                     "tunables.sql", "policies.sql"])
    }

    @Test func anotherLayoutsFinalFileFollowsAnyChangeAndPoliciesDoesNot() throws {
        let access = MigrationFile(name: "access.sql", checksum: "acc")
        var edited = medians
        edited.checksum = "new"
        let plan = try MigrationPlanner(files: [schema, edited, access, policies],
                                        applied: applied(schema, medians, access, policies), layout: .other).plan()
        #expect(names(plan) == ["medians.sql", "access.sql"])
    }

    @Test func aChangedRepeatableFileRunsAloneFollowedByPolicies() throws {
        var edited = medians
        edited.checksum = "new"
        let plan = try MigrationPlanner(files: [schema, auth, edited, reportsRules, policies],
                                        applied: applied(schema, auth, medians, reportsRules, policies), layout: layout).plan()
        #expect(plan.steps == [MigrationStep(file: edited, isReapplication: true),
                               MigrationStep(file: policies, isReapplication: true)])
    }

    @Test func aNewRepeatableFileRunsFollowedByPolicies() throws {
        let plan = try MigrationPlanner(files: [schema, auth, medians, policies],
                                        applied: applied(schema, auth, policies), layout: layout).plan()
        #expect(plan.steps == [MigrationStep(file: medians, isReapplication: false),
                               MigrationStep(file: policies, isReapplication: true)])
    }

    @Test func everyRepeatableFileRunsAgainAfterANewVersionedFile() throws {
        let plan = try MigrationPlanner(files: [schema, reports, auth, medians, policies],
                                        applied: applied(schema, auth, medians, policies), layout: layout).plan()
        #expect(names(plan) == ["0002_reports.sql", "auth.sql", "medians.sql", "policies.sql"])
        #expect(plan.steps.dropFirst().allSatisfy { $0.isReapplication })
    }

    @Test func aChangedPolicyFileRunsAloneWhenNothingElseChanged() throws {
        var edited = policies
        edited.checksum = "new"
        let plan = try MigrationPlanner(files: [schema, auth, medians, edited],
                                        applied: applied(schema, auth, medians, policies), layout: layout).plan()
        #expect(names(plan) == ["policies.sql"])
    }

    @Test(arguments: ["auth.sql", "medians.sql", "x_1.sql", "policies2.sql", "limits.sql"])
    func lowercaseNamesAreRepeatableFiles(name: String) throws {
        let file = MigrationFile(name: name, checksum: "x")
        let plan = try MigrationPlanner(files: [schema, file, policies], applied: [], layout: layout).plan()
        #expect(names(plan) == ["0001_schema.sql", name, "policies.sql"])
    }

    @Test(arguments: ["README.sql", "Policies.sql", "0001_.sql", "0001-schema.sql", "_auth.sql", "my-policies.sql", ".sql"])
    func aMisnamedFileIsRefused(name: String) {
        #expect(throws: DatabaseError.self) {
            try MigrationPlanner(files: [schema, MigrationFile(name: name, checksum: "x")], applied: [], layout: layout).plan()
        }
    }

    @Test func twoFilesWithTheSameNumberAreRefused() {
        let clash = MigrationFile(name: "0001_other.sql", checksum: "x")
        #expect(throws: DatabaseError.self) { try MigrationPlanner(files: [schema, clash], applied: [], layout: layout).plan() }
    }

    @Test func statusNamesPendingAndChangedFilesForReadiness() {
        var edited = schema
        edited.checksum = "edited"
        var newPolicies = policies
        newPolicies.checksum = "new"
        let status = MigrationPlanner(files: [newPolicies, reports, edited], applied: applied(schema, policies), layout: layout).status()
        #expect(status.pending == ["0002_reports.sql", "policies.sql"])
        #expect(status.changed == ["0001_schema.sql"])
        #expect(!status.isCurrent)
    }

    @Test func statusListsChangedRepeatableFilesAsPendingInRunOrder() {
        var newMedians = medians
        newMedians.checksum = "new"
        let status = MigrationPlanner(files: [policies, newMedians, auth, schema],
                                      applied: applied(schema, auth, medians, policies), layout: layout).status()
        #expect(status.pending == ["medians.sql"])
        #expect(status.changed.isEmpty)
        let fresh = MigrationPlanner(files: [policies, medians, auth, reports, schema], applied: [], layout: layout).status()
        #expect(fresh.pending == ["0001_schema.sql", "0002_reports.sql", "auth.sql", "medians.sql", "policies.sql"])
    }

    @Test func statusIsCurrentWhenEveryFileIsAppliedUnchanged() {
        let status = MigrationPlanner(files: [schema, policies], applied: applied(policies, schema), layout: layout).status()
        #expect(status.isCurrent)
        #expect(status == MigrationStatus(pending: [], changed: [], unknownApplied: []))
    }

    // MARK: Superseded checksums (superseded.txt)

    /// `reports` rewritten: the database recorded "bbb", the file is now "bbb2", and superseded.txt says so.
    var rewritten: MigrationFile { MigrationFile(name: "0002_reports.sql", checksum: "bbb2") }
    let supersedes = [SupersededChecksum(name: "0002_reports.sql", old: "bbb", new: "bbb2")]

    @Test func aSupersededChecksumIsAcceptedAsAppliedWithoutRunningTheFile() throws {
        let planner = MigrationPlanner(files: [schema, rewritten, policies], applied: applied(schema, reports, policies), layout: layout,
                                       superseded: supersedes)
        let plan = try planner.plan()
        #expect(plan.steps.isEmpty, "a superseded file must not run again")
        #expect(plan.isUpToDate, "the old checksum stays recorded: nothing to write")
        #expect(planner.status().isCurrent && planner.status().superseded == ["0002_reports.sql"])
        // A fresh database records the new text; that is current too.
        let fresh = try MigrationPlanner(files: [schema, rewritten, policies], applied: applied(schema, rewritten, policies), layout: layout,
                                         superseded: supersedes).plan()
        #expect(fresh.isUpToDate)
    }

    @Test func aSupersededFileBesideANewOneRecordsOneAndRunsTheOther() throws {
        let plan = try MigrationPlanner(files: [schema, rewritten, tenth, policies], applied: applied(schema, reports, policies), layout: layout,
                                        superseded: supersedes).plan()
        #expect(names(plan) == ["0010_auth.sql", "policies.sql"], "the superseded file is not run; the new one and policies are")
    }

    @Test(arguments: [
        // Another old text than the one listed.
        (recorded: "zzz", file: "bbb2"),
        // The listed old text, but the file is not the text that supersedes it (edited once more).
        (recorded: "bbb", file: "bbb3"),
    ])
    func anyOtherChangeOfAVersionedFileIsStillRefused(recorded: String, file: String) {
        let changed = MigrationFile(name: "0002_reports.sql", checksum: file)
        let planner = MigrationPlanner(files: [schema, changed],
                                       applied: [AppliedMigration(name: "0002_reports.sql", checksum: recorded)] + applied(schema), layout: layout,
                                       superseded: supersedes)
        #expect { try planner.plan() } throws: { error in
            (error as? DatabaseError)?.code == .migrationChecksumMismatch
        }
        #expect(planner.status().changed == ["0002_reports.sql"])
        #expect(planner.status().problem != nil)
    }

    @Test func aSupersededChecksumOfAnotherFileDoesNotCount() {
        let other = [SupersededChecksum(name: "0001_schema.sql", old: "bbb", new: "bbb2")]
        #expect(throws: DatabaseError.self) {
            try MigrationPlanner(files: [schema, rewritten], applied: applied(schema, reports), layout: layout, superseded: other).plan()
        }
    }

    @Test func statusCountsASupersededChecksumAsServableAndCurrent() {
        let status = MigrationPlanner(files: [schema, rewritten, policies], applied: applied(schema, reports, policies), layout: layout,
                                      superseded: supersedes).status()
        #expect(status.superseded == ["0002_reports.sql"])
        #expect(status.changed.isEmpty && status.pending.isEmpty)
        #expect(status.problem == nil, "the catalog is the same: /readyz may say ready")
        #expect(status.isCurrent, "the old checksum stays recorded: migrate has nothing to write")
    }

    @Test func supersededTextParsesCommentsBlankLinesAndEntries() throws {
        let old = String(repeating: "a", count: 64), new = String(repeating: "b", count: 64)
        let entries = try SupersededChecksum.parse("# why\n\n0004_settings.sql \(old) \(new)\n  \n0010_x.sql\t\(new) \(old)\n")
        #expect(entries == [SupersededChecksum(name: "0004_settings.sql", old: old, new: new),
                            SupersededChecksum(name: "0010_x.sql", old: new, new: old)])
    }

    // MARK: After-steps (NNNN_name.after.sql)

    let settings = MigrationFile(name: "settings.sql", checksum: "rrs")
    let triggers = MigrationFile(name: "0011_triggers.after.sql", checksum: "ttt")
    let backfill = MigrationFile(name: "0012_backfill.after.sql", checksum: "uuu")

    @Test func aFreshDatabaseRunsVersionedFilesThenSettingsThenRepeatablesThenAfterStepsByNumberThenPolicies() throws {
        let plan = try MigrationPlanner(files: [backfill, policies, reportsRules, triggers, settings, tenth, auth, schema],
                                        applied: [], layout: layout).plan()
        #expect(names(plan) == ["0001_schema.sql", "0010_auth.sql", "settings.sql", "auth.sql", "reports.sql",
                                "0011_triggers.after.sql", "0012_backfill.after.sql", "policies.sql"])
        let status = MigrationPlanner(files: [backfill, policies, reportsRules, triggers, settings, tenth, auth, schema],
                                      applied: [], layout: layout).status()
        #expect(status.pending == names(plan), "status lists the files in the order plan runs them")
    }

    @Test func anAfterStepRunsOnceAndNotAgainWhenTheRepeatableFileBeforeItChanges() throws {
        let all = [schema, reportsRules, triggers, policies]
        let planner = MigrationPlanner(files: all, applied: applied(schema, reportsRules, triggers, policies), layout: layout)
        #expect(try planner.plan().isUpToDate)
        var edited = reportsRules
        edited.checksum = "new"
        let plan = try MigrationPlanner(files: [schema, edited, triggers, policies],
                                        applied: applied(schema, reportsRules, triggers, policies), layout: layout).plan()
        #expect(names(plan) == ["reports.sql", "policies.sql"])
        // A new versioned file re-runs every repeatable file, never an applied after-step.
        let afterVersioned = try MigrationPlanner(files: all + [tenth], applied: applied(schema, reportsRules, triggers, policies),
                                                  layout: layout).plan()
        #expect(names(afterVersioned) == ["0010_auth.sql", "reports.sql", "policies.sql"])
    }

    @Test func aNewAfterStepAloneRunsFollowedByPolicies() throws {
        let plan = try MigrationPlanner(files: [schema, reportsRules, triggers, policies],
                                        applied: applied(schema, reportsRules, policies), layout: layout).plan()
        #expect(names(plan) == ["0011_triggers.after.sql", "policies.sql"])
        #expect(plan.steps.first?.isReapplication == false)
    }

    @Test func aChangedAfterStepIsRefusedLikeAVersionedFile() {
        var edited = triggers
        edited.checksum = "changed"
        let planner = MigrationPlanner(files: [schema, reportsRules, edited, policies],
                                       applied: applied(schema, reportsRules, triggers, policies), layout: layout)
        #expect { try planner.plan() } throws: { error in
            let error = error as? DatabaseError
            return error?.code == .migrationChecksumMismatch && error?.message.contains("0011_triggers.after.sql") == true
        }
        #expect(planner.status().changed == ["0011_triggers.after.sql"] && planner.status().pending.isEmpty)
        #expect(planner.status().problem?.contains("0011_triggers.after.sql differs") == true)
    }

    @Test func aSupersededAfterStepIsAcceptedWithoutRunning() throws {
        let rewritten = MigrationFile(name: "0011_triggers.after.sql", checksum: "ttt2")
        let planner = MigrationPlanner(files: [schema, reportsRules, rewritten, policies],
                                       applied: applied(schema, reportsRules, triggers, policies), layout: layout,
                                       superseded: [SupersededChecksum(name: "0011_triggers.after.sql", old: "ttt", new: "ttt2")])
        #expect(try planner.plan().isUpToDate)
        #expect(planner.status().superseded == ["0011_triggers.after.sql"] && planner.status().problem == nil)
    }

    @Test(arguments: ["0010_triggers.after.sql", "0001_triggers.after.sql"])
    func anAfterStepSharingAVersionedFilesNumberIsRefused(name: String) {
        let clash = MigrationFile(name: name, checksum: "x")
        #expect { try MigrationPlanner(files: [schema, tenth, clash], applied: [], layout: layout).plan() } throws: { error in
            let message = (error as? DatabaseError)?.message ?? ""
            return (error as? DatabaseError)?.code == .migrationFailed && message.contains(name) && message.contains("share the number")
        }
    }

    @Test func twoAfterStepsWithTheSameNumberAreRefused() {
        let clash = MigrationFile(name: "0011_other.after.sql", checksum: "x")
        #expect(throws: DatabaseError.self) { try MigrationPlanner(files: [triggers, clash], applied: [], layout: layout).plan() }
    }

    @Test func aNewAfterStepNumberedBelowAnAppliedAfterStepIsRefused() {
        #expect { try MigrationPlanner(files: [schema, triggers, backfill], applied: applied(schema, backfill), layout: layout).plan() }
            throws: { error in
                (error as? DatabaseError)?.message.contains("0011_triggers.after.sql is numbered below") == true
            }
    }

    @Test func afterStepsAndVersionedFilesAreOrderedWithinTheirOwnKind() throws {
        // A versioned file numbered after an applied after-step, and the reverse, are both fine: each kind
        // keeps its own order, the numbers only have to be unique.
        let later = MigrationFile(name: "0013_later.sql", checksum: "lll")
        let plan = try MigrationPlanner(files: [schema, later, triggers, policies], applied: applied(schema, triggers, policies),
                                        layout: layout).plan()
        #expect(names(plan) == ["0013_later.sql", "policies.sql"])
        let early = try MigrationPlanner(files: [schema, tenth, backfill, policies], applied: applied(schema, tenth, policies),
                                         layout: layout).plan()
        #expect(names(early) == ["0012_backfill.after.sql", "policies.sql"])
    }

    @Test(arguments: ["0011_triggers.after.sql", "0027_rate_kind_checks.after.sql"])
    func anAfterStepIsNotAVersionedFile(name: String) {
        #expect(MigrationPlanner.versionNumber(of: name) == nil)
        #expect(MigrationPlanner.afterStepNumber(of: name) != nil)
        #expect(!MigrationPlanner.isRepeatableName(name))
    }

    @Test(arguments: ["0001_.after.sql", "x_y.after.sql", "0001.after.sql"])
    func aMisnamedAfterStepIsRefused(name: String) {
        #expect(MigrationPlanner.afterStepNumber(of: name) == nil)
        #expect(throws: DatabaseError.self) {
            try MigrationPlanner(files: [MigrationFile(name: name, checksum: "x")], applied: [], layout: layout).plan()
        }
    }

    @Test func aPendingAfterStepKeepsANewerSchemaFromBeingServed() {
        let newer = AppliedMigration(name: SchemaVersion.recordName,
                                     checksum: SchemaVersion(version: 3, compatibleFrom: 1).recordText)
        var newerMedians = medians
        newerMedians.checksum = "newer"
        let status = MigrationPlanner(files: [schema, medians, triggers, policies],
                                      applied: applied(schema, newerMedians, policies) + [newer], layout: layout,
                                      version: SchemaVersion(version: 2, compatibleFrom: 1)).status()
        #expect(status.databaseIsNewer)
        #expect(status.pending == ["medians.sql", "0011_triggers.after.sql"])
        #expect(status.problem == "migration 0011_triggers.after.sql is not applied; run pricesvc migrate",
                "the newer release's repeatable files are its business, this build's after-steps are not")
        let served = MigrationPlanner(files: [schema, medians, triggers, policies],
                                      applied: applied(schema, newerMedians, triggers, policies) + [newer], layout: layout,
                                      version: SchemaVersion(version: 2, compatibleFrom: 1)).status()
        #expect(served.problem == nil)
    }

    @Test func supersededTextAcceptsAfterSteps() throws {
        let old = String(repeating: "a", count: 64), new = String(repeating: "b", count: 64)
        #expect(try SupersededChecksum.parse("0027_checks.after.sql \(old) \(new)\n")
                == [SupersededChecksum(name: "0027_checks.after.sql", old: old, new: new)])
    }

    // MARK: The first file's follow-up

    @Test func theFirstFilesFollowUpGoesWithTheFirstFileAndNothingElse() throws {
        var withFollowUp = layout
        withFollowUp.firstFileFollowUp = "select 'follow-up'"
        let fresh = try MigrationPlanner(files: [schema, settings, auth, triggers, policies], applied: [], layout: withFollowUp).plan()
        #expect(fresh.steps.map(\.followUp) == [nil, "select 'follow-up'", nil, nil, nil])
        // Only when the first file runs: another file's change carries none.
        var newAuth = auth
        newAuth.checksum = "new"
        let other = try MigrationPlanner(files: [schema, settings, newAuth, triggers, policies],
                                         applied: applied(schema, settings, auth, triggers, policies), layout: withFollowUp).plan()
        #expect(names(other) == ["auth.sql", "policies.sql"])
        #expect(other.steps.allSatisfy { $0.followUp == nil })
        // A layout without one runs the first file alone.
        let plain = try MigrationPlanner(files: [schema, settings, policies], applied: [], layout: layout).plan()
        #expect(plain.steps.allSatisfy { $0.followUp == nil })
    }

    @Test(arguments: [
        "0004_settings.sql aaa bbb",                                   // not SHA-256 hex
        "settings.sql \(String(repeating: "a", count: 64)) \(String(repeating: "b", count: 64))",   // not versioned
        "0004_settings.sql \(String(repeating: "A", count: 64)) \(String(repeating: "b", count: 64))", // uppercase
        "0004_settings.sql \(String(repeating: "a", count: 64)) \(String(repeating: "a", count: 64))", // old == new
        "0004_settings.sql \(String(repeating: "a", count: 64))",    // no new checksum
        "0004_settings.sql \(String(repeating: "a", count: 64)) \(String(repeating: "b", count: 64))\n"
            + "0004_settings.sql \(String(repeating: "a", count: 64)) \(String(repeating: "c", count: 64))", // twice
    ])
    func aMalformedSupersededLineIsRefused(text: String) {
        #expect(throws: DatabaseError.self) { try SupersededChecksum.parse(text) }
    }
}
