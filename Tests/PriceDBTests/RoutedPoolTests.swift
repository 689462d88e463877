import PriceDB
import Synchronization
import Testing

@Suite("Read-only round trips go to the replica, and to the primary when it cannot answer")
struct RoutedPoolTests {
    let read: [Query] = [.sql("select 1")]
    let down = DatabaseError(code: .connectFailed, message: "connection refused")

    /// Records the batches it is asked to run and answers with empty results (or what `answer` says).
    final class Recorder: QueryRunner {
        let sent = Mutex<[[Query]]>([])
        let answer: @Sendable ([Query]) throws(DatabaseError) -> [QueryResult]

        init(answer: @escaping @Sendable ([Query]) throws(DatabaseError) -> [QueryResult] = { $0.map { _ in QueryResult() } }) {
            self.answer = answer
        }

        func run(_ queries: [Query]) throws(DatabaseError) -> [QueryResult] {
            sent.withLock { $0.append(queries) }
            return try answer(queries)
        }

        var count: Int { sent.withLock { $0.count } }
    }

    final class Clock: Sendable {
        let now = Mutex<Double>(1000)
        func advance(_ seconds: Double) { now.withLock { $0 += seconds } }
        var read: @Sendable () -> Double { { self.now.withLock { $0 } } }
    }

    /// The routes the pool reported, in order.
    final class Routes: Sendable {
        let seen = Mutex<[RoutedPool.ReadRoute]>([])
        var observe: @Sendable (RoutedPool.ReadRoute) -> Void { { route in self.seen.withLock { $0.append(route) } } }
        var all: [RoutedPool.ReadRoute] { seen.withLock { $0 } }
    }

    @Test func withoutAReplicaEveryReadGoesToThePrimary() throws {
        let primary = Recorder(), routes = Routes()
        let pool = RoutedPool(primary: primary, replica: nil, clock: { 0 }, observeRead: routes.observe)
        _ = try pool.run(read, readOnly: true)
        #expect(primary.count == 1)
        #expect(routes.all == [.primary])
    }

    @Test func aHealthyReplicaAnswersReadsAndThePrimaryIsNotAsked() throws {
        let primary = Recorder(), replica = Recorder(), routes = Routes()
        let pool = RoutedPool(primary: primary, replica: replica, clock: { 0 }, observeRead: routes.observe)
        _ = try pool.run(read, readOnly: true)
        _ = try pool.run(read, readOnly: true)
        #expect(replica.count == 2 && primary.count == 0)
        #expect(routes.all == [.replica, .replica])
    }

    @Test func writesGoToThePrimaryEvenWithAHealthyReplica() throws {
        let primary = Recorder(), replica = Recorder(), routes = Routes()
        let pool = RoutedPool(primary: primary, replica: replica, clock: { 0 }, observeRead: routes.observe)
        _ = try pool.run([.sql("insert into t values (1)")], readOnly: false)
        #expect(primary.count == 1 && replica.count == 0)
        #expect(routes.all.isEmpty)
    }

    @Test func anUnavailableReplicaFallsBackToThePrimaryThenIsSkippedForThePause() throws {
        let primary = Recorder(), routes = Routes()
        let replicaUp = Mutex(false)
        let down = self.down
        let replica = Recorder { queries throws(DatabaseError) in
            guard replicaUp.withLock({ $0 }) else { throw down }
            return queries.map { _ in QueryResult() }
        }
        let clock = Clock()
        let pool = RoutedPool(primary: primary, replica: replica, replicaPause: 2, clock: clock.read,
                              observeRead: routes.observe)

        _ = try pool.run(read, readOnly: true)  // tries the replica once, answers from the primary
        _ = try pool.run(read, readOnly: true)  // within the pause: straight to the primary
        #expect(replica.count == 1 && primary.count == 2)
        #expect(routes.all == [.primaryInsteadOfReplica, .primaryInsteadOfReplica])

        replicaUp.withLock { $0 = true }
        clock.advance(2)
        _ = try pool.run(read, readOnly: true)
        #expect(replica.count == 2 && primary.count == 2)
        #expect(routes.all.last == .replica)
    }

    @Test func aRecoveryConflictOnTheReplicaIsRetriedOnThePrimary() throws {
        let primary = Recorder()
        let replica = Recorder { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "40001", message: "canceling statement due to conflict with recovery")
        }
        let pool = RoutedPool(primary: primary, replica: replica, clock: { 0 })
        _ = try pool.run(read, readOnly: true)
        #expect(primary.count == 1)
    }

    @Test func theRequestsOwnErrorIsAnsweredNotRetried() {
        let primary = Recorder()
        let revoked = DatabaseError(code: .server, sqlState: "PT401", message: "session revoked")
        let replica = Recorder { _ throws(DatabaseError) in throw revoked }
        let pool = RoutedPool(primary: primary, replica: replica, clock: { 0 })
        #expect(throws: revoked) { try pool.run(read, readOnly: true) }
        #expect(primary.count == 0)
    }
}
