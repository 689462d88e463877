import Foundation

/// Threads that run the requests which wait on PostgreSQL, so libmicrohttpd's event-loop threads
/// never block. A job that waited longer than `queueTimeout` before a worker took it is handed
/// its `expired` closure instead (the caller answers 503), so a backlog cannot grow without bound
/// in time.
final class DatabaseWorkers: @unchecked Sendable {
    struct Job {
        let enqueuedAt: ContinuousClock.Instant
        let run: @Sendable () -> Void
        let expired: @Sendable () -> Void
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var stopping = false
    private let queueTimeout: Duration
    private var threads: [Thread] = []

    init(count: Int, queueTimeout: Duration, stackSize: Int) {
        self.queueTimeout = queueTimeout
        for index in 0..<count {
            let thread = Thread { [unowned self] in self.work() }
            thread.name = "pricesvc-db-\(index)"
            thread.stackSize = stackSize
            threads.append(thread)
            thread.start()
        }
    }

    func submit(run: @escaping @Sendable () -> Void, expired: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(Job(enqueuedAt: .now, run: run, expired: expired))
        condition.signal()
        condition.unlock()
    }

    /// Lets queued jobs finish, then ends the threads.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == jobs.count && !stopping { condition.wait() }
            if head == jobs.count {
                condition.unlock()
                return
            }
            let job = jobs[head]
            head += 1
            if head > 1024 && head * 2 > jobs.count {
                jobs.removeFirst(head)
                head = 0
            }
            condition.unlock()
            if ContinuousClock.now - job.enqueuedAt > queueTimeout {
                job.expired()
            } else {
                job.run()
            }
        }
    }
}
