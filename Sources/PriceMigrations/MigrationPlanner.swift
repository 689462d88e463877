import PriceDB

/// A migration file found on disk: its name and the SHA-256 hex of its bytes.
public struct MigrationFile: Sendable, Hashable {
    public var name: String
    public var checksum: String

    public init(name: String, checksum: String) {
        self.name = name
        self.checksum = checksum
    }
}

/// A row of the bookkeeping table `schema_migrations` (or of `applied_migrations()`), in the layout's
/// ``MigrationLayout/bookkeepingSchema``.
public struct AppliedMigration: Sendable, Hashable {
    public var name: String
    public var checksum: String

    public init(name: String, checksum: String) {
        self.name = name
        self.checksum = checksum
    }
}

/// One file to apply, in its own transaction.
public struct MigrationStep: Sendable, Equatable {
    public var file: MigrationFile
    /// True for a repeatable file when an earlier version of it was applied before.
    public var isReapplication: Bool
    /// SQL the runner executes in this step's transaction right after the file: the layout's
    /// ``MigrationLayout/firstFileFollowUp`` for its first file, nil for every other step.
    public var followUp: String?

    public init(file: MigrationFile, isReapplication: Bool, followUp: String? = nil) {
        self.file = file
        self.isReapplication = isReapplication
        self.followUp = followUp
    }
}

/// What `MigrationPlanner.plan()` decided.
public struct MigrationPlan: Sendable, Equatable {
    public var steps: [MigrationStep]
    /// Applied names with no file any more: reported, not fatal (a file may have been squashed away).
    public var unknownApplied: [String]
    /// The version the database recorded before this run; nil when none was (a database from before
    /// schema versions, or a fresh one).
    public var databaseVersion: SchemaVersion?
    /// The directory's version, recorded before the first step when it differs from `databaseVersion`.
    public var version: SchemaVersion = .undeclared
    public var recordsVersion: Bool { version != .undeclared && databaseVersion != version }
    public var isUpToDate: Bool { steps.isEmpty && !recordsVersion }
}

/// How the database compares with the files, for `/readyz`. Never throws: a changed file is a state to report.
public struct MigrationStatus: Sendable, Equatable {
    /// Files not applied yet, or repeatable files applied in another version, in the order they would run.
    public var pending: [String]
    /// Versioned files and after-steps whose applied checksum differs from the file.
    public var changed: [String]
    public var unknownApplied: [String]
    /// Versioned files applied in a text that `superseded.txt` says the shipped one replaces: served as
    /// they are (the catalog is the same). The old checksum stays recorded, so the release before, which
    /// knows only that text, stays ready beside this one during a rolling upgrade.
    public var superseded: [String] = []
    /// What the database recorded (nil: nothing, a database from before schema versions).
    public var databaseVersion: SchemaVersion?
    /// This build's migrations directory's version.
    public var version: SchemaVersion = .undeclared
    /// Nothing for migrate to do: no file pending or changed (a superseded text is current).
    public var isCurrent: Bool { pending.isEmpty && changed.isEmpty }

    /// The database recorded a higher version than this build's: a newer release migrated it.
    public var databaseIsNewer: Bool { (databaseVersion?.version ?? 0) > version.version }

    /// nil when a binary with these files may serve against the database; otherwise why not, for
    /// `/readyz` and `migrate --status`.
    ///
    /// A newer schema that accepts this build's version is served as it is: its repeatable files are the
    /// newer release's, and only this build's own versioned files and after-steps must be there. An equal or older one
    /// must match the files exactly, as before schema versions. A superseded checksum is no problem.
    public var problem: String? {
        if let databaseVersion, databaseIsNewer {
            guard databaseVersion.accepts(binary: version.version) else {
                return "the database schema is version \(databaseVersion.version), which needs pricesvc of schema version "
                    + "\(databaseVersion.compatibleFrom) or later; this one is \(version.version)"
            }
            if let name = pending.first(where: MigrationPlanner.runsOnce) {
                return "migration \(name) is not applied; run pricesvc migrate"
            }
            if let name = changed.first { return "migration \(name) differs from the applied one" }
            return nil
        }
        if let name = pending.first { return "migration \(name) is not applied; run pricesvc migrate" }
        if let name = changed.first { return "migration \(name) differs from the applied one; run pricesvc migrate" }
        return nil
    }
}

