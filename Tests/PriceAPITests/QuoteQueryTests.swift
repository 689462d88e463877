import PriceDB
import PriceHTTP
import PriceJSON
import Testing
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
        #expect(statement == Statements.quotes)
        #expect(parameters == [#"["sfmta:401","a\"b"]"#, "daily", "2026-03-02T17:30:00-05:00", "PT2H"])
    }

    @Test("arguments left out are left out of the call, so the function's defaults apply")
    func defaults() throws {
        let (statement, parameters) = try parse(#"{"duration":"PT90M","location_ids":[]}"#).get().call
        #expect(parameters == ["[]", "PT90M"])
        #expect(statement.sql.contains("duration => $2::interval"))
        #expect(!statement.sql.contains("rate_kind") && !statement.sql.contains("starts_at"))
    }

    @Test("one prepared statement per combination of optional arguments, the full one being Statements.quotes")
    func statements() {
        #expect(Statements.allQuotes.count == 8)
        #expect(Set(Statements.allQuotes.map(\.name)).count == 8)
        #expect(Statements.allQuotes.contains(Statements.quotes))
        #expect(Statements.all.contains(Statements.quotes))
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
        #expect(batch.map(statementName) == ["pricesvc_identity", Statements.quotes(passing: [.duration]).name])
        #expect(parameters(batch[1]) == [#"["a"]"#, "PT2H"])
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

    @Test("price_quotes is routed and has its own metrics label")
    func routed() {
        #expect(Router.route(method: "POST", path: "/rest/v1/rpc/price_quotes") == .rpc("price_quotes"))
        #expect(Route.rpc("price_quotes").label == "/rest/v1/rpc/price_quotes")
        #expect(Route.allLabels.contains("/rest/v1/rpc/price_quotes"))
    }
}
