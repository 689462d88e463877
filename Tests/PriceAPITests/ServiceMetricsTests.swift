import Foundation
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
        #expect(text.contains("pricesvc_database_client_errors_total{class=\"23\"} 0\n"))
        #expect(text.contains("pricesvc_database_errors_total{kind=\"unavailable\"} 1\n"))
        #expect(text.contains("pricesvc_rate_limited_total 1\n"))
        #expect(text.contains("pricesvc_db_pool_waiting 1\n"))
        let order = ["pricesvc_http_requests_total", "pricesvc_http_request_duration_seconds", "pricesvc_rate_limited_total",
                     "pricesvc_database_errors_total", "pricesvc_database_client_errors_total", "pricesvc_db_pool_connections",
                     "pricesvc_build_info"]
        let positions = try order.map { name in try #require(text.range(of: "# HELP " + name)).lowerBound }
        #expect(positions == positions.sorted())
    }

    @Test("every request the router can route is counted under its own route's series, never lumped into 'other'")
    func everyRoutedRequestHasItsOwnSeries() {
        let server = ServiceMetrics.serverMetrics()
        let metrics = ServiceMetrics(server: server, pool: { PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0) })
        var expected: [String: Int] = [:]
        func record(_ method: String, _ path: String) {
            let route = Router.route(method: method, path: path)
            server.record(route: route.label, status: 200, seconds: 0.001)
            expected[route.label, default: 0] += 1
        }
        for resource in Resource.table {
            for method in resource.methods + ["OPTIONS", "TRACE"] { record(method, resource.path) }
        }
        record("POST", "/rest/v1/rpc/no_such_function")
        record("GET", "/rest/v1/some_table")
        record("GET", "/nowhere")
        let text = metrics.render()
        // Each label's own series holds exactly its requests: a label missing from the table would have
        // been counted under "other" instead, and "other" would hold more than its own.
        for (label, count) in expected {
            #expect(text.contains("pricesvc_http_requests_total{route=\"\(label)\",status=\"200\"} \(count)\n"), "\(label)")
        }
        #expect(expected["/rest/v1/rpc/*"] == 1 && expected["/rest/v1/*"] == 1)
        #expect(expected.count == Route.allLabels.count - 1)  // every label but /metrics (the admin listener's)
    }

    @Test("errors the client caused (answered 4xx) are counted apart from the database's failures",
          arguments: [("23514", "23"), ("42501", "42"), ("PT429", "PT"), ("23505", "23"), ("22P02", "22"), ("P0001", "P0")])
    func clientErrorsAreNotDatabaseFailures(sqlState: String, sqlStateClass: String) throws {
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: { PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0) })
        metrics.recordDatabaseError(DatabaseError(code: .server, sqlState: sqlState, message: "x", severity: "ERROR"))
        let text = metrics.render()
        #expect(text.contains("pricesvc_database_client_errors_total{class=\"\(sqlStateClass)\"} 1\n"))
        let databaseFailure = try Regex(#"pricesvc_database_errors_total\{kind="[^"]+"\} [1-9]"#)
        #expect(!text.contains(databaseFailure))
    }

    @Test("unavailability and server faults are the database's",
          arguments: [(DatabaseError(code: .poolExhausted, message: "x"), "unavailable"),
                      (DatabaseError(code: .server, sqlState: "57P01", message: "x", severity: "FATAL"), "unavailable"),
                      (DatabaseError(code: .server, sqlState: "57014", message: "statement timeout", severity: "ERROR"), "57"),
                      (DatabaseError(code: .server, sqlState: "XX000", message: "x", severity: "ERROR"), "XX"),
                      (DatabaseError(code: .protocolViolation, message: "x"), "other")])
    func databaseFailures(error: DatabaseError, kind: String) throws {
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: { PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0) })
        metrics.recordDatabaseError(error)
        let text = metrics.render()
        #expect(text.contains("pricesvc_database_errors_total{kind=\"\(kind)\"} 1\n"))
        let clientError = try Regex(#"pricesvc_database_client_errors_total\{class="[^"]+"\} [1-9]"#)
        #expect(!text.contains(clientError))
    }

    @Test("build info is one series with fixed labels")
    func buildInfo() {
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: { PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0) },
                                     build: [("version", "1.2.3"), ("swift", "6.3")])
        #expect(metrics.render().contains("pricesvc_build_info{version=\"1.2.3\",swift=\"6.3\"} 1\n"))
    }

    @Test("every error counter exists from the start, at zero, so rate() works before the first error")
    func countersStartAtZero() {
        let text = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: { PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0) })
            .render()
        for kind in ServiceMetrics.databaseErrorKinds {
            #expect(text.contains("pricesvc_database_errors_total{kind=\"\(kind)\"} 0\n"), "\(kind)")
        }
        for sqlStateClass in ServiceMetrics.sqlStateClasses {
            #expect(text.contains("pricesvc_database_client_errors_total{class=\"\(sqlStateClass)\"} 0\n"), "\(sqlStateClass)")
        }
        #expect(text.contains("pricesvc_db_pool_reconnects_total 0\n"))
        #expect(!text.contains("pricesvc_db_replica_pool"), "no replica, no replica series")
        #expect(!text.contains("pricesvc_maintenance_last_success_timestamp_seconds"), "not read yet: left out, not 'never'")
    }

    @Test("the replica pool and the maintenance runs have their series once known")
    func replicaPoolAndMaintenance() {
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(),
                                     pool: { PoolStats(size: 8, inUse: 1, idle: 7, waiting: 0, reconnects: 2) },
                                     replicaPool: { PoolStats(size: 4, inUse: 3, idle: 1, waiting: 5, reconnects: 6) })
        metrics.recordMaintenanceRuns(["prune": 1_764_604_800])
        let text = metrics.render()
        #expect(text.contains("pricesvc_db_pool_reconnects_total 2\n"))
        #expect(text.contains("pricesvc_db_replica_pool_connections{state=\"in_use\"} 3\n"))
        #expect(text.contains("pricesvc_db_replica_pool_size 4\n"))
        #expect(text.contains("pricesvc_db_replica_pool_waiting 5\n"))
        #expect(text.contains("pricesvc_db_replica_pool_reconnects_total 6\n"))
        #expect(text.contains("pricesvc_maintenance_last_success_timestamp_seconds{task=\"prune\"} 1764604800\n"))
        #expect(text.contains("pricesvc_maintenance_last_success_timestamp_seconds{task=\"import-rates\"} 0\n"))
        metrics.recordMaintenanceRuns(nil)
        #expect(!metrics.render().contains("pricesvc_maintenance_last_success_timestamp_seconds"))
    }

    @Test("an error log line holds the route, status and SQLSTATE, one line, bounded, and nothing else")
    func errorLogLine() throws {
        let line = ErrorLog.line(time: Date(timeIntervalSince1970: 0), route: "/rest/v1/price_reports", requestID: "abc",
                                 status: 503, code: "57014", kind: "57",
                                 message: "canceling statement\ndue to statement timeout" + String(repeating: "x", count: 1000))
        #expect(line.hasSuffix("}\n") && line.dropLast().contains("\n") == false)
        #expect(line.hasPrefix(#"{"time":"1970-01-01T00:00:00.000Z","level":"error","request_id":"abc","route":"/rest/v1/price_reports","status":503,"sqlstate":"57014","kind":"57","message":"canceling statement due to statement timeout"#))
        #expect(line.count < 600)
    }
}
