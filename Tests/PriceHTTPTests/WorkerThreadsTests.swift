import Foundation
import Synchronization
import Testing
@testable import PriceHTTP

@Suite("Worker threads: queue timeout, drain and join")
struct WorkerThreadsTests {
    @Test("stopAndJoin lets queued jobs finish first, and returns only when every thread has ended")
    func drainThenJoin() {
        let workers = WorkerThreads(count: 2, queueTimeout: .seconds(30), stackSize: 256 * 1024)
        let gate = DispatchSemaphore(value: 0)
        let ran = Atomic<Int>(0)
        for _ in 0..<6 {
            let queued = workers.submit(run: { gate.wait(); ran.add(1, ordering: .relaxed) },
                                        expired: { Issue.record("no job may expire") }, accepted: {})
            #expect(queued)
        }
        let joined = DispatchSemaphore(value: 0)
        let stopper = Thread { workers.stopAndJoin(); joined.signal() }
        stopper.start()
        for _ in 0..<6 { gate.signal() }
        #expect(joined.wait(timeout: .now() + 10) == .success, "stopAndJoin did not return within 10 s")
        let count = ran.load(ordering: .relaxed)
        #expect(count == 6)
        #expect(workers.queue.pending == 0)
    }

    @Test("after stopAndJoin a job is refused and its accepted closure never runs")
    func refusedAfterStop() {
        let workers = WorkerThreads(count: 1, queueTimeout: .seconds(30), stackSize: 256 * 1024)
        workers.stopAndJoin()
        var accepted = false
        let queued = workers.submit(run: {}, expired: {}, accepted: { accepted = true })
        #expect(!queued)
        #expect(!accepted)
    }

    @Test("a job that waited longer than the queue timeout runs its expired closure instead")
    func expiresInQueue() {
        // A clock moved by hand: the second job's queue time passes while the first holds the thread.
        let start = ContinuousClock.now
        let elapsed = Mutex<Duration>(.zero)
        let workers = WorkerThreads(count: 1, queueTimeout: .milliseconds(50), stackSize: 256 * 1024,
                                    now: { start + elapsed.withLock { $0 } })
        let gate = DispatchSemaphore(value: 0)
        let outcome = Mutex<[String]>([])
        let firstStarted = DispatchSemaphore(value: 0)
        _ = workers.submit(run: { firstStarted.signal(); gate.wait(); outcome.withLock { $0.append("first ran") } },
                           expired: { outcome.withLock { $0.append("first expired") } }, accepted: {})
        _ = workers.submit(run: { outcome.withLock { $0.append("second ran") } },
                           expired: { outcome.withLock { $0.append("second expired") } }, accepted: {})
        #expect(firstStarted.wait(timeout: .now() + 10) == .success)  // taken off the queue in time
        #expect(workers.queue.pending == 2 && workers.queue.oldestWait == .zero)
        elapsed.withLock { $0 = .milliseconds(51) }
        // What /metrics shows an operator (and what tests wait on): the queued job's age, on the same clock.
        #expect(workers.queue.oldestWait == .milliseconds(51))
        gate.signal()
        workers.stopAndJoin()
        #expect(outcome.withLock { $0 } == ["first ran", "second expired"])
        #expect(workers.queue.pending == 0 && workers.queue.oldestWait == .zero)
    }
}
