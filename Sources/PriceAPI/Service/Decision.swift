import PriceDB
import PriceHTTPMessage

/// What the service core decided for one request.
struct Decision: Sendable {
    enum Outcome: Sendable {
        /// Decided without PostgreSQL: answered on the event loop.
        case answer(HTTPResponse)
        /// One round trip, run on a database worker.
        case database(DatabasePlan)
    }

    var route: Route
    var outcome: Outcome

    var needsDatabase: Bool {
        if case .database = outcome { return true }
        return false
    }
}

/// The slow part of a request, prepared in full before any hand-off: the queries of one pipelined
/// round trip and how their results become the answer. Running it needs nothing of the request.
struct DatabasePlan: Sendable {
    let queries: [Query]
    /// Reads only (function calls, readiness): may run on a read replica (`PRICESVC_READ_DATABASE_URL`).
    let readOnly: Bool
    /// Which share of the database it counts against (`DatabaseShare`).
    let cost: DatabaseShare.Cost
    /// Whether it may be run again after the database was unavailable (`DatabaseHold`).
    let repetition: Repetition

    enum Repetition: Sendable, Equatable {
        /// Never held (readiness: a probe wants the answer now).
        case never
        /// Repeated only when it certainly did not apply: not sent, or rolled back. Every write.
        case ifNotApplied
        /// Repeating it gives the same result: reads, and submissions whose every row has a client_report_id.
        case always
    }
    /// Turns the round trip's outcome into the answer (on the worker).
    let answer: @Sendable (Result<[QueryResult], DatabaseError>) -> HTTPResponse

    /// - Parameter repetition: by default reads are repeated, and writes only when they did not apply.
    init(_ queries: [Query], readOnly: Bool = false, cost: DatabaseShare.Cost = .ordinary, repetition: Repetition? = nil,
         answer: @escaping @Sendable (Result<[QueryResult], DatabaseError>) -> HTTPResponse) {
        self.queries = queries
        self.readOnly = readOnly
        self.cost = cost
        self.repetition = repetition ?? (readOnly ? .always : .ifNotApplied)
        self.answer = answer
    }
}
