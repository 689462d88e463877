import Foundation
import PriceJSON
import Testing
@testable import PriceHTTP

@Suite("The access log")
struct AccessLogTests {
    @Test("the access log line holds time, request id, method, route, status and duration, and nothing else")
    func accessLogLine() throws {
        let line = AccessLog.line(.init(time: .init(timeIntervalSince1970: 0), requestID: "r-1", method: "POST",
                                        route: "/rest/v1/price_reports", status: 201, seconds: 0.0015))
        let entry = try JSONValue.parse(Array(line.utf8.dropLast()), maxBytes: 4096)
        #expect(entry.objectValue?.keys == ["time", "request_id", "method", "route", "status", "duration_ms"])
        #expect(entry["time"] == "1970-01-01T00:00:00.000Z")
        #expect(entry["duration_ms"] == 1.5)
        #expect(line.hasSuffix("}\n"))
    }
}

@Suite("Request ids")
struct RequestIDTests {
    @Test("a caller's well-formed X-Request-Id is kept; anything that could break a log line is replaced")
    func wellFormedIDs() {
        for kept in ["req-42", "0b1e5f4c-7f5a-4c33-9d0e-2f6f1b1c9a10", "01HZX3K5M2Q8", "a.b:c_d", String(repeating: "x", count: 128)] {
            #expect(RequestID.isWellFormed(kept), "\(kept)")
        }
        for replaced in ["", String(repeating: "x", count: 129), "has space", "quote\"", "new\nline", "tab\t", "é", "a/b"] {
            #expect(!RequestID.isWellFormed(replaced), "\(replaced)")
        }
    }

    @Test("the server's own id is its prefix, a dash and the number in lower-case hex, and is well formed")
    func composedIDs() {
        var generator = SystemRandomNumberGenerator()
        let numbers: [UInt64] = [0, 1, 9, 10, 15, 16, 255, 256, 0xFFFF_FFFF, UInt64.max - 1, UInt64.max]
            + (0..<200).map { _ in UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator) }
        for prefix in ["", "7", "3f2a9c01", "ffffffff"] {
            for number in numbers {
                let id = RequestID.compose(prefix: prefix, number: number)
                #expect(id == prefix + "-" + String(number, radix: 16), "\(prefix) \(number)")
                #expect(RequestID.isWellFormed(id))
            }
        }
    }
}
