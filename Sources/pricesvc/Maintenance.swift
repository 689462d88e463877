import AnonAuth
import Foundation
import PriceDB
import PriceJSON
import PriceMigrations
import PriceSQL

/// Commands that run as the database's owning role: migrate, prune and forget-user.
extension Commands {
    static func ownerConninfo(_ configuration: Configuration) -> String {
        let dedicated = configuration.string("migration-database-url")
        return dedicated.isEmpty ? configuration.string("database-url") : dedicated
    }

    /// Applies the migrations, then, on a database without signing keys, installs the JWT secret as the
    /// current key. A database with keys keeps them: rotation is `pricesvc keys`, and a secret that is
    /// not one of the keys is an error (exit 1). Safe to run any number of times. `--status` and
    /// `--dry-run` change nothing.
    static func migrate(_ configuration: Configuration, mode: MigrateMode = .apply) throws -> Int32 {
        let conninfo = ownerConninfo(configuration)
        var lockRetry = LockRetryPolicy()
        for (key, minimum) in [("migrate-lock-timeout", 1), ("migrate-wait-limit", 0)] {
            guard let seconds = Configuration.duration(configuration.string(key)), seconds >= minimum,
                  seconds <= longestPruneAgeSeconds else {
                throw configuration.invalid(key, "must look like 2s, 5m or 1h (at least \(minimum)s)")
            }
            if key == "migrate-lock-timeout" { lockRetry.lockTimeout = .seconds(seconds) } else { lockRetry.waitLimit = .seconds(seconds) }
        }
        let runner = MigrationRunner(conninfo: conninfo, directory: try MigrationsLocation.resolve(configuration).path,
                                     layout: .pricesvc, lockRetry: lockRetry, log: { note("migrate: " + $0) })
        switch mode {
        case .status:
            print(MigrationStatusDocument(status: try runner.status(), plan: nil).json)
            return 0
        case .dryRun:
            let (status, plan) = try runner.dryRun()
            print(MigrationStatusDocument(status: status, plan: plan).json)
            if case .failure = plan { return 1 }
            return 0
        case .apply:
            break
        }
        let secrets = try loadSecrets(configuration)
        let report = try runner.run()
        print("migrations: \(report.summary)")
        let owner = OwnerTasks(conninfo: conninfo)
        let cleared = try owner.resetRoleDefaults(role: "authenticator")
        if !cleared.isEmpty {
            print("role authenticator: cleared planted settings: \(cleared.joined(separator: ", "))")
        }
        let keyID = SigningKeyRing.keyID(secrets.current)
        let placed: String?
        do throws(DatabaseError) {
            placed = try owner.keyTask(OwnerStatements.installFirstSigningKey, Bytea(secrets.current), sendsKey: true).first
        } catch {
            // A migrations folder older than this build (before 0017): its schema has no key functions of
            // this build's, and nothing here may change its keys.
            guard error.sqlState == "42883" else { throw error }
            note("signing keys: not installed: these migrations predate pricesvc keys (auth.install_first_signing_key)")
            return 0
        }
        switch placed {
        case "installed":
            print("signing keys: installed key \(keyID) as the current key")
        case "current", "next", "previous":
            print("signing keys: this secret is the \(placed ?? "") key \(keyID); unchanged (rotation: pricesvc keys)")
        default:
            fail("signing keys: this JWT secret (key \(keyID)) is not one of the database's signing keys; "
                 + "give migrate a secret of the set (pricesvc keys list), or rotate with pricesvc keys add, promote and retire")
            return 1
        }
        if secrets.previous != nil {
            note("signing keys: PRICESVC_JWT_PREVIOUS_SECRET is not installed by migrate; rotate with pricesvc keys add, promote and retire")
        }
        return 0
    }

    /// The longest `--older-than`: 100 years, far past any session, and well inside PostgreSQL's interval.
    static let longestPruneAgeSeconds = 36_500 * 86_400

    /// Deletes expired sessions and refresh tokens, and anonymous users left with no session; then the
    /// price reports past retention (the report window plus a grace, settings.sql: fixed, not an
    /// argument), the median store following; then folds the median groups inserts stopped folding, so
    /// reads of them stay cheap. `--older-than` is for the sessions only (the fold age is
    /// ``OwnerTasks/medianFoldAgeSeconds``). A run that succeeds is recorded for /metrics.
    ///
    /// - Important: The shortest `--older-than` is the database's to say (`auth.prune`: the reporter
    ///   maturity plus the median fold margin, so no identity young enough to matter to a median is
    ///   removed). Its refusal is a usage error here, exit 2, before anything is deleted.
    static func prune(_ configuration: Configuration) throws -> Int32 {
        let text = configuration.string("older-than").isEmpty ? "30d" : configuration.string("older-than")
        guard let seconds = Configuration.duration(text) else {
            throw ConfigurationError(description: "--older-than must look like 30d, 36h, 1500m or 90000s, got '\(text)'")
        }
        guard seconds <= longestPruneAgeSeconds else {
            throw ConfigurationError(description: "--older-than must be at most \(longestPruneAgeSeconds / 86_400)d, got '\(text)'")
        }
        let owner = OwnerTasks(conninfo: ownerConninfo(configuration))
        let counts: (sessions: Int, refreshTokens: Int, users: Int)
        do throws(DatabaseError) {
            counts = try owner.prune(olderThanSeconds: seconds)
        } catch {
            guard error.sqlState == "22023" else { throw error }
            throw ConfigurationError(description: "--older-than \(text) refused: \(error.message)")
        }
        print("pruned: \(counts.sessions) sessions, \(counts.refreshTokens) refresh tokens, \(counts.users) users")
        let reports = try owner.pruneReports()
        print("price reports past retention deleted: \(reports.reports) (in \(reports.groups) median groups)")
        let folded = try owner.foldStaleMedianGroups()
        print("median groups folded: \(folded) (waiting more than \(OwnerTasks.medianFoldAgeSeconds / 60) minutes)")
        try owner.recordMaintenanceRun("prune")
        return 0
    }

    /// `pricesvc forget-user ID`: erases one person: identity, sessions, refresh tokens and every report
    /// (medians follow). The one line it prints names the id and the counts, never a report or location,
    /// so the log of an erasure holds nothing of what was erased.
    static func forgetUser(_ configuration: Configuration) throws -> Int32 {
        guard configuration.positional.count == 1, let id = configuration.positional.first else {
            throw ConfigurationError(description: "forget-user needs exactly one user id (usage: pricesvc forget-user ID)")
        }
        guard UUIDText.isValid(id) else {
            throw ConfigurationError(description: "forget-user: '\(id.prefix(64))' is not a user id (a UUID such as 0b7c…-…)")
        }
        let erased = try OwnerTasks(conninfo: ownerConninfo(configuration)).forgetUser(id: id.lowercased())
        if erased.users + erased.sessions + erased.refreshTokens + erased.reports == 0 {
            print("forget-user \(id.lowercased()): nothing stored under this id")
            return 0
        }
        print("forget-user \(id.lowercased()): erased \(erased.users) identity, \(erased.sessions) sessions, "
              + "\(erased.refreshTokens) refresh tokens, \(erased.reports) price reports (medians updated at \(erased.locations) locations)")
        return 0
    }
}
