import Foundation
import Testing
@testable import PriceDB
import PriceDBTestKit

/// Pool behaviour with scripted fake connections: reuse, bounded waiting, discard and the one safe retry.
@Suite struct ConnectionPoolTests {
    func makePool(_ database: FakeDatabase, size: Int = 2, checkoutTimeout: Duration = .seconds(2)) -> ConnectionPool {
        ConnectionPool(size: size, checkoutTimeout: checkoutTimeout, batchTimeout: .seconds(5)) { () throws(DatabaseError) in
            try database.connect()
        }
    }

    @Test func sequentialRunsReuseOneConnection() throws {
        let database = FakeDatabase()
        let pool = makePool(database)
        for _ in 0..<3 { _ = try pool.run([.sql("select 1")]) }
        #expect(database.connects == 1)
        #expect(pool.stats == PoolStats(size: 2, inUse: 0, idle: 1, waiting: 0, connectsTotal: 1))
    }

    @Test func aServerErrorKeepsTheConnection() throws {
        let database = FakeDatabase(script: [.serverError("23505")])
        let pool = makePool(database)
        #expect(throws: DatabaseError(code: .server, sqlState: "23505", message: "scripted", reach: .rolledBack)) { try pool.run([.sql("insert")]) }
        _ = try pool.run([.sql("select 1")])
        #expect(database.connects == 1)
        #expect(pool.stats.discardsTotal == 0)
    }

    @Test func aConnectionFoundDeadBeforeSendingIsReplacedAndTheBatchRetriedOnce() throws {
        let database = FakeDatabase(script: [.succeed, .loseBeforeSending, .succeed])
        let pool = makePool(database)
        _ = try pool.run([.sql("select 1")])
        _ = try pool.run([.sql("insert")])
        #expect(database.batches == 3)
        #expect(database.connects == 2)
        let stats = pool.stats
        #expect((stats.discardsTotal, stats.reconnects, stats.idle) == (1, 1, 1))
    }

    @Test func aFailedConnectIsReportedNotSentAndAServerErrorRolledBack() throws {
        let database = FakeDatabase(script: [.serverError("25006")])
        let pool = makePool(database)
        #expect { try pool.run([.sql("insert")]) } throws: { ($0 as? DatabaseError)?.reach == .rolledBack }
        database.failNextConnects = 1
        let fresh = makePool(database)
        #expect { try fresh.run([.sql("insert")]) } throws: { ($0 as? DatabaseError)?.reach == .notSent }
    }

    @Test func theRetryHappensOnlyOnce() {
        let database = FakeDatabase(script: [.loseBeforeSending, .loseBeforeSending, .succeed])
        let pool = makePool(database)
        #expect { try pool.run([.sql("select 1")]) } throws: { ($0 as? DatabaseError)?.code == .connectionLost }
        #expect(database.batches == 2)
    }

