import PriceHTTPMessage
import Testing
@testable import PriceAPI

@Suite("CORS, OPTIONS and 405, decided without the apikey or a database")
struct CORSTests {
    func preflight(_ fixture: ServiceFixture, origin: String, path: String = "/rest/v1/rpc/price_medians") -> Decision {
        fixture.service.decide(HTTPRequest(method: "OPTIONS", path: path, headers: [
            "origin": origin, "access-control-request-method": "POST",
            "access-control-request-headers": "apikey, authorization, content-type, prefer, x-client-info"]))
    }

    @Test("a preflight is 204 with the SDKs' headers, needs no apikey and never takes a worker")
    func preflightAllowed() throws {
        let fixture = ServiceFixture()
        let decision = preflight(fixture, origin: "http://localhost:5173")
        #expect(!decision.needsDatabase)
        guard case .answer(let response) = decision.outcome else { return }
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == "*")
        #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, POST, OPTIONS")
        let allowed = Set((response.header("Access-Control-Allow-Headers") ?? "").split(separator: ",").map { $0.trimmingSpaces })
        #expect(allowed.isSuperset(of: ["apikey", "authorization", "content-type", "prefer", "range", "x-client-info",
                                        "accept-profile", "content-profile"]))
        #expect(response.header("Access-Control-Max-Age") != nil)
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("with an allow-list an origin is echoed with Vary, and another is refused")
    func allowList() throws {
        var settings = ServiceSettings()
        settings.cors = try CORSPolicy.parse("https://app.example.org, http://localhost:5173").get()
        let fixture = ServiceFixture(settings: settings)
        guard case .answer(let allowed) = preflight(fixture, origin: "https://APP.example.org").outcome,
              case .answer(let refused) = preflight(fixture, origin: "https://evil.example").outcome else {
            Issue.record("a preflight is answered on the spot"); return
        }
        #expect(allowed.status == 204 && allowed.header("Access-Control-Allow-Origin") == "https://APP.example.org")
        #expect(allowed.header("Vary") == "Origin")
        #expect(refused.status == 403 && refused.header("Access-Control-Allow-Origin") == nil)

        // Every other answer (errors too) carries the headers for an allowed origin, none for another.
        var request = fixture.request("GET", "/healthz", headers: ["origin": "http://localhost:5173"])
        let health = fixture.handle(request)
        #expect(health.header("Access-Control-Allow-Origin") == "http://localhost:5173")
        #expect(health.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true)
        #expect(health.header("Access-Control-Expose-Headers")?.contains("X-Request-Id") == true)
        request.headers["origin"] = "https://evil.example"
        #expect(fixture.handle(request).header("Access-Control-Allow-Origin") == nil)
        var unauthorized = fixture.request("POST", "/rest/v1/rpc/price_medians", headers: ["origin": "http://localhost:5173"])
        unauthorized.headers["apikey"] = nil
        #expect(fixture.handle(unauthorized).header("Access-Control-Allow-Origin") == "http://localhost:5173")
    }

    @Test("the allowed-origins setting: * or a list of scheme://host[:port]")
    func parsingTheSetting() throws {
        #expect(try CORSPolicy.parse("*").get() == CORSPolicy(origins: .any))
        for bad in ["", "example.org", "https://example.org/app", "ftp://example.org", "https://a.org,*x"] {
            guard case .failure = CORSPolicy.parse(bad) else { Issue.record("accepted '\(bad)'"); continue }
        }
    }

    @Test("OPTIONS without a preflight says Allow; other methods are 405 with Allow")
    func allowHeader() {
        let fixture = ServiceFixture()
        let options = fixture.handle(HTTPRequest(method: "OPTIONS", path: "/auth/v1/signup"))
        #expect(options.status == 204 && options.header("Allow") == "POST, OPTIONS")
        let trace = fixture.handle(HTTPRequest(method: "TRACE", path: "/healthz"))
        #expect(trace.status == 405 && trace.header("Allow") == "GET, HEAD, OPTIONS")
    }

    @Test("a refused read option is decided on the spot and never takes a worker")
    func readOptionRefusalsNeedNoWorker() {
        let fixture = ServiceFixture()
        var request = fixture.request("POST", "/rest/v1/rpc/price_medians", body: #"{"location_ids":["a"]}"#,
                                      token: fixture.userToken())
        request.query = [(name: "currency", value: "like.E*")]
        let decision = fixture.service.decide(request)
        #expect(status(decision) == 400 && !decision.needsDatabase)
        request.query = []
        request.headers["accept"] = "application/xml"
        #expect(status(fixture.service.decide(request)) == 406)
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("the OpenAPI document is served with one Content-Type")
    func oneContentType() {
        let fixture = ServiceFixture()
        let response = fixture.handle(fixture.request("GET", "/rest/v1/"))
        #expect(response.headers.filter { $0.0.lowercased() == "content-type" }.count == 1)
        #expect(response.header("Content-Type") == "application/openapi+json; charset=utf-8")
    }
}
