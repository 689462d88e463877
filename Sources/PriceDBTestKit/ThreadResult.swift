import Foundation

/// A value computed on its own thread (pool callers are plain threads, not tasks).
public final class ThreadResult<T>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var result: Result<T, any Error>?

    init(_ body: @escaping @Sendable () throws -> T) {
        let thread = Thread { [self] in
            result = Result { try body() }
            done.signal()
        }
        thread.start()
    }

    public func value() throws -> T {
        done.wait()
        done.signal()
        return try result!.get()
    }
}

public func onThread<T>(_ body: @escaping @Sendable () throws -> T) -> ThreadResult<T> {
    ThreadResult(body)
}
