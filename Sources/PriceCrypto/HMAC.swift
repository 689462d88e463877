internal import CCrypto

/// HMAC-SHA256, the primitive under HS256 JWTs and the per-IP client keys.
public func hmacSHA256(key: [UInt8], message: [UInt8]) -> [UInt8] {
    message.withUnsafeBufferPointer { message in
        hmacSHA256(key: key, message: UnsafeRawBufferPointer(message))
    }
}

/// HMAC-SHA256 over bytes the caller already holds (a JWT's signing input), without copying them.
public func hmacSHA256(key: [UInt8], message: UnsafeRawBufferPointer) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var digestLength: UInt32 = 0
    // OpenSSL 3's one-shot HMAC() refuses a NULL key pointer even with length 0; an empty array may
    // hand us exactly that, so give it a real (unused) byte.
    let keyBytes = key.isEmpty ? [0] : key
    let result = keyBytes.withUnsafeBufferPointer { keyPointer in
        digest.withUnsafeMutableBufferPointer { output in
            HMAC(
                EVP_sha256(), keyPointer.baseAddress, Int32(key.count),
                message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? keyPointer.baseAddress, message.count,
                output.baseAddress, &digestLength)
        }
    }
    precondition(result != nil && digestLength == 32, "libcrypto HMAC-SHA256 failed")
    return digest
}
