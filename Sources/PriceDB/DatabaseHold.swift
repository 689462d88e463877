/// Whether a request whose round trip failed because PostgreSQL was unavailable may wait and try again,
/// so that a planned switchover (no leader for a second or two) costs clients latency instead of 503s.
///
/// Pure: no clock, no sleep, no I/O. The caller (`DatabaseHold.Wait`, driven by `PriceApplication`) brings
/// the time and does the sleeping. The rule that keeps it from writing twice:
/// - a batch that was not sent, or was sent and certainly rolled back (the server refused one of its
///   statements, e.g. 25006 on a demoted leader), is repeated, whatever it does;
/// - a batch whose outcome is unknown (sent, then the connection went before the answer) is repeated
///   only when repeating it cannot apply it twice: reads, and submissions whose every row carries a
///   `client_report_id` (the insert trigger of `migrations/reports.sql` answers a repeat with the
///   first report's receipt). Any other write that may have reached the old leader is answered 503.
///
/// - Important: Only the database's absence is held: connection refused or lost, "the database system
///   is shutting down" or "starting up", a read-only standby. An exhausted pool, a batch timeout or a
///   refused login are answered at once, as before: waiting longer would not cure them.
public struct DatabaseHold: Sendable, Equatable {
    /// The longest a request is held in all, from its first failure; `.zero` turns the hold off.
    public var bound: Duration
    /// The first pause; each later one doubles, up to `longestPause`.
    public var firstPause: Duration
    public var longestPause: Duration

    /// The largest bound `PRICESVC_DB_HOLD_MS` accepts: a held request keeps its worker thread and its
    /// client waiting, and Patroni's own failover takes longer than this anyway.
    public static let maximumBound = Duration.seconds(30)
    public static let defaultBound = Duration.seconds(5)

    public init(bound: Duration = DatabaseHold.defaultBound, firstPause: Duration = .milliseconds(50),
                longestPause: Duration = .milliseconds(500)) {
        self.bound = bound
        self.firstPause = firstPause
        self.longestPause = longestPause
    }

    public static let off = DatabaseHold(bound: .zero)

    /// What to do after a failed attempt.
    public enum Verdict: Sendable, Equatable {
        /// Sleep this long, then run the batch again.
        case retry(after: Duration)
        /// The database is unavailable, but the batch may have committed and is not safe to repeat.
        case notRetryable
        /// The database stayed unavailable for the whole bound.
        case gaveUp
        /// Not a failure the hold is for (or the hold is off): answer as without it.
        case answer
    }

    /// True when the failure means "PostgreSQL is not there right now", which a new leader cures.
    public static func isHeldFailure(_ error: DatabaseError) -> Bool {
        if error.connectionRefusal != nil { return false }
        switch error.code {
        case .connectFailed, .connectionLost: return true
        case .poolExhausted, .poolClosed, .timeout: return false
        default:
            return DatabaseError.sqlStateMeansConnectionGone(error.sqlState)
                || DatabaseError.sqlStateMeansServerReadOnly(error.sqlState)
                || (error.code == .server && (error.severity == "FATAL" || error.severity == "PANIC"))
        }
    }

    /// Whether repeating a batch that failed with `error` can apply it twice.
    /// - Parameter repeatable: the batch gives the same result however often it runs (reads, idempotent
    ///   submissions).
    public static func maySafelyRepeat(_ error: DatabaseError, repeatable: Bool) -> Bool {
        switch error.reach {
        case .notSent, .rolledBack: return true
        case .unknown: return repeatable
        }
    }

    /// The verdict after attempt `attempt` (1 for the first) failed with `error`, `held` after the first
    /// failure (pauses and attempts since).
    public func verdict(after error: DatabaseError, attempt: Int, held: Duration, repeatable: Bool) -> Verdict {
        guard bound > .zero, Self.isHeldFailure(error) else { return .answer }
        guard Self.maySafelyRepeat(error, repeatable: repeatable) else { return .notRetryable }
        guard held < bound else { return .gaveUp }
        var pause = firstPause
        for _ in 1..<max(1, attempt) where pause < longestPause {
            pause *= 2
        }
        return .retry(after: min(pause, longestPause, bound - held))
    }

    /// How a held request ended, for `/metrics`.
    public enum Outcome: String, Sendable, Equatable, CaseIterable {
        /// It failed at least once, waited, and a later attempt was answered.
        case served
        /// The bound passed with the database still unavailable.
        case gaveUp = "gave_up"
        /// The database was unavailable and the batch could not be safely repeated.
        case notRetryable = "not_retryable"
    }

    /// One request's hold: runs `attempt` until it succeeds, fails in a way the hold does not cover, or
    /// the verdict says stop. `now` and `sleep` are injected, so tests run it without waiting.
    /// - Returns: the last result, and how the hold ended with how long it held (nil when the first
    ///   attempt was answered without holding).
    public func run<T>(repeatable: Bool, now: () -> ContinuousClock.Instant, sleep: (Duration) -> Void,
                       _ attempt: () throws(DatabaseError) -> T) -> (result: Result<T, DatabaseError>, held: (Outcome, Duration)?) {
        var started: ContinuousClock.Instant?
        var number = 1
        while true {
            let result: Result<T, DatabaseError>
            do throws(DatabaseError) {
                result = .success(try attempt())
            } catch {
                result = .failure(error)
            }
            let failure: DatabaseError
            switch result {
            case .success:
                return (result, started.map { (.served, now() - $0) })
            case .failure(let error):
                failure = error
            }
            let first = started ?? now()
            let held = started == nil ? Duration.zero : now() - first
            switch verdict(after: failure, attempt: number, held: held, repeatable: repeatable) {
            case .answer:
                // After a hold, an answer of the database's own (a new leader's error) was served.
                return (result, started.map { _ in (failure.isUnavailable ? .gaveUp : .served, held) })
            case .notRetryable:
                return (result, (.notRetryable, held))
            case .gaveUp:
                return (result, (.gaveUp, held))
            case .retry(let pause):
                started = first
                sleep(pause)
                number += 1
            }
        }
    }
}
