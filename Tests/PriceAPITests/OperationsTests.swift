import PriceHTTPMessage
import Testing
@testable import PriceAPI

@Suite("Operations endpoints: the public /readyz is cached, /metrics is on the admin listener")
struct OperationsTests {
    @Test("the readiness cache starts one check per interval and answers the rest from the last one")
    func cacheStartsOneCheckPerInterval() {
        var cache = ReadinessCache(interval: 1)
        #expect(cache.lookup(now: 100) == .check)
        #expect(cache.lookup(now: 100.2) == .answer(nil))  // the first check is still running
        let ready = HTTPResponse.json(200, "{\"status\":\"ready\"}")
        cache.store(ready)
        #expect(cache.lookup(now: 100.9) == .answer(ready))
        #expect(cache.lookup(now: 101) == .check)
        #expect(cache.lookup(now: 101.5) == .answer(ready))
        #expect(cache.lookup(now: 50) == .check)  // the clock went back: check rather than trust it
    }

    @Test("a flood of public /readyz at one instant reaches the database once")
    func publicReadyzIsCached() {
        let fixture = ServiceFixture()
        let statuses = (0..<20).map { _ in fixture.handle(HTTPRequest(method: "GET", path: "/readyz")).status }
        #expect(statuses == Array(repeating: 200, count: 20))
        #expect(fixture.database.batches.count == 1)
    }

    @Test("the public listener does not serve /metrics; the admin application does, and checks /readyz each time")
    func adminServesOperations() {
        let fixture = ServiceFixture()
        #expect(fixture.handle(HTTPRequest(method: "GET", path: "/metrics")).status == 404)
        let admin = OperationsApplication(fixture.application)
        func handle(_ method: String, _ path: String) -> HTTPResponse {
            admin.respond(to: HTTPRequest(method: method, path: path)).answer()
        }
        let metrics = handle("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(String(decoding: metrics.body, as: UTF8.self).contains("pricesvc_readiness_checks_total 0"))
        #expect(handle("GET", "/healthz").status == 200)
        #expect(handle("GET", "/readyz").status == 200)
        #expect(handle("HEAD", "/readyz").status == 200)
        #expect(fixture.database.batches.count == 2)
        #expect(handle("GET", "/rest/v1/").status == 404)
        #expect(handle("POST", "/metrics").status == 405)
        #expect(String(decoding: handle("GET", "/metrics").body, as: UTF8.self).contains("pricesvc_readiness_checks_total 2"))
    }

    @Test("a refused framing is a 400 in the route's error shape")
    func malformedShapes() {
        let fixture = ServiceFixture()
        let rest = fixture.application.malformedRequest(HTTPRequest(method: "POST", path: "/rest/v1/rpc/price_medians"),
                                                        reason: "differing Content-Length values").response
        #expect(rest.status == 400)
        #expect(String(decoding: rest.body, as: UTF8.self).contains("\"code\":\"PGRST400\""))
        let auth = fixture.application.malformedRequest(HTTPRequest(method: "POST", path: "/auth/v1/signup"),
                                                        reason: "differing Content-Length values").response
        #expect(String(decoding: auth.body, as: UTF8.self).contains("\"error_code\":\"bad_request\""))
    }
}
