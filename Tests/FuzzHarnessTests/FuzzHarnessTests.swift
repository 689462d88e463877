import Testing
@testable import FuzzHarness

@Suite struct RequestTextTests {
    @Test func readsTheRequestLineHeadersAndBody() {
        let text = RequestText(Array("POST /rest/v1/rpc/price_medians?select=a%2Cb&x=1+2&flag\r\nRange: 0-9 \nAccept:text/csv\n\n{\"a\":1}\n".utf8))
        #expect(text.method == "POST")
        #expect(text.path == "/rest/v1/rpc/price_medians")
        #expect(text.query.map { [$0.name, $0.value] } == [["select", "a,b"], ["x", "1 2"], ["flag", ""]])
        #expect(text.headers == ["range": "0-9", "accept": "text/csv"])
        #expect(text.body == Array("{\"a\":1}\n".utf8))
    }

    @Test func everyInputIsSomeRequest() {
        #expect(RequestText([]).method == "GET")
        #expect(RequestText([]).path == "")
        #expect(RequestText(Array("/healthz".utf8)).path == "/healthz")
        let noColon = RequestText(Array("GET /\nnot a header\nX: y".utf8))
        #expect(noColon.headers == ["x": "y"])
    }

    @Test func keepsAtMost64QueryArguments() {
        let query = (0..<100).map { "a\($0)=\($0)" }.joined(separator: "&")
        #expect(RequestText(Array("GET /?\(query)".utf8)).query.count == 64)
    }

    @Test func percentDecodingLeavesBrokenEscapes() {
        #expect(QueryString.decoded("%41%zz%4") == "A%zz%4")
        #expect(QueryString.decoded(Substring(QueryString.encoded("a b&c=d/é%"))) == "a b&c=d/é%")
    }
}

@Suite struct ISO8601Tests {
    @Test func writesInstantsInUTC() {
        #expect(ISO8601.utcText(microseconds: 0) == "1970-01-01T00:00:00.000000Z")
        #expect(ISO8601.utcText(microseconds: -1) == "1969-12-31T23:59:59.999999Z")
        #expect(ISO8601.utcText(microseconds: 951_782_400_000_000) == "2000-02-29T00:00:00.000000Z")
        #expect(ISO8601.utcText(microseconds: -62_135_596_800_000_001) == nil)  // before year 1
    }

    @Test func readsDurationsInSeconds() {
        #expect(ISO8601.durationSeconds("PT2H") == 7200)
        #expect(ISO8601.durationSeconds("PT1H30M") == 5400)
        #expect(ISO8601.durationSeconds("P365DT23H") == Int64(365 * 86_400 + 23 * 3600))
        #expect(ISO8601.durationSeconds("P1D") == 86_400)
        #expect(ISO8601.durationSeconds("PT0M") == 0)
        for bad in ["P", "PT", "P1H", "PT1D", "P1DT", "PT1H1H", "P1Y", "PT1.5H", "p1d", "P1D2"] {
            #expect(ISO8601.durationSeconds(bad) == nil, "\(bad)")
        }
        #expect(ISO8601.durationSeconds("P99999999999999999999D") == Int64.max)
    }
}

@Suite struct ServiceHarnessTests {
    @Test func answersAFunctionCallWithTheCannedRows() {
        let harness = ServiceHarness.shared
        let handled = harness.handle(harness.request(RequestText(Array("GET /rest/v1/rpc/price_median?location_id=x".utf8))))
        #expect(handled.response.status == 200)
        #expect(!handled.decidedNow)
        #expect(handled.response.header("content-range") == "0-4/*")
    }

    @Test func substitutesTheKeys() {
        let harness = ServiceHarness.shared
        let request = harness.request(RequestText(Array("GET /auth/v1/user\nAuthorization: Bearer $USER".utf8)))
        #expect(request.headers["authorization"] == "Bearer \(harness.userToken)")
        #expect(request.headers["apikey"] == harness.anonKey)
    }
}
