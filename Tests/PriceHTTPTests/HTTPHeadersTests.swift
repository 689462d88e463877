import Testing
@testable import PriceHTTP

@Suite("A request's header fields: kept in order, the last value of a name wins")
struct HTTPHeadersTests {
    @Test("lookups find the last field of a name, exact names only, and nothing for an absent one")
    func lookups() {
        var headers = HTTPHeaders()
        headers.append("host", "a")
        headers.append("x-forwarded-for", "203.0.113.9")
        headers.append("authorization", "Bearer one")
        headers.append("x-forwarded-for", "198.51.100.7")
        #expect(headers["x-forwarded-for"] == "198.51.100.7")
        #expect(headers["host"] == "a")
        #expect(headers["authorization"] == "Bearer one")
        #expect(headers["Authorization"] == nil)
        #expect(headers["authorizatio"] == nil)
        #expect(headers["x"] == nil)
        #expect(headers.fields.map(\.0) == ["host", "x-forwarded-for", "authorization", "x-forwarded-for"])
    }

    @Test("setting replaces every field of the name; nil removes them; values may be empty")
    func assignment() {
        var headers: HTTPHeaders = ["apikey": "k", "range": "0-9"]
        headers.append("apikey", "other")
        headers["apikey"] = "new"
        #expect(headers.fields.filter { $0.0 == "apikey" }.map(\.1) == ["new"])
        headers["range"] = nil
        #expect(headers["range"] == nil)
        headers["prefer"] = ""
        #expect(headers["prefer"] == "")
    }

    @Test("agrees with a dictionary that keeps the last value, on random fields")
    func agreesWithDictionary() {
        var generator = SystemRandomNumberGenerator()
        let names = ["a", "b", "host", "accept", "x-request-id", "content-length", "é", "x-forwarded-for"]
        for _ in 0..<300 {
            var headers = HTTPHeaders()
            var model: [String: String] = [:]
            for _ in 0..<Int.random(in: 0...12, using: &generator) {
                let name = names.randomElement(using: &generator)!
                let value = String(Int.random(in: 0...99, using: &generator))
                headers.append(name, value)
                model[name] = value
            }
            for name in names + ["", "absent"] { #expect(headers[name] == model[name]) }
            #expect(HTTPRequest(method: "GET", path: "/", headers: model).headers.fields.count == model.count)
        }
    }
}
