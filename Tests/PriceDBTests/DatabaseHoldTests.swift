import Testing
@testable import PriceDB

/// A request held while the database is unavailable (maintenance nobody notices): it waits
/// and tries again only when that cannot apply it twice, and never past the bound.
@Suite("Holding a request while the database is unavailable")
struct DatabaseHoldTests {
    let hold = DatabaseHold(bound: .seconds(5), firstPause: .milliseconds(50), longestPause: .milliseconds(500))
    let refused = DatabaseError(code: .connectFailed, message: "connection refused", reach: .notSent)
    let readOnlyStandby = DatabaseError(code: .server, sqlState: "25006",
                                        message: "cannot execute INSERT in a read-only transaction", reach: .rolledBack)
    let lostAfterSending = DatabaseError(code: .connectionLost, message: "server closed the connection", reach: .unknown)
    let shuttingDown = DatabaseError(code: .connectFailed, sqlState: "57P03",
                                     message: "the database system is shutting down", severity: "FATAL", reach: .notSent)

    @Test("a batch that was not sent, or was rolled back, is retried whatever it does")
    func notSentOrRolledBack() {
        for error in [refused, readOnlyStandby, shuttingDown] {
            #expect(hold.verdict(after: error, attempt: 1, held: .zero, repeatable: false) == .retry(after: .milliseconds(50)), "\(error)")
        }
    }

    @Test("after an unknown outcome only a repeatable batch (a read, an idempotent submission) is retried")
    func unknownOutcome() {
        #expect(hold.verdict(after: lostAfterSending, attempt: 1, held: .zero, repeatable: true) == .retry(after: .milliseconds(50)))
        #expect(hold.verdict(after: lostAfterSending, attempt: 1, held: .zero, repeatable: false) == .notRetryable)
    }

    @Test("pauses double up to the longest and never pass the bound; at the bound it gives up")
    func backoffAndBound() {
        #expect(hold.verdict(after: refused, attempt: 2, held: .milliseconds(60), repeatable: false) == .retry(after: .milliseconds(100)))
        #expect(hold.verdict(after: refused, attempt: 9, held: .seconds(1), repeatable: false) == .retry(after: .milliseconds(500)))
        #expect(hold.verdict(after: refused, attempt: 9, held: .milliseconds(4900), repeatable: false) == .retry(after: .milliseconds(100)))
        #expect(hold.verdict(after: refused, attempt: 10, held: .seconds(5), repeatable: false) == .gaveUp)
    }

    @Test("what waiting cannot cure is answered at once: a full pool, a batch timeout, a refused login, a client error")
    func notHeld() {
        let cases = [DatabaseError(code: .poolExhausted, message: "busy", reach: .notSent),
                     DatabaseError(code: .timeout, message: "slow"),
                     DatabaseError(code: .poolClosed, message: "closed", reach: .notSent),
                     DatabaseError(code: .connectFailed, message: "FATAL:  password authentication failed for user \"x\"", reach: .notSent),
                     DatabaseError(code: .server, sqlState: "23514", message: "check", reach: .rolledBack)]
        for error in cases {
            #expect(hold.verdict(after: error, attempt: 1, held: .zero, repeatable: true) == .answer, "\(error)")
        }
    }

    @Test("a bound of 0 turns the hold off")
    func off() {
        #expect(DatabaseHold.off.verdict(after: refused, attempt: 1, held: .zero, repeatable: true) == .answer)
    }

    /// A clock that moves only when the hold sleeps.
    final class FakeClock {
        let origin = ContinuousClock.now
        var elapsed = Duration.zero
        var sleeps: [Duration] = []
        var now: ContinuousClock.Instant { origin + elapsed }
        func sleep(_ pause: Duration) {
            sleeps.append(pause)
            elapsed += pause
        }
    }

    @Test("run: held until the database answers, then served, with how long it waited")
    func runServed() throws {
        let clock = FakeClock()
        var attempts = 0
        let (result, held) = hold.run(repeatable: false, now: { clock.now }, sleep: clock.sleep) { () throws(DatabaseError) -> Int in
            attempts += 1
            if attempts < 4 { throw refused }
            return 42
        }
        #expect(try result.get() == 42)
        #expect(attempts == 4)
        #expect(clock.sleeps == [.milliseconds(50), .milliseconds(100), .milliseconds(200)])
        #expect(held?.0 == .served && held?.1 == .milliseconds(350))
    }

    @Test("run: the first answer is not a hold")
    func runUnheld() throws {
        let clock = FakeClock()
        let (result, held) = hold.run(repeatable: false, now: { clock.now }, sleep: clock.sleep) { () throws(DatabaseError) in 1 }
        #expect(try result.get() == 1)
        #expect(held == nil && clock.sleeps.isEmpty)
    }

    @Test("run: gives up at the bound with the last error, having slept exactly the bound")
    func runGivesUp() {
        let clock = FakeClock()
        var attempts = 0
        let (result, held) = hold.run(repeatable: true, now: { clock.now }, sleep: clock.sleep) { () throws(DatabaseError) -> Int in
            attempts += 1
            throw refused
        }
        #expect(throws: DatabaseError.self) { try result.get() }
        #expect(held?.0 == .gaveUp && held?.1 == .seconds(5))
        #expect(clock.sleeps.reduce(.zero, +) == .seconds(5))
        #expect(attempts == clock.sleeps.count + 1)
    }

    @Test("run: a write that may have reached the old leader is tried once and answered not_retryable")
    func runNotRetryable() {
        let clock = FakeClock()
        var attempts = 0
        let (_, held) = hold.run(repeatable: false, now: { clock.now }, sleep: clock.sleep) { () throws(DatabaseError) -> Int in
            attempts += 1
            throw attempts == 1 ? refused : lostAfterSending
        }
        #expect(attempts == 2, "retried after not-sent, stopped after unknown")
        #expect(held?.0 == .notRetryable)
    }
}
