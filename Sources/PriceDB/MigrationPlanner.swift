/// A migration file found on disk: its name and the SHA-256 hex of its bytes.
public struct MigrationFile: Sendable, Hashable {
    public var name: String
    public var checksum: String

    public init(name: String, checksum: String) {
        self.name = name
        self.checksum = checksum
    }
}

/// A row of `pricesvc_meta.schema_migrations` (or `pricesvc_meta.applied_migrations()`).
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
    /// True for the repeatable file when an earlier version of it was applied before.
    public var isReapplication: Bool
}

/// What `MigrationPlanner.plan()` decided.
public struct MigrationPlan: Sendable, Equatable {
    public var steps: [MigrationStep]
    /// Applied names with no file any more: reported, not fatal (a file may have been squashed away).
    public var unknownApplied: [String]
    public var isUpToDate: Bool { steps.isEmpty }
}

/// How the database compares with the files, for `/readyz`. Never throws: a changed file is a state to report.
public struct MigrationStatus: Sendable, Equatable {
    /// Files not applied yet, or the repeatable file applied in another version.
    public var pending: [String]
    /// Versioned files whose applied checksum differs from the file.
    public var changed: [String]
    public var unknownApplied: [String]
    public var isCurrent: Bool { pending.isEmpty && changed.isEmpty }
}

/// Decides which migration files to run, without touching a database.
///
/// Versioned files `NNNN_name.sql` run once, in numeric order, and may never change afterwards.
/// The repeatable `policies.sql` runs after them whenever its checksum changed, and also after any
/// versioned step (a versioned file that recreates a table drops its policies; re-running the
/// idempotent policy file restores them).
public struct MigrationPlanner: Sendable {
    public static let repeatableFileName = "policies.sql"

    public var files: [MigrationFile]
    public var applied: [AppliedMigration]

    /// `files` in any order (directory order is fine); `applied` as read from the database.
    public init(files: [MigrationFile], applied: [AppliedMigration]) {
        self.files = files
        self.applied = applied
    }

    /// The steps to run, or `migrationChecksumMismatch` naming the changed file, or `migrationFailed`
    /// for a misnamed, duplicate-numbered or out-of-order file.
    public func plan() throws(DatabaseError) -> MigrationPlan {
        let (versioned, repeatable) = try orderedFiles()
        let appliedByName = Dictionary(applied.map { ($0.name, $0.checksum) }, uniquingKeysWith: { _, last in last })
        let newestApplied = applied.compactMap { Self.versionNumber(of: $0.name) }.max()

        var steps: [MigrationStep] = []
        for (number, file) in versioned {
            guard let appliedChecksum = appliedByName[file.name] else {
                if let newestApplied, number < newestApplied {
                    throw DatabaseError(code: .migrationFailed, message:
                        "migration \(file.name) is numbered below an already applied migration; renumber it after \(newestApplied)")
                }
                steps.append(MigrationStep(file: file, isReapplication: false))
                continue
            }
            guard appliedChecksum == file.checksum else {
                throw DatabaseError(code: .migrationChecksumMismatch,
                                    message: "migration \(file.name) was changed after it was applied",
                                    detail: "applied checksum \(appliedChecksum), file checksum \(file.checksum)",
                                    hint: "restore the applied version and put the change in a new migration file")
            }
        }
        if let repeatable {
            let appliedChecksum = appliedByName[repeatable.name]
            if appliedChecksum != repeatable.checksum || !steps.isEmpty {
                steps.append(MigrationStep(file: repeatable, isReapplication: appliedChecksum != nil))
            }
        }
        return MigrationPlan(steps: steps, unknownApplied: unknownApplied)
    }

    /// Compares without deciding: what `/readyz` reports.
    public func status() -> MigrationStatus {
        let appliedByName = Dictionary(applied.map { ($0.name, $0.checksum) }, uniquingKeysWith: { _, last in last })
        var pending: [String] = []
        var changed: [String] = []
        let ordered = files.sorted { Self.sortKey($0.name) < Self.sortKey($1.name) }
        for file in ordered {
            switch appliedByName[file.name] {
            case nil: pending.append(file.name)
            case file.checksum?: break
            case _ where file.name == Self.repeatableFileName: pending.append(file.name)
            default: changed.append(file.name)
            }
        }
        return MigrationStatus(pending: pending, changed: changed, unknownApplied: unknownApplied)
    }

    private var unknownApplied: [String] {
        let known = Set(files.map(\.name))
        return applied.map(\.name).filter { !known.contains($0) }
    }

    private func orderedFiles() throws(DatabaseError) -> (versioned: [(Int, MigrationFile)], repeatable: MigrationFile?) {
        var versioned: [(Int, MigrationFile)] = []
        var repeatable: MigrationFile?
        for file in files {
            if file.name == Self.repeatableFileName {
                repeatable = file
            } else if let number = Self.versionNumber(of: file.name) {
                if let clash = versioned.first(where: { $0.0 == number }) {
                    throw DatabaseError(code: .migrationFailed,
                                        message: "migrations \(clash.1.name) and \(file.name) share the number \(number)")
                }
                versioned.append((number, file))
            } else {
                throw DatabaseError(code: .migrationFailed, message:
                    "unexpected migration file \(file.name): expected NNNN_name.sql or \(Self.repeatableFileName)")
            }
        }
        return (versioned.sorted { $0.0 < $1.0 }, repeatable)
    }

    /// `0007_reports.sql` → 7; nil for anything else.
    static func versionNumber(of name: String) -> Int? {
        guard name.hasSuffix(".sql"), let underscore = name.firstIndex(of: "_") else { return nil }
        let digits = name[..<underscore]
        let label = name[name.index(after: underscore)..<name.index(name.endIndex, offsetBy: -4)]
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber), !label.isEmpty else { return nil }
        return Int(digits)
    }

    /// Versioned files by number, then the repeatable file, then anything else by name.
    private static func sortKey(_ name: String) -> (Int, Int, String) {
        if let number = versionNumber(of: name) { return (0, number, name) }
        return (name == repeatableFileName ? 1 : 2, 0, name)
    }
}
