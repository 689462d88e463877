import AnonAuth
import Foundation
import PriceDB
import PriceJSON

/// Where a request goes after the server shell has read it: per-IP limit, API key, caller
/// identity, then the route's handler. Pure with respect to HTTP: no sockets here, so every
/// path is reachable from tests with a plain `HTTPRequest`.
public final class PriceService: Sendable {
    let settings: ServiceSettings
    let database: any QueryRunner
    let issuer: TokenIssuer
    /// The current anon key, so the common case of the `apikey` check is one constant-time compare
    /// instead of an HMAC; any other key (e.g. signed with the previous secret) is verified in full.
    let anonKey: [UInt8]
    let verifier: TokenVerifier
    let clientKey: ClientKey
    let refreshChain: RefreshTokenChain
    /// `nil` unless the deployment requires a proof-of-work challenge for sign-up.
    let signUpChallenges: SignUpChallenges?
    let rateLimiter: RateLimiter
    let clientAddress: ClientAddress
    public let metrics: Metrics
    let log: AccessLog
    let readiness: Readiness
    let clock: @Sendable () -> Double

    public init(settings: ServiceSettings, database: any QueryRunner, issuer: TokenIssuer, verifier: TokenVerifier,
                clientKey: ClientKey, refreshChain: RefreshTokenChain, readiness: Readiness,
                signUpChallenges: SignUpChallenges? = nil, metrics: Metrics = Metrics(),
                clock: @escaping @Sendable () -> Double = { Date().timeIntervalSince1970 }) {
        self.settings = settings
        self.database = database
        self.issuer = issuer
        self.anonKey = Array(issuer.anonKey().utf8)
        self.verifier = verifier
        self.clientKey = clientKey
        self.refreshChain = refreshChain
        self.signUpChallenges = signUpChallenges
        self.rateLimiter = RateLimiter(perMinute: settings.requestsPerMinutePerIP)
        self.clientAddress = ClientAddress(trustedProxies: settings.trustedProxies, ipv6Prefix: settings.ipv6Prefix)
        self.metrics = metrics
        self.log = AccessLog(enabled: settings.accessLog)
        self.readiness = readiness
        self.clock = clock
    }

    /// The address limits are keyed by, given the socket peer and the request's headers: an IPv4
    /// address, or an IPv6 client's network at the configured prefix (see `ClientNetwork`).
    public func clientIP(peer: String, forwardedFor: String?) -> String {
        clientAddress.resolve(peer: peer, forwardedFor: forwardedFor)
    }

    public func route(_ request: HTTPRequest) -> Route {
        Router.route(method: request.method, path: request.path)
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        handle(request, route: route(request))
    }

    /// - Important: `route` must be `route(request)`; the server shell passes the one it computed
    ///   at the headers so a request is routed once.
    public func handle(_ request: HTTPRequest, route: Route) -> HTTPResponse {
        let started = DispatchTime.now().uptimeNanoseconds
        var response = dispatch(route, request)
        response.headers.append(("X-Request-Id", request.requestID))
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        metrics.record(route: route.label, status: response.status, seconds: seconds)
        log.write(.init(time: Date(), requestID: request.requestID, method: request.method,
                        route: route.label, status: response.status, seconds: seconds))
        if request.method == "HEAD" { response.body = [] }
        return response
    }

    /// The answer for a body over the limit, which the server shell decides before the body is read.
    public func payloadTooLarge(_ request: HTTPRequest) -> HTTPResponse {
        answerUnhandled(request) { route in
            route.isAuthRoute
                ? APIError.auth(413, "request_too_large", "Request body is larger than the limit")
                : APIError.payloadTooLarge
        }
    }

    /// The answer for a request that waited too long for a database worker.
    public func overloaded(_ request: HTTPRequest) -> HTTPResponse {
        answerUnhandled(request) { route in
            route.isAuthRoute
                ? APIError.auth(503, "service_unavailable", "Server busy, retry shortly",
                                retryAfter: settings.unavailableRetryAfter)
                : APIError(status: 503, code: "PGRST003", message: "Server busy: timed out waiting for a database worker",
                           retryAfter: settings.unavailableRetryAfter)
        }
    }

    private func answerUnhandled(_ request: HTTPRequest, _ error: (Route) -> APIError) -> HTTPResponse {
        let route = Router.route(method: request.method, path: request.path)
        var response = error(route).response
        response.headers.append(("X-Request-Id", request.requestID))
        metrics.record(route: route.label, status: response.status, seconds: 0)
        log.write(.init(time: Date(), requestID: request.requestID, method: request.method,
                        route: route.label, status: response.status, seconds: 0))
        return response
    }

    private func dispatch(_ route: Route, _ request: HTTPRequest) -> HTTPResponse {
        switch route {
        case .health:
            return .json(200, "{\"status\":\"ok\"}")
        case .ready:
            return readinessResponse()
        case .metrics:
            let stats = database.poolGauges
            return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain; version=0.0.4")],
                                body: Array(metrics.render(pool: stats).utf8))
        case .notFound:
            return APIError.notFound.response
        case .methodNotAllowed:
            return APIError.methodNotAllowed(request.method).response
        default:
            break
        }

