import PriceDB
import PriceHTTP

/// The application's Prometheus series, rendered after the server's on /metrics: requests refused by
/// the per-IP limit, database errors (the database's failures apart from the client's mistakes), the
/// pool's gauges and the build.
public final class ServiceMetrics: Sendable {
    /// SQLSTATE classes with their own series; anything else is "other". The same fixed list for both
    /// error counters, so neither grows with what clients send.
    static let sqlStateClasses = ["08", "22", "23", "25", "40", "42", "53", "54", "55", "57", "P0", "PT", "XX", "other"]
    /// Kinds of `pricesvc_database_errors_total`: "unavailable" or a SQLSTATE class.
    static let databaseErrorKinds = ["unavailable"] + sqlStateClasses

    let server: ServerMetrics
    private let pool: @Sendable () -> PoolStats
    private let buildLabels: String
    private let rateLimited = AtomicCounter()
    private let readsOnReplica = AtomicCounter()
    private let readsOnPrimary = AtomicCounter()
    private let replicaFallbacks = AtomicCounter()
    private let databaseErrors: [AtomicCounter]
    private let clientErrors: [AtomicCounter]
    private let databaseWorkers: Int

    /// - Parameters:
    ///   - server: the HTTP server's counters, rendered first.
    ///   - pool: the pool's current gauges, read at each scrape.
    ///   - build: labels of `pricesvc_build_info` (version, compiler), fixed for the process's life.
    ///   - databaseWorkers: the threads that run database plans (rendered when above 0).
    public init(server: ServerMetrics, pool: @escaping @Sendable () -> PoolStats,
                build: [(name: String, value: String)] = [], databaseWorkers: Int = 0) {
        self.server = server
        self.pool = pool
        self.databaseWorkers = databaseWorkers
        buildLabels = build.map { "\($0.name)=\"\(Self.escapeLabel($0.value))\"" }.joined(separator: ",")
        databaseErrors = Self.databaseErrorKinds.map { _ in AtomicCounter() }
        clientErrors = Self.sqlStateClasses.map { _ in AtomicCounter() }
    }

    /// Server metrics with a row for every route label, "other" for anything else.
    public static func serverMetrics() -> ServerMetrics {
        ServerMetrics(routeLabels: Route.allLabels, fallbackLabel: Route.notFound.label)
    }

    func recordRateLimited() {
        rateLimited.add()
    }

    /// A read-only call (medians, readiness) answered by the replica pool or by the primary.
    func recordRead(onReplica: Bool) {
        (onReplica ? readsOnReplica : readsOnPrimary).add()
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

    /// The whole /metrics text.
    func render() -> String {
        var out = server.render()
        out += "# HELP pricesvc_rate_limited_total Requests refused by the per-IP request limit.\n"
        out += "# TYPE pricesvc_rate_limited_total counter\n"
        out += "pricesvc_rate_limited_total \(rateLimited.current)\n"
        out += "# HELP pricesvc_database_errors_total Failures of the database (unavailable, or a server fault by SQLSTATE class).\n"
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
        out += "# HELP pricesvc_database_client_errors_total Requests the database refused as the client's mistake (answered 4xx), by SQLSTATE class.\n"
        out += "# TYPE pricesvc_database_client_errors_total counter\n"
        for (index, sqlStateClass) in Self.sqlStateClasses.enumerated() where clientErrors[index].current > 0 {
            out += "pricesvc_database_client_errors_total{class=\"\(sqlStateClass)\"} \(clientErrors[index].current)\n"
        }
        let pool = self.pool()
        out += "# HELP pricesvc_db_pool_connections Database pool connections by state.\n"
        out += "# TYPE pricesvc_db_pool_connections gauge\n"
        out += "pricesvc_db_pool_connections{state=\"in_use\"} \(pool.inUse)\n"
        out += "pricesvc_db_pool_connections{state=\"idle\"} \(pool.idle)\n"
        out += "# HELP pricesvc_db_pool_size Database connections the pool may open.\n"
        out += "# TYPE pricesvc_db_pool_size gauge\n"
        out += "pricesvc_db_pool_size \(pool.size)\n"
        if databaseWorkers > 0 {
            out += "# HELP pricesvc_database_workers Threads that run requests waiting on PostgreSQL.\n"
            out += "# TYPE pricesvc_database_workers gauge\n"
            out += "pricesvc_database_workers \(databaseWorkers)\n"
        }
        out += "# HELP pricesvc_db_pool_waiting Requests waiting for a pool connection.\n"
        out += "# TYPE pricesvc_db_pool_waiting gauge\n"
        out += "pricesvc_db_pool_waiting \(pool.waiting)\n"
        out += "# HELP pricesvc_build_info The running build; always 1.\n"
        out += "# TYPE pricesvc_build_info gauge\n"
        out += "pricesvc_build_info{\(buildLabels)} 1\n"
        return out
    }
}
