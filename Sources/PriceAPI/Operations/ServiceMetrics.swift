import PriceDB
import PriceHTTPMessage
import PriceTelemetry
import Synchronization

/// The application's Prometheus series, rendered after the server's on /metrics: requests refused by
/// the per-IP limit, database errors (the database's failures apart from the client's mistakes), the
/// pools' gauges, the maintenance commands' last successes and the build. Every counter of a fixed label
/// list is rendered from the start, at zero: an alert on `rate(...)` or `increase(...)` needs the series
/// to exist before its first error.
public final class ServiceMetrics: Sendable {
    /// SQLSTATE classes with their own series; anything else is "other". The same fixed list for both
    /// error counters, so neither grows with what clients send.
    static let sqlStateClasses = ["08", "22", "23", "25", "40", "42", "53", "54", "55", "57", "P0", "PT", "XX", "other"]
    /// Kinds of `pricesvc_database_errors_total`: "unavailable" or a SQLSTATE class.
    static let databaseErrorKinds = ["unavailable"] + sqlStateClasses

    let server: ServerMetrics
    private let pool: @Sendable () -> PoolStats
    private let replicaPool: (@Sendable () -> PoolStats)?
    private let buildLabels: String
    private let rateLimited = AtomicCounter()
    private let readsOnReplica = AtomicCounter()
    private let readsOnPrimary = AtomicCounter()
    private let replicaFallbacks = AtomicCounter()
    private let readinessChecks = AtomicCounter()
    private let signUps = (anonymous: AtomicCounter(), attested: AtomicCounter())
    private let attestations = (verified: AtomicCounter(), refused: AtomicCounter())
    private let databaseErrors: [AtomicCounter]
    private let clientErrors: [AtomicCounter]
    private let databaseWorkers: Int
    /// Requests held while the database was unavailable, by how the hold ended (`DatabaseHold.Outcome`).
    private let held = DatabaseHold.Outcome.allCases.map { _ in AtomicCounter() }
    private let heldMilliseconds = AtomicCounter()
    private let longestHoldMilliseconds = Atomic<Int>(0)
    private let shareUnavailable = AtomicCounter()
    private let holding = Atomic<Int>(0)
    /// The maintenance commands' last successes as last read from the database; nil until read.
    private let maintenance = Mutex<[String: Int]?>(nil)

    /// - Parameters:
    ///   - server: the HTTP server's counters, rendered first.
    ///   - pool: the pool's current gauges, read at each scrape.
    ///   - build: labels of `pricesvc_build_info` (version, commit, compiler), fixed for the process's life.
    ///   - databaseWorkers: the threads that run database plans (rendered when above 0).
    ///   - replicaPool: the read replica pool's gauges, when one is configured.
    public init(server: ServerMetrics, pool: @escaping @Sendable () -> PoolStats,
                build: [(name: String, value: String)] = [], databaseWorkers: Int = 0,
                replicaPool: (@Sendable () -> PoolStats)? = nil) {
        self.server = server
        self.pool = pool
        self.replicaPool = replicaPool
        self.databaseWorkers = databaseWorkers
        buildLabels = build.map { "\($0.name)=\"\(Self.escapeLabel($0.value))\"" }.joined(separator: ",")
        databaseErrors = Self.databaseErrorKinds.map { _ in AtomicCounter() }
        clientErrors = Self.sqlStateClasses.map { _ in AtomicCounter() }
    }

    /// Server metrics with a row for every route label, "other" for anything else.
    public static func serverMetrics() -> ServerMetrics {
        ServerMetrics(routeLabels: Route.allLabels, fallbackLabel: Route.notFound.label)
    }

    /// A /readyz check sent to the database (the public one at most once a second).
    func recordReadinessCheck() {
        readinessChecks.add()
    }

    func recordRateLimited() {
        rateLimited.add()
    }

    /// A request begins (and ends) waiting for the database to come back.
    func recordHoldStarted() { _ = holding.add(1, ordering: .relaxed) }
    func recordHoldEnded() { _ = holding.subtract(1, ordering: .relaxed) }

