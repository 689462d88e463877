import Dispatch
import Foundation

/// SIGTERM/SIGINT, the Dispatch way: ignore the default action, then watch with a source.
final class ShutdownSignal {
    /// A write to a connection the client closed fails with EPIPE instead of killing the process.
    static func ignoreBrokenPipes() {
        signal(SIGPIPE, SIG_IGN)
    }

    private let received = DispatchSemaphore(value: 0)
    private var sources: [DispatchSourceSignal] = []

    /// Watches SIGTERM/SIGINT from now on. Create it before the server can be reached: a signal that
    /// arrives between ignoring it and registering the source would be lost (seen as a flaky test, a
    /// SIGTERM sent right after /healthz first answered that never stopped the process).
    init() {
        let queue = DispatchQueue(label: "pricesvc.signals")
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [received] in received.signal() }
            source.resume()
            sources.append(source)
        }
    }

    /// Blocks until one of the signals arrives.
    func wait() {
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
