import PriceCrypto
import Synchronization

/// Access tokens one `TokenVerifier` verified lately, so a client that sends the same token on every
/// request pays for its HMAC, base64 and claims JSON once rather than per request.
///
/// A hit gives exactly what a full verification would give, because verification depends only on the
/// token's text, the verifier's keys and the clock:
/// - the key is the whole token text, compared in constant time, so a hit means the very bytes that verified;
/// - a cache belongs to one verifier, and a changed key set makes a new verifier, with an empty cache;
/// - only tokens that passed every check go in, and the verifier re-checks the time claims and the role on
///   every hit (a token that has expired since goes the full way, which refuses it).
///
/// It is direct-mapped: a fixed array of slots, the slot chosen by Swift's `Hasher`, which is seeded at
/// random per process, so nobody outside can aim tokens at one slot. Memory is bounded by the slot count,
/// and a token landing on an occupied slot replaces the older one. PostgreSQL still verifies every token
/// itself (`request.jwt`); this only spares the service's own check.
public final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let verified: VerifiedToken
        let notBefore: Int?
        let issuedAt: Int?
    }

    private let slots: Mutex<[Entry?]>
    public let capacity: Int
    private let hitCount = Atomic<Int>(0)
    private let missCount = Atomic<Int>(0)

    /// - Parameter capacity: slots, at least 1.
    public init(capacity: Int) {
        precondition(capacity >= 1, "a token cache needs at least one slot")
        self.capacity = capacity
        slots = Mutex([Entry?](repeating: nil, count: capacity))
    }

    /// Lookups that found the token, and lookups that did not.
    public var hits: Int { hitCount.load(ordering: .relaxed) }
    public var misses: Int { missCount.load(ordering: .relaxed) }

    func entry(for token: String) -> Entry? {
        var text = token
        let found: Entry? = text.withUTF8 { bytes in
            let slot = self.slot(UnsafeRawBufferPointer(bytes))
            guard let entry = slots.withLock({ $0[slot] }) else { return nil }
            var cached = entry.verified.token
            let same = cached.withUTF8 { constantTimeEqual(UnsafeRawBufferPointer($0), UnsafeRawBufferPointer(bytes)) }
            return same ? entry : nil
        }
        if found == nil { missCount.add(1, ordering: .relaxed) } else { hitCount.add(1, ordering: .relaxed) }
        return found
    }

    func store(_ entry: Entry) {
        var text = entry.verified.token
        let slot = text.withUTF8 { self.slot(UnsafeRawBufferPointer($0)) }
        slots.withLock { $0[slot] = entry }
    }

    private func slot(_ bytes: UnsafeRawBufferPointer) -> Int {
        var hasher = Hasher()
        hasher.combine(bytes: bytes)
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(capacity))
    }
}
