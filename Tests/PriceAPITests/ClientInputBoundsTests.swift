import PriceHTTPMessage
import PriceJSON
import Testing
@testable import PostgRESTDialect
@testable import PriceAPI

/// Every number a client sends is read into a bounded domain, so no input reaches a Swift
/// trap (a trap in a worker kills the process), and no read option can make an answer much larger
/// than the request asked for. Each parser is driven with the extremes: Int.max, Int.min, digit
/// strings longer than any integer type, negatives, empty.
@Suite("Client numbers and sizes are bounded")
struct ClientInputBoundsTests {
    static let rows: [[String?]] = [
        ["a", "daily", "EUR", "1100", "3", "3", "2026-11-29 22:00:00+00"], ["a", "hourly", "USD", "500", "3", "4", nil],
        ["b", "flat", "USD", "2000", "3", "3", "2026-11-28 10:00:00+00"], ["b", "hourly", "EUR", "300", "4", "4", nil],
    ]
    static let extremes = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                           String(repeating: "9", count: 400), "-1", "", " ", "+", "-", "1e3", "0x10", "٣"]

    func options(_ query: [(String, String)], range: String? = nil) -> Result<(ReadOptions, arguments: [(String, String)]), APIError> {
        let request = HTTPRequest(method: "GET", path: "/rest/v1/rpc/price_median",
                                  headers: range.map { ["range": $0] } ?? [:])
        return ReadOptions.parse(query: query.map { (name: $0.0, value: $0.1) }, headers: request,
                                 columns: MedianQuery.columns, relation: "price_median", isRead: true)
    }

    func rendered(_ query: [(String, String)], range: String? = nil, prefer: String? = nil,
                  maxBytes: Int = ServiceSettings.defaultMaxResponseBytes) throws -> HTTPResponse {
        var headers: [String: String] = [:]
        if let range { headers["range"] = range }
        if let prefer { headers["prefer"] = prefer }
        let request = HTTPRequest(method: "GET", path: "/rest/v1/rpc/price_median", headers: headers)
        let parsed = try ReadOptions.parse(query: query.map { (name: $0.0, value: $0.1) }, headers: request,
                                           columns: MedianQuery.columns, relation: "price_median", isRead: true).get().0
        return parsed.render(ResultSet(columns: MedianQuery.columns, rows: Self.rows), maxBytes: maxBytes)
    }

    func failure<T>(_ result: Result<T, APIError>) -> APIError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    // MARK: Range

    @Test("Range 0-9223372036854775807, which once trapped, is the whole result")
    func rangeToInt64Max() throws {
        let response = try rendered([], range: "0-9223372036854775807")
        #expect(response.status == 200)
        #expect(try JSONValue.parse(response.body, maxBytes: 1 << 20).arrayValue?.count == Self.rows.count)
        let counted = try rendered([], range: "0-9223372036854775807", prefer: "count=exact")
        #expect(counted.status == 200 && counted.header("Content-Range") == "0-3/4")
        let partial = try rendered([], range: "1-9223372036854775807", prefer: "count=exact")
        #expect(partial.status == 206 && partial.header("Content-Range") == "1-3/4")
    }

    @Test("Range bounds of any length are clamped to 2^31-1; backwards is decided on the exact values")
    func rangeHeaderExtremes() {
        let max = ReadOptions.Limits.maxIndex
        #expect(RowRange.parseHeader("0-9223372036854775807")! == (0, max, false))
        #expect(RowRange.parseHeader("9223372036854775807-")! == (max, nil, false))
        let huge = String(repeating: "9", count: 400)
        #expect(RowRange.parseHeader("\(huge)-\(huge)")! == (max, max, false))
        #expect(RowRange.parseHeader("\(huge)9-\(huge)")! == (max, max, true), "longer is larger, though both clamp")
        #expect(RowRange.parseHeader("0000000000000000000005-4")! == (5, 4, true))
        #expect(RowRange.parseHeader("4-0000000000000000000005")! == (4, 5, false))
        for ignored in ["", "-", "-5", "-9223372036854775808", "5--1", "+1-2", " 1-2", "1-2 ", "٣-4", "1-2-3", "a-b", "1e3-"] {
            #expect(RowRange.parseHeader(ignored) == nil, "\(ignored) is not a range and is ignored")
        }
    }

    @Test("a Range past the end, at 2^31-1 or beyond it, is an empty page or PostgREST's 416, never a trap")
    func rangePastTheEnd() throws {
        let empty = try rendered([], range: "9223372036854775807-")
        #expect(empty.status == 200 && empty.body == Array("[]".utf8))
        let counted = try rendered([], range: "9223372036854775806-9223372036854775807", prefer: "count=exact")
        #expect(counted.status == 416 && counted.header("Content-Range") == "*/4")
        let backwards = failure(options([], range: "9223372036854775807-0"))
        #expect(backwards?.status == 416 && backwards?.code == "PGRST103")
        let backwardsHuge = failure(options([], range: "1\(String(repeating: "0", count: 30))-9223372036854775807"))
        #expect(backwardsHuge?.status == 416)
    }

    @Test("RowRange clamps whatever it is handed, so page arithmetic stays far from Int's range")
    func rowRangeClamps() throws {
        for (limit, offset) in [(Int.max, Int.max), (Int.max, 0), (1, Int.max), (Int.max, Int.min)] {
            let range = try RowRange(limit: limit, offset: offset, header: "0-9223372036854775807")
            #expect(range.lower >= 0 && range.lower <= ReadOptions.Limits.maxIndex)
            #expect((range.upper ?? 0) <= ReadOptions.Limits.maxIndex)
            var options = ReadOptions()
            options.range = range
            #expect(options.render(ResultSet(columns: MedianQuery.columns, rows: Self.rows)).status == 200)
        }
        #expect(throws: APIError.self) { try RowRange(limit: Int.min, offset: Int.max, header: nil) }
    }

    // MARK: limit and offset

    @Test("limit and offset: integers up to 2^31-1; anything else is 400 naming the parameter")
    func limitAndOffsetExtremes() throws {
        for name in ["limit", "offset"] {
            for value in Self.extremes where value != "-1" {
                let error = failure(options([(name, value)]))
                #expect(error?.status == 400 && error?.code == "PGRST100" && error?.message.contains(name) == true,
                        "\(name)=\(value)")
            }
        }
        #expect(failure(options([("limit", "-1")]))?.status == 416)
        #expect(failure(options([("offset", "-1")]))?.code == "2201X")
        #expect(failure(options([("limit", "-2147483647")]))?.status == 416)
        let farthest = try rendered([("limit", "2147483647"), ("offset", "2147483647")], range: "0-9223372036854775807")
        #expect(farthest.status == 200 && farthest.body == Array("[]".utf8))
        let whole = try rendered([("limit", "2147483647")])
        #expect(try JSONValue.parse(whole.body, maxBytes: 1 << 20).arrayValue?.count == Self.rows.count)
    }

    // MARK: filters on integer and timestamp columns

    @Test("filter operands: integers outside the column's type are 22003, non-integers 22P02")
    func integerOperands() {
        #expect(failure(options([("median_cents", "eq.2147483648")]))?.code == "22003")
        #expect(failure(options([("median_cents", "eq.-2147483649")]))?.code == "22003")
        #expect(failure(options([("median_cents", "eq.\(String(repeating: "9", count: 400))")]))?.code == "22003")
        #expect(failure(options([("median_cents", "eq.")]))?.code == "22P02")
        #expect(failure(options([("median_cents", "eq.-")]))?.code == "22P02")
        #expect(failure(options([("median_cents", "in.(1,9223372036854775808)")]))?.code == "22003")
        #expect(failure(options([("median_cents", "eq.-2147483648")])) == nil)
        #expect(ColumnType.bigint.value("-9223372036854775808") == .success(.integer(.min)))
        #expect(failure(ColumnType.bigint.value("9223372036854775808"))?.code == "22003")
    }

    @Test("timestamps at the ends of their fields are read without overflow")
    func timestampExtremes() {
        #expect(Timestamp.microseconds("9999-12-31T23:59:59.999999999999999999+15:59:59") != nil)
        #expect(Timestamp.microseconds("0001-01-01T00:00:00.000000000000000001-15:59:59") != nil)
        #expect(Timestamp.microseconds("0000-02-29") != nil, "year 0 is a leap year in the proleptic calendar")
        #expect(Timestamp.microseconds("2026-01-01T00:00:00.9999999999999999999") == nil, "19 fraction digits are refused")
        #expect(Timestamp.microseconds("99999-01-01") == nil)
        #expect(Timestamp.microseconds("") == nil)
    }

    // MARK: select, order, filters: bounded, no duplicates

    @Test("a select item repeated is 400 PGRST100 naming it")
    func duplicateSelect() throws {
        for (select, item) in [("*,*", "*"), ("location_id,*", "*"), ("*,location_id", "location_id"),
                               ("rate_kind,rate_kind", "rate_kind"), ("a:location_id,a:rate_kind", "a:rate_kind"),
                               ("location_id:rate_kind,location_id", "location_id")] {
            let error = failure(options([("select", select)]))
            #expect(error?.status == 400 && error?.code == "PGRST100", "\(select)")
            #expect(error?.message.contains("'\(item)'") == true, "\(select): \(error?.message ?? "accepted")")
        }
        let stars = Array(repeating: "*", count: 7000).joined(separator: ",")
        #expect(failure(options([("select", stars)]))?.status == 400)
        let aliases = try rendered([("select", "a:location_id,b:location_id,median_cents")])
        #expect(aliases.status == 200)
        #expect(try JSONValue.parse(aliases.body, maxBytes: 1 << 20).arrayValue?.first?["b"] == "a")
    }

    @Test("select, order, filters and in-lists have documented maxima, each named when passed")
    func optionSizes() {
        let longSelect = "location_id," + String(repeating: " ", count: ReadOptions.Limits.maxSelectBytes)
        #expect(failure(options([("select", longSelect)]))?.details?.contains("\(ReadOptions.Limits.maxSelectBytes) bytes") == true)
        let manyItems = (0...ReadOptions.Limits.maxSelectItems).map { "a\($0):location_id" }.joined(separator: ",")
        #expect(failure(options([("select", manyItems)]))?.details?.contains("at most \(ReadOptions.Limits.maxSelectItems) items") == true)
        let enoughItems = (1...ReadOptions.Limits.maxSelectItems).map { "a\($0):location_id" }.joined(separator: ",")
        #expect(failure(options([("select", enoughItems)])) == nil)

        let manyTerms = Array(repeating: "median_cents", count: ReadOptions.Limits.maxOrderTerms + 1).joined(separator: ",")
        #expect(failure(options([("order", manyTerms)]))?.message.contains("order") == true)
        #expect(failure(options([("order", String(repeating: "x", count: ReadOptions.Limits.maxOrderBytes + 1))]))?.status == 400)

        let filters = (0...ReadOptions.Limits.maxFilters).map { _ in ("median_cents", "gt.1") }
        #expect(failure(options(filters))?.details?.contains("at most \(ReadOptions.Limits.maxFilters) filters") == true)
        #expect(failure(options(Array(filters.dropFirst()))) == nil)
        let longValue = "eq." + String(repeating: "x", count: ReadOptions.Limits.maxFilterBytes)
        #expect(failure(options([("location_id", longValue)]))?.message.contains("location_id") == true)
        let longList = "in.(" + (0...ReadOptions.Limits.maxListItems).map(String.init).joined(separator: ",") + ")"
        #expect(failure(options([("median_cents", longList)]))?.details?.contains("at most \(ReadOptions.Limits.maxListItems) items") == true)
    }

    // MARK: the response cap

    @Test("a body over the cap is 400 PGRST190, in every format; under it nothing changes")
    func responseCap() throws {
        let whole = try rendered([])
        #expect(whole.status == 200)
        let size = whole.body.count
        #expect(try rendered([], maxBytes: size).body == whole.body, "a body of exactly the cap is answered")
        #expect(try rendered([], maxBytes: size - 1).status == 400)
        for accept in ["application/json", "text/csv", "application/vnd.pgrst.array+json;nulls=stripped"] {
            let request = HTTPRequest(method: "GET", path: "/rest/v1/rpc/price_median", headers: ["accept": accept])
            let parsed = try ReadOptions.parse(query: [], headers: request, columns: MedianQuery.columns,
                                               relation: "price_median", isRead: true).get().0
            let small = parsed.render(ResultSet(columns: MedianQuery.columns, rows: Self.rows), maxBytes: 40)
            #expect(small.status == 400, "\(accept)")
            let body = try JSONValue.parse(small.body, maxBytes: 1 << 16)
            #expect(body["code"] == "PGRST190" && body["message"]?.stringValue?.contains("40 bytes") == true)
        }
    }

    @Test("a page that must pass the cap is refused before its body is built")
    func responseCapOnManyRows() {
        let row: [String?] = [String(repeating: "x", count: 200), "hourly", "EUR", "1", "3", "3", nil]
        let rows = Array(repeating: row, count: 100_000)
        let response = ReadOptions().render(ResultSet(columns: MedianQuery.columns, rows: rows), maxBytes: 1 << 20)
        #expect(response.status == 400 && response.body.count < 1000)
    }

    @Test("the widest legitimate answers fit the default cap four times over")
    func widestLegitimateAnswers() {
        // Ids of 200 characters (the table's limit), each 4 bytes in UTF-8; every column; largest values.
        let id = String(repeating: "\u{1F17F}", count: 200)
        let medianRow: [String?] = [id, "monthly", "EUR", "2147483647", "2147483647", "2147483647", "2026-11-29 22:00:00+00"]
        let medians = ReadOptions().render(ResultSet(columns: MedianQuery.columns,
                                                     rows: Array(repeating: medianRow, count: 50 * RateKind.allCases.count)))
        let quoteRow: [String?] = [id, "monthly", "EUR", "2147483647", "2147483647", "9007199254740991", "f",
                                   "max_stay_exceeded", String(repeating: "s", count: 63), "2026-11-29 22:00:00+00"]
        let quotes = ReadOptions().render(ResultSet(columns: QuoteQuery.columns, rows: Array(repeating: quoteRow, count: 50)))
        #expect(medians.status == 200 && quotes.status == 200)
        // Measured: 195 001 bytes (200 median rows) and 57 151 bytes (50 quote rows).
        #expect(medians.body.count * 4 < ServiceSettings.defaultMaxResponseBytes, "\(medians.body.count)")
        #expect(quotes.body.count * 4 < ServiceSettings.defaultMaxResponseBytes, "\(quotes.body.count)")
        #expect(medians.body.count > 150_000, "the worst case is measured, not an ordinary answer: \(medians.body.count)")
    }

    // MARK: other parsers a client drives

    @Test("Accept quality values of any spelling are read without trapping")
    func acceptQualities() throws {
        for q in ["nan", "inf", "-inf", "1e400", "-0", "9223372036854775808", "", "0x1p3"] {
            _ = try? ResultFormat(accept: "text/csv;q=\(q), application/json;q=0.5")
        }
        #expect(try ResultFormat(accept: "text/csv;q=nan, application/json") == .json(stripNulls: false))
    }

    @Test("report prices beyond any integer type are refused with a clear error, not trapped")
    func reportNumbers() {
        for (literal, code) in [("9223372036854775807", "23514"), ("9223372036854775808", "22P02"),
                                ("-9223372036854775808", "23514"), ("-9223372036854775809", "22P02"),
                                (String(repeating: "9", count: 400), "22P02"), ("1e400", "22P02"), ("-0", "23514"),
                                ("1.5", "22P02"), ("1000001", "23514")] {
            let body = #"{"location_id":"x","rate_kind":"hourly","price_cents":\#(literal)}"#
            let result = ReportSubmission.parse(body: Array(body.utf8), contentType: "application/json", prefer: nil)
            #expect(failure(result)?.code == code, "price_cents \(literal)")
        }
    }

    @Test("quote arguments: long or extreme starts_at and duration are refused before any regular expression")
    func quoteArguments() {
        for (key, value) in [("duration", "P" + String(repeating: "9", count: 1000) + "D"), ("duration", "P9223372036854775807D"),
                             ("duration", "PT9223372036854775808H"), ("duration", "P-1D"), ("duration", ""),
                             ("starts_at", String(repeating: "9", count: 1000)), ("starts_at", "9223372036854775807-01-01"),
                             ("starts_at", "2026-01-01T00:00:00+99:99"), ("starts_at", "")] {
            let body = #"{"location_ids":["a"],"\#(key)":"\#(value)"}"#
            let result = QuoteQuery.parse(isRead: false, queryArguments: [], body: Array(body.utf8), contentType: "application/json")
            #expect(failure(result)?.status == 400, "\(key) \(value.prefix(30))")
        }
    }
}

