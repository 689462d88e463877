/// A token bucket: `capacity` requests at once, refilled continuously at `refillPerSecond`.
/// Pure value; the caller supplies the clock so tests need no sleeping.
struct TokenBucket: Sendable, Equatable {
let capacity: Double
let refillPerSecond: Double
private(set) var tokens: Double
private(set) var updatedAt: Double

init(capacity: Double, refillPerSecond: Double, now: Double) {
        self.capacity = capacity
        self.refillPerSecond = refillPerSecond
        self.tokens = capacity
        self.updatedAt = now
    }

enum Decision: Sendable, Equatable {
        case allowed
        /// Whole seconds until one token is back, at least 1.
        case limited(retryAfter: Int)
    }

mutating func take(now: Double) -> Decision {
        refill(now: now)
        if tokens >= 1 {
            tokens -= 1
            return .allowed
        }
        let wait = (1 - tokens) / refillPerSecond
        return .limited(retryAfter: max(1, Int(wait.rounded(.up))))
    }

    /// True when the bucket is full again, so a limiter may forget it.
func isFull(now: Double) -> Bool {
        var copy = self
        copy.refill(now: now)
        return copy.tokens >= capacity
    }

    private mutating func refill(now: Double) {
        let elapsed = max(0, now - updatedAt)
        tokens = min(capacity, tokens + elapsed * refillPerSecond)
        updatedAt = now
    }
}
