import Testing
@testable import PriceDB

/// How results coming back from a pipeline are matched to the queries sent, without a socket.
@Suite struct PipelineBatchTests {
    let row = QueryResult(columnNames: ["x"], rows: [["1"]], affectedRows: 1, commandTag: "SELECT 1")
    let done = QueryResult(commandTag: "INSERT 0 1")
    let uniqueViolation = DatabaseError(code: .server, sqlState: "23505", message: "duplicate key", severity: "ERROR")

    @Test func everyQuerySucceedsAndResultsComeBackInOrder() {
        var batch = PipelineBatch(steps: [.query, .query])
        #expect(batch.receive(.result(row)) == .readMore)
        #expect(batch.receive(.endOfStep) == .readMore)
        #expect(batch.receive(.result(done)) == .readMore)
        #expect(batch.receive(.endOfStep) == .readMore)
        #expect(batch.receive(.sync) == .finished(.init(results: .success([row, done]), preparedNames: [], connectionReusable: true)))
    }

    @Test func aStepTheServerRefusedMeansRolledBackEvenIfTheConnectionThenGoes() {
        var batch = PipelineBatch(steps: [.query, .query])
        _ = batch.receive(.error(DatabaseError(code: .server, sqlState: "25006", message: "read-only", severity: "ERROR")))
        #expect(batch.serverRejectedAStep)
        _ = batch.receive(.connectionLost(DatabaseError(code: .connectionLost, message: "gone")))
        #expect(batch.serverRejectedAStep)
    }

    @Test func aConnectionLostAfterEveryStepSucceededIsNotARollback() {
        var batch = PipelineBatch(steps: [.query])
        _ = batch.receive(.result(done))
        _ = batch.receive(.endOfStep)
        _ = batch.receive(.connectionLost(DatabaseError(code: .connectionLost, message: "gone")))
        #expect(!batch.serverRejectedAStep)
        var libpqError = PipelineBatch(steps: [.query])
        _ = libpqError.receive(.error(DatabaseError(code: .connectionLost, message: "server closed the connection unexpectedly")))
        #expect(!libpqError.serverRejectedAStep, "libpq's own error (no SQLSTATE) proves nothing")
    }

    @Test func anEmptyBatchIsJustASync() {
        var batch = PipelineBatch(steps: [])
        #expect(batch.receive(.sync) == .finished(.init(results: .success([]), preparedNames: [], connectionReusable: true)))
    }

    @Test func preparingAStatementReportsItsNameButNoResult() {
        var batch = PipelineBatch(steps: [.prepare(name: "s1"), .query])
        _ = batch.receive(.result(QueryResult()))
        _ = batch.receive(.endOfStep)
        _ = batch.receive(.result(row))
        _ = batch.receive(.endOfStep)
        #expect(batch.receive(.sync) == .finished(.init(results: .success([row]), preparedNames: ["s1"], connectionReusable: true)))
    }

    @Test func theFirstErrorIsReportedAndLaterAbortedQueriesAreIgnored() {
        var batch = PipelineBatch(steps: [.query, .query, .query])
        for event: PipelineBatch.Event in [.result(row), .endOfStep, .error(uniqueViolation), .endOfStep, .aborted, .endOfStep] {
            #expect(batch.receive(event) == .readMore)
        }
        let other = DatabaseError(code: .server, sqlState: "42P01", message: "later")
        #expect(batch.receive(.sync) == .finished(.init(results: .failure(uniqueViolation), preparedNames: [], connectionReusable: true)))
        #expect(batch.receive(.error(other)) == .finished(.init(results: .failure(uniqueViolation), preparedNames: [], connectionReusable: true)))
    }

    @Test func aFailedPrepareIsNotRecordedAsPrepared() {
        var batch = PipelineBatch(steps: [.prepare(name: "bad"), .query])
        let syntax = DatabaseError(code: .server, sqlState: "42601", message: "syntax error")
        for event: PipelineBatch.Event in [.error(syntax), .endOfStep, .aborted, .endOfStep] { _ = batch.receive(event) }
        #expect(batch.receive(.sync) == .finished(.init(results: .failure(syntax), preparedNames: [], connectionReusable: true)))
    }

    @Test func aFatalErrorFinishesAtOnceAndTheConnectionIsNotReused() {
        var batch = PipelineBatch(steps: [.query, .query])
        let terminated = DatabaseError(code: .server, sqlState: "57P01", message: "terminating connection", severity: "FATAL")
        #expect(batch.receive(.error(terminated)) == .finished(.init(results: .failure(terminated), preparedNames: [], connectionReusable: false)))
    }

    @Test func aWriteRefusedByAReadOnlyServerEndsTheConnectionSoTheNextGoesToTheNewLeader() {
        var batch = PipelineBatch(steps: [.query, .query])
        let demoted = DatabaseError(code: .server, sqlState: "25006",
                                    message: "cannot execute INSERT in a read-only transaction", severity: "ERROR")
        _ = batch.receive(.result(QueryResult()))
        _ = batch.receive(.endOfStep)
        #expect(batch.receive(.error(demoted)) == .finished(.init(results: .failure(demoted), preparedNames: [], connectionReusable: false)))
    }

    @Test func anErrorWithoutSQLStateComesFromLibpqAndEndsTheConnection() {
        var batch = PipelineBatch(steps: [.query])
        let closed = DatabaseError(code: .connectionLost, message: "server closed the connection unexpectedly")
        #expect(batch.receive(.error(closed)) == .finished(.init(results: .failure(closed), preparedNames: [], connectionReusable: false)))
    }

    @Test func losingTheConnectionKeepsAnEarlierServerError() {
        var batch = PipelineBatch(steps: [.query, .query])
        _ = batch.receive(.error(uniqueViolation))
        _ = batch.receive(.endOfStep)
        let lost = DatabaseError(code: .connectionLost, message: "EOF")
        #expect(batch.receive(.connectionLost(lost)) == .finished(.init(results: .failure(uniqueViolation), preparedNames: [], connectionReusable: false)))
    }

    @Test func losingTheConnectionWithoutAnErrorReportsTheLoss() {
        var batch = PipelineBatch(steps: [.query])
        _ = batch.receive(.result(row))
        let lost = DatabaseError(code: .connectionLost, message: "EOF")
        #expect(batch.receive(.connectionLost(lost)) == .finished(.init(results: .failure(lost), preparedNames: [], connectionReusable: false)))
    }

    @Test func aSyncBeforeEveryQueryFinishedIsAProtocolViolation() {
        var batch = PipelineBatch(steps: [.query, .query])
        _ = batch.receive(.result(row))
        _ = batch.receive(.endOfStep)
        guard case .finished(let outcome) = batch.receive(.sync) else { Issue.record("batch should finish"); return }
        #expect(outcome.connectionReusable == false)
        #expect((try? outcome.results.get()) == nil)
        if case .failure(let error) = outcome.results { #expect(error.code == .protocolViolation) }
    }

    @Test func moreResultsThanQueriesIsAProtocolViolation() {
        var batch = PipelineBatch(steps: [.query])
        _ = batch.receive(.result(row))
        guard case .finished(let outcome) = batch.receive(.result(row)) else { Issue.record("batch should finish"); return }
        #expect(outcome.connectionReusable == false)
        if case .failure(let error) = outcome.results { #expect(error.code == .protocolViolation) }
    }

    @Test func aStepEndingWithoutAResultIsAProtocolViolation() {
        var batch = PipelineBatch(steps: [.query])
        guard case .finished(let outcome) = batch.receive(.endOfStep) else { Issue.record("batch should finish"); return }
        #expect(outcome.connectionReusable == false)
    }
}
