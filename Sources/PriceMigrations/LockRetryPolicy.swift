import PriceDB

/// How `migrate` takes its locks without making live traffic wait behind it.
///
/// Every statement of a migration waits at most `lockTimeout` for a lock (PostgreSQL's `lock_timeout`).
/// A statement queued for a lock makes every later request for a conflicting lock queue behind it, so
/// an `alter table` waiting on one long reader stalls every insert; with a short timeout inserts wait at
/// most that long. The file's transaction then rolls back, the migrator pauses (doubling from
/// `firstPause` up to `longestPause`) so the queued traffic drains, and tries the file again, until it
/// has waited `waitLimit` in all. Pure: the runner brings the clock.
public struct LockRetryPolicy: Sendable, Equatable {
    public var lockTimeout: Duration
    public var waitLimit: Duration
    public var firstPause: Duration
    public var longestPause: Duration

    public init(lockTimeout: Duration = .seconds(2), waitLimit: Duration = .seconds(300),
                firstPause: Duration = .milliseconds(500), longestPause: Duration = .seconds(10)) {
        self.lockTimeout = lockTimeout
        self.waitLimit = waitLimit
        self.firstPause = firstPause
        self.longestPause = longestPause
    }

    /// The pause after failed attempt `attempt` (1 for the first) when the run has waited `waited` for
    /// locks so far (failed attempts and pauses), or nil when the limit is reached: give up.
    public func pause(afterAttempt attempt: Int, waited: Duration) -> Duration? {
        guard waited < waitLimit else { return nil }
        var pause = firstPause
        for _ in 1..<max(1, attempt) where pause < longestPause {
            pause *= 2
        }
        return min(pause, longestPause, waitLimit - waited)
    }

    /// `lock_timeout` as PostgreSQL reads it.
    public var lockTimeoutSetting: String {
        "\(max(1, Int((lockTimeout / .milliseconds(1)).rounded(.up))))ms"
    }

    /// A failure that trying again later can cure: the lock timeout (55P03 lock_not_available) or a
    /// deadlock the server broke by cancelling this side (40P01).
    public static func isLockWait(_ error: DatabaseError) -> Bool {
        error.sqlState == "55P03" || error.sqlState == "40P01"
    }
}

/// A session holding a lock a migration statement waited for, as `pg_blocking_pids` and
/// `pg_stat_activity` show it. Never its query text: that may carry a secret.
public struct LockBlocker: Sendable, Equatable, CustomStringConvertible {
    public var pid: String
    public var user: String
    public var applicationName: String
    public var state: String
    public var transactionStart: String
    public var queryStart: String

    public init(pid: String, user: String, applicationName: String, state: String,
                transactionStart: String, queryStart: String) {
        self.pid = pid
        self.user = user
        self.applicationName = applicationName
        self.state = state
        self.transactionStart = transactionStart
        self.queryStart = queryStart
    }

    public var description: String {
        "pid \(pid) (user \(user), application_name \"\(applicationName)\", state \"\(state)\", "
            + "transaction started \(transactionStart), query started \(queryStart))"
    }

    /// The probe, run on a second connection while the migrator's own statement (backend `$1`) waits.
    /// Needs a superuser or pg_monitor: a layout's final file may take `pg_blocking_pids` from PUBLIC
    /// (pricesvc's does).
    static let probeSQL = """
        select a.pid::text, coalesce(a.usename::text, ''), coalesce(a.application_name, ''), coalesce(a.state, ''),
               coalesce(to_char(a.xact_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), ''),
               coalesce(to_char(a.query_start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), '')
        from pg_catalog.pg_stat_activity a
        where a.pid = any (pg_catalog.pg_blocking_pids($1::integer))
        order by a.pid
        """

    static func rows(_ result: QueryResult) -> [LockBlocker] {
        result.rows.map { row in
            LockBlocker(pid: row[0] ?? "", user: row[1] ?? "", applicationName: row[2] ?? "", state: row[3] ?? "",
                        transactionStart: row[4] ?? "", queryStart: row[5] ?? "")
        }
    }
}

extension Duration {
    /// `2 s`, `0.5 s`: for log lines.
    var secondsText: String {
        let tenths = Int((self / .milliseconds(100)).rounded())
        return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
    }
}
