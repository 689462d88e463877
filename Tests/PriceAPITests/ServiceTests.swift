import AnonAuth
import Foundation
import PriceDB
import PriceJSON
import PriceMigrations
import Synchronization
import Testing
import PriceHTTPMessage
@testable import PriceAPI

/// Records what the service would send to PostgreSQL and answers with canned results, so the
/// request pipeline (limits, keys, identity, statements) is tested without a database. The
/// database side of the same paths is covered by integration/e2e against a real PostgreSQL.
final class RecordingDatabase: QueryRunner {
    let sent = Mutex<[[Query]]>([])
    let answer: @Sendable ([Query]) throws(DatabaseError) -> [QueryResult]

    init(answer: @escaping @Sendable ([Query]) throws(DatabaseError) -> [QueryResult] = { queries in
        queries.map { _ in QueryResult() }
    }) {
        self.answer = answer
    }

    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
        sent.withLock { $0.append(queries) }
        return try answer(queries)
    }

    var batches: [[Query]] { sent.withLock { $0 } }
}

struct ServiceFixture {
    static let secret = Array("an-example-secret-of-at-least-32-bytes!!".utf8)
    /// No migrations to compare with: `/readyz` answers from the database's list alone. The layout names
    /// files no directory has.
    static let noMigrations = Readiness(shipped: [], layout: MigrationLayout(
        firstFileName: "first.sql", finalFileName: "final.sql", bookkeepingSchema: "test_meta",
        migratorSetting: "test.migrator_schema_version", advisoryLockKey: 1))
    let issuer = TokenIssuer(secret: ServiceFixture.secret)
    let database: RecordingDatabase
    let service: PriceService
    let application: PriceApplication
    let now = 1_800_000_000

    init(settings: ServiceSettings = ServiceSettings(),
         database: RecordingDatabase = RecordingDatabase(), signUpChallenges: SignUpChallenges? = nil) {
        self.database = database
        let fixedNow = Double(now)
        let metrics = ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: {
            PoolStats(size: 8, inUse: 1, idle: 7, waiting: 0)
        })
        service = PriceService(settings: settings, issuer: issuer,
                               verifier: TokenVerifier(secrets: [ServiceFixture.secret]),
                               clientKey: ClientKey(secret: ServiceFixture.secret),
                               refreshChain: RefreshTokenChain(secret: ServiceFixture.secret),
                               readiness: ServiceFixture.noMigrations, metrics: metrics,
                               signUpChallenges: signUpChallenges, clock: { fixedNow })
        application = PriceApplication(service: service, database: database)
    }

    var anonKey: String { issuer.anonKey() }

    func userToken(userID: String = UUID().uuidString.lowercased()) -> String {
        issuer.accessToken(userID: userID, sessionID: UUID().uuidString.lowercased(), now: now).token
    }

    /// What the server shell would do: decide, and run a database plan as a worker would.
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        application.respond(to: request).answer()
    }

    func request(_ method: String, _ path: String, body: String = "", token: String? = nil,
                 apikey: String? = nil, headers: [String: String] = [:]) -> HTTPRequest {
        var all = headers
        all["apikey"] = apikey ?? anonKey
        all["content-type"] = all["content-type"] ?? "application/json"
        if let token { all["authorization"] = "Bearer \(token)" }
        return HTTPRequest(method: method, path: path, headers: all, body: Array(body.utf8))
    }
}

func statementName(_ query: Query) -> String? {
    if case .prepared(let statement, _) = query { return statement.name }
    return nil
}

func parameters(_ query: Query) -> [String?] {
    switch query {
    case .prepared(_, let parameters): return parameters
    case .sql(_, let parameters): return parameters
    }
}

@Suite("The request pipeline, without a database")
struct ServiceTests {
    let report = #"{"location_id":"sfmta:garage-1","rate_kind":"hourly","price_cents":350}"#

