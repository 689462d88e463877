import PriceJSON
import Testing
@testable import PriceAPI

@Suite("Router")
struct RouterTests {
    @Test("reports can only be inserted; every other method is denied, not missing")
    func reportsRoutes() {
        #expect(Router.route(method: "POST", path: "/rest/v1/price_reports") == .submitReports)
        for method in ["GET", "PATCH", "PUT", "DELETE", "HEAD"] {
            #expect(Router.route(method: method, path: "/rest/v1/price_reports") == .reportsDenied)
        }
        #expect(Router.route(method: "OPTIONS", path: "/rest/v1/price_reports")
                == .options(allow: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]))
    }

    @Test("a 405 names the methods the path serves; HEAD is served wherever GET is")
    func methodNotAllowedNamesTheMethods() {
        #expect(Router.route(method: "TRACE", path: "/healthz") == .methodNotAllowed(allow: ["GET", "HEAD", "OPTIONS"]))
        #expect(Router.route(method: "QUERY", path: "/auth/v1/signup") == .methodNotAllowed(allow: ["POST", "OPTIONS"]))
        #expect(Router.route(method: "HEAD", path: "/auth/v1/signup") == .methodNotAllowed(allow: ["POST", "OPTIONS"]))
        #expect(Router.route(method: "HEAD", path: "/readyz") == .ready)
        // /metrics is served on the admin listener only.
        #expect(Router.route(method: "GET", path: "/metrics") == .notFound)
        #expect(Router.route(method: "HEAD", path: "/rest/v1/rpc/price_medians") == .rpc("price_medians"))
        #expect(Router.route(method: "OPTIONS", path: "/nowhere") == .notFound)
    }

    @Test("rpc names are routed; nested paths are not")
    func rpcRoutes() {
        #expect(Router.route(method: "POST", path: "/rest/v1/rpc/price_medians") == .rpc("price_medians"))
        #expect(Router.route(method: "GET", path: "/rest/v1/rpc/price_median") == .rpc("price_median"))
        #expect(Router.route(method: "POST", path: "/rest/v1/rpc/x/y") == .notFound)
        #expect(Router.route(method: "DELETE", path: "/rest/v1/rpc/price_median")
                == .methodNotAllowed(allow: ["GET", "HEAD", "POST", "OPTIONS"]))
    }

    @Test("metrics labels are bounded: unknown functions share one label")
    func labelsAreBounded() {
        #expect(Route.rpc("anything_at_all").label == "/rest/v1/rpc/*")
        #expect(Route.rpc("price_medians").label == "/rest/v1/rpc/price_medians")
        #expect(Route.unknownTable("secret").label == "/rest/v1/*")
    }

    @Test("every path and method in the OpenAPI document is routed, and nothing it omits")
    func openAPIMatchesRouter() throws {
        let document = try JSONValue.parse(Array(OpenAPIDocument.json(signUpChallenge: true).utf8), maxBytes: 1 << 20)
        let paths = try #require(document["paths"]?.objectValue)
        var listed = Set<String>()
        for path in paths {
            for method in try #require(path.value.objectValue) {
                let verb = method.key.uppercased()
                listed.insert("\(verb) \(path.key)")
                let route = Router.route(method: verb, path: path.key)
                if case .methodNotAllowed = route { Issue.record("\(verb) \(path.key) is listed but not served") }
                #expect(route != .notFound, "\(verb) \(path.key)")
                // Allow (and so CORS preflights) lists exactly the documented methods, plus HEAD and OPTIONS.
                let documented = Set(try #require(path.value.objectValue).keys.map { $0.uppercased() })
                if case .options(let allow) = Router.route(method: "OPTIONS", path: path.key) {
                    #expect(Set(allow).subtracting(["HEAD", "OPTIONS"]) == documented, "\(path.key)")
                } else {
                    Issue.record("OPTIONS \(path.key) is not answered")
                }
            }
        }
        // Every route the router knows appears in the document.
        let served = ["GET /healthz", "GET /readyz", "GET /rest/v1/",
                      "POST /rest/v1/price_reports", "GET /rest/v1/price_reports", "PATCH /rest/v1/price_reports",
                      "PUT /rest/v1/price_reports", "DELETE /rest/v1/price_reports",
                      "POST /rest/v1/rpc/price_median", "GET /rest/v1/rpc/price_median",
                      "POST /rest/v1/rpc/price_medians", "GET /rest/v1/rpc/price_medians",
                      "POST /rest/v1/rpc/price_quotes", "GET /rest/v1/rpc/price_quotes",
                      "POST /auth/v1/signup", "POST /auth/v1/token", "POST /auth/v1/logout", "GET /auth/v1/user",
                      "GET /auth/v1/challenge"]
        #expect(listed == Set(served))
    }
}
