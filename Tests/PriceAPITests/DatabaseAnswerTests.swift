import AnonAuth
import PriceDB
import PriceHTTPMessage
import Testing
@testable import PriceAPI

@Suite("What the database answers: reads routed and counted, rows of the wrong shape refused")
struct DatabaseAnswerTests {
    let call = #"{"location_ids":["a"]}"#
    let report = #"{"location_id":"sfmta:garage-1","rate_kind":"hourly","price_cents":350}"#

    func metric(_ fixture: ServiceFixture, _ name: String) -> String? {
        fixture.service.metrics.render().split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    func handle(_ application: PriceApplication, _ request: HTTPRequest) -> HTTPResponse {
        application.respond(to: request).answer()
    }

    @Test("function calls go to the replica and submissions to the primary; the reads are counted by pool")
    func readsAreRoutedAndCounted() {
        let fixture = ServiceFixture()
        let replica = RecordingDatabase()
        let application = PriceApplication(service: fixture.service, database: fixture.database, readReplica: replica)
        #expect(handle(application, fixture.request("POST", "/rest/v1/rpc/price_medians", body: call)).status == 200)
        #expect(handle(application, fixture.request("POST", "/rest/v1/price_reports", body: report)).status == 201)
        #expect(replica.batches.count == 1 && fixture.database.batches.count == 1)
        #expect(metric(fixture, #"pricesvc_db_reads_total{pool="replica"}"#) == "1")
        #expect(metric(fixture, #"pricesvc_db_reads_total{pool="primary"}"#) == "0")
    }

    @Test("a read the replica cannot answer is answered by the primary and counted as a fallback")
    func fallbackIsCounted() {
        let fixture = ServiceFixture()
        let replica = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .connectFailed, message: "connection refused")
        }
        let application = PriceApplication(service: fixture.service, database: fixture.database, readReplica: replica)
        #expect(handle(application, fixture.request("POST", "/rest/v1/rpc/price_medians", body: call)).status == 200)
        #expect(fixture.database.batches.count == 1)
        #expect(metric(fixture, "pricesvc_db_replica_fallbacks_total") == "1")
        #expect(metric(fixture, #"pricesvc_db_reads_total{pool="primary"}"#) == "1")
    }

    @Test("median rows of another shape (a column missing, a count that is not a number) are a 500, not a trap")
    func rowsOfAnotherShapeAreAnError() {
        for row: [String?] in [["a", "hourly", "USD", "250", "3", "4"], ["a", "hourly", "USD", "250", "three", "4", "2026-01-01"]] {
            let database = RecordingDatabase { queries in
                queries.map { _ in QueryResult(rows: [row]) }
            }
            let fixture = ServiceFixture(database: database)
            let response = fixture.handle(fixture.request("POST", "/rest/v1/rpc/price_medians", body: call))
            #expect(response.status == 500)
            #expect(String(decoding: response.body, as: UTF8.self).contains(#""message":"Internal error""#))
        }
    }

    @Test("a refresh row of another shape is an invalid refresh token, as when there is no row")
    func refreshRowOfAnotherShape() {
        let database = RecordingDatabase { queries in
            queries.map { _ in QueryResult(rows: [["ok", "u", "s", "c", "u", "{}", "not a number", "aa"]]) }
        }
        let fixture = ServiceFixture(database: database)
        var request = fixture.request("POST", "/auth/v1/token", body: #"{"refresh_token":"\#(RefreshToken.generate().token)"}"#)
        request.query = [("grant_type", "refresh_token")]
        let response = fixture.handle(request)
        #expect(database.batches.count == 1)
        #expect(response.status == 400)
        #expect(String(decoding: response.body, as: UTF8.self).contains("refresh_token_not_found"))
    }
}

@Suite("The read options see the columns the statements select")
struct StatementColumnsTests {
    @Test("names in select order, and the types the read options compare and render apart")
    func columnsComeFromTheStatements() {
        #expect(MedianQuery.columns.map(\.name) == ["location_id", "rate_kind", "currency", "median_cents", "reporters",
                                                     "reports", "last_reported_at"])
        let median = Dictionary(uniqueKeysWithValues: MedianQuery.columns.map { ($0.name, $0.type) })
        #expect(median["median_cents"] == .integer && median["last_reported_at"] == .timestamptz && median["currency"] == .text)
        let quote = Dictionary(uniqueKeysWithValues: QuoteQuery.columns.map { ($0.name, $0.type) })
        #expect(quote["published_cents"] == .bigint && quote["published_allowed"] == .boolean
                && quote["published_updated_at"] == .timestamptz && quote["reporters"] == .integer)
        #expect(QuoteQuery.columns.count == 10)
    }
}
