import PriceJSON
import Testing
@testable import PriceAPI

@Suite("SQLSTATE to HTTP, and error bodies")
struct ErrorMappingTests {
    @Test("permission denied is 401 for anonymous callers and 403 for signed-in ones")
    func permissionDenied() {
        #expect(SQLStateMapping.status(sqlState: "42501", isUnavailable: false, role: .anon) == 401)
        #expect(SQLStateMapping.status(sqlState: "42501", isUnavailable: false, role: .authenticated) == 403)
    }

    @Test("PostgREST's table: conflicts 409, bad data 400, PTxyz is status xyz, lost connections and read-only nodes 503",
          arguments: [("25006", 503), ("23505", 409), ("23514", 400), ("22P02", 400), ("P0001", 400), ("23502", 400),
                      ("PT429", 429), ("PT401", 401), ("08006", 503), ("57P01", 503), ("57P03", 503),
                      ("22023", 400), ("XX000", 500)])
    func table(state: String, status: Int) {
        #expect(SQLStateMapping.status(sqlState: state, isUnavailable: false, role: .authenticated) == status)
    }

    @Test("an unreachable database is 503 whatever the state")
    func unavailable() {
        #expect(SQLStateMapping.status(sqlState: nil, isUnavailable: true, role: .anon) == 503)
    }

    @Test("Retry-After comes from the SQL hint 'Retry after N seconds', at least 1")
    func retryAfterFromHint() {
        #expect(SQLStateMapping.retryAfter(fromHint: "Retry after 1234 seconds") == 1234)
        #expect(SQLStateMapping.retryAfter(fromHint: "Retry after 0 seconds") == 1)
        #expect(SQLStateMapping.retryAfter(fromHint: "something else") == nil)
        #expect(SQLStateMapping.retryAfter(fromHint: nil) == nil)
    }

    @Test("PostgREST errors render as {code, details, hint, message} with Retry-After when set")
    func postgrestShape() throws {
        let response = APIError(status: 429, code: "PT429", message: "cap \"10\"", details: nil,
                                hint: "Retry after 5 seconds", retryAfter: 5).response
        #expect(response.status == 429)
        #expect(response.header("Retry-After") == "5")
        let body = try JSONValue.parse(response.body, maxBytes: 4096)
        #expect(body["code"] == "PT429")
        #expect(body["message"] == "cap \"10\"")
        #expect(body["details"] == .null)
        #expect(body["hint"] == "Retry after 5 seconds")
    }

    @Test("Supabase Auth errors render as {code, error_code, msg}")
    func authShape() throws {
        let response = APIError(.providerDisabled("email")).response
        let body = try JSONValue.parse(response.body, maxBytes: 4096)
        #expect(body["code"] == 422)
        #expect(body["error_code"] == "email_provider_disabled")
        #expect(body["msg"] == "Only anonymous sign-in is offered: sign up without email")
    }
}
