/// Matches the results libpq hands back for one pipelined batch to the steps that were sent, and
/// decides which error the caller sees.
///
/// Pure value type: `Connection` feeds it what `PQgetResult` returns and acts on the answer, so the
/// matching rules are tested without a socket. Per step libpq yields exactly one result (a row set,
/// a command completion, an error, or "aborted" for steps skipped after an earlier error) followed by
/// a NULL; after the last step comes one `PGRES_PIPELINE_SYNC`.
struct PipelineBatch {
    enum Step: Equatable {
        /// `PQsendPrepare` of a statement the connection did not have yet; its result is not returned.
        case prepare(name: String)
        /// A caller's query; its result is returned in order.
        case query
    }

    enum Event {
        case result(QueryResult)
        case error(DatabaseError)
        /// `PGRES_PIPELINE_ABORTED`: skipped because an earlier step failed.
        case aborted
        /// `PQgetResult` returned NULL: the current step is complete.
        case endOfStep
        /// `PGRES_PIPELINE_SYNC`: the batch's implicit transaction is over.
        case sync
        /// The socket failed, timed out or reached EOF before the batch finished.
        case connectionLost(DatabaseError)
    }

    struct Outcome: Equatable {
        var results: Result<[QueryResult], DatabaseError>
        /// Statements now prepared on the server (their `prepare` step succeeded).
        var preparedNames: [String]
        /// False when the session is gone or in an unknown state: the connection must be discarded.
        var connectionReusable: Bool
    }

    enum Action: Equatable {
        case readMore
        case finished(Outcome)
    }

    private let steps: [Step]
    private var current = 0
    private var currentHasResult = false
    private var results: [QueryResult] = []
    private var preparedNames: [String] = []
    private var firstError: DatabaseError?
    private var outcome: Outcome?

    init(steps: [Step]) {
        self.steps = steps
    }

    var isFinished: Bool { outcome != nil }

    /// True once the server answered one of the steps with an error of its own (a SQLSTATE): the
    /// batch's implicit transaction is aborted and cannot commit, whatever happens to the connection
    /// next. libpq's own errors (a lost socket) carry no SQLSTATE and prove nothing.
    var serverRejectedAStep: Bool { firstError?.sqlState != nil }

    mutating func receive(_ event: Event) -> Action {
        if let outcome { return .finished(outcome) }
        switch event {
        case .result(let result):
            guard beginStepResult() else { return violation("more results than queries sent") }
            switch steps[current] {
            case .prepare(let name): preparedNames.append(name)
            case .query: results.append(result)
            }
            return .readMore
        case .error(let error):
            guard beginStepResult() else { return finish(.failure(firstError ?? error), reusable: false) }
            if firstError == nil { firstError = error }
            // After a FATAL the server closes the session; waiting for the rest would only wait for EOF.
            if error.isUnavailable || error.sqlState == nil {
                return finish(.failure(firstError!), reusable: false)
            }
            return .readMore
        case .aborted:
            guard beginStepResult() else { return violation("aborted result beyond the last query") }
            return .readMore
        case .endOfStep:
            guard current < steps.count, currentHasResult else { return violation("query finished without a result") }
            current += 1
            currentHasResult = false
            return .readMore
        case .sync:
            guard current == steps.count else { return violation("pipeline sync before every query finished") }
            if let firstError { return finish(.failure(firstError), reusable: true) }
            return finish(.success(results), reusable: true)
        case .connectionLost(let error):
            return finish(.failure(firstError ?? error), reusable: false)
        }
    }

    /// Claims the current step's single result slot; false when there is no step left or it already had one.
    private mutating func beginStepResult() -> Bool {
        guard current < steps.count, !currentHasResult else { return false }
        currentHasResult = true
        return true
    }

    private mutating func violation(_ message: String) -> Action {
        finish(.failure(firstError ?? DatabaseError(code: .protocolViolation, message: message)), reusable: false)
    }

    private mutating func finish(_ results: Result<[QueryResult], DatabaseError>, reusable: Bool) -> Action {
        let outcome = Outcome(results: results, preparedNames: preparedNames, connectionReusable: reusable)
        self.outcome = outcome
        return .finished(outcome)
    }
}