    @Test("a signed-in submission is one batch: the submitter identity (token and its verified sub), then the insert")
    func submissionIsOneRoundTrip() throws {
        let fixture = ServiceFixture()
        let sub = UUID().uuidString.lowercased()
        let token = fixture.userToken(userID: sub)
        let response = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report, token: token))
        #expect(response.status == 201)
        #expect(response.body.isEmpty)
        let batches = fixture.database.batches
        #expect(batches.count == 1)
        let batch = try #require(batches.first)
        // No currency sent: the statement leaves the column out, so the table's default applies.
        // The submitter identity does not verify in PostgreSQL (the INSERT's policy does), so it
        // carries the sub verified here as the reporter_id default's hint.
        #expect(batch.map(statementName) == ["pricesvc_submitter_identity", "pricesvc_insert_reports_default_currency"])
        #expect(parameters(batch[0]) == ["authenticated", token, sub])
    }

    @Test("a currency that is sent goes into the insert with the other columns")
    func submissionWithCurrency() throws {
        let fixture = ServiceFixture()
        let body = #"{"location_id":"a","rate_kind":"daily","price_cents":900,"currency":"EUR"}"#
        let response = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: body,
                                                              token: fixture.userToken()))
        #expect(response.status == 201)
        let batch = try #require(fixture.database.batches.first)
        #expect(batch.map(statementName) == ["pricesvc_submitter_identity", "pricesvc_insert_reports"])
        #expect(parameters(batch[1]) == [#"[{"location_id":"a","rate_kind":"daily","price_cents":900,"currency":"EUR"}]"#])
    }

    @Test("without a Bearer token, or with the anon key as Bearer, the request runs as anon")
    func anonIdentity() throws {
        let fixture = ServiceFixture()
        _ = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report))
        _ = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report, token: fixture.anonKey))
        let batches = fixture.database.batches
        #expect(batches.count == 2)
        for batch in batches {
            #expect(parameters(batch[0]) == ["anon", ""])
        }
    }

    @Test("no apikey or a foreign one is 401 before anything reaches the database")
    func apiKeyRequired() {
        let fixture = ServiceFixture()
        var missing = fixture.request("POST", "/rest/v1/price_reports", body: report)
        missing.headers["apikey"] = nil
        #expect(fixture.handle(missing).status == 401)
        let foreign = TokenIssuer(secret: Array(repeating: 7, count: 32)).anonKey()
        #expect(fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report, apikey: foreign)).status == 401)
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("a forged or expired access token is 401, never a database call")
    func badTokens() throws {
        let fixture = ServiceFixture()
        let forged = TokenIssuer(secret: Array(repeating: 9, count: 32))
            .accessToken(userID: UUID().uuidString.lowercased(), sessionID: UUID().uuidString.lowercased(), now: fixture.now).token
        let expired = TokenIssuer(secret: ServiceFixture.secret, accessTokenLifetime: 60)
            .accessToken(userID: UUID().uuidString.lowercased(), sessionID: UUID().uuidString.lowercased(), now: fixture.now - 3600).token
        let forgedResponse = fixture.handle(fixture.request("POST", "/rest/v1/rpc/price_medians",
                                                                    body: #"{"location_ids":[]}"#, token: forged))
        #expect(forgedResponse.status == 401)
        let expiredResponse = fixture.handle(fixture.request("POST", "/rest/v1/rpc/price_medians",
                                                                     body: #"{"location_ids":[]}"#, token: expired))
        #expect(expiredResponse.status == 401)
        #expect(try JSONValue.parse(expiredResponse.body, maxBytes: 4096)["code"] == "PGRST303")
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("the Authorization scheme is Bearer in any case, then one space and the token; anything else is 401 PGRST301")
    func authorizationScheme() throws {
        let fixture = ServiceFixture()
        let token = fixture.userToken()
        for accepted in ["Bearer \(token)", "bearer \(token)", "BEARER \(token)", "BeArEr \(token)"] {
            let response = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report,
                                                          headers: ["authorization": accepted]))
            #expect(response.status == 201, "\(accepted.prefix(8))")
        }
        #expect(fixture.database.batches.count == 4)
        for refused in ["Basic \(token)", "Bearer\(token)", "Bearer", "Bearer ", "Béarer \(token)", "Bearer  \(token)", "\(token)"] {
            let response = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report,
                                                          headers: ["authorization": refused]))
            #expect(response.status == 401, "\(refused.prefix(8))")
        }
        #expect(fixture.database.batches.count == 4)
    }

    @Test("the cap's PT429 becomes 429 with Retry-After from the hint")
    func capBecomes429() throws {
        let database = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "PT429", message: "at most 10 reports per reporter in 60 minutes",
                                detail: "10 reports in the last 60 minutes", hint: "Retry after 1234 seconds")
        }
        let fixture = ServiceFixture(database: database)
        let response = fixture.handle(fixture.request("POST", "/rest/v1/price_reports", body: report,
                                                              token: fixture.userToken()))
        #expect(response.status == 429)
        #expect(response.header("Retry-After") == "1234")
        let body = try JSONValue.parse(response.body, maxBytes: 4096)
        #expect(body["code"] == "PT429")
        #expect(body["hint"] == "Retry after 1234 seconds")
    }

    @Test("a lost database is 503 with Retry-After, and counted in the metrics")
    func unavailableIs503() throws {
        let database = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .connectionLost, sqlState: "08006", message: "server closed the connection")
        }
        let fixture = ServiceFixture(database: database)
        let response = fixture.handle(fixture.request("POST", "/rest/v1/rpc/price_medians",
                                                              body: #"{"location_ids":["a"]}"#, token: fixture.userToken()))
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "1")
        let text = fixture.service.metrics.render()
        #expect(text.contains("pricesvc_database_errors_total{kind=\"unavailable\"} 1"))
        #expect(text.contains("pricesvc_db_pool_connections{state=\"idle\"} 7"))
    }

    @Test("the per-IP limit answers 429 with Retry-After once the bucket is empty")
    func perIPLimit() {
        var settings = ServiceSettings()
        settings.requestsPerMinutePerIP = 3
        let fixture = ServiceFixture(settings: settings)
        let statuses = (0..<4).map { _ in
            fixture.handle(fixture.request("GET", "/rest/v1/price_reports", token: fixture.userToken())).status
        }
        #expect(statuses == [403, 403, 403, 429])
        let limited = fixture.handle(fixture.request("GET", "/rest/v1/price_reports"))
        #expect(limited.header("Retry-After") == "20")
    }

    @Test("reading reports is refused: 403 signed in, 401 anonymous")
    func readingReportsDenied() throws {
        let fixture = ServiceFixture()
        let signedIn = fixture.handle(fixture.request("GET", "/rest/v1/price_reports", token: fixture.userToken()))
        #expect(signedIn.status == 403)
        #expect(try JSONValue.parse(signedIn.body, maxBytes: 4096)["code"] == "42501")
        #expect(fixture.handle(fixture.request("DELETE", "/rest/v1/price_reports")).status == 401)
    }

    @Test("sign-up with an email is refused with 422 in Supabase Auth's error shape")
    func signUpWithEmail() throws {
        let fixture = ServiceFixture()
        let response = fixture.handle(fixture.request("POST", "/auth/v1/signup",
                                                              body: #"{"email":"a@b.c","password":"x"}"#))
        #expect(response.status == 422)
        let body = try JSONValue.parse(response.body, maxBytes: 4096)
        #expect(body["error_code"] == "email_provider_disabled")
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("a 400, 401, 404 or 429 is decided without a database plan, so it never takes a worker")
    func refusalsNeedNoWorker() {
        let fixture = ServiceFixture()
        var missingKey = fixture.request("POST", "/rest/v1/rpc/price_medians", body: #"{"location_ids":[]}"#)
        missingKey.headers["apikey"] = nil
        let forged = TokenIssuer(secret: Array(repeating: 9, count: 32)).anonKey()
        var settings = ServiceSettings()
        settings.requestsPerMinutePerIP = 1
        let limited = ServiceFixture(settings: settings)
        let decisions = [
            fixture.service.decide(fixture.request("POST", "/rest/v1/price_reports", body: "{", token: fixture.userToken())),
            fixture.service.decide(missingKey),
            fixture.service.decide(fixture.request("POST", "/auth/v1/signup", apikey: forged)),
            fixture.service.decide(fixture.request("POST", "/nowhere")),
            limited.service.decide(limited.request("GET", "/rest/v1/")),
            limited.service.decide(limited.request("POST", "/rest/v1/price_reports", body: report)),
        ]
        #expect(decisions.map(status) == [400, 401, 401, 404, 200, 429])
        #expect(decisions.allSatisfy { !$0.needsDatabase })
        #expect(fixture.database.batches.isEmpty && limited.database.batches.isEmpty)
    }

    @Test("a request that passes every check becomes one plan, labelled with its route")
    func planForAValidRequest() throws {
        let fixture = ServiceFixture()
        let reply = fixture.application.respond(to: fixture.request("POST", "/rest/v1/rpc/price_medians",
                                                                    body: #"{"location_ids":["a"]}"#, token: fixture.userToken()))
        #expect(reply.label == "/rest/v1/rpc/price_medians")
        guard case .onWorker(_, let expired) = reply.work else {
            Issue.record("expected work for a database worker")
            return
        }
        #expect(fixture.database.batches.isEmpty, "nothing is sent before a worker runs the plan")
        let busy = expired()
        #expect(busy.status == 503)
        #expect(busy.header("Retry-After") == "1")
        #expect(try JSONValue.parse(busy.body, maxBytes: 4096)["code"] == "PGRST003")
    }
}

func status(_ decision: Decision) -> Int? {
    if case .answer(let response) = decision.outcome { return response.status }
    return nil
}
