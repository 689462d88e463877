import AnonAuth
import Foundation
import PriceDB

/// Commands that run as the database's owning role: migrate and prune.
extension Commands {
    static func ownerConninfo(_ configuration: Configuration) -> String {
        let dedicated = configuration.string("migration-database-url")
        return dedicated.isEmpty ? configuration.string("database-url") : dedicated
    }

    /// Applies the migrations, then installs the signing keys the database verifies tokens with
    /// (current and, during a rotation, previous). Safe to run any number of times.
    static func migrate(_ configuration: Configuration) throws -> Int32 {
        let secrets = try loadSecrets(configuration)
        let conninfo = ownerConninfo(configuration)
        let report = try MigrationRunner(conninfo: conninfo, directory: configuration.string("migrations-dir")).run()
        print("migrations: \(report.summary)")
        let pool = ConnectionPool(PoolConfiguration(conninfo: conninfo, size: 1, applicationName: "pricesvc migrate"))
        defer { pool.close() }
        let previous: String? = secrets.previous.map(ByteaText.hex)
        _ = try pool.run([.sql("select auth.install_signing_keys($1::bytea, $2::bytea)",
                               [ByteaText.hex(secrets.current), previous])])
        print("signing keys: installed (current\(secrets.previous == nil ? "" : " and previous"))")
        return 0
    }

    /// Deletes expired sessions and refresh tokens, and anonymous users left with no session.
    /// Price reports are never touched: they keep their reporter id for the cap and the threshold.
    static func prune(_ configuration: Configuration) throws -> Int32 {
        let text = configuration.string("older-than").isEmpty ? "30d" : configuration.string("older-than")
        guard let seconds = Configuration.duration(text) else {
            throw ConfigurationError(description: "--older-than must look like 30d, 12h, 90m or 45s, got '\(text)'")
        }
        let pool = ConnectionPool(PoolConfiguration(conninfo: ownerConninfo(configuration), size: 1,
                                                    applicationName: "pricesvc prune"))
        defer { pool.close() }
        let result = try pool.run([.sql("select sessions, refresh_tokens, users from auth.prune(make_interval(secs => $1::double precision))",
                                        [String(seconds)])])
        let row = result.last?.rows.first ?? []
        let counts = row.map { $0 ?? "0" }
        guard counts.count == 3 else { return 1 }
        print("pruned: \(counts[0]) sessions, \(counts[1]) refresh tokens, \(counts[2]) users (price reports kept)")
        return 0
    }
}
