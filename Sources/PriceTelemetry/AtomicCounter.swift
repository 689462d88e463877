import Synchronization

/// A relaxed atomic counter, the cell of every metrics table.
public final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)
    public init() {}
    public func add(_ amount: Int = 1) { value.add(amount, ordering: .relaxed) }
    public var current: Int { value.load(ordering: .relaxed) }
}