/// Decides which migration files to run, without touching a database.
///
/// Three kinds of file, told apart by name, run in this order:
/// - **Versioned** `NNNN_name.sql` run once, in numeric order, and may never change afterwards. They run
///   before any function exists, so they hold tables, types and data changes that need none.
/// - **Repeatable** `name.sql` (lowercase letters, digits and `_`, starting with a letter) hold idempotent
///   definitions (`create or replace`, revoke-then-grant). They run after the versioned files: the
///   layout's ``MigrationLayout/firstFileName`` first, since every other file may read what it defines,
///   then the rest in name order; its ``MigrationLayout/finalFileName`` runs last of all, after the
///   after-steps.
/// - **After-steps** `NNNN_name.after.sql` run once, like versioned files, in number order, but after the
///   repeatable files (all but the final one): the backfills, checks and triggers that need a function, so
///   the repeatable files need not re-run them every time they change. Their numbers share one sequence
///   with the versioned files' (a clash is refused).
///
/// A versioned file or after-step whose recorded checksum differs from the file's is refused, unless
/// ``superseded`` lists the recorded checksum as an old text of that file and the file's checksum as its
/// new text: then the file counts as applied, is not run, and its old checksum stays recorded (instances
/// of the release before compare that one with their files, and stay ready). A new one numbered below an
/// applied one of its kind is refused: it would run out of order on databases that already went on.
///
/// A repeatable file runs when its checksum differs from the applied one. Every repeatable file runs
/// after any versioned step (a versioned file that drops or recreates an object loses the grants, policies
/// and functions that hang on it; re-running the idempotent files restores them). The final file also
/// runs whenever any other file ran: it grants access and hands every object the others created to the
/// owner role, so nothing they create is left reachable or owned by the migrating superuser.
public struct MigrationPlanner: Sendable {
    /// Which repeatable files run first and last.
    public var layout: MigrationLayout
    public var files: [MigrationFile]
    /// The applied files, without the schema version's row.
    public var applied: [AppliedMigration]
    /// The directory's declared version (``SchemaVersion/undeclared`` without a `VERSION` file).
    public var version: SchemaVersion
    /// The version the database recorded, from its bookkeeping row.
    public var databaseVersion: SchemaVersion?
    /// Old checksums of versioned files that their shipped text replaces (`superseded.txt`).
    public var superseded: [SupersededChecksum]

    /// `files` in any order (directory order is fine); `applied` as read from the database, the schema
    /// version's row included.
    public init(files: [MigrationFile], applied: [AppliedMigration], layout: MigrationLayout,
                version: SchemaVersion = .undeclared, superseded: [SupersededChecksum] = []) {
        self.layout = layout
        self.files = files
        self.superseded = superseded
        self.applied = applied.filter { $0.name != SchemaVersion.recordName }
        self.version = version
        self.databaseVersion = applied.last { $0.name == SchemaVersion.recordName }
            .flatMap { SchemaVersion(recordText: $0.checksum) }
    }

