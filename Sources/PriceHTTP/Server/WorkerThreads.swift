import Foundation

/// Threads for the work that blocks (database round trips), so libmicrohttpd's event loops never do.
/// A job that waited longer than `queueTimeout` before a thread took it runs its `expired` closure
/// instead (the application answers 503), so a backlog cannot grow without bound in time.
final class WorkerThreads: @unchecked Sendable {
    struct Job {
        let enqueuedAt: ContinuousClock.Instant
        let run: @Sendable () -> Void
        let expired: @Sendable () -> Void
    }

    private let condition = NSCondition()
    /// Queued jobs from `head` on; a taken job's slot is emptied at once, so what its closures hold
    /// (the request, its body) is freed when it ends rather than when the array is next compacted.
    private var jobs: [Job?] = []
    private var head = 0
    private var stopping = false
    private var running = 0
    private let queueTimeout: Duration
    /// What a job's queue time is measured with; tests pass a clock they move by hand.
    private let now: @Sendable () -> ContinuousClock.Instant

    init(count: Int, queueTimeout: Duration, stackSize: Int,
         now: @escaping @Sendable () -> ContinuousClock.Instant = { .now }) {
        self.queueTimeout = queueTimeout
        self.now = now
        running = count
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "pricesvc-db-\(index)"
            thread.stackSize = stackSize
            thread.start()
        }
    }

    /// Queues a job unless the threads are stopping. `accepted` runs under the queue's lock just
    /// before the job is queued, so what it does (suspend the connection) happens before any worker
    /// can start the job. Returns false, without calling `accepted`, once `stopAndJoin` has begun.
    func submit(run: @escaping @Sendable () -> Void, expired: @escaping @Sendable () -> Void,
                accepted: () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return false }
        accepted()
        jobs.append(Job(enqueuedAt: now(), run: run, expired: expired))
        condition.signal()
        return true
    }

    /// Refuses new jobs, lets every queued job finish, and returns once every thread has ended.
    func stopAndJoin() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running > 0 { condition.wait() }
        condition.unlock()
    }

    /// Jobs queued or running right now, and how long the oldest job still queued has waited (zero when
    /// none waits): the first says how much work is in, the second how close the queue is to `queueTimeout`.
    var queue: (pending: Int, oldestWait: Duration) {
        condition.lock()
        defer { condition.unlock() }
        let oldestWait = head < jobs.count ? jobs[head].map { now() - $0.enqueuedAt } ?? .zero : .zero
        return (jobs.count - head + busy, oldestWait)
    }

    private var busy = 0

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            guard let job = jobs[head].take() else { preconditionFailure("WorkerThreads: an empty slot in the queue") }
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            busy += 1
            condition.unlock()
            if now() - job.enqueuedAt > queueTimeout {
                job.expired()
            } else {
                job.run()
            }
            condition.lock()
            busy -= 1
            condition.unlock()
        }
    }
}
