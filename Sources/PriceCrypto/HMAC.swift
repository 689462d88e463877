internal import CCrypto

/// An HMAC-SHA256 key with its padded blocks already hashed, for a secret that signs or checks many
/// messages (every request's token). Holds key-derived state: treat it like the secret itself.
public struct HMACSHA256Key: @unchecked Sendable {
    private var state = ccrypto_hmac_sha256_key()

    public init(_ key: [UInt8]) {
        key.withUnsafeBufferPointer { key in
            ccrypto_hmac_sha256_key_init(&state, key.baseAddress, key.count)
        }
    }

    /// The 32-byte MAC of `message`.
    public func authenticate(_ message: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: 32) { digest, count in
            withUnsafePointer(to: state) { state in
                ccrypto_hmac_sha256(state, message.baseAddress?.assumingMemoryBound(to: UInt8.self),
                                    message.count, digest.baseAddress)
            }
            count = 32
        }
    }

    public func authenticate(_ message: [UInt8]) -> [UInt8] {
        message.withUnsafeBytes { authenticate($0) }
    }
}

/// HMAC-SHA256, the primitive under HS256 JWTs and the per-IP client keys.
public func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    HMACSHA256Key(key).authenticate(message)
}
