import AnonAuth
import Foundation
import PriceDB
import PriceHTTPMessage
import PriceJSON
import PriceMigrations
import PriceSQL
import Synchronization

/// The service core: what to do with a request, decided once where it arrives. Route, per-IP
/// limit, apikey, caller identity, body parsing and validation all happen in `decide`; what is left
/// for PostgreSQL comes back as a `DatabasePlan`. No sockets and no database here, so every path is
/// tested with a plain `HTTPRequest` (see `PriceApplication` for who runs the plans).
public final class PriceService: Sendable {
    /// Which web origins may call the API from a browser, and the `Retry-After` of a 503 (database
    /// unreachable, no worker in time, expensive calls busy).
    let cors: CORSPolicy, unavailableRetryAfter: Int
    /// How long a request whose database is unavailable waits for it to come back (`PRICESVC_DB_HOLD_MS`).
    let hold: DatabaseHold
    /// The apikey check and the caller's token, verified in-process.
    let callers: CallerIdentification
    /// The signing and verification keys, and the publishable API keys, as the database last said.
    let keys: ServiceKeys
    /// The handlers, each a value holding only what it needs; built once, here.
    let reports: ReportHandler, medians: MedianHandler, quotes: QuoteHandler, places: PlacesHandler, auth: AuthHandler
    /// Whether the sign-up challenge route is on (the OpenAPI document lists it then).
    let offersSignUpChallenge: Bool
    let rateLimiter: RateLimiter
    /// Database work in flight per client address, and expensive calls in all.
    let databaseShares: DatabaseShares
    let metrics: ServiceMetrics
    let readiness: Readiness
    /// The public /readyz's last answer (at most one database check a second).
    let readinessCache = Mutex(ReadinessCache())
    let clock: @Sendable () -> Double

    /// Fixed keys: an issuer and a verifier that never change (tests, tools).
    public convenience init(settings: ServiceSettings, issuer: TokenIssuer, verifier: TokenVerifier,
                            clientKey: ClientKey, refreshChain: RefreshTokenChain, readiness: Readiness,
                            metrics: ServiceMetrics, signUpChallenges: SignUpChallenges? = nil,
                            clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.init(settings: settings, keys: ServiceKeys(issuer: issuer, verifier: verifier), clientKey: clientKey,
                  refreshChain: refreshChain, readiness: readiness, metrics: metrics,
                  signUpChallenges: signUpChallenges, clock: clock)
    }

    /// - Parameter keys: what the service signs and verifies with, and the API keys it accepts;
    ///   `serve` has a `KeyRefresher` keep them as the database says.
    public init(settings: ServiceSettings, keys: ServiceKeys,
                clientKey: ClientKey, refreshChain: RefreshTokenChain, readiness: Readiness,
                metrics: ServiceMetrics, signUpChallenges: SignUpChallenges? = nil,
                signUpAttestation: SignUpAttestation? = nil,
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.cors = settings.cors
        self.unavailableRetryAfter = settings.unavailableRetryAfter
        self.hold = settings.databaseHold
        self.keys = keys
        self.callers = CallerIdentification(keys: keys, clock: clock)
        self.reports = ReportHandler(unavailableRetryAfter: settings.unavailableRetryAfter)
        let calls = FunctionCallPlanner(unavailableRetryAfter: settings.unavailableRetryAfter,
                                        maxResponseBytes: settings.maxResponseBytes,
                                        expensiveStatementTimeoutMilliseconds: settings.expensiveStatementTimeoutMilliseconds)
        self.medians = MedianHandler(calls: calls)
        self.quotes = QuoteHandler(calls: calls)
        self.places = PlacesHandler(calls: calls)
        self.auth = AuthHandler(settings: AuthHandler.Settings(settings), keys: keys, clientKey: clientKey,
                                refreshChain: refreshChain, signUpChallenges: signUpChallenges,
                                attestation: signUpAttestation, metrics: metrics, clock: clock)
        self.offersSignUpChallenge = signUpChallenges != nil
        self.rateLimiter = RateLimiter(perMinute: settings.requestsPerMinutePerIP)
        self.databaseShares = DatabaseShares(perClient: settings.databaseRequestsPerIP,
                                             expensiveTotal: settings.expensiveRequestsInFlight)
        self.metrics = metrics
        self.readiness = readiness
        self.clock = clock
    }

