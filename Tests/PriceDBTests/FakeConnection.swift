import Foundation
import Testing
@testable import PriceDB

/// Scripted stand-in for the database: each batch takes the next behaviour from the script.
final class FakeDatabase: @unchecked Sendable {
    enum Behaviour {
        case succeed
        case serverError(String)
        /// The idle connection turns out dead before anything is sent.
        case loseBeforeSending
        /// The connection dies after the batch went out.
        case loseAfterSending
        case block(DispatchSemaphore)
        case sleep(Duration)
    }

    private let lock = NSCondition()
    private var script: [Behaviour]
    private let defaultBehaviour: Behaviour
    private var _connects = 0
    private var _batches = 0
    private var _closed = 0
    private var running = 0
    private var _peak = 0
    var failNextConnects: Int {
        get { locked { _failNextConnects } }
        set { locked { _failNextConnects = newValue } }
    }
    private var _failNextConnects = 0
    /// What a failing connect throws.
    var connectError: DatabaseError {
        get { locked { _connectError } }
        set { locked { _connectError = newValue } }
    }
    private var _connectError = DatabaseError(code: .connectFailed, message: "scripted connect failure")
    /// Connect attempts, failed ones included.
    var connectAttempts: Int { locked { _connectAttempts } }
    private var _connectAttempts = 0

    init(script: [Behaviour] = [], defaultBehaviour: Behaviour = .succeed) {
        self.script = script
        self.defaultBehaviour = defaultBehaviour
    }

    var connects: Int { locked { _connects } }
    var batches: Int { locked { _batches } }
    var closedConnections: Int { locked { _closed } }
    var peakConcurrentBatches: Int { locked { _peak } }

    func connect() throws(DatabaseError) -> FakeConnection {
        let failure: DatabaseError? = locked {
            _connectAttempts += 1
            if _failNextConnects > 0 { _failNextConnects -= 1; return _connectError }
            _connects += 1
            return nil
        }
        if let failure { throw failure }
        return FakeConnection(database: self)
    }

    /// Waits until `count` batches have started; records a test failure after five seconds.
    func waitForBatches(_ count: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        let deadline = Date(timeIntervalSinceNow: 5)
        lock.lock()
        while _batches < count, Date() < deadline { _ = lock.wait(until: Date(timeIntervalSinceNow: 0.05)) }
        let started = _batches
        lock.unlock()
        if started < count {
            Issue.record("timed out after 5 s waiting for \(count) batches (\(started) started)", sourceLocation: sourceLocation)
        }
    }

    fileprivate func startBatch() -> Behaviour {
        locked {
            _batches += 1
            running += 1
            _peak = max(_peak, running)
            lock.broadcast()
            return script.isEmpty ? defaultBehaviour : script.removeFirst()
        }
    }

    fileprivate func endBatch() { locked { running -= 1 } }
    fileprivate func closed() { locked { _closed += 1 } }

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

final class FakeConnection: PipelineConnection {
    private let database: FakeDatabase
    private(set) var isReusable = true
    private var isClosed = false

    init(database: FakeDatabase) { self.database = database }

    func run(_ queries: [Query], deadline: ContinuousClock.Instant) throws(BatchFailure) -> [QueryResult] {
        let behaviour = database.startBatch()
        defer { database.endBatch() }
        switch behaviour {
        case .succeed: break
        case .serverError(let sqlState):
            throw BatchFailure(error: DatabaseError(code: .server, sqlState: sqlState, message: "scripted"), reach: .rolledBack)
        case .loseBeforeSending:
            isReusable = false
            throw BatchFailure(error: DatabaseError(code: .connectionLost, message: "stale"), mayHaveReachedServer: false)
        case .loseAfterSending:
            isReusable = false
            throw BatchFailure(error: DatabaseError(code: .server, sqlState: "57P01", message: "terminating", severity: "FATAL"),
                               mayHaveReachedServer: true)
        case .block(let gate): gate.wait()
        case .sleep(let duration): Thread.sleep(forTimeInterval: duration / .seconds(1))
        }
        return queries.map { _ in QueryResult(commandTag: "OK") }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        isReusable = false
        database.closed()
    }
}

/// Polls `condition` for up to five seconds; tests that wait for another thread's state use it.
/// Records a test failure when the condition never held.
func waitUntil(_ what: String = "condition", sourceLocation: SourceLocation = #_sourceLocation, _ condition: () -> Bool) {
    let deadline = ContinuousClock.now + .seconds(5)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out after 5 s waiting for \(what)", sourceLocation: sourceLocation)
            return
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
}
