/// What the pool needs from a connection. `Connection` is the libpq one; tests drive the pool with fakes.
protocol PipelineConnection: AnyObject {
    /// Sends every query in one pipeline with one Sync and returns their results in order.
    func run(_ queries: [Query], deadline: ContinuousClock.Instant) throws(BatchFailure) -> [QueryResult]
    /// False once the session is lost or in an unknown state; the pool then closes and forgets it.
    var isReusable: Bool { get }
    func close()
}

/// A failed batch, plus the one fact the pool needs to decide on a retry.
struct BatchFailure: Error, Equatable {
    var error: DatabaseError
    /// False only when no byte of this batch left the process, so repeating it elsewhere is safe.
    /// - Important: When true the statements may have committed; retrying could apply them twice.
    var mayHaveReachedServer: Bool
}
