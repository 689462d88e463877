import Foundation
import PriceTelemetry
import Synchronization

/// One open connection as the guard sees it: where it counts, its socket, and its current receive
/// deadline. The access handler moves the deadline with an atomic store, so a request takes no lock.
final class ConnectionRecord: Sendable {
    /// The peer's address as text, made once when the connection opens: every request on it reads this.
    let peer: String
    let network: String
    let socket: Int32
    let deadline: Atomic<Int64>
    let cutOff = Atomic<Bool>(false)

    init(peer: String, network: String, socket: Int32, deadline: Int64) {
        self.peer = peer
        self.network = network
        self.socket = socket
        self.deadline = Atomic(deadline)
    }
}

/// The shell around `ConnectionCounter` and `ReceiveDeadlines`: libmicrohttpd's accept policy asks
/// `admits`, its connection notifications call `opened`/`closed`, and a watchdog thread shuts down the
/// socket of any connection past its deadline. libmicrohttpd then sees the connection end and closes
/// it the usual way (its close notification removes the record).
///
/// - Important: the socket is shut down under the same lock `closed` takes, and libmicrohttpd calls
///   the close notification before it closes the descriptor, so a number reused by a new connection
///   is never shut down by mistake.
final class ConnectionGuard: @unchecked Sendable {
    private struct State {
        var counter: ConnectionCounter
        var records: [ObjectIdentifier: ConnectionRecord] = [:]
    }

    let deadlines: ReceiveDeadlines
    private let state: Mutex<State>
    private let stopping = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private var watchdogStarted = false
    private let metrics: ServerMetrics
    /// How often the watchdog looks; a deadline is enforced within this much of its time.
    private let interval: useconds_t = 200_000

    init(perNetworkLimit: Int, ipv6Prefix: Int, deadlines: ReceiveDeadlines, metrics: ServerMetrics) {
        self.deadlines = deadlines
        self.metrics = metrics
        self.state = Mutex(State(counter: ConnectionCounter(limit: perNetworkLimit, ipv6Prefix: ipv6Prefix)))
    }

    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    /// The accept policy: may one more connection from this peer address open?
    func admits(peer: String) -> Bool {
        let admitted = state.withLock { $0.counter.admits($0.counter.network(of: peer)) }
        if !admitted { metrics.recordConnectionRefused() }
        return admitted
    }

    /// Records an opened connection. One that took its network past the limit (it passed the accept
    /// policy in a race with another event loop) is shut down at once, under the lock, and counted as
    /// refused; `exempt` (a trusted proxy) is counted but never cut off.
    func opened(peer: String, socket: Int32, exempt: Bool = false) -> ConnectionRecord {
        let (record, withinLimit) = state.withLock { state in
            let record = ConnectionRecord(peer: peer, network: state.counter.network(of: peer), socket: socket,
                                          deadline: deadlines.waitingForHead(now: Self.now()))
            let withinLimit = state.counter.opened(record.network) || exempt
            state.records[ObjectIdentifier(record)] = record
            if !withinLimit {
                record.cutOff.store(true, ordering: .relaxed)
                _ = shutdown(socket, Int32(SHUT_RDWR))
            }
            return (record, withinLimit)
        }
        if !withinLimit { metrics.recordConnectionRefused() }
        return record
    }

    func closed(_ record: ConnectionRecord) {
        state.withLock { state in
            guard state.records.removeValue(forKey: ObjectIdentifier(record)) != nil else { return }
            state.counter.closed(record.network)
        }
    }

    func headReceived(_ record: ConnectionRecord) {
        record.deadline.store(deadlines.receivingBody(now: Self.now()), ordering: .relaxed)
    }

    func bodyReceived(_ record: ConnectionRecord) {
        record.deadline.store(ReceiveDeadlines.none, ordering: .relaxed)
    }

    func requestCompleted(_ record: ConnectionRecord) {
        record.deadline.store(deadlines.waitingForHead(now: Self.now()), ordering: .relaxed)
    }

    func startWatchdog() {
        watchdogStarted = true
        let thread = Thread { [self] in
            while !stopping.load(ordering: .acquiring) {
                usleep(interval)
                cutOffOverdue()
            }
            stopped.signal()
        }
        thread.name = "pricesvc-deadlines"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    func stopWatchdog() {
        guard watchdogStarted else { return }
        watchdogStarted = false
        stopping.store(true, ordering: .releasing)
        stopped.wait()
    }

    private func cutOffOverdue() {
        let now = Self.now()
        var count = 0
        state.withLock { state in
            for record in state.records.values
            where ReceiveDeadlines.isOverdue(record.deadline.load(ordering: .relaxed), now: now)
                && !record.cutOff.load(ordering: .relaxed) {
                record.cutOff.store(true, ordering: .relaxed)
                _ = shutdown(record.socket, Int32(SHUT_RDWR))
                count += 1
            }
        }
        if count > 0 { metrics.recordDeadlineCutOff(count) }
    }
}
