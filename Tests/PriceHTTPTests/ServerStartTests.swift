import Foundation
import Testing
@testable import PriceHTTP
import PriceTelemetry

/// A server that cannot start (address taken, bad address) fails with its error and can be dropped:
/// its worker threads are joined first, so none wakes up on a freed server.
@Suite struct ServerStartTests {
    struct Healthy: HTTPApplication {
        func respond(to request: HTTPRequest) -> Reply { Reply(label: "other", work: .now(.empty(204))) }
        func payloadTooLarge(_ request: HTTPRequest) -> (label: String, response: HTTPResponse) { ("other", .empty(413)) }
        func malformedRequest(_ request: HTTPRequest, reason: String) -> (label: String, response: HTTPResponse) {
            ("other", .empty(400))
        }
    }

    func makeServer(host: String, port: UInt16) -> HTTPServer {
        var configuration = HTTPServer.Configuration()
        configuration.host = host
        configuration.port = port
        configuration.accessLog = false
        configuration.databaseWorkers = 64
        configuration.eventThreads = 1
        return HTTPServer(configuration: configuration, application: Healthy(),
                          metrics: ServerMetrics(routeLabels: ["other"], fallbackLabel: "other"))
    }

    @Test func aServerThatCannotStartCanBeDroppedAtOnce() throws {
        let first = makeServer(host: "127.0.0.1", port: 0)
        try first.start()
        defer { first.shutdown(grace: 0) }
        for _ in 0..<20 {
            var taken: HTTPServer? = makeServer(host: "127.0.0.1", port: first.boundPort)
            #expect(throws: HTTPServer.StartError.self) { try taken?.start() }
            taken = nil
            var invalid: HTTPServer? = makeServer(host: "not-an-address", port: 0)
            #expect(throws: HTTPServer.StartError.self) { try invalid?.start() }
            invalid = nil
        }
    }
}