        if case .limited(let retryAfter) = rateLimiter.take(key: request.clientIP, now: clock()) {
            metrics.recordRateLimited()
            return APIError.rateLimited(retryAfter: retryAfter, shape: route.isAuthRoute ? .auth : .postgrest).response
        }
        if let failure = checkAPIKey(request, isAuthRoute: route.isAuthRoute) {
            return failure.response
        }
        let caller: Caller
        switch identify(request) {
        case .success(let identified): caller = identified
        case .failure(let error):
            return (route.isAuthRoute ? APIError.auth(401, "bad_jwt", error.message) : error).response
        }

        switch route {
        case .openAPI:
            return .json(200, OpenAPIDocument.json, headers: [("Content-Type", "application/openapi+json; charset=utf-8")])
        case .submitReports:
            return submitReports(request, caller: caller)
        case .reportsDenied:
            return APIError(status: caller.role == .anon ? 401 : 403, code: "42501",
                            message: "permission denied for table price_reports",
                            hint: "Reports can only be inserted; read medians through /rest/v1/rpc/price_medians").response
        case .rpc(QuoteQuery.functionName):
            return callQuotes(request, caller: caller)
        case .rpc(let name):
            return callMedian(name, request, caller: caller)
        case .unknownTable(let name):
            return APIError(status: 404, code: "PGRST205",
                            message: "Could not find the table 'public.\(JSONBody.printable(name))' in the schema cache",
                            hint: "The only table is price_reports (insert only)").response
        case .signUp:
            return signUp(request)
        case .signUpChallenge:
            return signUpChallenge()
        case .token:
            return refresh(request)
        case .logout:
            return logout(request, caller: caller)
        case .user:
            return user(caller: caller)
        default:
            return APIError.notFound.response
        }
    }

    // MARK: identity

    enum Caller {
        case anon
        case user(VerifiedToken)

        var role: RequestRole {
            if case .user = self { return .authenticated }
            return .anon
        }
    }

    func now() -> Int { Int(clock()) }

    /// Supabase's gateway contract: every /rest and /auth request carries the anon key.
    private func checkAPIKey(_ request: HTTPRequest, isAuthRoute: Bool) -> APIError? {
        guard let key = request.header("apikey"), !key.isEmpty else {
            return isAuthRoute
                ? .auth(401, "no_api_key", "No API key found in request")
                : APIError(status: 401, code: "PGRST000", message: "No API key found in request",
                           hint: "Send the anon key in the apikey header (pricesvc keys prints it)")
        }
        if !constantTimeEqual(Array(key.utf8), anonKey), case .failure = verifier.verifyAnonKey(key, now: now()) {
            return isAuthRoute
                ? .auth(401, "invalid_api_key", "Invalid API key")
                : APIError(status: 401, code: "PGRST000", message: "Invalid API key",
                           hint: "The apikey header must hold this service's anon key")
        }
        return nil
    }

    private func identify(_ request: HTTPRequest) -> Result<Caller, APIError> {
        guard let authorization = request.header("authorization") else { return .success(.anon) }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            return .failure(APIError(status: 401, code: "PGRST301", message: "Authorization header must be 'Bearer <token>'"))
        }
        let token = String(parts[1])
        if token == request.header("apikey") { return .success(.anon) }
        switch verifier.verifyAccessToken(token, now: now()) {
        case .success(let verified):
            return .success(.user(verified))
        case .failure(let accessError):
            if case .success = verifier.verifyAnonKey(token, now: now()) { return .success(.anon) }
            let code = accessError.code == .expired ? "PGRST303" : "PGRST301"
            return .failure(APIError(status: 401, code: code, message: accessError.message))
        }
    }

    /// The identity statement every transaction starts with.
    func identityQuery(_ caller: Caller) -> Query {
        switch caller {
        case .anon: return .prepared(Statements.identity, ["anon", ""])
        case .user(let token): return .prepared(Statements.identity, ["authenticated", token.token])
        }
    }

    func databaseFailure(_ error: DatabaseError, role: RequestRole) -> APIError {
        metrics.recordDatabaseError(kind: APIError.metricsKind(error))
        return APIError(database: error, role: role, unavailableRetryAfter: settings.unavailableRetryAfter)
    }

    // MARK: readiness

    private func readinessResponse() -> HTTPResponse {
        do {
            let results = try database.run([.prepared(Statements.appliedMigrations, [])])
            let applied = results.last?.rows.compactMap { row -> AppliedMigration? in
                guard row.count == 2, let name = row[0], let checksum = row[1] else { return nil }
                return AppliedMigration(name: name, checksum: checksum)
            } ?? []
            if let problem = readiness.problem(applied: applied) {
                return .json(503, "{\"status\":\"not ready\",\"reason\":\(JSONString.quoted(problem))}",
                             headers: [("Retry-After", "5")])
            }
            return .json(200, "{\"status\":\"ready\"}")
        } catch {
            metrics.recordDatabaseError(kind: APIError.metricsKind(error))
            return .json(503, "{\"status\":\"not ready\",\"reason\":\"database unreachable\"}",
                         headers: [("Retry-After", "\(settings.unavailableRetryAfter)")])
        }
    }
}

/// What the service needs from the database: one pipelined round trip, and pool gauges for /metrics.
public protocol QueryRunner: Sendable {
    func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult]
    var poolGauges: Metrics.PoolGauges { get }
}

extension ConnectionPool: QueryRunner {
    public var poolGauges: Metrics.PoolGauges {
        let stats = self.stats
        return .init(size: stats.size, inUse: stats.inUse, idle: stats.idle, waiting: stats.waiting)
    }
}
