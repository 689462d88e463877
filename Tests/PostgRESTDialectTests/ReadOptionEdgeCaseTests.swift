import PriceHTTPMessage
import Testing
@testable import PostgRESTDialect

/// The read-option grammar's edge cases, each refused by name with PostgREST's code and status. They
/// are decided by the pure parser, so they are proven here; integration/e2e/test_read_options.py keeps one of
/// each kind on the wire, to show the refusal reaches a client unchanged.
@Suite("Read options at their edges, without a database")
struct ReadOptionEdgeCaseTests {
    let base = ReadOptionsTests()
    static let int64Max = "9223372036854775807"

    func refusal(_ query: [(String, String)], headers: [String: String] = [:], method: String = "POST",
                 isRead: Bool = false) -> APIError? {
        if case .failure(let error) = base.options(query, headers: headers, method: method, isRead: isRead) {
            return error
        }
        return nil
    }

    /// What a client reads of a refusal: the message and the details, as one lower-cased text.
    func words(_ error: APIError) -> String {
        (error.message + " " + (error.details ?? "")).lowercased()
    }

    @Test("operators, embeddings, casts, aggregates, unknown columns and badly typed values: code, status, named",
          arguments: [
              (("currency", "like.E*"), "PGRST127", 400, "like"),
              (("currency", "ilike.e*"), "PGRST127", 400, "ilike"),
              (("currency", "eq(any).{EUR,USD}"), "PGRST127", 400, "eq(any)"),
              (("location_id", "fts.garage"), "PGRST127", 400, "fts"),
              (("or", "(currency.eq.EUR,median_cents.gt.1000)"), "PGRST127", 400, "or"),
              (("select", "location_id,owner(*)"), "PGRST200", 400, "owner"),
              (("select", "median_cents::text"), "PGRST127", 400, "casts"),
              (("select", "count()"), "PGRST123", 400, "aggregate"),
              (("select", "nope"), "42703", 400, "nope"),
              (("order", "nope.desc"), "42703", 400, "nope"),
              (("order", "median_cents.sideways"), "PGRST100", 400, "order"),
              (("nope", "eq.1"), "42703", 400, "nope"),
              (("median_cents", "eq.cheap"), "22P02", 400, "cheap"),
              (("median_cents", "eq.99999999999"), "22003", 400, "out of range"),
              (("last_reported_at", "gt.yesterday"), "22007", 400, "yesterday"),
              (("median_cents", "is.true"), "42804", 400, "boolean"),
              (("currency", "EUR"), "PGRST100", 400, "eur"),
              (("owner.name", "eq.x"), "PGRST108", 400, "owner"),
              (("limit", "ten"), "PGRST100", 400, "limit"),
              (("limit", "-1"), "PGRST103", 416, "limit"),
              (("offset", "-1"), "2201X", 400, "offset"),
              (("columns", "location_ids"), "PGRST127", 400, "columns"),
          ] as [((String, String), String, Int, String)])
    func refusedByName(_ option: (String, String), code: String, status: Int, named: String) throws {
        let error = try #require(refusal([option]), "\(option) was accepted")
        #expect(error.code == code, "\(option)")
        #expect(error.status == status, "\(option)")
        #expect(words(error).contains(named), "\(option): \(error)")
    }

    @Test("preferences pricesvc does not implement are refused by name beside one it does",
          arguments: ["count=planned", "count=estimated", "return=minimal", "tx=rollback", "max-affected=1",
                      "missing=default", "timezone=Europe/Paris", "anything"])
    func unknownPreferences(_ prefer: String) throws {
        let error = try #require(refusal([], headers: ["prefer": "count=exact, \(prefer)"]))
        #expect(error.status == 400 && error.code == "PGRST122")
        #expect(error.details == "Invalid preferences: \(prefer)")
    }

