import Synchronization

/// Prometheus counters and a latency histogram, updated by every request without a lock.
///
/// Why atomics: a single `Mutex` here was the hottest lock in the process. On Linux, Swift's
/// `Mutex` is a priority-inheritance futex, and under `/healthz` load 20% of samples sat in it
/// (docs/benchmarks.md). Every label set is fixed in advance — route labels come from `Route`,
/// statuses from the short list pricesvc answers with — so each counter is an atomic in a
/// preallocated table and memory does not grow with traffic.
public final class Metrics: Sendable {
    public static let latencyBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
    /// Statuses with their own series; anything else is counted under "other".
    static let statuses = [200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 429, 500, 503]
    /// Database error kinds: "unavailable" or a SQLSTATE class; anything else is "other".
    static let databaseErrorKinds = ["unavailable", "08", "22", "23", "40", "42", "53", "57", "P0", "PA", "PT", "XX", "other"]

    private final class Counter: Sendable {
        let value = Atomic<Int>(0)
        func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
        var current: Int { value.load(ordering: .relaxed) }
    }

    private let routeIndex: [String: Int]
    private let requests: [Counter]
    private let buckets: [Counter]
    private let latencyCount = Counter()
    private let latencyNanoseconds = Counter()
    private let rateLimited = Counter()
    private let readsOnReplica = Counter()
    private let readsOnPrimary = Counter()
    private let replicaFallbacks = Counter()
    private let databaseErrors: [Counter]

    public init() {
        routeIndex = Dictionary(uniqueKeysWithValues: Route.allLabels.enumerated().map { ($1, $0) })
        requests = (0..<(Route.allLabels.count * (Self.statuses.count + 1))).map { _ in Counter() }
        buckets = Self.latencyBuckets.map { _ in Counter() }
        databaseErrors = Self.databaseErrorKinds.map { _ in Counter() }
    }

    public func record(route: String, status: Int, seconds: Double) {
        let row = routeIndex[route] ?? routeIndex[Route.notFound.label]!
        let column = Self.statuses.firstIndex(of: status) ?? Self.statuses.count
        requests[row * (Self.statuses.count + 1) + column].add()
        latencyCount.add()
        latencyNanoseconds.add(Int(seconds * 1e9))
        if let index = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
            buckets[index].add()
        }
    }

    public func recordRateLimited() {
        rateLimited.add()
    }

    /// A read-only call (medians, readiness) answered by the replica pool or by the primary.
    public func recordRead(onReplica: Bool) {
        (onReplica ? readsOnReplica : readsOnPrimary).add()
    }

    /// A read-only call that went to the primary because the replica pool could not answer.
    public func recordReplicaFallback() {
        replicaFallbacks.add()
    }

    public func recordDatabaseError(kind: String) {
        let index = Self.databaseErrorKinds.firstIndex(of: kind) ?? Self.databaseErrorKinds.count - 1
        databaseErrors[index].add()
    }

    public struct PoolGauges: Sendable {
        public var size: Int, inUse: Int, idle: Int, waiting: Int
        public init(size: Int, inUse: Int, idle: Int, waiting: Int) {
            self.size = size; self.inUse = inUse; self.idle = idle; self.waiting = waiting
        }
    }

    /// The Prometheus text exposition. Counters are read one by one, so a scrape taken under load
    /// may be a few requests apart between series; each series is monotonic.
    public func render(pool: PoolGauges) -> String {
        var out = ""
        out += "# HELP pricesvc_http_requests_total HTTP requests by route and status.\n"
        out += "# TYPE pricesvc_http_requests_total counter\n"
        let width = Self.statuses.count + 1
        for (row, route) in Route.allLabels.enumerated() {
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
        out += "# HELP pricesvc_rate_limited_total Requests refused by the per-IP request limit.\n"
        out += "# TYPE pricesvc_rate_limited_total counter\n"
        out += "pricesvc_rate_limited_total \(rateLimited.current)\n"
        out += "# HELP pricesvc_database_errors_total Database errors by kind (SQLSTATE class or unavailable).\n"
        out += "# TYPE pricesvc_database_errors_total counter\n"
        for (index, kind) in Self.databaseErrorKinds.enumerated() where databaseErrors[index].current > 0 {
            out += "pricesvc_database_errors_total{kind=\"\(kind)\"} \(databaseErrors[index].current)\n"
        }
        out += "# HELP pricesvc_db_reads_total Read-only calls (medians, readiness) by the pool that answered.\n"
        out += "# TYPE pricesvc_db_reads_total counter\n"
        out += "pricesvc_db_reads_total{pool=\"replica\"} \(readsOnReplica.current)\n"
        out += "pricesvc_db_reads_total{pool=\"primary\"} \(readsOnPrimary.current)\n"
        out += "# HELP pricesvc_db_replica_fallbacks_total Read-only calls sent to the primary because the replica could not answer.\n"
        out += "# TYPE pricesvc_db_replica_fallbacks_total counter\n"
        out += "pricesvc_db_replica_fallbacks_total \(replicaFallbacks.current)\n"
        out += "# HELP pricesvc_db_pool_connections Database pool connections by state.\n"
        out += "# TYPE pricesvc_db_pool_connections gauge\n"
        out += "pricesvc_db_pool_connections{state=\"in_use\"} \(pool.inUse)\n"
        out += "pricesvc_db_pool_connections{state=\"idle\"} \(pool.idle)\n"
        out += "# HELP pricesvc_db_pool_size Database connections the pool may open.\n"
        out += "# TYPE pricesvc_db_pool_size gauge\n"
        out += "pricesvc_db_pool_size \(pool.size)\n"
        out += "# HELP pricesvc_db_pool_waiting Requests waiting for a pool connection.\n"
        out += "# TYPE pricesvc_db_pool_waiting gauge\n"
        out += "pricesvc_db_pool_waiting \(pool.waiting)\n"
        return out
    }
}
