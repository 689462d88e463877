internal import CCrypto

/// `count` bytes from OpenSSL's CSPRNG (seeded from the kernel's getrandom).
///
/// - Important: traps if the generator reports failure. That does not happen on Linux with a working
///   kernel, and handing out a predictable refresh token would be far worse than a crash.
public func secureRandomBytes(count: Int) -> [UInt8] {
    precondition(count >= 0 && count <= Int(Int32.max), "secureRandomBytes: bad count \(count)")
    var bytes = [UInt8](repeating: 0, count: count)
    guard count > 0 else { return bytes }
    let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
    guard status == 1 else { fatalError("RAND_bytes failed: the CSPRNG is unavailable") }
    return bytes
}