    /// The steps to run, or `migrationChecksumMismatch` naming the changed file, or `migrationFailed`
    /// for a misnamed, duplicate-numbered or out-of-order file.
    ///
    /// - Important: An after-step runs once, not whenever the repeatable file it follows changes: a
    ///   repeatable file must never drop what an after-step built on its functions (a trigger, a check),
    ///   only `create or replace` it.
    public func plan() throws(DatabaseError) -> MigrationPlan {
        if let databaseVersion, databaseVersion.version > version.version {
            // Its files are older than the ones applied: running them would undo the newer release.
            throw DatabaseError(code: .schemaNewerThanMigrations, message:
                "the database schema is version \(databaseVersion.version), newer than this pricesvc's migrations "
                + "(version \(version.version)); an older pricesvc must not migrate it",
                hint: "run migrate with pricesvc of schema version \(databaseVersion.version) or later "
                    + "(docs/upgrading.md, \"Rolling back a binary\")")
        }
        let (versioned, repeatable, afterSteps) = try orderedFiles()
        let appliedByName = self.appliedByName

        var steps = try onceSteps(versioned, newestApplied: applied.compactMap { Self.versionNumber(of: $0.name) }.max())
        let afterVersionedStep = !steps.isEmpty
        for file in repeatable where file.name != layout.finalFileName {
            let appliedChecksum = appliedByName[file.name]
            if appliedChecksum != file.checksum || afterVersionedStep {
                steps.append(MigrationStep(file: file, isReapplication: appliedChecksum != nil,
                                           followUp: file.name == layout.firstFileName ? layout.firstFileFollowUp : nil))
            }
        }
        steps += try onceSteps(afterSteps, newestApplied: applied.compactMap { Self.afterStepNumber(of: $0.name) }.max())
        if let final = repeatable.first(where: { $0.name == layout.finalFileName }) {
            let appliedChecksum = appliedByName[final.name]
            if appliedChecksum != final.checksum || !steps.isEmpty {
                steps.append(MigrationStep(file: final, isReapplication: appliedChecksum != nil))
            }
        }
        return MigrationPlan(steps: steps, unknownApplied: unknownApplied, databaseVersion: databaseVersion, version: version)
    }

    /// The versioned files or the after-steps (one kind, by number) not applied yet; refuses one numbered
    /// below `newestApplied` of its kind, and a changed one that no superseded line accepts.
    private func onceSteps(_ files: [(Int, MigrationFile)], newestApplied: Int?) throws(DatabaseError) -> [MigrationStep] {
        let appliedByName = self.appliedByName
        var steps: [MigrationStep] = []
        for (number, file) in files {
            guard let appliedChecksum = appliedByName[file.name] else {
                if let newestApplied, number < newestApplied {
                    throw DatabaseError(code: .migrationFailed, message:
                        "migration \(file.name) is numbered below an already applied migration; renumber it after \(newestApplied)")
                }
                steps.append(MigrationStep(file: file, isReapplication: false))
                continue
            }
            if appliedChecksum != file.checksum && isSuperseded(file, recorded: appliedChecksum) { continue }
            guard appliedChecksum == file.checksum else {
                throw DatabaseError(code: .migrationChecksumMismatch,
                                    message: "migration \(file.name) was changed after it was applied",
                                    detail: "applied checksum \(appliedChecksum), file checksum \(file.checksum)",
                                    hint: "restore the applied version and put the change in a new migration file "
                                        + "(or, for a text that leaves the catalog as it is, list it in \(SupersededChecksum.fileName))")
            }
        }
        return steps
    }

    /// Compares without deciding: what `/readyz` reports. Lists files in the order ``plan()`` would run them.
    public func status() -> MigrationStatus {
        let appliedByName = self.appliedByName
        var pending: [String] = []
        var changed: [String] = []
        var superseded: [String] = []
        for file in files.sorted(by: { sortKey($0.name) < sortKey($1.name) }) {
            switch appliedByName[file.name] {
            case nil: pending.append(file.name)
            case file.checksum?: break
            case _ where !Self.runsOnce(file.name): pending.append(file.name)
            case let recorded? where isSuperseded(file, recorded: recorded): superseded.append(file.name)
            default: changed.append(file.name)
            }
        }
        return MigrationStatus(pending: pending, changed: changed, unknownApplied: unknownApplied,
                               superseded: superseded, databaseVersion: databaseVersion, version: version)
    }

    /// Whether `recorded` is an old checksum of `file` that its current text supersedes.
    private func isSuperseded(_ file: MigrationFile, recorded: String) -> Bool {
        superseded.contains { $0.name == file.name && $0.old == recorded && $0.new == file.checksum }
    }

    private var appliedByName: [String: String] {
        Dictionary(applied.map { ($0.name, $0.checksum) }, uniquingKeysWith: { _, last in last })
    }

