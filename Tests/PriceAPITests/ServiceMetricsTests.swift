import PriceDB
import Testing
@testable import PriceAPI

@Suite("The service's Prometheus metrics")
struct ServiceMetricsTests {
    let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: {
        PoolStats(size: 8, inUse: 2, idle: 6, waiting: 1)
    })

    @Test("database errors are counted by kind, unknown kinds as 'other', after the server's series and before the pool's")
    func databaseErrorsAndPool() throws {
        metrics.recordDatabaseError(DatabaseError(code: .server, sqlState: "ZZ000", message: "odd"))
        metrics.recordDatabaseError(DatabaseError(code: .connectionLost, sqlState: "08006", message: "gone"))
        metrics.recordRateLimited()
        let text = metrics.render()
        #expect(text.contains("pricesvc_database_errors_total{kind=\"other\"} 1\n"))
        #expect(text.contains("pricesvc_database_errors_total{kind=\"unavailable\"} 1\n"))
        #expect(text.contains("pricesvc_rate_limited_total 1\n"))
        #expect(text.contains("pricesvc_db_pool_waiting 1\n"))
        let order = ["pricesvc_http_requests_total", "pricesvc_http_request_duration_seconds", "pricesvc_rate_limited_total",
                     "pricesvc_database_errors_total", "pricesvc_db_pool_connections"]
        let positions = try order.map { name in try #require(text.range(of: "# HELP " + name)).lowerBound }
        #expect(positions == positions.sorted())
    }

    @Test("every route label has a row in the server's table")
    func everyRouteLabelIsKnown() {
        for route in [Route.health, .ready, .metrics, .openAPI, .submitReports, .reportsDenied, .rpc("x"),
                      .rpc("price_medians"), .unknownTable("t"), .signUp, .signUpChallenge, .token, .logout, .user,
                      .options(allow: []), .notFound, .methodNotAllowed(allow: [])] {
            #expect(Route.allLabels.contains(route.label), "\(route)")
        }
    }
}
