import Synchronization

/// Prometheus counters and a latency histogram. Labels are bounded (route labels come from
/// `Route.label`, statuses are three digits), so memory does not grow with traffic.
public final class Metrics: Sendable {
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    private struct State {
        var requests: [String: [Int: Int]] = [:]
        var bucketCounts = [Int](repeating: 0, count: Metrics.latencyBuckets.count)
        var latencyCount = 0
        var latencySum = 0.0
        var rateLimited = 0
        var databaseErrors: [String: Int] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    public func record(route: String, status: Int, seconds: Double) {
        state.withLock { state in
            state.requests[route, default: [:]][status, default: 0] += 1
            state.latencyCount += 1
            state.latencySum += seconds
            if let index = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
                state.bucketCounts[index] += 1
            }
        }
    }

    public func recordRateLimited() {
        state.withLock { $0.rateLimited += 1 }
    }

    /// `kind` is "unavailable" or a SQLSTATE class, never free text.
    public func recordDatabaseError(kind: String) {
        state.withLock { $0.databaseErrors[kind, default: 0] += 1 }
    }

    public struct PoolGauges: Sendable {
        public var size: Int, inUse: Int, idle: Int, waiting: Int
        public init(size: Int, inUse: Int, idle: Int, waiting: Int) {
            self.size = size; self.inUse = inUse; self.idle = idle; self.waiting = waiting
        }
    }

    public func render(pool: PoolGauges) -> String {
        let snapshot = state.withLock { $0 }
        var out = ""
        out += "# HELP pricesvc_http_requests_total HTTP requests by route and status.\n"
        out += "# TYPE pricesvc_http_requests_total counter\n"
        for route in snapshot.requests.keys.sorted() {
            for (status, count) in snapshot.requests[route]!.sorted(by: { $0.key < $1.key }) {
                out += "pricesvc_http_requests_total{route=\"\(route)\",status=\"\(status)\"} \(count)\n"
            }
        }
        out += "# HELP pricesvc_http_request_duration_seconds Time from request start to response queued.\n"
        out += "# TYPE pricesvc_http_request_duration_seconds histogram\n"
        var cumulative = 0
        for (index, bound) in Self.latencyBuckets.enumerated() {
            cumulative += snapshot.bucketCounts[index]
            out += "pricesvc_http_request_duration_seconds_bucket{le=\"\(bound)\"} \(cumulative)\n"
        }
        out += "pricesvc_http_request_duration_seconds_bucket{le=\"+Inf\"} \(snapshot.latencyCount)\n"
        out += "pricesvc_http_request_duration_seconds_sum \(snapshot.latencySum)\n"
        out += "pricesvc_http_request_duration_seconds_count \(snapshot.latencyCount)\n"
        out += "# HELP pricesvc_rate_limited_total Requests refused by the per-IP request limit.\n"
        out += "# TYPE pricesvc_rate_limited_total counter\n"
        out += "pricesvc_rate_limited_total \(snapshot.rateLimited)\n"
        out += "# HELP pricesvc_database_errors_total Database errors by kind (SQLSTATE class or unavailable).\n"
        out += "# TYPE pricesvc_database_errors_total counter\n"
        for (kind, count) in snapshot.databaseErrors.sorted(by: { $0.key < $1.key }) {
            out += "pricesvc_database_errors_total{kind=\"\(kind)\"} \(count)\n"
        }
        out += "# HELP pricesvc_db_pool_connections Database pool connections by state.\n"
        out += "# TYPE pricesvc_db_pool_connections gauge\n"
        out += "pricesvc_db_pool_connections{state=\"in_use\"} \(pool.inUse)\n"
        out += "pricesvc_db_pool_connections{state=\"idle\"} \(pool.idle)\n"
        out += "pricesvc_db_pool_size \(pool.size)\n"
        out += "# HELP pricesvc_db_pool_waiting Requests waiting for a pool connection.\n"
        out += "# TYPE pricesvc_db_pool_waiting gauge\n"
        out += "pricesvc_db_pool_waiting \(pool.waiting)\n"
        return out
    }
}
