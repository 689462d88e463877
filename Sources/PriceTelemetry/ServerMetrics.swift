import Synchronization

/// Prometheus counters of the HTTP server: requests by route label and status, and a latency
/// histogram by route label, updated by every request without a lock. The server records into it; the
/// application makes it (it knows the route labels) and renders it on /metrics, so it lives apart from both.
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
    private let fallbackRow: Int
    private let requests: [AtomicCounter]
    /// Per route row: one counter per latency bucket, then the count and the sum in nanoseconds.
    private let latency: [AtomicCounter]
    private static var latencyWidth: Int { latencyBuckets.count + 2 }
    private let connectionsRefused = AtomicCounter()
    private let deadlineCutOffs = AtomicCounter()
    /// Each server's database jobs queued or running, and its oldest queued job's wait (the public and the
    /// admin listener share these metrics).
    private let workerQueues = Mutex<[@Sendable () -> (pending: Int, oldestWait: Duration)]>([])

    /// - Parameters:
    ///   - routeLabels: every label a request can be recorded under, in the order /metrics lists them.
    ///   - fallbackLabel: one of `routeLabels`, counted for any label not in the list.
    public init(routeLabels: [String], fallbackLabel: String) {
        precondition(routeLabels.contains(fallbackLabel), "the fallback label must be one of the route labels")
        self.routeLabels = routeLabels
        fallbackRow = routeLabels.firstIndex(of: fallbackLabel)!
        requests = (0..<(routeLabels.count * (Self.statuses.count + 1))).map { _ in AtomicCounter() }
        latency = (0..<(routeLabels.count * Self.latencyWidth)).map { _ in AtomicCounter() }
    }

    public func record(route: String, status: Int, seconds: Double) {
        // A score of labels, compared by length first: cheaper than hashing the label on every request.
        let length = route.utf8.count
        let row = routeLabels.firstIndex { $0.utf8.count == length && $0 == route } ?? fallbackRow
        let column = Self.statuses.firstIndex(of: status) ?? Self.statuses.count
        requests[row * (Self.statuses.count + 1) + column].add()
        let base = row * Self.latencyWidth
        if let index = Self.latencyBuckets.firstIndex(where: { seconds <= $0 }) {
            latency[base + index].add()
        }
        latency[base + Self.latencyBuckets.count].add()
        latency[base + Self.latencyBuckets.count + 1].add(Int(seconds * 1e9))
    }

    /// A connection refused at accept because its client network holds its share already.
    package func recordConnectionRefused() {
        connectionsRefused.add()
    }

    /// Where a server's worker threads tell how many jobs they hold (queued or running), and how long the
    /// oldest queued one has waited.
    package func addWorkerQueue(_ source: @escaping @Sendable () -> (pending: Int, oldestWait: Duration)) {
        workerQueues.withLock { $0.append(source) }
    }

    /// Connections closed because their request head or body was not in by its deadline.
    package func recordDeadlineCutOff(_ count: Int) {
        deadlineCutOffs.add(count)
    }

    /// The server's part of the Prometheus text exposition. Counters are read one by one, so a scrape
    /// taken under load may be a few requests apart between series; each series is monotonic.
    public func render() -> String {
        var out = ""
        let requestsTotal = "pricesvc_http_requests_total"
        PrometheusText.header(&out, requestsTotal, .counter, "HTTP requests by route and status.")
        let width = Self.statuses.count + 1
        for (row, route) in routeLabels.enumerated() {
            for column in 0..<width {
                let count = requests[row * width + column].current
                guard count > 0 else { continue }
                let status = column < Self.statuses.count ? String(Self.statuses[column]) : "other"
                PrometheusText.sample(&out, requestsTotal, "route=\"\(route)\",status=\"\(status)\"", count)
            }
        }
        let duration = "pricesvc_http_request_duration_seconds"
        PrometheusText.header(&out, duration, .histogram, "Time from request start to response queued, by route.")
        for (row, route) in routeLabels.enumerated() {
            let base = row * Self.latencyWidth
            let count = latency[base + Self.latencyBuckets.count].current
            guard count > 0 else { continue }
            var cumulative = 0
            for (index, bound) in Self.latencyBuckets.enumerated() {
                cumulative += latency[base + index].current
                PrometheusText.sample(&out, duration + "_bucket", "route=\"\(route)\",le=\"\(bound)\"", cumulative)
            }
            // Read one by one, the count may trail the buckets under load; +Inf must not be below them.
            let total = max(cumulative, count)
            let sum = Double(latency[base + Self.latencyBuckets.count + 1].current) / 1e9
            PrometheusText.sample(&out, duration + "_bucket", "route=\"\(route)\",le=\"+Inf\"", total)
            PrometheusText.sample(&out, duration + "_sum", "route=\"\(route)\"", sum)
            PrometheusText.sample(&out, duration + "_count", "route=\"\(route)\"", total)
        }
        PrometheusText.family(&out, "pricesvc_http_connections_refused_total", .counter,
                              "Connections refused at accept: the client network held its limit.", [("", connectionsRefused.current)])
        PrometheusText.family(&out, "pricesvc_http_receive_deadline_closed_total", .counter,
                              "Connections closed because a request head or body was not in by its deadline.", [("", deadlineCutOffs.current)])
        let queues = workerQueues.withLock { sources in sources.map { $0() } }
        PrometheusText.family(&out, "pricesvc_http_database_jobs", .gauge,
                              "Requests queued for or running on a database worker thread.",
                              [("", queues.reduce(0) { $0 + $1.pending })])
        let oldest = queues.map(\.oldestWait).max() ?? .zero
        PrometheusText.header(&out, "pricesvc_http_database_queue_oldest_wait_seconds", .gauge,
                              "How long the oldest request still queued for a database worker has waited (0 when none waits); past PRICESVC_POOL_TIMEOUT_MS it is answered 503.")
        PrometheusText.sample(&out, "pricesvc_http_database_queue_oldest_wait_seconds", "",
                              Double(oldest.components.seconds) + Double(oldest.components.attoseconds) / 1e18)
        return out
    }
}
