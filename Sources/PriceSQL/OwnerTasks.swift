import PriceDB

/// What `pricesvc migrate` does after the migrations, as the superuser that runs it.
///
/// Each step opens its own `MigrationSession`, like the runner.
public struct OwnerTasks: Sendable {
    public var conninfo: String
    public var connectTimeout: Duration

    public init(conninfo: String, connectTimeout: Duration = .seconds(10)) {
        self.conninfo = conninfo
        self.connectTimeout = connectTimeout
    }

    /// The defaults the service's login role must carry: its sessions never write bind parameters (which
    /// include access tokens) to the server log, whatever `log_statement` or
    /// `log_min_duration_statement` say. Both are superuser-only settings, so the role cannot undo them.
    public static let serviceRoleDefaults: [String] = [
        "log_parameter_max_length=0",
        "log_parameter_max_length_on_error=0",
    ]

    /// Clears every other default of `role` (`ALTER ROLE ... SET`, in any database) and asserts
    /// ``serviceRoleDefaults``. A role may change its own defaults, so whoever holds its password could
    /// plant one; the service also overrides what it relies on at connect (``SessionSettings``).
    ///
    /// Returns the planted settings it removed, as `name=value` (with ` in database D` when scoped).
    public func resetRoleDefaults(role: String) throws(DatabaseError) -> [String] {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        let current = try session.rows(OwnerStatements.roleSettings, role).map { (database: $0.0, setting: $0.1) }
        let planted = current.filter { !($0.database.isEmpty && Self.serviceRoleDefaults.contains($0.setting)) }
        let missing = Self.serviceRoleDefaults.filter { wanted in
            !current.contains { $0.database.isEmpty && $0.setting == wanted }
        }
        guard !planted.isEmpty || !missing.isEmpty else { return [] }

        try session.execute("begin")
        for database in Set(planted.map(\.database)) {
            try session.execute(OwnerStatements.resetRoleDefaults(role, inDatabase: database.isEmpty ? nil : database))
        }
        for setting in Self.serviceRoleDefaults {
            let parts = setting.split(separator: "=", maxSplits: 1).map(String.init)
            try session.execute(OwnerStatements.setRoleDefault(role, name: parts[0], value: parts[1]))
        }
        try session.execute("commit")
        return planted.map { $0.database.isEmpty ? $0.setting : "\($0.setting) in database \($0.database)" }
    }

    /// Runs one key statement in its own transaction. When it sends a signing key, statement logging is
    /// switched off for that transaction first, so the key never reaches the server log even under
    /// `log_statement = all` or `log_min_duration_statement = 0` (superuser-only settings; a role that
    /// may not set them gets them as they are, and the key is a bind parameter, which the service roles'
    /// and a careful owner's `log_parameter_max_length = 0` keeps out of the log).
    public func keyTask<Parameters, Row>(_ statement: Statement<Parameters, Row>, _ parameters: Parameters,
                                         sendsKey: Bool = false) throws(DatabaseError) -> [Row] {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        do throws(DatabaseError) {
            try session.execute("begin")
            if sendsKey {
                for setting in OwnerStatements.quietTransaction.split(separator: ";") {
                    // Each on its own: a setting the role may not change (not a superuser) stays as it is.
                    try session.execute("savepoint quiet")
                    do throws(DatabaseError) {
                        try session.execute(String(setting))
                        try session.execute("release savepoint quiet")
                    } catch {
                        guard error.sqlState == "42501" else { throw error }
                        try session.execute("rollback to savepoint quiet")
                    }
                }
            }
            let rows = try session.rows(statement, parameters)
            try session.execute("commit")
            return rows
        } catch {
            _ = try? session.execute("rollback")
            throw error
        }
    }

    /// Runs `auth.prune` and returns the counts it deleted: sessions, refresh tokens, users.
    public func prune(olderThanSeconds seconds: Int) throws(DatabaseError) -> (sessions: Int, refreshTokens: Int, users: Int) {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        guard let counts = try session.rows(OwnerStatements.prune, seconds).first else {
            throw DatabaseError(code: .protocolViolation, message: "auth.prune returned no row")
        }
        return counts
    }

