import PriceCrypto

/// The signing keys an instance works with, resolved from its own secret and the database's key ring
/// (`auth.signing_key_ring`): every key of the set wrapped for the key the instance holds.
///
/// So the three steps of a rotation (`pricesvc keys add | promote | retire`) reach every running
/// instance without a restart: an instance holding any key of the set verifies tokens signed with every
/// other, and signs with the one the database calls current. The wrapping is the database's
/// (`private.signing_key_wrap`); ids and unwrapping are here, and both sides are tested against each other.
public enum SigningKeyRing {
    /// A key's public name: hex of the first 8 bytes of HMAC-SHA256(key, "pricesvc signing key id v1")
    /// (`private.signing_key_id` in SQL). Says which key is which, and nothing about the key.
    public static func keyID(_ secret: [UInt8]) -> String {
        hex(hmacSHA256(key: secret, message: Array("pricesvc signing key id v1".utf8)).prefix(8))
    }

    /// `wrapped` XOR the key stream of HMAC-SHA256(holder, "pricesvc signing key wrap v1:" + id + ":" + block)
    /// blocks; nil unless the result's own id is `keyID` (wrapped for another key, or damaged).
    public static func unwrap(_ wrapped: [UInt8], keyID: String, holder: [UInt8]) -> [UInt8]? {
        let secret = wrap(wrapped, keyID: keyID, holder: holder)
        return Self.keyID(secret) == keyID ? secret : nil
    }

    /// The same operation as the database's wrap (XOR is its own inverse); for tests and unwrapping.
    public static func wrap(_ bytes: [UInt8], keyID: String, holder: [UInt8]) -> [UInt8] {
        let key = HMACSHA256Key(holder)
        var stream: [UInt8] = []
        var block = 0
        while stream.count < bytes.count {
            stream += key.authenticate(Array("pricesvc signing key wrap v1:\(keyID):\(block)".utf8))
            block += 1
        }
        return zip(bytes, stream).map { $0 ^ $1 }
    }

    /// One row of `auth.signing_key_ring(holder)`.
    public struct Entry: Sendable, Equatable {
        public var keyID: String
        /// "current" (signs), "next" (added, verified), "previous" (promoted away from, verified).
        public var slot: String
        /// The key wrapped for the holder; nil when it is not shared with the holder's key.
        public var wrapped: [UInt8]?

        public init(keyID: String, slot: String, wrapped: [UInt8]?) {
            self.keyID = keyID
            self.slot = slot
            self.wrapped = wrapped
        }
    }

    /// What an instance signs and verifies with.
    public struct Keys: Sendable, Equatable {
        public var signing: [UInt8]
        /// Every key it can verify with, `signing` first.
        public var verifying: [[UInt8]]
        /// The ids of the set, as the database listed them ("slot:id"), for operators.
        public var description: String
    }

    /// Why an instance's secret does not work with the database's keys.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The keys for the holder of `own`, or why there are none: `own` must be in the set (else the
    /// database refuses every token the instance signs). Signs with the current key when it is shared
    /// with `own`, else with `own`.
    public static func resolve(own: [UInt8], entries: [Entry]) -> Result<Keys, Problem> {
        let ownID = keyID(own)
        let listing = entries.map { "\($0.slot) \($0.keyID)" }.joined(separator: ", ")
        guard entries.contains(where: { $0.keyID == ownID }) else {
            return .failure(Problem(description: entries.isEmpty
                ? "the database has no signing keys (run pricesvc migrate)"
                : "this JWT secret (key \(ownID)) is not one of the database's signing keys (\(listing))"))
        }
        var signing = own
        var others: [[UInt8]] = []
        for entry in entries where entry.keyID != ownID {
            guard let wrapped = entry.wrapped else { continue }
            guard let secret = unwrap(wrapped, keyID: entry.keyID, holder: own) else {
                return .failure(Problem(description: "key \(entry.keyID) does not unwrap with this JWT secret"))
            }
            others.append(secret)
            if entry.slot == "current" { signing = secret }
        }
        let verifying = [signing] + ([own] + others).filter { $0 != signing }
        return .success(Keys(signing: signing, verifying: verifying, description: listing))
    }
}
