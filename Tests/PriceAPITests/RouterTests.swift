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

    @Test("every path of the route table routes back to its resource, with or without a trailing slash")
    func tableRoundTrips() {
        #expect(Resource.table.count == 14)
        for resource in Resource.table {
            #expect(Resource(path: resource.path) == resource, "\(resource.path)")
            #expect(Resource(path: resource.path + "/") == resource, "\(resource.path)/")
            for method in resource.methods {
                #expect(Router.route(method: method, path: resource.path) == resource.route(method), "\(method) \(resource.path)")
                #expect(resource.route(method) != nil)
            }
        }
        #expect(Resource(path: "/rest/v1") == .openAPI)
    }

    @Test("the OpenAPI document lists exactly the route table's methods on its paths")
    func openAPIIsTheTable() throws {
        let document = try JSONValue.parse(Array(OpenAPIDocument.json(signUpChallenge: true).utf8), maxBytes: 1 << 20)
        let paths = try #require(document["paths"]?.objectValue)
        #expect(paths.keys.count == Resource.table.count)
        for resource in Resource.table {
            let methods = try #require(paths[resource.path]?.objectValue, "\(resource.path)")
            #expect(Array(methods.keys) == resource.methods.map { $0.lowercased() }, "\(resource.path)")
        }
    }
}
