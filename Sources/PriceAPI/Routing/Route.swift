/// Every endpoint pricesvc answers, as a value. Anything else is `.notFound`.
enum Route: Sendable, Equatable {
    case health
    case ready
    /// Only on the admin listener (`OperationsApplication`); the public router never returns it.
    case metrics
    case openAPI
    case submitReports
    /// GET/PATCH/PUT/DELETE on the reports table: nobody may read or change reports.
    case reportsDenied
    case rpc(String)
    case unknownTable(String)
    case signUp
    /// A proof-of-work challenge to solve before sign-up (when the deployment asks for one).
    case signUpChallenge
    case token
    case logout
    case user
    /// OPTIONS on a served path: a CORS preflight, or a plain question about the methods.
    case options(allow: [String])
    case notFound
    /// A served path, another method: 405 with `Allow`.
    case methodNotAllowed(allow: [String])

    /// A bounded label for metrics and logs (never the raw path, so cardinality stays fixed).
    var label: String {
        switch self {
        case .health: return Resource.health.path
        case .ready: return Resource.ready.path
        case .metrics: return "/metrics"
        case .openAPI: return Resource.openAPI.path
        case .submitReports, .reportsDenied: return Resource.reports.path
        case .rpc(let name): return RPCFunction(rawValue: name)?.label ?? Self.unknownFunctionLabel
        case .unknownTable: return "/rest/v1/*"
        case .signUp: return Resource.signUp.path
        case .signUpChallenge: return Resource.signUpChallenge.path
        case .token: return Resource.token.path
        case .logout: return Resource.logout.path
        case .user: return Resource.user.path
        case .options: return "OPTIONS"
        case .notFound, .methodNotAllowed: return "other"
        }
    }

    private static let unknownFunctionLabel = Resource.rpc("*").path

    /// Every label `label` can return, in the order /metrics lists them.
    static let allLabels: [String] = {
        let routes: [Route] = [.health, .ready, .metrics, .openAPI, .submitReports, .rpc("price_median"),
                               .rpc("price_medians"), .rpc("price_quotes"), .rpc("places_nearby"), .rpc("places_match"), .rpc("*"), .unknownTable(""), .signUp, .signUpChallenge, .token, .logout,
                               .user, .options(allow: []), .notFound]
        return routes.map(\.label)
    }()

    var isAuthRoute: Bool {
        switch self {
        case .signUp, .signUpChallenge, .token, .logout, .user: return true
        default: return false
        }
    }

    /// The error body a refusal on this route takes: Supabase Auth's under /auth/v1, PostgREST's elsewhere.
    var errorShape: APIError.Shape { isAuthRoute ? .auth : .postgrest }
}

/// The read-only functions the REST surface exposes.
enum RPCFunction: String, Sendable, CaseIterable {
    case priceMedian = "price_median"
    case priceMedians = "price_medians"
    case priceQuotes = "price_quotes"
    case placesNearby = "places_nearby"
    case placesMatch = "places_match"

    /// The function's path, its metrics label (made once, not on every call).
    var label: String {
        switch self {
        case .priceMedian: return Self.medianLabel
        case .priceMedians: return Self.mediansLabel
        case .priceQuotes: return Self.quotesLabel
        case .placesNearby: return Self.placesLabel
        case .placesMatch: return Self.matchLabel
        }
    }
    private static let medianLabel = Resource.rpc(priceMedian.rawValue).path
    private static let mediansLabel = Resource.rpc(priceMedians.rawValue).path
    private static let quotesLabel = Resource.rpc(priceQuotes.rawValue).path
    private static let placesLabel = Resource.rpc(placesNearby.rawValue).path
    private static let matchLabel = Resource.rpc(placesMatch.rawValue).path

    /// The signatures named in PGRST202's hint when a call matches none of them.
    static let signatures = "price_median(location_id, rate_kind), price_medians(location_ids, rate_kind), "
        + "price_quotes(location_ids, rate_kind, starts_at, duration), "
        + "places_nearby(lat, lng, radius_m, rate_kind, starts_at, duration, max_results), places_match(name, lat, lng, radius_m)"
}

/// A path pricesvc serves and the methods it serves there: the route table. The router, `Allow`, CORS
/// preflights and the OpenAPI document's paths (`OpenAPIDocument.operations`) are all made from it;
/// HEAD is served wherever GET is, and OPTIONS everywhere.
enum Resource: Sendable, Equatable {
    case health, ready, openAPI, reports, rpc(String), signUp, signUpChallenge, token, logout, user

