import Dispatch
import Foundation

/// A stop asked of every background task at once. Tasks pause with ``wait(seconds:)``, never with
/// `sleep`, so a stop ends any pause at once.
final class StopRequest: @unchecked Sendable {
    // @unchecked: `requested` is only touched under `condition`'s lock.
    private let condition = NSCondition()
    private var requested = false

    var isRequested: Bool {
        condition.lock()
        defer { condition.unlock() }
        return requested
    }

    /// Waits `seconds`, or less if a stop is requested meanwhile; true when a stop was requested.
    func wait(seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        condition.lock()
        defer { condition.unlock() }
        while !requested, condition.wait(until: deadline) {}
        return requested
    }

    func request() {
        condition.lock()
        requested = true
        condition.broadcast()
        condition.unlock()
    }
}

/// Work that runs beside the server for as long as it serves: a loop on a thread of its own.
struct BackgroundTask: Sendable {
    /// The thread's name (`top -H`, a debugger).
    let name: String
    /// Runs until `stop.isRequested`, pausing only with `stop.wait(seconds:)`.
    let body: @Sendable (_ stop: StopRequest) -> Void
    /// Ends a wait of `body` on anything other than `stop` (the key refresher waits for a refresh request).
    var wake: @Sendable () -> Void = {}
}

/// The background tasks of `serve` (the key refresh, the maintenance runs reader): started together
/// once the server listens, stopped together on shutdown and joined before the pools close, so no
/// loop uses a closed pool or outlives `serve`.
final class BackgroundTasks {
    private let tasks: [BackgroundTask]
    private let stop = StopRequest()
    /// One per started task, signalled when its body returns.
    private var finished: [DispatchSemaphore] = []

    init(_ tasks: [BackgroundTask]) {
        self.tasks = tasks
    }

    /// Starts every task on a thread of its own.
    func start() {
        precondition(finished.isEmpty, "background tasks start once")
        for task in tasks {
            let done = DispatchSemaphore(value: 0)
            let thread = Thread { [stop] in
                task.body(stop)
                done.signal()
            }
            thread.name = task.name
            thread.start()
            finished.append(done)
        }
    }

    /// Asks every task to stop, wakes it, and waits until each has returned, `timeout` at most in all.
    /// - Returns: the names of the tasks still running at the deadline (a database call that has not
    ///   timed out yet); empty when every task has returned.
    func stopAndJoin(within timeout: Duration) -> [String] {
        stop.request()
        tasks.forEach { $0.wake() }
        let deadline = DispatchTime.now() + .nanoseconds(Int(timeout / .nanoseconds(1)))
        return zip(tasks, finished).compactMap { task, done in
            done.wait(timeout: deadline) == .timedOut ? task.name : nil
        }
    }
}
