import Testing
@testable import PostgRESTDialect

@Suite("A function call's arguments, read as PostgREST reads them")
struct RPCCallTests {
    @Test("array literals: empty, quoted, escaped; malformed ones are refused")
    func arrayLiterals() {
        #expect(PostgresArrayLiteral.parse("{}") == [])
        #expect(PostgresArrayLiteral.parse(#"{"a\"b",c}"#) == ["a\"b", "c"])
        #expect(PostgresArrayLiteral.parse("a,b") == nil)
        #expect(PostgresArrayLiteral.parse("{a,}") == nil)
        #expect(PostgresArrayLiteral.parse(#"{"a}"#) == nil)
    }

    @Test("an unknown, missing or repeated argument name is PGRST202 naming the names sent")
    func names() throws {
        let call = try RPCCall.read("f", isRead: true, queryArguments: [("a", "1"), ("b", "2")], body: [],
                                    contentType: nil).get()
        #expect(call.checkNames(allowed: ["a", "b"], required: "a", available: "f(a, b)") == nil)
        let error = call.checkNames(allowed: ["a"], required: "a", available: "f(a)")
        #expect(error?.status == 404)
        #expect(error?.code == "PGRST202")
        #expect(error?.message == "Could not find the function public.f(a, b) in the schema cache")
        let twice = try RPCCall.read("f", isRead: true, queryArguments: [("a", "1"), ("a", "2")], body: [],
                                     contentType: nil).get()
        #expect(twice.checkNames(allowed: ["a"], required: "a", available: "f(a)")?.code == "PGRST202")
    }

    @Test("a POST body must be a JSON object sent as application/json")
    func bodies() {
        let body = Array(#"{"a":["x"]}"#.utf8)
        #expect(throws: Never.self) {
            try RPCCall.read("f", isRead: false, queryArguments: [], body: body, contentType: "application/json; charset=utf-8").get()
        }
        if case .failure(let error) = RPCCall.read("f", isRead: false, queryArguments: [], body: body, contentType: "text/plain") {
            #expect(error.code == "PGRST107")
        } else { Issue.record("text/plain was accepted") }
        if case .failure(let error) = RPCCall.read("f", isRead: false, queryArguments: [], body: Array("[1]".utf8),
                                                   contentType: "application/json") {
            #expect(error.code == "PGRST102")
        } else { Issue.record("an array body was accepted") }
    }
}
