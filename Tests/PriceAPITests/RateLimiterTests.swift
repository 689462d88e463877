import Testing
@testable import PriceAPI

@Suite("Token bucket and per-IP request limits")
struct RateLimiterTests {
    @Test("a bucket allows its capacity at once, then tells how long to wait")
    func bucketBurstThenWait() {
        var bucket = TokenBucket(capacity: 3, refillPerSecond: 0.5, now: 100)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .allowed)
        #expect(bucket.take(now: 100) == .limited(retryAfter: 2))
        #expect(bucket.take(now: 101) == .limited(retryAfter: 1))
        #expect(bucket.take(now: 102.01) == .allowed)
    }

    @Test("a bucket never refills beyond its capacity")
    func bucketCapsRefill() {
        var bucket = TokenBucket(capacity: 2, refillPerSecond: 10, now: 0)
        _ = bucket.take(now: 0)
        #expect(bucket.isFull(now: 1000))
        #expect(bucket.take(now: 1000) == .allowed)
        #expect(bucket.take(now: 1000) == .allowed)
        #expect(bucket.take(now: 1000) != .allowed)
    }

    @Test("the limiter keeps one bucket per client: one noisy address does not limit another")
    func limiterIsPerKey() {
        let limiter = RateLimiter(perMinute: 120)
        for _ in 0..<120 { #expect(limiter.take(key: "10.0.0.1", now: 0) == .allowed) }
        #expect(limiter.take(key: "10.0.0.1", now: 0) == .limited(retryAfter: 1))
        #expect(limiter.take(key: "10.0.0.2", now: 0) == .allowed)
    }

    @Test("a limit of zero turns the limiter off")
    func zeroDisables() {
        let limiter = RateLimiter(perMinute: 0)
        for _ in 0..<1000 { #expect(limiter.take(key: "a", now: 0) == .allowed) }
    }
}
