internal import CCrypto

/// SHA-256 of `bytes`. Refresh tokens are stored only as this digest, so a database dump cannot be replayed.
public func sha256(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
    bytes.withUnsafeBufferPointer { input in
        digest.withUnsafeMutableBufferPointer { output in
            _ = SHA256(input.baseAddress, input.count, output.baseAddress)
        }
    }
    return digest
}

/// SHA-256 of the UTF-8 encoding of `text`.
public func sha256(_ text: String) -> [UInt8] {
    sha256(Array(text.utf8))
}
