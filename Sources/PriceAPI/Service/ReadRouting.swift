import PriceDB
import Synchronization

/// Where the read-only calls (function calls, readiness) go: to the replica pool when one is configured, to
/// the primary when the replica cannot answer. Writes and every /auth call never come here.
///
/// Reads are safe to repeat, so a replica failure is retried on the primary at once: a stopped
/// replica costs latency, not errors. After a failure the replica is skipped for `replicaPause`
/// seconds, so a dead one costs one failed attempt per pause instead of one per request.
final class ReadRouting: Sendable {
    private let primary: any QueryRunner
    private let replica: (any QueryRunner)?
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Double
    private let replicaPause: Double
    /// Until when (clock seconds) reads skip the replica; stored as the bit pattern of a Double.
    private let skipReplicaUntil = Atomic<UInt64>(0)

    init(primary: any QueryRunner, replica: (any QueryRunner)?, metrics: ServiceMetrics,
         replicaPause: Double = 2, clock: @escaping @Sendable () -> Double) {
        self.primary = primary
        self.replica = replica
        self.metrics = metrics
        self.replicaPause = replicaPause
        self.clock = clock
    }

    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        guard let replica else {
            metrics.recordRead(onReplica: false)
            return try primary.run(queries)
        }
        if clock() >= Double(bitPattern: skipReplicaUntil.load(ordering: .relaxed)) {
            do throws(DatabaseError) {
                let results = try replica.run(queries)
                metrics.recordRead(onReplica: true)
                return results
            } catch {
                guard Self.replicaCannotAnswer(error) else { throw error }
                skipReplicaUntil.store((clock() + replicaPause).bitPattern, ordering: .relaxed)
            }
        }
        metrics.recordReplicaFallback()
        metrics.recordRead(onReplica: false)
        return try primary.run(queries)
    }

    /// The replica, not the request, is the problem: it is unreachable, or it cancelled the read
    /// because replaying the primary's WAL conflicted with it (40001 on a standby).
    static func replicaCannotAnswer(_ error: DatabaseError) -> Bool {
        error.isUnavailable || error.sqlState == "40001"
    }
}
