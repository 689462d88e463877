/// Every endpoint pricesvc answers, as a value. Anything else is `.notFound`.
enum Route: Sendable, Equatable {
    case health
    case ready
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
    case notFound
    case methodNotAllowed

    /// A bounded label for metrics and logs (never the raw path, so cardinality stays fixed).
    var label: String {
        switch self {
        case .health: return "/healthz"
        case .ready: return "/readyz"
        case .metrics: return "/metrics"
        case .openAPI: return "/rest/v1/"
        case .submitReports, .reportsDenied: return "/rest/v1/price_reports"
        case .rpc(let name): return RPCFunction(rawValue: name) != nil ? "/rest/v1/rpc/\(name)" : "/rest/v1/rpc/*"
        case .unknownTable: return "/rest/v1/*"
        case .signUp: return "/auth/v1/signup"
        case .signUpChallenge: return "/auth/v1/challenge"
        case .token: return "/auth/v1/token"
        case .logout: return "/auth/v1/logout"
        case .user: return "/auth/v1/user"
        case .notFound: return "other"
        case .methodNotAllowed: return "other"
        }
    }

    /// Every label `label` can return, in the order /metrics lists them.
    static let allLabels: [String] = {
        let routes: [Route] = [.health, .ready, .metrics, .openAPI, .submitReports, .rpc("price_median"),
                               .rpc("price_medians"), .rpc("price_quotes"), .rpc("*"), .unknownTable(""), .signUp, .signUpChallenge, .token, .logout,
                               .user, .notFound]
        return routes.map(\.label)
    }()

    var isAuthRoute: Bool {
        switch self {
        case .signUp, .signUpChallenge, .token, .logout, .user: return true
        default: return false
        }
    }
}

/// The read-only functions the REST surface exposes.
enum RPCFunction: String, Sendable, CaseIterable {
    case priceMedian = "price_median"
    case priceMedians = "price_medians"
    case priceQuotes = "price_quotes"
}

enum Router {
    static func route(method: String, path: String) -> Route {
        var trimmed = Substring(path)
        if trimmed.count > 1, trimmed.hasSuffix("/"), !(trimmed == "/rest/v1/") { trimmed = trimmed.dropLast() }
        switch trimmed {
        case "/healthz": return method == "GET" || method == "HEAD" ? .health : .methodNotAllowed
        case "/readyz": return method == "GET" || method == "HEAD" ? .ready : .methodNotAllowed
        case "/metrics": return method == "GET" ? .metrics : .methodNotAllowed
        case "/rest/v1", "/rest/v1/": return method == "GET" || method == "HEAD" ? .openAPI : .methodNotAllowed
        case "/rest/v1/price_reports":
            switch method {
            case "POST": return .submitReports
            case "GET", "HEAD", "PATCH", "PUT", "DELETE": return .reportsDenied
            default: return .methodNotAllowed
            }
        case "/auth/v1/signup": return method == "POST" ? .signUp : .methodNotAllowed
        case "/auth/v1/challenge": return method == "GET" ? .signUpChallenge : .methodNotAllowed
        case "/auth/v1/token": return method == "POST" ? .token : .methodNotAllowed
        case "/auth/v1/logout": return method == "POST" ? .logout : .methodNotAllowed
        case "/auth/v1/user": return method == "GET" ? .user : .methodNotAllowed
        default: break
        }
        if trimmed.hasPrefix("/rest/v1/rpc/") {
            let name = trimmed.dropFirst("/rest/v1/rpc/".count)
            guard !name.isEmpty, !name.contains("/") else { return .notFound }
            return method == "POST" || method == "GET" ? .rpc(String(name)) : .methodNotAllowed
        }
        if trimmed.hasPrefix("/rest/v1/") {
            let name = trimmed.dropFirst("/rest/v1/".count)
            return name.contains("/") ? .notFound : .unknownTable(String(name))
        }
        return .notFound
    }
}