    /// Routes the request and decides it: an answer, or the plan of one database round trip.
    func decide(_ request: HTTPRequest) -> Decision {
        let route = Router.route(method: request.method, path: request.path)
        return Decision(route: route, outcome: outcome(route, request))
    }

    /// The answer for a body over the limit, which the server shell decides before the body is read.
    func payloadTooLarge(_ request: HTTPRequest) -> Decision {
        let route = Router.route(method: request.method, path: request.path)
        return Decision(route: route, outcome: .answer(GatewayError.payloadTooLarge.apiError(route.errorShape).response))
    }

    /// The 400 for a request whose framing the server refuses (it closes the connection after it).
    func malformedRequest(_ request: HTTPRequest, reason: String) -> Decision {
        let route = Router.route(method: request.method, path: request.path)
        return Decision(route: route, outcome: .answer(GatewayError.malformedRequest(reason: reason).apiError(route.errorShape).response))
    }

    /// Counts a plan in against its client's share of the database (decided on the event loop, so a
    /// refusal never takes a worker): the ticket to release when its work ends, or the 429/503 answer.
    func admit(_ request: HTTPRequest, _ route: Route, _ plan: DatabasePlan) -> Result<DatabaseShares.Ticket, APIError> {
        switch databaseShares.admit(client: request.clientIP, cost: plan.cost) {
        case .success(let ticket):
            return .success(ticket)
        case .failure(.clientBusy(let limit)):
            metrics.recordRateLimited()
            return .failure(GatewayError.requestsInProgress(limit: limit).apiError(route.errorShape))
        case .failure(.databaseUnavailable):
            metrics.recordShareUnavailable()
            return .failure(GatewayError.waitingForDatabase(retryAfter: unavailableRetryAfter).apiError(route.errorShape))
        case .failure(.expensiveBusy(let limit)):
            return .failure(APIError(.expensiveCallsBusy(limit: limit, retryAfter: unavailableRetryAfter)))
        }
    }

    /// The answer for a request whose plan waited too long for a database worker.
    func overloaded(_ route: Route) -> HTTPResponse {
        GatewayError.workerTimeout(retryAfter: unavailableRetryAfter).apiError(route.errorShape).response
    }

    /// The liveness answer, made once (probes ask often).
    private static let healthy = HTTPResponse.json(200, "{\"status\":\"ok\"}")

