import PriceDB
import PriceHTTPMessage
import PriceMigrations

/// `/readyz` is ready when the database's schema is one this build may serve: every migration it ships
/// applied with the same checksum, or a newer schema version that records it still accepts this build's
/// version (an expand step of the next release, migrated while this instance runs; docs/upgrading.md).
/// A versioned file applied in a text `superseded.txt` says the shipped one replaces counts as applied.
public struct Readiness: Sendable {
    let shipped: [MigrationFile]
    let layout: MigrationLayout
    let version: SchemaVersion
    let superseded: [SupersededChecksum]

    public init(shipped: [MigrationFile], layout: MigrationLayout, version: SchemaVersion = .undeclared,
                superseded: [SupersededChecksum] = []) {
        self.shipped = shipped
        self.layout = layout
        self.version = version
        self.superseded = superseded
    }

    /// nil when ready; otherwise a short reason for operators.
    func problem(applied: [AppliedMigration]) -> String? {
        MigrationPlanner(files: shipped, applied: applied, layout: layout, version: version, superseded: superseded)
            .status().problem
    }
}

/// The public `/readyz`: anyone may call it, with no key and no limit, so it may start at most one
/// database check per `interval` seconds however often it is called; every other call gets the last
/// answer. The admin listener's `/readyz` checks on every call. Pure: the caller brings the clock.
struct ReadinessCache: Sendable {
    enum Lookup: Sendable, Equatable {
        /// Start a check now (and `store` its answer).
        case check
        /// Answer with the last check's answer; nil while the first check is still running.
        case answer(HTTPResponse?)
    }

    let interval: Double
    private var startedAt: Double?
    private var lastAnswer: HTTPResponse?

    init(interval: Double = 1) {
        self.interval = interval
    }

    mutating func lookup(now: Double) -> Lookup {
        // A clock that went backwards starts a check rather than trusting the old time.
        if let startedAt, now >= startedAt, now - startedAt < interval { return .answer(lastAnswer) }
        startedAt = now
        return .check
    }

    mutating func store(_ answer: HTTPResponse) {
        lastAnswer = answer
    }
}
