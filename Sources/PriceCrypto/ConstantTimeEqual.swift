internal import CCrypto

/// Compares secrets (signatures, MACs) in time that depends only on their length, so an attacker cannot
/// learn a valid signature byte by byte from response timing. Lengths are public (a MAC has a fixed size),
/// so unequal lengths return `false` at once.
public func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
    lhs.withUnsafeBytes { left in rhs.withUnsafeBytes { right in constantTimeEqual(left, right) } }
}

/// The same comparison over memory the caller already holds (no arrays made).
public func constantTimeEqual(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
    guard lhs.count == rhs.count else { return false }
    guard lhs.count > 0, let left = lhs.baseAddress, let right = rhs.baseAddress else { return true }
    return CRYPTO_memcmp(left, right, lhs.count) == 0
}
