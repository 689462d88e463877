/// What the pool needs from a connection. `Connection` is the libpq one; tests drive the pool with fakes.
protocol PipelineConnection: AnyObject {
    /// Sends every query in one pipeline with one Sync and returns their results in order.
    func run(_ queries: [Query], deadline: ContinuousClock.Instant) throws(BatchFailure) -> [QueryResult]
    /// False once the session is lost or in an unknown state; the pool then closes and forgets it.
    var isReusable: Bool { get }
    func close()
}

/// A failed batch, plus the one fact the pool needs to decide on a retry: how far it got.
struct BatchFailure: Error, Equatable {
    var error: DatabaseError
    var reach: DatabaseError.Reach

    init(error: DatabaseError, reach: DatabaseError.Reach) {
        self.error = error
        self.reach = reach
    }

    /// `reach` when all that is known is whether a byte left the process.
    init(error: DatabaseError, mayHaveReachedServer: Bool) {
        self.init(error: error, reach: mayHaveReachedServer ? .unknown : .notSent)
    }

    /// False only when no byte of this batch left the process, so repeating it elsewhere is safe.
    /// - Important: When true the statements may have committed (unless `reach` is `.rolledBack`);
    ///   retrying could apply them twice.
    var mayHaveReachedServer: Bool { reach != .notSent }
}
