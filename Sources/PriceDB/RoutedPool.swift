import Synchronization

/// What a pipelined round trip runs on: `ConnectionPool` in production, a recorder in tests.
public protocol QueryRunner: Sendable {
    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult]
}

extension ConnectionPool: QueryRunner {}

/// The primary and an optional read replica as one pool. Writes always go to the primary; read-only
/// round trips go to the replica when one is configured, and to the primary when it cannot answer.
///
/// Reads are safe to repeat, so a replica failure is retried on the primary at once: a stopped
/// replica costs latency, not errors. After a failure the replica is skipped for `replicaPause`
/// seconds, so a dead one costs one failed attempt per pause instead of one per request.
public final class RoutedPool: Sendable {
    /// Where one read-only round trip went, for the caller's metrics.
    public enum ReadRoute: Sendable, Equatable {
        case primary
        case replica
        /// The replica could not answer (or is being skipped), so the primary did.
        case primaryInsteadOfReplica
    }

    private let primary: any QueryRunner
    private let replica: (any QueryRunner)?
    private let observeRead: @Sendable (ReadRoute) -> Void
    private let clock: @Sendable () -> Double
    private let replicaPause: Double
    /// Until when (clock seconds) reads skip the replica; stored as the bit pattern of a Double.
    private let skipReplicaUntil = Atomic<UInt64>(0)

    /// - Parameter observeRead: told where each read-only round trip went (before it is answered).
    public init(primary: any QueryRunner, replica: (any QueryRunner)? = nil, replicaPause: Double = 2,
                clock: @escaping @Sendable () -> Double,
                observeRead: @escaping @Sendable (ReadRoute) -> Void = { _ in }) {
        self.primary = primary
        self.replica = replica
        self.replicaPause = replicaPause
        self.clock = clock
        self.observeRead = observeRead
    }

    /// One round trip: on the primary, or for `readOnly` work on the replica when it can answer.
    public func run(_ queries: [Query], readOnly: Bool) throws(DatabaseError) -> [QueryResult] {
        guard readOnly else { return try primary.run(queries) }
        guard let replica else {
            observeRead(.primary)
            return try primary.run(queries)
        }
        if clock() >= Double(bitPattern: skipReplicaUntil.load(ordering: .relaxed)) {
            do throws(DatabaseError) {
                let results = try replica.run(queries)
                observeRead(.replica)
                return results
            } catch {
                guard Self.replicaCannotAnswer(error) else { throw error }
                skipReplicaUntil.store((clock() + replicaPause).bitPattern, ordering: .relaxed)
            }
        }
        observeRead(.primaryInsteadOfReplica)
        return try primary.run(queries)
    }

    /// The replica, not the request, is the problem: it is unreachable, or it cancelled the read
    /// because replaying the primary's WAL conflicted with it (40001 on a standby).
    static func replicaCannotAnswer(_ error: DatabaseError) -> Bool {
        error.isUnavailable || error.sqlState == "40001"
    }
}
