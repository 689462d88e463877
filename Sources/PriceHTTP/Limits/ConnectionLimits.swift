/// Open connections per client network. libmicrohttpd's own per-IP limit counts single addresses, so
/// one IPv6 /64 (2^64 addresses, one host) could hold every slot; this counts a connection by the
/// same `ClientNetwork` key the rate limits use. Keyed by the socket peer: the headers (and
/// `X-Forwarded-For`) are not there yet when a connection is accepted.
struct ConnectionCounter: Sendable, Equatable {
    let limit: Int
    let ipv6Prefix: Int
    private(set) var open: [String: Int] = [:]

    init(limit: Int, ipv6Prefix: Int = 64) {
        self.limit = limit
        self.ipv6Prefix = ipv6Prefix
    }

    /// The key a peer address is counted under (the address itself when it is not an IP literal).
    func network(of address: String) -> String {
        ClientNetwork.key(for: address, ipv6Prefix: ipv6Prefix) ?? address
    }

    func admits(_ network: String) -> Bool {
        open[network, default: 0] < limit
    }

    /// Counts a connection in; false when that takes its network past the limit. The accept policy
    /// checks `admits` on one event loop while another may be opening a connection from the same
    /// network, so two can pass the check at once: the count taken here is the one that decides.
    @discardableResult
    mutating func opened(_ network: String) -> Bool {
        open[network, default: 0] += 1
        return open[network, default: 0] <= limit
    }

    /// Forgets a network when its last connection closes, so memory follows the connections.
    mutating func closed(_ network: String) {
        guard let count = open[network] else { return }
        open[network] = count > 1 ? count - 1 : nil
    }
}

/// When a connection must have delivered what it owes. libmicrohttpd's connection timeout is an idle
/// timeout: every byte restarts it, so a client that sends one header byte every few seconds holds
/// its slot for ever. These deadlines are set when a phase begins and no byte moves them:
/// - waiting for a request head (from accept, or from the end of the previous request on a kept-alive
///   connection, so they also bound how long an idle connection is kept): `head`;
/// - receiving the body, once the head is in: `body`;
/// - while the server itself works on the request or sends the answer: none.
struct ReceiveDeadlines: Sendable, Equatable {
    /// Nanoseconds on a monotonic clock; `none` (0) for no deadline.
    typealias Instant = Int64
    static let none: Instant = 0

    let headNanoseconds: Int64
    let bodyNanoseconds: Int64

    init(headSeconds: Int, bodySeconds: Int) {
        headNanoseconds = Int64(headSeconds) * 1_000_000_000
        bodyNanoseconds = Int64(bodySeconds) * 1_000_000_000
    }

    /// Accepted, or the previous request on the connection is complete.
    func waitingForHead(now: Instant) -> Instant { max(1, now + headNanoseconds) }

    /// The head is in; the body (if any) is on its way.
    func receivingBody(now: Instant) -> Instant { max(1, now + bodyNanoseconds) }

    static func isOverdue(_ deadline: Instant, now: Instant) -> Bool {
        deadline != none && now >= deadline
    }
}