    @Test("limit and offset outside 0...2^31-1 are 400 naming the option and the bound",
          arguments: ["limit", "offset"], [int64Max, "-9223372036854775808", String(repeating: "9", count: 400),
                                          "2147483648", ""])
    func outOfDomain(_ name: String, _ value: String) throws {
        let error = try #require(refusal([(name, value)]), "\(name)=\(value) was accepted")
        #expect(error.status == 400 && error.code == "PGRST100")
        #expect(error.message.contains(name) && (error.details ?? "").contains("2147483647"), "\(error)")
    }

    @Test("the largest limit and offset are a page: empty without a count, 416 with one")
    func largestPage() throws {
        let query = [("limit", "2147483647"), ("offset", "2147483647")]
        let plain = try base.render(query)
        #expect(plain.status == 200 && String(decoding: plain.body, as: UTF8.self) == "[]")
        let counted = try base.render(query, headers: ["prefer": "count=exact"])
        #expect(counted.status == 416)
    }

    @Test("a select item repeated is 400 naming it; aliases of one column are not repeats",
          arguments: [("*,*", "*"), ("location_id,*", "*"), ("*,median_cents", "median_cents"),
                      ("x:currency,x:rate_kind", "x:rate_kind")])
    func repeatedSelect(_ select: String, _ item: String) throws {
        let error = try #require(refusal([("select", select)]))
        #expect(error.code == "PGRST100" && error.message.contains("'\(item)'"), "\(error)")
    }

    @Test("aliases of one column are two columns")
    func aliases() throws {
        #expect(refusal([("select", "id:location_id,again:location_id")]) == nil)
    }

    @Test("read options past their limits are 400 naming the limit",
          arguments: [
              (("select", (0..<33).map { "a\($0):location_id" }.joined(separator: ",")), "at most 32 items"),
              (("order", Array(repeating: "median_cents", count: 17).joined(separator: ",")), "at most 16 terms"),
              (("location_id", "in.(" + (0..<257).map(String.init).joined(separator: ",") + ")"), "at most 256 items"),
              (("select", Array(repeating: "*", count: 7000).joined(separator: ",")), "1024 bytes"),
          ] as [((String, String), String)])
    func pastLimits(_ option: (String, String), _ named: String) throws {
        let error = try #require(refusal([option]))
        #expect(error.code == "PGRST100" && (error.details ?? "").contains(named), "\(error)")
    }

    @Test("a Range up to and beyond Int64 is an answer, decided on the exact bounds",
          arguments: [
              ("0-\(int64Max)", nil, 200),
              ("0-\(int64Max)", "count=exact", 200),
              ("\(int64Max)-", nil, 200),
              ("\(int64Max)-", "count=exact", 416),
              ("0-\(String(repeating: "9", count: 400))", nil, 200),
              ("\(String(repeating: "9", count: 400))-\(int64Max)", nil, 416),
              ("2147483647-2147483647", "count=exact", 416),
          ] as [(String, String?, Int)])
    func rangeBounds(_ range: String, _ prefer: String?, _ status: Int) throws {
        var headers = ["range": range]
        if let prefer { headers["prefer"] = prefer }
        switch base.options([], headers: headers, method: "GET", isRead: true) {
        case .failure(let error):
            #expect(error.status == status && error.code == "PGRST103", "\(range): \(error)")
        case .success(let (parsed, _)):
            let response = parsed.render(ResultSet(columns: ReadOptionsTests.columns, rows: ReadOptionsTests.rows))
            #expect(response.status == status, "\(range) \(prefer ?? "")")
        }
    }

    @Test("the Range header beyond Int64 still pages real rows")
    func rangePagesRows() throws {
        let parsed = try base.options([("order", "median_cents")], headers: ["range": "2-\(Self.int64Max)", "prefer": "count=exact"],
                                      method: "GET", isRead: true).get().0
        let response = parsed.render(ResultSet(columns: ReadOptionsTests.columns, rows: ReadOptionsTests.rows))
        #expect(response.status == 206 && response.header("Content-Range") == "2-3/4")
        let rows = try base.json(response).arrayValue ?? []
        #expect(rows.map { $0["median_cents"] } == [1100, 2000])
    }
}
