import PriceDB
import PriceHTTPMessage
import PriceJSON
import Testing
import PriceSQL
@testable import PriceAPI

@Suite("price_quotes arguments")
struct QuoteQueryTests {
    func parse(_ body: String, method: String = "POST",
               query: [(name: String, value: String)] = []) -> Result<QuoteQuery, APIError> {
        QuoteQuery.parse(isRead: method == "GET" || method == "HEAD", queryArguments: query.map { ($0.name, $0.value) },
                         body: Array(body.utf8), contentType: "application/json")
    }

    @Test("every argument given: the statement pgbench runs, with the ids as JSON")
    func allArguments() throws {
        let quote = try parse(#"{"location_ids":["sfmta:401","a\"b"],"rate_kind":"daily","starts_at":"2026-03-02T17:30:00-05:00","duration":"PT2H"}"#).get()
        let (statement, parameters) = quote.call
        #expect(statement == Statements.quotes.prepared)
        #expect(parameters == [#"["sfmta:401","a\"b"]"#, "daily", "2026-03-02T17:30:00-05:00", "PT2H"])
    }

    @Test("arguments left out are left out of the call, so the function's defaults apply")
    func defaults() throws {
        let (statement, parameters) = try parse(#"{"duration":"PT90M","location_ids":[]}"#).get().call
        #expect(parameters == ["[]", "PT90M"])
        #expect(statement.sql.contains("duration => $2::interval"))
        #expect(!statement.sql.contains("rate_kind =>") && !statement.sql.contains("starts_at =>"))
    }

    @Test("one prepared statement per combination of optional arguments, the full one being Statements.quotes")
    func statements() {
        #expect(Statements.allQuotes.count == 8)
        #expect(Set(Statements.allQuotes.map(\.name)).count == 8)
        #expect(Statements.allQuotes.map(\.prepared).contains(Statements.quotes.prepared))
        #expect(Statements.all.contains(Statements.quotes.prepared))
        // The builder, given everything, writes the same call as the literal (pgbench reads the literal).
        let built = Statements.QuoteArgument.allCases.enumerated().map { $1.sql(parameter: $0 + 2) }
        for fragment in built { #expect(Statements.quotes.sql.contains(fragment)) }
    }

    @Test("GET takes PostgREST's array literal")
    func get() throws {
        let quote = try parse("", method: "GET", query: [("location_ids", "{a,b}"), ("duration", "PT2H")]).get()
        #expect(quote.locationIDs == ["a", "b"] && quote.duration == "PT2H" && quote.rateKind == nil)
    }

    @Test("unknown or missing argument names are PostgREST's 404; wrong types 400", arguments: [
        (#"{"location_ids":["a"],"at":"now"}"#, 404, "PGRST202"),
        (#"{"rate_kind":"hourly"}"#, 404, "PGRST202"),
        (#"{"location_ids":"a"}"#, 400, "22P02"),
        (#"{"location_ids":["a"],"duration":7200}"#, 400, "22P02"),
        (#"["a"]"#, 400, "PGRST102"),
    ])
    func refusals(_ body: String, _ status: Int, _ code: String) {
        guard case .failure(let error) = parse(body) else {
            Issue.record("accepted \(body)")
            return
        }
        #expect(error.status == status && error.code == code)
    }

    @Test("a bad argument is answered on the event loop; a good call is one plan: identity, then the quotes")
    func decidedOnce() throws {
        let fixture = ServiceFixture()
        let token = fixture.userToken()
        let refused = fixture.service.decide(fixture.request("POST", "/rest/v1/rpc/price_quotes",
                                                             body: #"{"location_ids":["a"],"until":"PT1H"}"#, token: token))
        #expect(status(refused) == 404)
        #expect(!refused.needsDatabase)
        // A read, like the medians: it may go to the replica pool.
        let good = fixture.service.decide(fixture.request("POST", "/rest/v1/rpc/price_quotes",
                                                          body: #"{"location_ids":["a"]}"#, token: token))
        guard case .database(let plan) = good.outcome else {
            Issue.record("expected a database plan")
            return
        }
        #expect(plan.readOnly)

        let reply = fixture.application.respond(to: fixture.request("POST", "/rest/v1/rpc/price_quotes",
                                                                     body: #"{"location_ids":["a"],"duration":"PT2H"}"#,
                                                                     token: token))
        #expect(reply.label == "/rest/v1/rpc/price_quotes")
        guard case .onWorker(let run, _) = reply.work else {
            Issue.record("expected work for a database worker")
            return
        }
        #expect(fixture.database.batches.isEmpty, "nothing is sent before a worker runs the plan")
        let response = run()
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == "[]")
        let batch = try #require(fixture.database.batches.first)
        // A quote is an expensive call: its own statement timeout, for this transaction, before the call.
        #expect(batch.map(statementName) == ["pricesvc_identity", "pricesvc_expensive_statement_timeout",
                                             "pricesvc_quotes_rows_4"])
        #expect(parameters(batch[1]) == ["1500"])
        let prepared = try #require(Statements.allQuotes.first { $0.name == "pricesvc_quotes_rows_4" })
        #expect(prepared.sql.contains("duration => $2::interval") && !prepared.sql.contains("rate_kind =>")
                && !prepared.sql.contains("starts_at =>"))
        #expect(parameters(batch[2]) == [#"["a"]"#, "PT2H"])
    }

    @Test("the database's refusal (an unknown rate kind) is PostgREST's 400")
    func databaseRefusal() throws {
        let database = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "22023", message: "unknown rate_kind 'weekly'")
        }
        let fixture = ServiceFixture(database: database)
        let response = fixture.handle(fixture.request("POST", "/rest/v1/rpc/price_quotes",
                                                      body: #"{"location_ids":["a"],"rate_kind":"weekly"}"#,
                                                      token: fixture.userToken()))
        #expect(response.status == 400)
        #expect(try JSONValue.parse(response.body, maxBytes: 4096)["code"] == "22023")
    }

    @Test("starts_at and duration are accepted exactly in the forms the OpenAPI document states", arguments: [
        ("starts_at", "2026-03-02T17:30:00-05:00", true), ("starts_at", "2026-03-31 17:30Z", true),
        ("starts_at", "2026-03-02", true), ("starts_at", "2026-02-30T10:00:00Z", false),
        ("starts_at", "0000-01-01T00:00:00Z", false), ("starts_at", "0170-07-03T12:00:00-12", true),
        ("starts_at", "0170-07-03-12", false), ("starts_at", "2026-03-02Z", false), ("starts_at", "soon", false), ("starts_at", "now", false),
        ("duration", "PT2H", true), ("duration", "PT90M", true), ("duration", "PT1H30M", true), ("duration", "P1D", true),
        ("duration", "P365DT23H", true), ("duration", "PT0H", false), ("duration", "P400D", false),
        ("duration", "2 hours", false), ("duration", "PT30S", false), ("duration", "PT2H\n", false),
    ])
    func argumentForms(_ name: String, _ value: String, _ accepted: Bool) throws {
        let result = parse("", method: "GET", query: [("location_ids", "{a}"), (name, value)])
        switch result {
        case .success: #expect(accepted, "\(name)=\(value)")
        case .failure(let error):
            #expect(!accepted, "\(name)=\(value): \(error.message)")
            #expect(error.status == 400 && error.code == (name == "duration" ? "22023" : "22007"))
        }
        let pattern = try Regex(name == "duration" ? QuoteQuery.durationPattern : QuoteQuery.startsAtPattern)
        if value.firstMatch(of: pattern) != nil { #expect(accepted, "the document states \(value) for \(name)") }
    }

    @Test("read options apply to the quotes' columns: booleans, bigints, order and select")
    func readOptions() throws {
        let rows: [[String?]] = [
            ["a", "hourly", "USD", "350", "3", "150", "t", nil, "city", "2026-01-01 00:00:00+00"],
            ["b", "hourly", "USD", nil, nil, nil, "f", "no_parking", "city", "2026-01-01 00:00:00+00"],
            ["c", "hourly", "USD", nil, nil, "600", "t", nil, "city", "2026-01-01 00:00:00+00"],
        ]
        func render(_ query: [(String, String)]) throws -> JSONValue {
            let request = HTTPRequest(method: "POST", path: "/rest/v1/rpc/price_quotes")
            let options = try ReadOptions.parse(query: query.map { (name: $0.0, value: $0.1) }, headers: request,
                                                columns: QuoteQuery.columns, relation: "price_quotes", isRead: false).get().0
            let response = options.render(ResultSet(columns: QuoteQuery.columns, rows: rows))
            return try JSONValue.parse(response.body, maxBytes: 1 << 16)
        }
        let allowed = try render([("published_allowed", "is.true"), ("order", "published_cents.desc"), ("select", "location_id,published_cents")])
        #expect(allowed == (try JSONValue.parse(Array(#"[{"location_id":"c","published_cents":600},{"location_id":"a","published_cents":150}]"#.utf8), maxBytes: 4096)))
        let refused = try render([("published_allowed", "eq.false"), ("select", "location_id,published_allowed,median_cents")])
        #expect(refused == (try JSONValue.parse(Array(#"[{"location_id":"b","published_allowed":false,"median_cents":null}]"#.utf8), maxBytes: 4096)))
        #expect(try render([("published_cents", "gt.3000000000")]).arrayValue?.isEmpty == true, "bigint operands beyond int4")
        let request = HTTPRequest(method: "POST", path: "/rest/v1/rpc/price_quotes")
        for (key, value, code) in [("published_allowed", "eq.yes", "22P02"), ("reports", "eq.3", "42703"),
                                   ("location_id", "is.true", "42804")] {
            guard case .failure(let error) = ReadOptions.parse(query: [(name: key, value: value)], headers: request,
                                                               columns: QuoteQuery.columns, relation: "price_quotes", isRead: false) else {
                Issue.record("accepted \(key)=\(value)")
                continue
            }
            #expect(error.code == code, "\(key)=\(value)")
        }
    }

    @Test("price_quotes is routed and has its own metrics label")
    func routed() {
        #expect(Router.route(method: "POST", path: "/rest/v1/rpc/price_quotes") == .rpc("price_quotes"))
        #expect(Route.rpc("price_quotes").label == "/rest/v1/rpc/price_quotes")
        #expect(Route.allLabels.contains("/rest/v1/rpc/price_quotes"))
    }
}