    /// Every resource with a fixed path, and the functions of the read API: in the OpenAPI document's order.
    static let table: [Resource] = [.openAPI, .reports] + RPCFunction.allCases.map { .rpc($0.rawValue) }
        + [.signUp, .signUpChallenge, .token, .logout, .user, .health, .ready]

    /// The fixed paths, looked up by comparison: a dozen comparisons of short strings cost less than
    /// hashing the path for a dictionary, on every request.
    private static let byPath: [(path: String, resource: Resource)] = table.compactMap { resource in
        if case .rpc = resource { return nil } else { return (resource.path, resource) }
    }

    static let rpcPrefix = "/rest/v1/rpc/"

    var path: String {
        switch self {
        case .health: return "/healthz"
        case .ready: return "/readyz"
        case .openAPI: return "/rest/v1/"
        case .reports: return "/rest/v1/price_reports"
        case .rpc(let name): return Self.rpcPrefix + name
        case .signUp: return "/auth/v1/signup"
        case .signUpChallenge: return "/auth/v1/challenge"
        case .token: return "/auth/v1/token"
        case .logout: return "/auth/v1/logout"
        case .user: return "/auth/v1/user"
        }
    }

    /// The methods documented for this path (made once: the router asks on every request).
    var methods: [String] {
        switch self {
        case .health, .ready, .openAPI, .signUpChallenge, .user: return Self.readOnly
        case .reports: return Self.tableMethods
        case .rpc: return Self.functionMethods
        case .signUp, .token, .logout: return Self.actionMethods
        }
    }
    private static let readOnly = ["GET"], tableMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"]
    private static let functionMethods = ["GET", "POST"], actionMethods = ["POST"]

    /// A trailing slash is ignored, and `/rest/v1` is the document too; any single name under
    /// `/rest/v1/rpc/` is a function call (an unknown one is PGRST202, from the handler). Byte-wise: this
    /// runs on every request, and a path is bytes, not text to segment into characters.
    init?(path: String) {
        var key = path
        if path.utf8.count > 1, path.utf8.last == UInt8(ascii: "/"), path != "/rest/v1/" {
            key = String(decoding: path.utf8.dropLast(), as: UTF8.self)
        }
        if key == "/rest/v1" { key = "/rest/v1/" }
        let length = key.utf8.count
        if let entry = Self.byPath.first(where: { $0.path.utf8.count == length && $0.path == key }) {
            self = entry.resource
            return
        }
        guard key.utf8.starts(with: Self.rpcPrefix.utf8) else { return nil }
        let name = key.utf8.dropFirst(Self.rpcPrefix.utf8.count)
        guard !name.isEmpty, !name.contains(UInt8(ascii: "/")) else { return nil }
        self = .rpc(String(decoding: name, as: UTF8.self))
    }

    /// What `Allow` says: the documented methods, HEAD wherever GET is, and OPTIONS.
    var allow: [String] {
        var list = methods
        if let get = list.firstIndex(of: "GET") { list.insert("HEAD", at: get + 1) }
        return list + ["OPTIONS"]
    }

    /// The route for a method this path serves (HEAD is routed as GET).
    func route(_ method: String) -> Route? {
        let verb = method == "HEAD" ? "GET" : method
        guard methods.contains(verb) else { return nil }
        switch self {
        case .health: return .health
        case .ready: return .ready
        case .openAPI: return .openAPI
        case .reports: return verb == "POST" ? .submitReports : .reportsDenied
        case .rpc(let name): return .rpc(name)
        case .signUp: return .signUp
        case .signUpChallenge: return .signUpChallenge
        case .token: return .token
        case .logout: return .logout
        case .user: return .user
        }
    }
}

enum Router {
    static func route(method: String, path: String) -> Route {
        guard let resource = Resource(path: path) else {
            if path.hasPrefix("/rest/v1/"), !path.hasPrefix(Resource.rpcPrefix) {
                let name = path.dropFirst("/rest/v1/".count)
                let trimmed = name.hasSuffix("/") ? name.dropLast() : name
                return trimmed.utf8.contains(UInt8(ascii: "/")) || trimmed.isEmpty ? .notFound : .unknownTable(String(trimmed))
            }
            return .notFound
        }
        if method == "OPTIONS" { return .options(allow: resource.allow) }
        return resource.route(method) ?? .methodNotAllowed(allow: resource.allow)
    }
}
