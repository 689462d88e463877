import AnonAuth
@_spi(Fuzzing) import PriceAPI
import PriceDB
import PriceHTTP
import PriceMigrations
import Synchronization

/// The service as the server shell drives it (`PriceApplication.respond`), with a database that
/// answers every plan with fixed rows of the right shape, so that the read options, rendering and
/// answers run on input from the fuzzer. Nothing here reaches PostgreSQL: what the SQL does with
/// what it is sent is the e2e and pgTAP suites' to test.
public final class ServiceHarness: Sendable {
    public static let shared = ServiceHarness()

    public static let secret = Array("fuzzing-secret-of-at-least-32-bytes-long".utf8)
    /// Fixed, so tokens minted once stay valid and the rate limiter never refills differently.
    public static let now = 1_800_000_000

    /// No migrations to compare with: `/readyz` answers from the database's list alone. The layout names
    /// files no directory has.
    static let noMigrations = Readiness(shipped: [], layout: MigrationLayout(
        firstFileName: "first.sql", finalFileName: "final.sql", bookkeepingSchema: "harness_meta",
        migratorSetting: "harness.migrator_schema_version", advisoryLockKey: 1))

    public let application: PriceApplication
    public let issuer = TokenIssuer(secret: ServiceHarness.secret)
    public let anonKey: String
    /// A valid user's access token.
    public let userToken: String
    let database = CannedDatabase()

    public init() {
        var settings = ServiceSettings()
        // One address sends every input: the limiter must never be what answers.
        settings.requestsPerMinutePerIP = 1 << 40
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: {
            PoolStats(size: 8, inUse: 1, idle: 7, waiting: 0)
        })
        let fixedNow = Double(Self.now)
        let service = PriceService(settings: settings, issuer: issuer,
                                   verifier: TokenVerifier(secrets: [Self.secret]),
                                   clientKey: ClientKey(secret: Self.secret),
                                   refreshChain: RefreshTokenChain(secret: Self.secret),
                                   readiness: Self.noMigrations, metrics: metrics, clock: { fixedNow })
        application = PriceApplication(service: service, database: database)
        anonKey = issuer.anonKey()
        userToken = issuer.accessToken(userID: "6f1c2b8e-2d4a-4f3e-9a41-0c5b2a7d9e10",
                                       sessionID: "0b7e3a52-61d4-4c8b-8f25-3e9a1d6c4b77", now: Self.now).token
    }

    public struct Handled: Sendable {
        public var response: HTTPResponse
        /// Answered on the event loop, without the database.
        public var decidedNow: Bool
        /// The statements the plan sent, when there was one.
        public var sent: [Query]?
    }

    /// The request as the corpus wrote it, with `$ANON` and `$USER` in header values standing for the
    /// anon key and a user's token, and the anon key as `apikey` unless the request names one.
    public func request(_ text: RequestText) -> HTTPRequest {
        var request = text.request()
        for (name, value) in request.headers.fields where value.contains("$") {
            request.headers[name] = value.replacingOccurrences(of: "$ANON", with: anonKey)
                .replacingOccurrences(of: "$USER", with: userToken)
        }
        if request.headers["apikey"] == nil { request.headers["apikey"] = anonKey }
        return request
    }

    /// What the shell does: the decision, then (as a worker would) the plan against the canned rows.
    public func handle(_ request: HTTPRequest) -> Handled {
        switch application.respond(to: request).work {
        case .now(let response):
            return Handled(response: response, decidedNow: true, sent: nil)
        case .onWorker(let run, _):
            database.last.withLock { $0 = nil }
            let response = run()
            return Handled(response: response, decidedNow: false, sent: database.last.withLock { $0 })
        }
    }
}

/// Answers each statement by its name: the median and quote functions with `CannedRows`, anything
/// else with no rows.
final class CannedDatabase: QueryRunner {
    let last = Mutex<[Query]?>(nil)

    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        last.withLock { $0 = queries }
        return queries.map { query in
            guard case .prepared(let statement, _) = query else { return QueryResult() }
            if statement.name.hasPrefix("pricesvc_quotes_rows") { return QueryResult(rows: CannedRows.quotes) }
            if statement.name.hasPrefix("pricesvc_median") { return QueryResult(rows: CannedRows.medians) }
            return QueryResult()
        }
    }
}

/// Rows as PostgreSQL's text output gives them, with NULLs, quotes, commas and non-ASCII in them.
public enum CannedRows {
    /// location_id, rate_kind, currency, median_cents, reporters, reports, last_reported_at
    public static let medians: [[String?]] = [
        ["loc-a", "hourly", "EUR", "250", "3", "4", "2026-11-29 22:00:00+00"],
        ["loc-b", "daily", "EUR", "1200", "5", "9", "2026-11-28 08:15:30.5+00"],
        ["loc-c", "hourly", "USD", "0", "3", "3", nil],
        ["loc, \"d\"", "monthly", "EUR", "-1", "4", "4", "2026-01-01 00:00:00+00"],
        ["é\\x", "hourly", nil, "2147483647", "3", "3", "1970-01-01 00:00:00+00"],
    ]
    /// location_id, rate_kind, currency, median_cents, reporters, published_cents, published_allowed,
    /// published_reason, published_source, published_updated_at
    public static let quotes: [[String?]] = [
        ["loc-a", "hourly", "EUR", "250", "3", "300", "t", nil, "city", "2026-11-29 22:00:00+00"],
        ["loc-b", "hourly", "EUR", nil, nil, "9007199254740991", "t", nil, "city", "2026-11-29 22:00:00+00"],
        ["loc-c", "hourly", "EUR", "400", "3", nil, "f", "no_parking", "city", "2026-11-29 22:00:00+00"],
        ["loc-d", "hourly", "EUR", nil, nil, nil, nil, "max_stay", nil, nil],
    ]
}