    /// How long a median group may wait for a fold before ``foldStaleMedianGroups()`` folds it: reads
    /// of a group correct its folded state with what changed since its last fold, so this bounds that to
    /// about an hour's changes plus the time between two runs.
    public static let medianFoldAgeSeconds = 3600
    /// Groups folded per transaction: each holds an advisory lock until its transaction commits, and the
    /// shared lock table has room for max_locks_per_transaction (64) × max_connections by default.
    public static let medianGroupsPerTransaction = 1000
    /// Transactions per run, so one run folds at most 100,000 groups; the rest wait for the next run.
    public static let medianFoldTransactions = 100

    /// Folds every median group that has waited longer than `olderThanSeconds` for a fold
    /// (`private.median_fold_stale`), in transactions of ``medianGroupsPerTransaction`` groups, and
    /// returns how many it folded. Groups being folded by a concurrent transaction are skipped.
    public func foldStaleMedianGroups(olderThanSeconds seconds: Int = medianFoldAgeSeconds) throws(DatabaseError) -> Int {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        var total = 0
        for _ in 0..<Self.medianFoldTransactions {
            guard let folded = try session.rows(OwnerStatements.foldStaleMedianGroups,
                                                (seconds, Self.medianGroupsPerTransaction)).first else {
                throw DatabaseError(code: .protocolViolation, message: "private.median_fold_stale returned no count")
            }
            total += folded
            // Fewer than a full batch: nothing stale was left (or only groups someone else is folding).
            if folded < Self.medianGroupsPerTransaction { break }
        }
        return total
    }

    /// Median groups per ``pruneReports()`` transaction: each holds its group's fold lock until the batch
    /// commits (inserts into it then skip their fold; none waits). Measured in docs/privacy.md.
    public static let reportPruneGroupsPerTransaction = 100
    /// Batches per run: at most 1,000,000 groups a run; what is left waits for the next run.
    public static let reportPruneTransactions = 10_000

    /// Deletes every report past retention (`private.prune_reports`), one committed batch of
    /// ``reportPruneGroupsPerTransaction`` median groups at a time; returns reports and groups.
    public func pruneReports() throws(DatabaseError) -> (reports: Int, groups: Int) {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        var total = (reports: 0, groups: 0)
        for _ in 0..<Self.reportPruneTransactions {
            guard let batch = try session.rows(OwnerStatements.pruneReports, Self.reportPruneGroupsPerTransaction).first else {
                throw DatabaseError(code: .protocolViolation, message: "private.prune_reports returned no row")
            }
            total.reports += batch.0
            total.groups += batch.1
            // Nothing pruned: nothing past retention is left, or only groups being folded right now.
            if batch.1 == 0 { break }
        }
        return total
    }

    /// What `auth.forget_user` deleted for one person.
    public struct Erasure: Sendable, Equatable {
        public var users, sessions, refreshTokens, reports, locations: Int
    }

    /// Deletes one person's identity, sessions, refresh tokens and reports (`auth.forget_user`).
    public func forgetUser(id: String) throws(DatabaseError) -> Erasure {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        guard let row = try session.rows(OwnerStatements.forgetUser, id).first else {
            throw DatabaseError(code: .protocolViolation, message: "auth.forget_user returned no row")
        }
        return Erasure(users: row.0, sessions: row.1, refreshTokens: row.2, reports: row.3, locations: row.4)
    }

    /// Records that a maintenance command (`prune`, `import-rates`) succeeded now.
    public func recordMaintenanceRun(_ task: String) throws(DatabaseError) {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        _ = try session.rows(OwnerStatements.recordMaintenanceRun, task)
    }

    /// The role `conninfo` logs in as, and whether it bypasses row security (superuser or BYPASSRLS).
    public func roleBypassesRowSecurity() throws(DatabaseError) -> (role: String, bypasses: Bool) {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        guard let row = try session.rows(OwnerStatements.roleBypassesRowSecurity, ()).first else {
            throw DatabaseError(code: .protocolViolation, message: "the login role is not in pg_roles")
        }
        return (row.0, row.1)
    }

    /// When each maintenance command last succeeded, Unix seconds by task (any login may ask: the service
    /// reads it for /metrics).
    public func maintenanceRuns() throws(DatabaseError) -> [String: Int] {
        let session = try MigrationSession(conninfo: conninfo, connectTimeout: connectTimeout)
        let rows = try session.rows(OwnerStatements.maintenanceRuns, ())
        return Dictionary(rows.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
    }
}
