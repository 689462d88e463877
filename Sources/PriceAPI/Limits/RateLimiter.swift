import Synchronization

/// Per-client token buckets (the per-IP request limit). Buckets live in shards so
/// event-loop and worker threads rarely contend on one lock; full buckets are swept periodically
/// so memory stays bounded by the number of recently active clients.
final class RateLimiter: Sendable {
let perMinute: Int
    private final class Shard: Sendable {
        let buckets = Mutex<[String: TokenBucket]>([:])
    }

    private let shards: [Shard]
    private let sweepEvery: Int

init(perMinute: Int, burst: Int? = nil, shardCount: Int = 16, sweepEvery: Int = 4096) {
        self.perMinute = perMinute
        self.burst = Double(burst ?? perMinute)
        self.shards = (0..<shardCount).map { _ in Shard() }
        self.sweepEvery = sweepEvery
    }

    private let burst: Double

func take(key: String, now: Double) -> TokenBucket.Decision {
        guard perMinute > 0 else { return .allowed }
        var hasher = Hasher()
        hasher.combine(key)
        let shard = shards[Int(UInt(bitPattern: hasher.finalize()) % UInt(shards.count))]
        let capacity = burst
        let rate = Double(perMinute) / 60
        let sweepEvery = self.sweepEvery
        return shard.buckets.withLock { buckets in
            var bucket = buckets[key] ?? TokenBucket(capacity: capacity, refillPerSecond: rate, now: now)
            let decision = bucket.take(now: now)
            buckets[key] = bucket
            if buckets.count > sweepEvery {
                buckets = buckets.filter { !$0.value.isFull(now: now) }
            }
            return decision
        }
    }
}
