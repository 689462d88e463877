import Foundation

/// Settings for a `ConnectionPool`.
public struct PoolConfiguration: Sendable {
    /// libpq connection string or URL, e.g. `postgresql:///pricesvc?host=/run/pg&user=authenticator`.
    public var conninfo: String
    /// Maximum number of connections; connections are opened lazily up to this number.
    public var size: Int
    /// How long `run` waits for a free connection before failing with `poolExhausted`.
    public var checkoutTimeout: Duration
    /// Passed to libpq as `connect_timeout` (whole seconds, libpq treats less than 2 as 2).
    public var connectTimeout: Duration
    /// Upper bound for one batch from send to Sync; past it the connection is dropped (`timeout`).
    /// - Important: The server keeps running a statement whose client went away until it next writes
    ///   to the socket; set `statement_timeout` on the role if runaway statements matter.
    public var batchTimeout: Duration
    /// Prepared on every new connection in one round trip; other statements are prepared on first use.
    public var statements: [PreparedStatement]
    /// Shown in `pg_stat_activity.application_name`.
    public var applicationName: String?
    /// Settings every session starts with, as libpq `options` (`-c name=value ...`). They travel in the
    /// startup packet, so they win over role and database defaults (`ALTER ROLE ... SET`), which
    /// whoever holds the login's password could otherwise plant. See ``SessionSettings``.
    public var sessionSettings: SessionSettings?

    public init(conninfo: String, size: Int = 8, checkoutTimeout: Duration = .seconds(2),
                connectTimeout: Duration = .seconds(5), batchTimeout: Duration = .seconds(30),
                statements: [PreparedStatement] = [], applicationName: String? = "pricesvc") {
        self.conninfo = conninfo
        self.size = size
        self.checkoutTimeout = checkoutTimeout
        self.connectTimeout = connectTimeout
        self.batchTimeout = batchTimeout
        self.statements = statements
        self.applicationName = applicationName
    }
}

/// A snapshot of the pool for `/metrics`.
public struct PoolStats: Sendable, Equatable {
    public var size: Int
    /// Connections checked out by a running batch.
    public var inUse: Int
    public var idle: Int
    /// Callers blocked waiting for a connection.
    public var waiting: Int
    /// Connections being opened right now.
    public var connecting: Int
    public var connectsTotal: Int
    /// Connections thrown away because they lost their server or broke mid-batch.
    public var discardsTotal: Int
    /// Connections opened to replace discarded ones.
    public var reconnects: Int

    public init(size: Int, inUse: Int, idle: Int, waiting: Int, connecting: Int = 0,
                connectsTotal: Int = 0, discardsTotal: Int = 0, reconnects: Int = 0) {
        self.size = size
        self.inUse = inUse
        self.idle = idle
        self.waiting = waiting
        self.connecting = connecting
        self.connectsTotal = connectsTotal
        self.discardsTotal = discardsTotal
        self.reconnects = reconnects
    }
}

/// Blocking pool of pipelined libpq connections for threads that serve one request each.
///
/// Each `run` checks out one connection exclusively, sends the whole batch with a single Sync
/// (one round trip, one implicit transaction) and returns the connection. Broken connections are
/// discarded and replaced lazily.
public final class ConnectionPool: Sendable {
    private let pool: BoundedConnectionPool<Connection>

    public init(_ configuration: PoolConfiguration) {
        pool = BoundedConnectionPool(size: configuration.size, checkoutTimeout: configuration.checkoutTimeout,
                                     batchTimeout: configuration.batchTimeout) { () throws(DatabaseError) in
            try Connection(conninfo: configuration.conninfo, connectTimeout: configuration.connectTimeout,
                           applicationName: configuration.applicationName,
                           options: configuration.sessionSettings?.libpqOptions, statements: configuration.statements)
        }
    }

    /// Runs `queries` in one pipeline with one Sync and returns one result per query, in order.
    ///
    /// The batch is one implicit transaction: if any query fails, none of its effects remain and the
    /// error is the first real one (later queries are reported by the server as aborted).
    ///
    /// - Important: A batch that failed with `isUnavailable` after it was sent may or may not have
    ///   committed; it is never retried here. Only a connection found dead *before* sending is
    ///   replaced and the batch tried once more.
    public func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        try pool.run(queries)
    }

    public var stats: PoolStats { pool.stats }

    /// Retries a trivial batch until it succeeds or `deadline` passes, for a bounded start-up wait.
    /// Throws the last error when the database is still unreachable.
    /// - Important: An attempt in progress is not interrupted, so against a host that drops packets the
    ///   wait can overrun `deadline` by up to `connectTimeout`.
    public func waitUntilReachable(deadline: ContinuousClock.Instant) throws(DatabaseError) {
        var pause = Duration.milliseconds(100)
        while true {
            do throws(DatabaseError) {
                _ = try run([.sql("select 1")])
                return
            } catch {
                if error.code == .poolClosed || ContinuousClock.now + pause >= deadline { throw error }
            }
            Thread.sleep(forTimeInterval: pause.seconds)
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// `waitUntilReachable(deadline: .now + timeout)`.
    public func waitUntilReachable(timeout: Duration) throws(DatabaseError) {
        try waitUntilReachable(deadline: .now + timeout)
    }

    /// Closes idle connections at once and busy ones as their batches finish; later `run`s fail with
    /// `poolClosed`.
    /// - Important: It does not wait for running batches; stop accepting requests and let them finish first.
    public func close() {
        pool.close()
    }
}
