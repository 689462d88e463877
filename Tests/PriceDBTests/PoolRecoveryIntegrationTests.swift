import Foundation
import Testing
@testable import PriceDB
import PriceDBTestKit

/// What happens when the server goes away: stale connections are replaced, in-flight batches fail
/// fast and are never repeated.
@Suite struct PoolRecoveryIntegrationTests {
    @Test func idleConnectionsKilledByTheServerAreReplacedWithoutFailingTheCaller() throws {
        let database = try ScratchDatabase()
        let statement = PreparedStatement(name: "answer", sql: "select 42")
        let pool = database.pool(size: 1, statements: [statement], applicationName: "recover-idle")
        _ = try pool.run([.sql("select 1")])
        try database.terminateBackends(applicationName: "recover-idle")

        // Pipeline mode, non-blocking mode and the prepared statement must all be set up again.
        #expect(try pool.run([.prepared(statement)])[0].singleValue == "42")
        let stats = pool.stats
        #expect((stats.connectsTotal, stats.discardsTotal, stats.reconnects) == (2, 1, 1))
    }

    @Test func aBatchCutOffByTheServerIsUnavailableAndNotRetried() throws {
        let database = try ScratchDatabase()
        try database.admin("create table effects (id int)")
        let pool = database.pool(size: 1, applicationName: "recover-busy")
        _ = try pool.run([.sql("select 1")])
        let started = ContinuousClock.now
        let batch = onThread { try pool.run([.sql("insert into effects values (1)"), .sql("select pg_sleep(10)")]) }
        waitUntil {
            (try? database.admin("select count(*) from pg_stat_activity where application_name = 'recover-busy' and query like '%pg_sleep%'").singleValue) == "1"
        }
        try database.terminateBackends(applicationName: "recover-busy")
        #expect { try batch.value() } throws: { error in
            guard let error = error as? DatabaseError else { return false }
            return error.isUnavailable && error.sqlState == "57P01"
        }
        #expect(ContinuousClock.now - started < .seconds(8))
        #expect(try database.admin("select count(*) from effects").singleValue == "0")
        #expect(pool.stats.connectsTotal == 1)
        #expect(try pool.run([.sql("select 'back'")])[0].singleValue == "back")
    }

    @Test func aBatchThatOutlivesItsTimeoutIsAbandoned() throws {
        let database = try ScratchDatabase()
        let pool = database.pool(size: 1, batchTimeout: .milliseconds(300))
        let started = ContinuousClock.now
        #expect { try pool.run([.sql("select pg_sleep(3)")]) } throws: { error in
            (error as? DatabaseError)?.code == .timeout && (error as? DatabaseError)?.isUnavailable == true
        }
        #expect(ContinuousClock.now - started < .seconds(2))
        #expect(pool.stats.discardsTotal == 1)
        #expect(try pool.run([.sql("select 1")])[0].singleValue == "1")
    }

    @Test func waitingForAnUnreachableServerGivesUpAtTheDeadline() throws {
        let pool = ConnectionPool(PoolConfiguration(conninfo: "host=/nonexistent/pricedb user=nobody dbname=none"))
        let started = ContinuousClock.now
        #expect { try pool.waitUntilReachable(timeout: .milliseconds(800)) } throws: { error in
            (error as? DatabaseError)?.code == .connectFailed && (error as? DatabaseError)?.isUnavailable == true
        }
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(500) && waited < .seconds(3))
    }

    @Test func waitingForAReachableServerReturnsAtOnce() throws {
        let database = try ScratchDatabase()
        let pool = database.pool()
        try pool.waitUntilReachable(timeout: .seconds(5))
        pool.close()
        #expect { try pool.run([.sql("select 1")]) } throws: { ($0 as? DatabaseError)?.code == .poolClosed }
    }
}