    @Test func aConnectionLostAfterSendingIsDiscardedAndNotRetried() throws {
        let database = FakeDatabase(script: [.loseAfterSending, .succeed])
        let pool = makePool(database)
        #expect { try pool.run([.sql("insert")]) } throws: {
            ($0 as? DatabaseError)?.isUnavailable == true && ($0 as? DatabaseError)?.reach == .unknown
        }
        #expect(database.batches == 1)
        #expect(pool.stats.discardsTotal == 1)
        #expect(pool.stats.idle == 0)
        _ = try pool.run([.sql("select 1")])
        #expect(database.connects == 2)
        #expect(pool.stats.reconnects == 1)
    }

    @Test func aWaitingCallerGetsTheConnectionWhenItIsReturned() throws {
        let gate = DispatchSemaphore(value: 0)
        let database = FakeDatabase(script: [.block(gate), .succeed])
        let pool = makePool(database, size: 1)
        let first = onThread { try pool.run([.sql("slow")]) }
        database.waitForBatches(1)
        let second = onThread { try pool.run([.sql("fast")]) }
        waitUntil { pool.stats.waiting == 1 }
        gate.signal()
        #expect(throws: Never.self) { try first.value() }
        #expect(throws: Never.self) { try second.value() }
        #expect(database.connects == 1)
    }

    @Test func waitingIsBoundedThenThePoolIsExhausted() throws {
        let gate = DispatchSemaphore(value: 0)
        let database = FakeDatabase(script: [.block(gate)])
        let pool = makePool(database, size: 1, checkoutTimeout: .milliseconds(200))
        let holder = onThread { try pool.run([.sql("slow")]) }
        database.waitForBatches(1)
        let started = ContinuousClock.now
        #expect { try pool.run([.sql("select 1")]) } throws: { error in
            let error = error as? DatabaseError
            return error?.code == .poolExhausted && error?.isUnavailable == true
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(190) && waited < .seconds(3))
        gate.signal()
        _ = try holder.value()
    }

    @Test func neverMoreConnectionsThanTheSize() throws {
        let database = FakeDatabase(defaultBehaviour: .sleep(.milliseconds(20)))
        let pool = makePool(database, size: 3)
        let workers = (0..<8).map { _ in onThread { for _ in 0..<5 { _ = try pool.run([.sql("q")]) } } }
        for worker in workers { try worker.value() }
        #expect(database.connects == 3)
        #expect(database.peakConcurrentBatches <= 3)
        #expect(pool.stats.inUse == 0)
    }

    @Test func aFailedConnectFreesItsSlot() throws {
        let database = FakeDatabase()
        database.failNextConnects = 1
        let pool = makePool(database, size: 1)
        #expect { try pool.run([.sql("select 1")]) } throws: { ($0 as? DatabaseError)?.code == .connectFailed }
        #expect(pool.stats.inUse == 0 && pool.stats.connecting == 0)
        _ = try pool.run([.sql("select 1")])
        #expect(database.connects == 1)
    }

    @Test func aFreshRetryOverAFullPoolReplacesAnIdleConnection() throws {
        let gate = DispatchSemaphore(value: 0)
        // Connection 1 blocks; connection 2 goes idle, then is found dead; the retry must not wait for connection 1.
        let database = FakeDatabase(script: [.block(gate), .succeed, .loseBeforeSending, .succeed])
        let pool = makePool(database, size: 2, checkoutTimeout: .milliseconds(300))
        let holder = onThread { try pool.run([.sql("slow")]) }
        database.waitForBatches(1)
        _ = try pool.run([.sql("a")])
        _ = try pool.run([.sql("b")])
        #expect(database.connects == 3)
        gate.signal()
        _ = try holder.value()
    }

    @Test func closingFailsLaterRunsAndWakesWaiters() throws {
        let gate = DispatchSemaphore(value: 0)
        let database = FakeDatabase(script: [.block(gate)])
        let pool = makePool(database, size: 1, checkoutTimeout: .seconds(5))
        let holder = onThread { try pool.run([.sql("slow")]) }
        database.waitForBatches(1)
        let waiter = onThread { try pool.run([.sql("waits")]) }
        waitUntil { pool.stats.waiting == 1 }
        pool.close()
        #expect { try waiter.value() } throws: { ($0 as? DatabaseError)?.code == .poolClosed }
        gate.signal()
        _ = try holder.value()
        #expect(database.closedConnections == 1)
        #expect { try pool.run([.sql("late")]) } throws: { ($0 as? DatabaseError)?.code == .poolClosed }
    }

    @Test func waitingForTheDatabaseRetriesAnOutageUntilItIsBack() throws {
        let database = FakeDatabase()
        database.failNextConnects = 2
        database.connectError = DatabaseError(code: .connectFailed,
                                              message: "connection to server on socket \"/x/.s.PGSQL.5432\" failed: No such file or directory")
        let pool = makePool(database, size: 1)
        try pool.waitUntilReachable(timeout: .seconds(10))
        #expect(database.connectAttempts == 3)
    }

    @Test func waitingForTheDatabaseStopsAtOnceWhenTheLoginIsRefused() {
        let database = FakeDatabase()
        database.failNextConnects = 100
        database.connectError = DatabaseError(code: .connectFailed,
                                              message: "connection to server on socket \"/x/.s.PGSQL.5432\" failed: FATAL:  role \"nobody\" does not exist")
        let pool = makePool(database, size: 1)
        let started = ContinuousClock.now
        #expect { try pool.waitUntilReachable(timeout: .seconds(30)) } throws: {
            ($0 as? DatabaseError)?.connectionRefusal?.sqlState == "28000"
        }
        #expect(database.connectAttempts == 1)
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
