import Foundation

/// The pool's logic, generic over the connection so it is tested with fakes: exclusive checkout of
/// at most `size` connections, bounded waiting, lazy (re)connection, discard of broken connections
/// and the single safe retry.
final class BoundedConnectionPool<Connection: PipelineConnection>: @unchecked Sendable {
    typealias Connect = @Sendable () throws(DatabaseError) -> Connection

    let size: Int
    private let checkoutTimeout: Duration
    private let batchTimeout: Duration
    private let connect: Connect

    /// Guards everything below; connections are only touched by the thread that checked them out.
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var leased = 0
    private var connecting = 0
    private var waiting = 0
    private var closed = false
    private var connectsTotal = 0
    private var discardsTotal = 0
    private var reconnectsTotal = 0
    private var discardsNotYetReplaced = 0

    init(size: Int, checkoutTimeout: Duration, batchTimeout: Duration, connect: @escaping Connect) {
        precondition(size > 0, "a pool needs at least one connection")
        self.size = size
        self.checkoutTimeout = checkoutTimeout
        self.batchTimeout = batchTimeout
        self.connect = connect
    }

    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        var fresh = false
        while true {
            let connection = try checkout(fresh: fresh)
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
                throw error.error
            }
        }
    }

    var stats: PoolStats {
        condition.lock()
        defer { condition.unlock() }
        return PoolStats(size: size, inUse: leased, idle: idle.count, waiting: waiting, connecting: connecting,
                         connectsTotal: connectsTotal, discardsTotal: discardsTotal, reconnects: reconnectsTotal)
    }

    /// Closes idle connections now and leased ones when they come back; waiters fail with `poolClosed`.
    func close() {
        condition.lock()
        closed = true
        let toClose = idle
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
        toClose.forEach { $0.close() }
    }

    // MARK: Checkout

    /// Hands out an idle connection, or connects a new one while under `size`, or waits up to the
    /// checkout timeout. `fresh` skips idle connections (they may be as stale as the one that just failed).
    private func checkout(fresh: Bool) throws(DatabaseError) -> Connection {
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
            _ = condition.wait(until: Date(timeIntervalSinceNow: remaining.seconds))
            waiting -= 1
        }
    }

    /// Connects for a slot already counted in `connecting`, without holding the lock.
    private func connectReserved() throws(DatabaseError) -> Connection {
        let result: Result<Connection, DatabaseError>
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

    private func checkin(_ connection: Connection) {
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

extension Duration {
    var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
