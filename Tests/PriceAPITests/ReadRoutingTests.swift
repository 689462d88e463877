import PriceDB
import Synchronization
import Testing
@testable import PriceAPI

@Suite("Read-only calls go to the replica, and to the primary when it cannot answer")
struct ReadRoutingTests {
    let read: [Query] = [.sql("select 1")]
    let down = DatabaseError(code: .connectFailed, message: "connection refused")

    final class Clock: Sendable {
        let now = Mutex<Double>(1000)
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
        var read: @Sendable () -> Double { { self.now.withLock { $0 } } }
    }

    static func makeMetrics() -> ServiceMetrics {
        ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: { .init(size: 1, inUse: 0, idle: 1, waiting: 0) })
    }

    func metric(_ metrics: ServiceMetrics, _ name: String) -> String? {
        metrics.render().split(separator: "\n")
            .first { $0.hasPrefix(name + " ") }.map { String($0.dropFirst(name.count + 1)) }
    }

    @Test func withoutAReplicaEveryReadGoesToThePrimary() throws {
        let primary = RecordingDatabase()
        let metrics = Self.makeMetrics()
        let routing = ReadRouting(primary: primary, replica: nil, metrics: metrics, clock: { 0 })
        _ = try routing.run(read)
        #expect(primary.batches.count == 1)
        #expect(metric(metrics, #"pricesvc_db_reads_total{pool="primary"}"#) == "1")
        #expect(metric(metrics, "pricesvc_db_replica_fallbacks_total") == "0")
    }

    @Test func aHealthyReplicaAnswersAndThePrimaryIsNotAsked() throws {
        let primary = RecordingDatabase(), replica = RecordingDatabase()
        let metrics = Self.makeMetrics()
        let routing = ReadRouting(primary: primary, replica: replica, metrics: metrics, clock: { 0 })
        _ = try routing.run(read)
        _ = try routing.run(read)
        #expect(replica.batches.count == 2 && primary.batches.isEmpty)
        #expect(metric(metrics, #"pricesvc_db_reads_total{pool="replica"}"#) == "2")
    }

    @Test func anUnavailableReplicaFallsBackToThePrimaryThenIsSkippedForThePause() throws {
        let primary = RecordingDatabase()
        let replicaUp = Mutex(false)
        let down = self.down
        let replica = RecordingDatabase { queries throws(DatabaseError) in
            guard replicaUp.withLock({ $0 }) else { throw down }
            return queries.map { _ in QueryResult() }
        }
        let metrics = Self.makeMetrics(), clock = Clock()
        let routing = ReadRouting(primary: primary, replica: replica, metrics: metrics, replicaPause: 2, clock: clock.read)

        _ = try routing.run(read)  // tries the replica once, answers from the primary
        _ = try routing.run(read)  // within the pause: straight to the primary
        #expect(replica.batches.count == 1 && primary.batches.count == 2)
        #expect(metric(metrics, "pricesvc_db_replica_fallbacks_total") == "2")

        replicaUp.withLock { $0 = true }
        clock.advance(2)
        _ = try routing.run(read)
        #expect(replica.batches.count == 2 && primary.batches.count == 2)
        #expect(metric(metrics, #"pricesvc_db_reads_total{pool="replica"}"#) == "1")
    }

    @Test func aRecoveryConflictOnTheReplicaIsRetriedOnThePrimary() throws {
        let primary = RecordingDatabase()
        let replica = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "40001", message: "canceling statement due to conflict with recovery")
        }
        let routing = ReadRouting(primary: primary, replica: replica, metrics: Self.makeMetrics(), clock: { 0 })
        _ = try routing.run(read)
        #expect(primary.batches.count == 1)
    }

    @Test func theRequestsOwnErrorIsAnsweredNotRetried() {
        let primary = RecordingDatabase()
        let revoked = DatabaseError(code: .server, sqlState: "PT401", message: "session revoked")
        let replica = RecordingDatabase { _ throws(DatabaseError) in throw revoked }
        let routing = ReadRouting(primary: primary, replica: replica, metrics: Self.makeMetrics(), clock: { 0 })
        #expect(throws: revoked) { try routing.run(read) }
        #expect(primary.batches.isEmpty)
    }
}
