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
}