    /// A request held while the database was unavailable, and how long it waited.
    func recordHold(_ outcome: DatabaseHold.Outcome, duration: Duration) {
        held[DatabaseHold.Outcome.allCases.firstIndex(of: outcome)!].add()
        let milliseconds = Int((duration / .milliseconds(1)).rounded())
        heldMilliseconds.add(milliseconds)
        _ = longestHoldMilliseconds.max(milliseconds, ordering: .relaxed)
    }

    /// A request the per-address share refused with 503 (not 429) because the database was unavailable.
    func recordShareUnavailable() {
        shareUnavailable.add()
    }

    /// A read-only call (function calls, readiness) answered by the replica pool or by the primary.
    func recordRead(onReplica: Bool) {
        (onReplica ? readsOnReplica : readsOnPrimary).add()
    }

    /// A sign-up the database accepted (a session was issued), with or without an attested key.
    func recordSignUp(attested: Bool) {
        (attested ? signUps.attested : signUps.anonymous).add()
    }

    /// An attestation token of a sign-up (either platform), verified or refused before any database work. (A verified one
    /// may still be refused by the database as a replayed challenge or a reused key: counted as a
    /// sign-up or not, never twice here.)
    func recordAttestation(verified: Bool) {
        (verified ? attestations.verified : attestations.refused).add()
    }

    /// A read-only call that went to the primary because the replica pool could not answer.
    func recordReplicaFallback() {
        replicaFallbacks.add()
    }

    /// Counts a failed round trip once: as the client's error when it is answered 4xx (a check
    /// violation, the cap, permission denied), otherwise as the database's.
    func recordDatabaseError(_ error: DatabaseError) {
        switch APIError.metricsKind(error) {
        case .client(let sqlStateClass):
            clientErrors[Self.index(of: sqlStateClass, in: Self.sqlStateClasses)].add()
        case .database(let kind):
            databaseErrors[Self.index(of: kind, in: Self.databaseErrorKinds)].add()
        }
    }

    private static func index(of label: String, in labels: [String]) -> Int {
        labels.firstIndex(of: label) ?? labels.count - 1
    }

