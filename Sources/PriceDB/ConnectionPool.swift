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

    /// Connections per pool unless configured (`--pool-size`); other defaults are sized from it.
    public static let defaultSize = 8

    /// The database workers a server needs for pools of `connections` in all: one per connection. A
    /// worker only waits on the database, so more workers than connections just queue on the pool, and
    /// each extra thread hop costs CPU per request (a quarter of pricesvc's CPU per submission at 32
    /// workers over 8 connections, docs/benchmarks.md).
    public static func databaseWorkers(connections: Int) -> Int { connections }

    public init(conninfo: String, size: Int = PoolConfiguration.defaultSize, checkoutTimeout: Duration = .seconds(2),
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

/// Blocking pool of pipelined connections for threads that serve one request each: exclusive checkout
/// of at most `size` connections, bounded waiting, lazy (re)connection, discard of broken connections
/// and the single safe retry.
///
/// Each `run` checks out one connection exclusively, sends the whole batch with a single Sync
/// (one round trip, one implicit transaction) and returns the connection.
public final class ConnectionPool: @unchecked Sendable {
    typealias Connect = @Sendable () throws(DatabaseError) -> any PipelineConnection

    let size: Int
    private let checkoutTimeout: Duration
    private let batchTimeout: Duration
    private let connect: Connect

    /// Guards everything below; connections are only touched by the thread that checked them out.
    private let condition = NSCondition()
    private var idle: [any PipelineConnection] = []
    private var leased = 0
    private var connecting = 0
    private var waiting = 0
    private var closed = false
    private var connectsTotal = 0
    private var discardsTotal = 0
    private var reconnectsTotal = 0
    private var discardsNotYetReplaced = 0

    /// A pool of libpq connections opened with `configuration`.
    public convenience init(_ configuration: PoolConfiguration) {
        self.init(size: configuration.size, checkoutTimeout: configuration.checkoutTimeout,
                  batchTimeout: configuration.batchTimeout) { () throws(DatabaseError) in
            try Connection(conninfo: configuration.conninfo, connectTimeout: configuration.connectTimeout,
                           applicationName: configuration.applicationName,
                           options: configuration.sessionSettings?.libpqOptions, statements: configuration.statements)
        }
    }

    /// A pool over any connection; tests pass fakes.
    init(size: Int, checkoutTimeout: Duration, batchTimeout: Duration, connect: @escaping Connect) {
        precondition(size > 0, "a pool needs at least one connection")
        self.size = size
        self.checkoutTimeout = checkoutTimeout
        self.batchTimeout = batchTimeout
        self.connect = connect
    }

    /// Runs `queries` in one pipeline with one Sync and returns one result per query, in order.
    ///
    /// The batch is one implicit transaction: if any query fails, none of its effects remain and the
    /// error is the first real one (later queries are reported by the server as aborted).
    ///
    /// - Important: A batch that failed with `isUnavailable` after it was sent may or may not have
    ///   committed; it is never retried here. Only a connection found dead *before* sending is
    ///   replaced and the batch tried once more. The error's `reach` says how far the batch got, so a
    ///   caller can tell a batch that never left (or was rolled back) from one that may have committed.
    public func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        var fresh = false
        while true {
            let connection: any PipelineConnection
            do throws(DatabaseError) {
                connection = try checkout(fresh: fresh)
            } catch {
                var failure = error
                failure.reach = .notSent
                throw failure
            }
            do throws(BatchFailure) {
                let results = try connection.run(queries, deadline: .now + batchTimeout)
                checkin(connection)
                return results
            } catch {
                checkin(connection)
                // A stale idle connection (server restarted while it sat in the pool) fails before
                // sending; only then is a second attempt on a brand-new connection safe.
                if !fresh, !connection.isReusable, !error.mayHaveReachedServer {
                    fresh = true
                    continue
                }
                var failure = error.error
                failure.reach = error.reach
                throw failure
            }
        }
    }

    public var stats: PoolStats {
        condition.lock()
        defer { condition.unlock() }
        return PoolStats(size: size, inUse: leased, idle: idle.count, waiting: waiting, connecting: connecting,
                         connectsTotal: connectsTotal, discardsTotal: discardsTotal, reconnects: reconnectsTotal)
    }

    /// Closes idle connections at once and busy ones as their batches finish; waiters and later `run`s
    /// fail with `poolClosed`.
    /// - Important: It does not wait for running batches; stop accepting requests and let them finish first.
    public func close() {
        condition.lock()
        closed = true
        let toClose = idle
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        toClose.forEach { $0.close() }
    }

    /// Retries a trivial batch until it succeeds or `deadline` passes, for a bounded start-up wait.
    /// Throws the last error when the database is still unreachable, and the first one at once when the
    /// server refused the login for good (``DatabaseError/connectionRefusal``): a wrong password or a
    /// missing role or database does not fix itself.
    /// - Important: An attempt in progress is not interrupted, so against a host that drops packets the
    ///   wait can overrun `deadline` by up to `connectTimeout`.
    public func waitUntilReachable(deadline: ContinuousClock.Instant) throws(DatabaseError) {
        var pause = Duration.milliseconds(100)
        while true {
            do throws(DatabaseError) {
                _ = try run([.sql("select 1")])
                return
            } catch {
                if error.code == .poolClosed || error.connectionRefusal != nil || ContinuousClock.now + pause >= deadline {
                    throw error
                }
            }
            Thread.sleep(forTimeInterval: pause / .seconds(1))
            pause = min(pause * 2, .seconds(1))
        }
    }

    /// `waitUntilReachable(deadline: .now + timeout)`.
    public func waitUntilReachable(timeout: Duration) throws(DatabaseError) {
        try waitUntilReachable(deadline: .now + timeout)
    }

    // MARK: Checkout

    /// Hands out an idle connection, or connects a new one while under `size`, or waits up to the
    /// checkout timeout. `fresh` skips idle connections (they may be as stale as the one that just failed).
    private func checkout(fresh: Bool) throws(DatabaseError) -> any PipelineConnection {
        let deadline = ContinuousClock.now + checkoutTimeout
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw DatabaseError(code: .poolClosed, message: "the connection pool is closed")
            }
            if !fresh, let connection = idle.popLast() {
                leased += 1
                condition.unlock()
                return connection
            }
            if leased + connecting + idle.count < size || (fresh && !idle.isEmpty) {
                // A fresh connection over a full pool takes the place of the longest-idle one.
                let evicted = leased + connecting + idle.count < size ? nil : idle.removeFirst()
                connecting += 1
                condition.unlock()
                evicted?.close()
                return try connectReserved()
            }
            let remaining = deadline - .now
            if remaining <= .zero {
                condition.unlock()
                throw DatabaseError(code: .poolExhausted,
                                    message: "no database connection became free within \(checkoutTimeout)")
            }
            waiting += 1
            _ = condition.wait(until: Date(timeIntervalSinceNow: remaining / .seconds(1)))
            waiting -= 1
        }
    }

    /// Connects for a slot already counted in `connecting`, without holding the lock.
    private func connectReserved() throws(DatabaseError) -> any PipelineConnection {
        let result: Result<any PipelineConnection, DatabaseError>
        do throws(DatabaseError) {
            result = .success(try connect())
        } catch {
            result = .failure(error)
        }
        condition.lock()
        connecting -= 1
        if case .success = result {
            leased += 1
            connectsTotal += 1
            if discardsNotYetReplaced > 0 {
                discardsNotYetReplaced -= 1
                reconnectsTotal += 1
            }
        }
        condition.signal()
        condition.unlock()
        return try result.get()
    }

    private func checkin(_ connection: any PipelineConnection) {
        condition.lock()
        leased -= 1
        let keep = connection.isReusable && !closed
        if keep {
            idle.append(connection)
        } else if !connection.isReusable {
            discardsTotal += 1
            discardsNotYetReplaced += 1
        }
        condition.signal()
        condition.unlock()
        if !keep { connection.close() }
    }
}

