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
        let owner = OwnerTasks(conninfo: conninfo)
        let cleared = try owner.resetRoleDefaults(role: "authenticator")
        if !cleared.isEmpty {
            print("role authenticator: cleared planted settings: \(cleared.joined(separator: ", "))")
        }
        try owner.installSigningKeys(current: secrets.current, previous: secrets.previous)
        print("signing keys: installed (current\(secrets.previous == nil ? "" : " and previous"))")
        return 0
    }

    /// Deletes expired sessions and refresh tokens, and anonymous users left with no session.
    /// Price reports are never touched: they keep their reporter id for the cap and the threshold.
    /// Then folds the median groups inserts stopped folding, so reads of them stay cheap; `--older-than`
    /// is for the sessions only (the fold age is ``OwnerTasks/medianFoldAgeSeconds``).
    static func prune(_ configuration: Configuration) throws -> Int32 {
        let text = configuration.string("older-than").isEmpty ? "30d" : configuration.string("older-than")
        guard let seconds = Configuration.duration(text) else {
            throw ConfigurationError(description: "--older-than must look like 30d, 12h, 90m or 45s, got '\(text)'")
        }
        let owner = OwnerTasks(conninfo: ownerConninfo(configuration))
        let counts = try owner.prune(olderThanSeconds: seconds)
        print("pruned: \(counts.sessions) sessions, \(counts.refreshTokens) refresh tokens, \(counts.users) users (price reports kept)")
        let folded = try owner.foldStaleMedianGroups()
        print("median groups folded: \(folded) (waiting more than \(OwnerTasks.medianFoldAgeSeconds / 60) minutes)")
        return 0
    }
}