    static func escapeLabel(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The maintenance commands /metrics reports the last success of (private.maintenance_runs, 0018).
    static let maintenanceTasks = ["prune", "import-rates"]

    /// Each maintenance task's last success in Unix seconds, as the database recorded it
    /// (pricesvc_meta.maintenance_runs(), read by `serve` on a connection of its own every half minute);
    /// nil when it could not be read, which leaves the family out rather than showing "never".
    public func recordMaintenanceRuns(_ runs: [String: Int]?) {
        maintenance.withLock { $0 = runs }
    }

    /// The whole /metrics text.
    func render() -> String {
        let maintenance = self.maintenance.withLock { $0 }
        var out = server.render()
        PrometheusText.family(&out, "pricesvc_rate_limited_total", .counter, "Requests refused by the per-IP request limit.",
                    [("", rateLimited.current)])
        PrometheusText.family(&out, "pricesvc_db_held_requests_total", .counter,
                    "Requests held while the database was unavailable, by how the hold ended (served, gave_up at the bound, not_retryable: may have committed).",
                    zip(DatabaseHold.Outcome.allCases, held).map { ("outcome=\"\($0.rawValue)\"", $1.current) })
        PrometheusText.family(&out, "pricesvc_db_hold_milliseconds_total", .counter,
                    "Milliseconds requests spent held while the database was unavailable.", [("", heldMilliseconds.current)])
        PrometheusText.family(&out, "pricesvc_db_hold_longest_milliseconds", .gauge,
                    "The longest hold of one request since the start, milliseconds.",
                    [("", longestHoldMilliseconds.load(ordering: .relaxed))])
        PrometheusText.family(&out, "pricesvc_db_holding_requests", .gauge,
                    "Requests waiting right now for the database to come back.", [("", holding.load(ordering: .relaxed))])
        PrometheusText.family(&out, "pricesvc_db_share_unavailable_total", .counter,
                    "Requests over the per-address share answered 503 (not 429) because the database was unavailable.",
                    [("", shareUnavailable.current)])
        PrometheusText.family(&out, "pricesvc_database_errors_total", .counter,
                    "Failures of the database (unavailable, or a server fault by SQLSTATE class).",
                    Self.all(Self.databaseErrorKinds, databaseErrors, label: "kind"))
        PrometheusText.family(&out, "pricesvc_db_reads_total", .counter,
                    "Read-only calls (function calls, readiness) by the pool that answered.",
                    [("pool=\"replica\"", readsOnReplica.current), ("pool=\"primary\"", readsOnPrimary.current)])
        PrometheusText.family(&out, "pricesvc_db_replica_fallbacks_total", .counter,
                    "Read-only calls sent to the primary because the replica could not answer.",
                    [("", replicaFallbacks.current)])
        PrometheusText.family(&out, "pricesvc_database_client_errors_total", .counter,
                    "Requests the database refused as the client's mistake (answered 4xx), by SQLSTATE class.",
                    Self.all(Self.sqlStateClasses, clientErrors, label: "class"))
        PrometheusText.family(&out, "pricesvc_readiness_checks_total", .counter,
                    "Readiness checks sent to the database (public /readyz: at most one a second).",
                    [("", readinessChecks.current)])
        PrometheusText.family(&out, "pricesvc_sign_ups_total", .counter,
                    "Sign-ups that issued a session, by kind (attested: with an App Attest or Android Key Attestation key).",
                    [("kind=\"anonymous\"", signUps.anonymous.current), ("kind=\"attested\"", signUps.attested.current)])
        PrometheusText.family(&out, "pricesvc_attestations_total", .counter,
                    "Attestation tokens of sign-ups (App Attest, Android), by the instance's verdict before the database.",
                    [("result=\"verified\"", attestations.verified.current), ("result=\"refused\"", attestations.refused.current)])
        let pool = self.pool()
        PrometheusText.family(&out, "pricesvc_db_pool_connections", .gauge, "Database pool connections by state.",
                    [("state=\"in_use\"", pool.inUse), ("state=\"idle\"", pool.idle)])
        PrometheusText.family(&out, "pricesvc_db_pool_size", .gauge, "Database connections the pool may open.", [("", pool.size)])
        if databaseWorkers > 0 {
            PrometheusText.family(&out, "pricesvc_database_workers", .gauge, "Threads that run requests waiting on PostgreSQL.",
                        [("", databaseWorkers)])
        }
        PrometheusText.family(&out, "pricesvc_db_pool_waiting", .gauge, "Requests waiting for a pool connection.",
                    [("", pool.waiting)])
        PrometheusText.family(&out, "pricesvc_db_pool_reconnects_total", .counter,
                    "Connections opened to replace ones that lost their server or broke mid-batch.", [("", pool.reconnects)])
        PrometheusText.family(&out, "pricesvc_db_pool_connects_total", .counter, "Connections the pool opened.",
                    [("", pool.connectsTotal)])
        if let replica = replicaPool?() {
            PrometheusText.family(&out, "pricesvc_db_replica_pool_connections", .gauge,
                        "Read replica pool connections by state.",
                        [("state=\"in_use\"", replica.inUse), ("state=\"idle\"", replica.idle)])
            PrometheusText.family(&out, "pricesvc_db_replica_pool_size", .gauge, "Connections the read replica pool may open.",
                        [("", replica.size)])
            PrometheusText.family(&out, "pricesvc_db_replica_pool_waiting", .gauge, "Reads waiting for a replica pool connection.",
                        [("", replica.waiting)])
            PrometheusText.family(&out, "pricesvc_db_replica_pool_reconnects_total", .counter,
                        "Replica connections opened to replace broken ones.", [("", replica.reconnects)])
        }
        if let maintenance {
            PrometheusText.family(&out, "pricesvc_maintenance_last_success_timestamp_seconds", .gauge,
                        "When a maintenance command (pricesvc prune, import-rates) last succeeded, Unix seconds; 0: never.",
                        Self.maintenanceTasks.map { ("task=\"\($0)\"", maintenance[$0] ?? 0) })
        }
        PrometheusText.family(&out, "pricesvc_build_info", .gauge, "The running build; always 1.", [(buildLabels, 1)])
        return out
    }

    /// Every counter of a fixed label list, zeros included, as `label="value"` samples.
    private static func all(_ values: [String], _ counters: [AtomicCounter], label: String) -> [(labels: String, value: Int)] {
        zip(values, counters).map { value, counter in ("\(label)=\"\(value)\"", counter.current) }
    }
}
