import Synchronization

/// Prometheus counters of the HTTP server: requests by route label and status, and a latency
/// histogram, updated by every request without a lock.
///
/// Why atomics: a single `Mutex` here was the hottest lock in the process. On Linux, Swift's
/// `Mutex` is a priority-inheritance futex, and under `/healthz` load 20% of samples sat in it
/// (docs/benchmarks.md). Every label set is fixed in advance — route labels come from the
/// application, statuses from the short list pricesvc answers with — so each counter is an atomic
/// in a preallocated table and memory does not grow with traffic.
public final class ServerMetrics: Sendable {
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    /// Statuses with their own series; anything else is counted under "other".
    static let statuses = [200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500, 503]

    private let routeLabels: [String]
    private let routeIndex: [String: Int]
    private let fallbackRow: Int
    private let requests: [AtomicCounter]
    private let buckets: [AtomicCounter]
    private let latencyCount = AtomicCounter()
    private let latencyNanoseconds = AtomicCounter()

    /// - Parameters:
    ///   - routeLabels: every label a request can be recorded under, in the order /metrics lists them.
    ///   - fallbackLabel: one of `routeLabels`, counted for any label not in the list.
    public init(routeLabels: [String], fallbackLabel: String) {
        precondition(routeLabels.contains(fallbackLabel), "the fallback label must be one of the route labels")
        self.routeLabels = routeLabels
        routeIndex = Dictionary(routeLabels.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        fallbackRow = routeIndex[fallbackLabel]!
        requests = (0..<(routeLabels.count * (Self.statuses.count + 1))).map { _ in AtomicCounter() }
        buckets = Self.latencyBuckets.map { _ in AtomicCounter() }
    }

    public func record(route: String, status: Int, seconds: Double) {
        let row = routeIndex[route] ?? fallbackRow
        let column = Self.statuses.firstIndex(of: status) ?? Self.statuses.count
        requests[row * (Self.statuses.count + 1) + column].add()
        latencyCount.add()
        latencyNanoseconds.add(Int(seconds * 1e9))
        if let index = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
            buckets[index].add()
        }
    }

    /// The server's part of the Prometheus text exposition. Counters are read one by one, so a scrape
    /// taken under load may be a few requests apart between series; each series is monotonic.
    public func render() -> String {
        var out = ""
        out += "# HELP pricesvc_http_requests_total HTTP requests by route and status.\n"
        out += "# TYPE pricesvc_http_requests_total counter\n"
        let width = Self.statuses.count + 1
        for (row, route) in routeLabels.enumerated() {
            for column in 0..<width {
                let count = requests[row * width + column].current
                guard count > 0 else { continue }
                let status = column < Self.statuses.count ? String(Self.statuses[column]) : "other"
                out += "pricesvc_http_requests_total{route=\"\(route)\",status=\"\(status)\"} \(count)\n"
            }
        }
        out += "# HELP pricesvc_http_request_duration_seconds Time from request start to response queued.\n"
        out += "# TYPE pricesvc_http_request_duration_seconds histogram\n"
        var cumulative = 0
        for (index, bound) in Self.latencyBuckets.enumerated() {
            cumulative += buckets[index].current
            out += "pricesvc_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        let total = max(cumulative, latencyCount.current)
        out += "pricesvc_http_request_duration_seconds_bucket{le=\"+Inf\"} \(total)\n"
        out += "pricesvc_http_request_duration_seconds_sum \(Double(latencyNanoseconds.current) / 1e9)\n"
        out += "pricesvc_http_request_duration_seconds_count \(total)\n"
        return out
    }
}

/// A relaxed atomic counter, the cell of every metrics table.
public final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}
