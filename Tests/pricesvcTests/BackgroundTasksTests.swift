import Dispatch
import Foundation
import Synchronization
import Testing
@testable import pricesvc

@Suite("serve's background tasks: started together, stopped together, joined")
struct BackgroundTasksTests {
    @Test("start runs every task; a stop ends their hour-long pauses at once and joins them all")
    func startAndStop() {
        let started = DispatchSemaphore(value: 0)
        let passes = Count(), returned = Count()
        let tasks = (0..<3).map { index in
            BackgroundTask(name: "test-task-\(index)", body: { stop in
                started.signal()
                repeat { passes.add() } while !stop.wait(seconds: 3600)
                returned.add()
            })
        }
        let background = BackgroundTasks(tasks)
        background.start()
        for index in tasks.indices {
            #expect(started.wait(timeout: .now() + 5) == .success, "task \(index) of 3 started")
        }
        let clock = ContinuousClock()
        let asked = clock.now
        #expect(background.stopAndJoin(within: .seconds(5)) == [])
        #expect(clock.now - asked < .seconds(2), "the stop did not wait for the pauses to end")
        #expect(returned.value == 3 && passes.value == 3)
    }

    @Test("a task that waits on its own signal (as the key refresher does) is woken by its wake")
    func wake() {
        let signal = DispatchSemaphore(value: 0)
        let returned = Count()
        let background = BackgroundTasks([BackgroundTask(name: "test-wake", body: { stop in
            while !stop.isRequested { _ = signal.wait(timeout: .now() + 3600) }
            returned.add()
        }, wake: { signal.signal() })])
        background.start()
        let clock = ContinuousClock()
        let asked = clock.now
        #expect(background.stopAndJoin(within: .seconds(5)) == [])
        #expect(clock.now - asked < .seconds(2))
        #expect(returned.value == 1)
    }

    @Test("a task still busy at the deadline is named, and the others are joined")
    func busyTaskAtTheDeadline() {
        let release = DispatchSemaphore(value: 0)
        let returned = Count()
        let background = BackgroundTasks([
            BackgroundTask(name: "test-prompt", body: { stop in
                _ = stop.wait(seconds: 3600)
                returned.add()
            }),
            BackgroundTask(name: "test-busy", body: { _ in _ = release.wait(timeout: .now() + 10) }),
        ])
        background.start()
        #expect(background.stopAndJoin(within: .milliseconds(300)) == ["test-busy"])
        #expect(returned.value == 1)
        release.signal()
    }

    @Test("a pause lasts its time when no stop comes, ends when one is asked from another thread, and is over at once after")
    func stopRequest() {
        let stop = StopRequest()
        let clock = ContinuousClock()
        var began = clock.now
        #expect(!stop.wait(seconds: 0.05))
        #expect(clock.now - began >= .milliseconds(40))
        #expect(!stop.isRequested)

        let asker = Thread { [stop] in
            _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(50))
            stop.request()
        }
        began = clock.now
        asker.start()
        #expect(stop.wait(seconds: 3600))
        #expect(clock.now - began < .seconds(2))
        #expect(stop.isRequested && stop.wait(seconds: 3600))
    }
}

private final class Count: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}
