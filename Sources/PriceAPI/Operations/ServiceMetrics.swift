import PriceDB
import PriceHTTP

/// The application's Prometheus series, rendered after the server's on /metrics: requests refused by
/// the per-IP limit, database errors by kind, and the pool's gauges.
public final class ServiceMetrics: Sendable {
    /// Database error kinds: "unavailable" or a SQLSTATE class; anything else is "other".
    static let databaseErrorKinds = ["unavailable", "08", "22", "23", "40", "42", "53", "57", "P0", "PA", "PT", "XX", "other"]

    let server: ServerMetrics
    private let pool: @Sendable () -> PoolStats
    private let rateLimited = AtomicCounter()
    private let readsOnReplica = AtomicCounter()
    private let readsOnPrimary = AtomicCounter()
    private let replicaFallbacks = AtomicCounter()
    private let databaseErrors: [AtomicCounter]

    /// - Parameters:
    ///   - server: the HTTP server's counters, rendered first.
    ///   - pool: the pool's current gauges, read at each scrape.
    public init(server: ServerMetrics, pool: @escaping @Sendable () -> PoolStats) {
        self.server = server
        self.pool = pool
        databaseErrors = Self.databaseErrorKinds.map { _ in AtomicCounter() }
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

    func recordDatabaseError(_ error: DatabaseError) {
        let kind = APIError.metricsKind(error)
        let index = Self.databaseErrorKinds.firstIndex(of: kind) ?? Self.databaseErrorKinds.count - 1
        databaseErrors[index].add()
    }

    /// The whole /metrics text.
    func render() -> String {
        var out = server.render()
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
        let pool = self.pool()
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