    private var unknownApplied: [String] {
        let known = Set(files.map(\.name))
        return applied.map(\.name).filter { !known.contains($0) }
    }

    /// Versioned files by number, repeatable files in run order, after-steps by number.
    private func orderedFiles() throws(DatabaseError)
        -> (versioned: [(Int, MigrationFile)], repeatable: [MigrationFile], afterSteps: [(Int, MigrationFile)]) {
        var versioned: [(Int, MigrationFile)] = []
        var repeatable: [MigrationFile] = []
        var afterSteps: [(Int, MigrationFile)] = []
        var byNumber: [Int: MigrationFile] = [:]
        for file in files {
            let number = Self.versionNumber(of: file.name) ?? Self.afterStepNumber(of: file.name)
            if let number {
                // One sequence for both kinds: a number names one file, whichever kind it is.
                if let clash = byNumber[number] {
                    throw DatabaseError(code: .migrationFailed,
                                        message: "migrations \(clash.name) and \(file.name) share the number \(number)")
                }
                byNumber[number] = file
                if Self.versionNumber(of: file.name) != nil {
                    versioned.append((number, file))
                } else {
                    afterSteps.append((number, file))
                }
            } else if Self.isRepeatableName(file.name) {
                repeatable.append(file)
            } else {
                throw DatabaseError(code: .migrationFailed, message:
                    "unexpected migration file \(file.name): expected NNNN_name.sql (versioned), NNNN_name.after.sql "
                    + "(after-step) or name.sql in lowercase letters, digits and _ (repeatable)")
            }
        }
        return (versioned.sorted { $0.0 < $1.0 },
                repeatable.sorted { sortKey($0.name) < sortKey($1.name) },
                afterSteps.sorted { $0.0 < $1.0 })
    }

    /// Versioned files and after-steps: each runs once, and its text may never change afterwards.
    static func runsOnce(_ name: String) -> Bool {
        versionNumber(of: name) != nil || afterStepNumber(of: name) != nil
    }

    /// `0007_reports.sql` → 7; nil for anything else, an after-step included.
    static func versionNumber(of name: String) -> Int? {
        guard !name.hasSuffix(afterStepSuffix) else { return nil }
        return number(of: name, suffix: ".sql")
    }

    /// `0027_rate_kind_checks.after.sql` → 27; nil for anything else.
    static func afterStepNumber(of name: String) -> Int? {
        number(of: name, suffix: afterStepSuffix)
    }

    static let afterStepSuffix = ".after.sql"

    /// The number of `NNNN_label` + `suffix`, the label non-empty.
    private static func number(of name: String, suffix: String) -> Int? {
        guard name.hasSuffix(suffix), let underscore = name.firstIndex(of: "_") else { return nil }
        let digits = name[..<underscore]
        guard name.index(after: underscore) <= name.index(name.endIndex, offsetBy: -suffix.count) else { return nil }
        let label = name[name.index(after: underscore)..<name.index(name.endIndex, offsetBy: -suffix.count)]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), !label.isEmpty else { return nil }
        return Int(digits)
    }

    /// `medians.sql`, `views.sql`: a lowercase ASCII letter, then lowercase letters, digits or `_`.
    static func isRepeatableName(_ name: String) -> Bool {
        guard name.hasSuffix(".sql") else { return false }
        let stem = name.utf8.dropLast(4)
        guard let first = stem.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first) else { return false }
        return stem.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: "_") }
    }

    /// Run order: versioned files by number, the layout's first file, the other repeatable files by name,
    /// after-steps by number, its final file, then anything else.
    private func sortKey(_ name: String) -> (Int, Int, String) {
        if let number = Self.versionNumber(of: name) { return (0, number, name) }
        if name == layout.firstFileName { return (1, 0, name) }
        if let number = Self.afterStepNumber(of: name) { return (3, number, name) }
        if name == layout.finalFileName { return (4, 0, name) }
        return (Self.isRepeatableName(name) ? 2 : 5, 0, name)
    }
}
