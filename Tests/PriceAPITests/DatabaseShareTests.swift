import Foundation
import PriceHTTPMessage
import Testing
@testable import PriceAPI

/// One address cannot hold more than its share of the database: 8 slow quotes from one address once held
/// every pool connection while everyone else got 503.
@Suite("Database share per client address, and the expensive class")
struct DatabaseShareTests {
    @Test("a client is admitted up to its limit, refused beyond it, and admitted again once one ends")
    func perClient() {
        var share = DatabaseShare(perClient: 2, expensiveTotal: 0)
        #expect(share.admit(client: "a", cost: .ordinary) == .admitted)
        #expect(share.admit(client: "a", cost: .expensive) == .admitted)
        #expect(share.admit(client: "a", cost: .ordinary) == .clientBusy(limit: 2))
        #expect(share.admit(client: "b", cost: .ordinary) == .admitted, "another client is not affected")
        share.release(client: "a", cost: .ordinary)
        #expect(share.admit(client: "a", cost: .ordinary) == .admitted)
        #expect(share.inFlight == ["a": 2, "b": 1])
    }

    @Test("expensive calls are limited in all, across clients; ordinary ones are not")
    func expensiveClass() {
        var share = DatabaseShare(perClient: 0, expensiveTotal: 2)
        #expect(share.admit(client: "a", cost: .expensive) == .admitted)
        #expect(share.admit(client: "b", cost: .expensive) == .admitted)
        #expect(share.admit(client: "c", cost: .expensive) == .expensiveBusy(limit: 2))
        #expect(share.admit(client: "c", cost: .ordinary) == .admitted)
        share.release(client: "a", cost: .expensive)
        #expect(share.expensiveInFlight == 1)
        #expect(share.admit(client: "c", cost: .expensive) == .admitted)
    }

    @Test("a refused request counts nothing in, and a client with nothing in flight is forgotten")
    func refusalsAndForgetting() {
        var share = DatabaseShare(perClient: 1, expensiveTotal: 1)
        #expect(share.admit(client: "a", cost: .expensive) == .admitted)
        #expect(share.admit(client: "b", cost: .expensive) == .expensiveBusy(limit: 1))
        #expect(share.inFlight == ["a": 1], "b's refusal left nothing behind")
        share.release(client: "a", cost: .expensive)
        #expect(share.inFlight.isEmpty && share.expensiveInFlight == 0)
        share.release(client: "a", cost: .expensive)
        #expect(share.inFlight.isEmpty && share.expensiveInFlight == 0, "an extra release changes nothing")
    }

    @Test("while the database is unavailable the excess is the database's fault, not the client's, until it answers again")
    func databaseUnavailable() {
        var share = DatabaseShare(perClient: 1, expensiveTotal: 0)
        #expect(share.admit(client: "a", cost: .ordinary) == .admitted)
        share.noteDatabase(available: false)
        #expect(share.admit(client: "a", cost: .ordinary) == .databaseUnavailable)
        #expect(share.admit(client: "b", cost: .ordinary) == .admitted, "under the share nothing changes")
        share.noteDatabase(available: true)
        #expect(share.admit(client: "a", cost: .ordinary) == .clientBusy(limit: 1))
    }

    @Test("0 turns each limit off")
    func off() {
        var share = DatabaseShare(perClient: 0, expensiveTotal: 0)
        for _ in 0..<1000 { #expect(share.admit(client: "a", cost: .expensive) == .admitted) }
    }

    @Test("a ticket releases once: by the worker, or when the work is dropped unrun")
    func tickets() throws {
        let shares = DatabaseShares(perClient: 1, expensiveTotal: 0)
        let ticket = try shares.admit(client: "a", cost: .ordinary).get()
        guard case .failure(.clientBusy(limit: 1)) = shares.admit(client: "a", cost: .ordinary) else {
            Issue.record("a second request is refused while the first holds the share")
            return
        }
        ticket.release()
        ticket.release()
        #expect(shares.inFlight(client: "a") == 0)
        do {
            _ = try shares.admit(client: "a", cost: .ordinary).get()
        }
        #expect(shares.inFlight(client: "a") == 0, "a ticket nobody releases is released when it goes")
    }

    @Test("the service answers the excess 429 at once, in PostgREST's shape with Retry-After, and frees the share when work ends")
    func service() throws {
        var settings = ServiceSettings()
        settings.databaseRequestsPerIP = 2
        let fixture = ServiceFixture(settings: settings)
        let token = fixture.userToken()
        func medians(from address: String) -> HTTPRequest {
            var request = fixture.request("POST", "/rest/v1/rpc/price_medians", body: #"{"location_ids":["a"]}"#, token: token)
            request.clientIP = address
            return request
        }
        let first = fixture.application.respond(to: medians(from: "203.0.113.5"))
        let second = fixture.application.respond(to: medians(from: "203.0.113.5"))
        let third = fixture.application.respond(to: medians(from: "203.0.113.5"))
        guard case .onWorker(let run, _) = first.work, case .onWorker = second.work, case .now(let refused) = third.work else {
            Issue.record("expected two plans for workers and one answer")
            return
        }
        #expect(refused.status == 429)
        #expect(refused.headers.contains { $0.0 == "Retry-After" && $0.1 == "1" })
        let body = String(decoding: refused.body, as: UTF8.self)
        #expect(body.contains(#""code":"PGRST429""#) && body.contains("at most 2 at once"), "\(body)")
        guard case .onWorker = fixture.application.respond(to: medians(from: "198.51.100.7")).work else {
            Issue.record("another address is admitted")
            return
        }
        #expect(run().status == 200)
        guard case .onWorker = fixture.application.respond(to: medians(from: "203.0.113.5")).work else {
            Issue.record("the address is admitted again once one of its requests ended")
            return
        }
        _ = second
    }

    @Test("quotes beyond the expensive class's limit are 503 PGRST003 with Retry-After, from any address")
    func expensiveService() throws {
        var settings = ServiceSettings()
        settings.databaseRequestsPerIP = 0
        settings.expensiveRequestsInFlight = 1
        let fixture = ServiceFixture(settings: settings)
        let token = fixture.userToken()
        func quote(from address: String) -> HTTPRequest {
            var request = fixture.request("POST", "/rest/v1/rpc/price_quotes", body: #"{"location_ids":["a"]}"#, token: token)
            request.clientIP = address
            return request
        }
        let held = fixture.application.respond(to: quote(from: "203.0.113.5"))
        guard case .onWorker = held.work, case .now(let busy) = fixture.application.respond(to: quote(from: "198.51.100.7")).work else {
            Issue.record("expected the second quote to be answered at once")
            return
        }
        #expect(busy.status == 503)
        #expect(String(decoding: busy.body, as: UTF8.self).contains("PGRST003"))
        #expect(busy.headers.contains { $0.0 == "Retry-After" })
        guard case .onWorker = fixture.application.respond(to: fixture.request("POST", "/rest/v1/rpc/price_medians",
                                                                              body: #"{"location_ids":["a"]}"#, token: token)).work else {
            Issue.record("reads are not in the expensive class")
            return
        }
        _ = held
    }
}
