import Synchronization

/// How much of the database one client may hold: requests waiting for or holding a pool connection,
/// counted per client key (the rate limiter's, so an IPv6 client counts by its network), and the
/// expensive calls (quotes, which run the published-rates engine) counted across all clients as a class
/// of their own. Pure bookkeeping, no clock and no I/O: `DatabaseShares` holds one under a lock.
///
/// Without it one address sending 8 slow quotes at once held all 8 pool connections, and every other
/// client got 503 for as long as it went on, well under the request rate limit.
struct DatabaseShare: Sendable, Equatable {
    enum Cost: Sendable, Equatable {
        case ordinary
        /// Runs the published-rates engine: limited as a class, with a lower statement timeout.
        case expensive
    }

    enum Decision: Sendable, Equatable {
        case admitted
        /// The client already has `perClient` requests in flight.
        case clientBusy(limit: Int)
        /// The client already has `perClient` requests in flight, and they wait because the database is
        /// unavailable (a failover): the database's fault, not the client's (503, not 429).
        case databaseUnavailable
        /// `expensiveTotal` expensive calls are in flight, from any clients.
        case expensiveBusy(limit: Int)
    }

    /// Requests in flight per client; 0: no limit.
    let perClient: Int
    /// Expensive calls in flight in all; 0: no limit.
    let expensiveTotal: Int
    private(set) var inFlight: [String: Int] = [:]
    private(set) var expensiveInFlight = 0
    /// The last round trip failed because the database was unavailable; the next answered one clears it.
    private(set) var databaseUnavailable = false

    init(perClient: Int, expensiveTotal: Int) {
        self.perClient = max(0, perClient)
        self.expensiveTotal = max(0, expensiveTotal)
    }

    /// Counts the request in when there is room; every `.admitted` must be paired with one `release`.
    mutating func admit(client: String, cost: Cost) -> Decision {
        let held = inFlight[client, default: 0]
        if perClient > 0, held >= perClient {
            return databaseUnavailable ? .databaseUnavailable : .clientBusy(limit: perClient)
        }
        if cost == .expensive, expensiveTotal > 0, expensiveInFlight >= expensiveTotal {
            return .expensiveBusy(limit: expensiveTotal)
        }
        inFlight[client] = held + 1
        if cost == .expensive { expensiveInFlight += 1 }
        return .admitted
    }

    /// What the last round trip said about the database: unavailable (connection gone, no leader) or
    /// answering.
    mutating func noteDatabase(available: Bool) {
        databaseUnavailable = !available
    }

    /// Counts an admitted request out. A client with nothing in flight is forgotten, so memory is
    /// bounded by the requests in flight, not by the clients ever seen.
    mutating func release(client: String, cost: Cost) {
        guard let held = inFlight[client] else { return }
        inFlight[client] = held > 1 ? held - 1 : nil
        if cost == .expensive { expensiveInFlight = max(0, expensiveInFlight - 1) }
    }
}

/// The shell around `DatabaseShare`: one lock, taken once when a request is admitted on the event
/// loop and once when its database work ends.
final class DatabaseShares: Sendable {
    private let share: Mutex<DatabaseShare>
    /// The last state told to `share`, read without its lock.
    private let databaseUnavailable = Atomic<Bool>(false)

    init(perClient: Int, expensiveTotal: Int) {
        share = Mutex(DatabaseShare(perClient: perClient, expensiveTotal: expensiveTotal))
    }

    /// A ticket to release when the database work ends, or the refusal.
    func admit(client: String, cost: DatabaseShare.Cost) -> Result<Ticket, Refusal> {
        switch share.withLock({ $0.admit(client: client, cost: cost) }) {
        case .admitted: return .success(Ticket(shares: self, client: client, cost: cost))
        case .clientBusy(let limit): return .failure(.clientBusy(limit: limit))
        case .databaseUnavailable: return .failure(.databaseUnavailable)
        case .expensiveBusy(let limit): return .failure(.expensiveBusy(limit: limit))
        }
    }

    enum Refusal: Error, Equatable {
        case clientBusy(limit: Int)
        case databaseUnavailable
        case expensiveBusy(limit: Int)
    }

    /// Called after each round trip attempt: whether the database answered or was unavailable. Takes
    /// the lock only when that changes, not once more per request.
    func noteDatabase(available: Bool) {
        guard databaseUnavailable.exchange(!available, ordering: .relaxed) == available else { return }
        // Whoever takes the lock last writes the latest state, however two changes interleave.
        share.withLock { $0.noteDatabase(available: !databaseUnavailable.load(ordering: .relaxed)) }
    }

    /// Requests in flight for `client` (tests and metrics).
    func inFlight(client: String) -> Int {
        share.withLock { $0.inFlight[client, default: 0] }
    }

    fileprivate func release(client: String, cost: DatabaseShare.Cost) {
        share.withLock { $0.release(client: client, cost: cost) }
    }

    /// One admitted request's share. Released once: by the worker when the work ends (or expires), or,
    /// should the work never be queued (the server stopping), when the last reference goes.
    final class Ticket: Sendable {
        private let shares: DatabaseShares
        private let client: String
        private let cost: DatabaseShare.Cost
        private let released = Atomic<Bool>(false)

        fileprivate init(shares: DatabaseShares, client: String, cost: DatabaseShare.Cost) {
            self.shares = shares
            self.client = client
            self.cost = cost
        }

        func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            shares.release(client: client, cost: cost)
        }

        deinit { release() }
    }
}
