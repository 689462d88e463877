import Foundation
import PriceDB

/// A throwaway database on the test cluster, one per test case, dropped when the test ends: what the
/// driver's and the migrator's integration tests share (a test target cannot import another).
///
/// The cluster comes from `PRICESVC_TEST_PGHOST` / `PRICESVC_TEST_PGUSER` (a superuser), which
/// `make test` sets. Without them the integration tests fail rather than silently skip.
public final class ScratchDatabase {
    public struct MissingCluster: Error, CustomStringConvertible {
        public var description: String {
            "PRICESVC_TEST_PGHOST and PRICESVC_TEST_PGUSER are not set: the PriceDB and PriceMigrations integration tests need a PostgreSQL cluster; run via make test"
        }
    }

    public let name: String
    public let host: String
    public let user: String

    public init() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let host = environment["PRICESVC_TEST_PGHOST"], !host.isEmpty,
              let user = environment["PRICESVC_TEST_PGUSER"], !user.isEmpty else { throw MissingCluster() }
        self.host = host
        self.user = user
        name = "pricedb_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(16)
        try Self.session(host: host, user: user, database: "postgres").execute("create database \(name)")
    }

    deinit {
        _ = try? Self.session(host: host, user: user, database: "postgres").execute("drop database if exists \(name) with (force)")
    }

    /// Superuser connection string for this database.
    public var conninfo: String { Self.conninfo(host: host, user: user, database: name) }

    /// Runs `sql` as superuser on this database, outside any pool.
    @discardableResult
    public func admin(_ sql: String, _ parameters: [String?] = []) throws -> QueryResult {
        try Self.session(host: host, user: user, database: name).execute(sql, parameters)
    }

    /// Ends every server process of this database whose `application_name` matches, as a server
    /// restart or an administrator would, and waits until they are gone.
    public func terminateBackends(applicationName: String) throws {
        let session = try Self.session(host: host, user: user, database: "postgres")
        try session.execute("""
            select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and application_name = $2
            """, [name, applicationName])
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            let left = try session.execute("select count(*) from pg_stat_activity where datname = $1 and application_name = $2",
                                           [name, applicationName]).singleValue
            if left == "0" { return }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw ScratchDatabaseError(message: "backends of \(applicationName) still running after 5 s")
    }

    public func pool(size: Int = 2, batchTimeout: Duration = .seconds(10), statements: [PreparedStatement] = [],
                     applicationName: String = "pricedb-test-\(UUID().uuidString.prefix(8))") -> ConnectionPool {
        ConnectionPool(PoolConfiguration(conninfo: conninfo, size: size, checkoutTimeout: .seconds(5),
                                         connectTimeout: .seconds(5), batchTimeout: batchTimeout,
                                         statements: statements, applicationName: applicationName))
    }

    public static func conninfo(host: String, user: String, database: String) -> String {
        func quoted(_ value: String) -> String {
            "'" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        }
        return "host=\(quoted(host)) user=\(quoted(user)) dbname=\(quoted(database))"
    }

    private static func session(host: String, user: String, database: String) throws -> MigrationSession {
        try MigrationSession(conninfo: conninfo(host: host, user: user, database: database), connectTimeout: .seconds(5))
    }
}

public struct ScratchDatabaseError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