    private func outcome(_ route: Route, _ request: HTTPRequest) -> Decision.Outcome {
        switch route {
        case .health:
            return .answer(Self.healthy)
        case .ready:
            return cachedReadiness()
        case .metrics:
            // Served on the admin listener only (OperationsApplication): per-route counters show who
            // does what, live.
            return .answer(APIError(.notFound).response)
        case .notFound:
            return .answer(APIError(.notFound).response)
        case .methodNotAllowed(let allow):
            return .answer(APIError(.methodNotAllowed(request.method)).response
                .adding([("Allow", allow.joined(separator: ", "))]))
        case .options(let allow):
            // A preflight carries no apikey and never needs the database.
            if let origin = request.header("origin"), request.header("access-control-request-method") != nil {
                return .answer(cors.preflight(origin: origin, allow: allow))
            }
            return .answer(.empty(204, headers: [("Allow", allow.joined(separator: ", "))]))
        default:
            break
        }

        if case .limited(let retryAfter) = rateLimiter.take(key: request.clientIP, now: clock()) {
            metrics.recordRateLimited()
            return .answer(GatewayError.rateLimited(retryAfter: retryAfter).apiError(route.errorShape).response)
        }
        if let failure = callers.checkAPIKey(request) {
            return .answer(failure.apiError(route.errorShape).response)
        }
        let caller: Caller
        switch callers.identify(request) {
        case .success(let identified): caller = identified
        case .failure(let error):
            return .answer(error.apiError(route.errorShape).response)
        }

        switch route {
        case .openAPI:
            return .answer(.json(200, OpenAPIDocument.json(signUpChallenge: offersSignUpChallenge),
                                 contentType: "application/openapi+json; charset=utf-8"))
        case .submitReports:
            return reports.submit(request, caller: caller)
        case .reportsDenied:
            return .answer(APIError(.tableNotReadable("price_reports", anonymous: caller.role == .anon,
                                                      hint: "Reports can only be inserted; read medians through /rest/v1/rpc/price_medians")).response)
        case .rpc(QuoteQuery.functionName):
            return quotes.call(request, caller: caller)
        case .rpc(PlacesQuery.functionName):
            return places.call(request, caller: caller)
        case .rpc(PlaceMatchQuery.functionName):
            return places.match(request, caller: caller)
        case .rpc(let name):
            return medians.call(name, request, caller: caller)
        case .unknownTable(let name):
            return .answer(APIError(.unknownTable(name, hint: "The only table is price_reports (insert only)")).response)
        case .signUp:
            return auth.signUp(request)
        case .signUpChallenge:
            return .answer(auth.signUpChallenge(type: request.queryValue("type")))
        case .token:
            return auth.refresh(request)
        case .logout:
            return auth.logout(request, caller: caller)
        case .user:
            return auth.user(caller: caller)
        case .health, .ready, .metrics, .notFound, .methodNotAllowed, .options:
            preconditionFailure("answered above")
        }
    }

    // MARK: readiness

    /// The public /readyz: the last answer, unless a second has passed since the last check began.
    private func cachedReadiness() -> Decision.Outcome {
        switch readinessCache.withLock({ $0.lookup(now: clock()) }) {
        case .answer(let last):
            return .answer(last ?? .json(503, "{\"status\":\"not ready\",\"reason\":\"first check in progress\"}",
                                         headers: [("Retry-After", "1")]))
        case .check:
            let plan = readinessPlan()
            return .database(DatabasePlan(plan.queries, readOnly: true, repetition: .never) { [self] outcome in
                let response = plan.answer(outcome)
                readinessCache.withLock { $0.store(response) }
                return response
            })
        }
    }

    /// One database check: reachable, and every shipped migration applied.
    func readinessPlan() -> DatabasePlan {
        let readiness = self.readiness
        let keys = self.keys
        let retryAfter = unavailableRetryAfter
        metrics.recordReadinessCheck()
        // A probe wants to know now, not after a hold: it is never held.
        return DatabasePlan([Statements.appliedMigrations.query()], readOnly: true, repetition: .never) { outcome in
            guard case .success(let results) = outcome else {
                return .json(503, "{\"status\":\"not ready\",\"reason\":\"database unreachable\"}",
                             headers: [("Retry-After", "\(retryAfter)")])
            }
            let problem: String?
            switch Statements.appliedMigrations.rows(results.last ?? QueryResult()) {
            case .success(let rows):
                problem = readiness.problem(applied: rows.map { AppliedMigration(name: $0.0, checksum: $0.1) })
            case .failure(let error):
                problem = "unexpected migration list: \(error)"
            }
            // The instance's secret must be one of the database's keys, or PostgreSQL refuses its tokens.
            guard let reason = problem ?? keys.snapshot.problem else {
                return .json(200, "{\"status\":\"ready\"}")
            }
            var writer = JSONWriter()
            writer.beginObject()
            writer.key("status"); writer.string("not ready")
            writer.key("reason"); writer.string(reason)
            writer.endObject()
            return .json(503, writer.text, headers: [("Retry-After", "5")])
        }
    }
}