@Suite("The public parser entry points (for fuzz targets) run the request's own code")
struct ClientInputParsersTests {
    @Test("each returns the status the input would get")
    func statuses() {
        let range = HTTPRequest(method: "GET", path: "/", headers: ["range": "0-9223372036854775807"])
        #expect(ClientInputParsers.readOptions(query: [], request: range) == 200)
        #expect(ClientInputParsers.readOptions(query: [(name: "select", value: "*,*")], request: range) == 400)
        #expect(ClientInputParsers.readOptions(query: [], request: range, isQuotes: true, maxResponseBytes: 10) == 400)
        #expect(ClientInputParsers.rangeHeader("0-9223372036854775807")?.to == ReadOptions.Limits.maxIndex)
        let quotes = HTTPRequest(method: "POST", path: "/", headers: ["content-type": "application/json"],
                                 body: Array(#"{"location_ids":["a"],"duration":"PT2H"}"#.utf8))
        #expect(ClientInputParsers.functionCall("price_quotes", request: quotes) == 200)
        #expect(ClientInputParsers.functionCall("price_medians", request: quotes) == 404)
        let medians = HTTPRequest(method: "GET", path: "/", query: [(name: "location_ids", value: "{a,b}"), (name: "rate_kind", value: "")])
        #expect(ClientInputParsers.functionCall("price_medians", request: medians) == 200)
        let report = HTTPRequest(method: "POST", path: "/", headers: ["content-type": "application/json"],
                                 body: Array(#"{"location_id":"x","rate_kind":"hourly","price_cents":9223372036854775808}"#.utf8))
        #expect(ClientInputParsers.reportSubmission(report) == 400)
    }
}

/// Random read options built from the pieces that broke things (extreme numbers, stars, separators,
/// operators, multi-byte scalars): a cheap, seeded sweep that runs in every `swift test`, beside the
/// libFuzzer targets. Any trap fails the whole run; every answer must be one PostgREST gives.
@Suite("Random read options never trap")
struct RandomReadOptionsTests {
    /// SplitMix64: seeded, so a failure names its iteration and can be replayed.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    static let pieces = ["0", "1", "-", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
                         "2147483647", "2147483648", String(repeating: "9", count: 40), "*", ",", ".", ":", "(", ")", "\"",
                         "\\", " ", "eq.", "not.", "in.(", "is.", "null", "true", "gt.", "desc", "nullsfirst", "location_id",
                         "median_cents", "last_reported_at", "rate_kind", "a", "é", "e\u{301}", "\u{1F17F}", "\u{0}", "%", "{", "}",
                         "2026-11-29T22:00:00Z", "+15:59", "q=", "count=exact", ";"]
    static let keys = ["select", "order", "limit", "offset", "median_cents", "location_id", "last_reported_at", "reports",
                       "not.and", "x.limit", "currency", "rate_kind"]
    static let statuses: Set<Int> = [200, 206, 400, 406, 416]

    func text(_ generator: inout Generator, maxPieces: Int = 8) -> String {
        (0..<Int.random(in: 0...maxPieces, using: &generator)).map { _ in Self.pieces.randomElement(using: &generator)! }.joined()
    }

    @Test("10 000 random queries, Range, Accept and Prefer headers: parsed and rendered, never trapped")
    func sweep() {
        var generator = Generator(state: 19)
        var rendered = 0
        for _ in 0..<10_000 {
            let query = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                (name: Bool.random(using: &generator) ? Self.keys.randomElement(using: &generator)! : text(&generator, maxPieces: 2),
                 value: text(&generator))
            }
            var headers: [String: String] = [:]
            if Bool.random(using: &generator) { headers["range"] = text(&generator, maxPieces: 4) }
            if Int.random(in: 0..<4, using: &generator) == 0 { headers["accept"] = "text/csv;" + text(&generator, maxPieces: 3) }
            if Int.random(in: 0..<4, using: &generator) == 0 { headers["prefer"] = text(&generator, maxPieces: 3) }
            let request = HTTPRequest(method: "GET", path: "/rest/v1/rpc/price_medians", headers: headers)
            switch ReadOptions.parse(query: query, headers: request, columns: MedianQuery.columns,
                                     relation: "price_medians", isRead: true) {
            case .success(let (options, _)):
                let response = options.render(ResultSet(columns: MedianQuery.columns, rows: ClientInputBoundsTests.rows),
                                              maxBytes: Int.random(in: 1...2048, using: &generator))
                #expect(Self.statuses.contains(response.status), "\(query) \(headers): \(response.status)")
                rendered += 1
            case .failure(let error):
                #expect(Self.statuses.contains(error.status), "\(query) \(headers): \(error)")
            }
        }
        #expect(rendered > 1_000, "the sweep reaches rendering often enough to mean something: \(rendered)")
    }
}

private func == (lhs: (Int, Int?, Bool), rhs: (Int, Int?, Bool)) -> Bool {
    lhs.0 == rhs.0 && lhs.1 == rhs.1 && lhs.2 == rhs.2
}
