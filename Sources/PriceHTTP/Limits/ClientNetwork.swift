import Foundation

/// What per-address limits count as one client. An IPv4 address is one client. An IPv6 client
/// usually holds a whole /64 (SLAAC, privacy addresses), so counting single IPv6 addresses would give
/// one machine 2^64 buckets: it is counted by its network at `ipv6Prefix` bits instead. An
/// IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, what a dual-stack socket reports) is its IPv4 address.
enum ClientNetwork {
    /// The canonical key: `203.0.113.5`, or `2001:db8:1:2::/64` (the masked network, RFC 5952 text,
    /// and the prefix length). `nil` when `address` is not a literal IPv4 or IPv6 address.
    static func key(for address: String, ipv6Prefix: Int) -> String? {
        precondition((1...128).contains(ipv6Prefix), "ipv6Prefix must be 1...128")
        // inet_pton reads a C string: text with a NUL would be judged by its part before the NUL, and
        // returned whole as the key (a fresh bucket per suffix). No address is longer than 45 bytes.
        guard address.utf8.count <= 64, !address.utf8.contains(0) else { return nil }
        // inet_pton takes an IPv4 address only as four decimal parts without leading zeros, which is
        // exactly how inet_ntop prints it: such an address is its own key (the common case, per request).
        var ipv4 = in_addr()
        if inet_pton(AF_INET, address, &ipv4) == 1 { return address }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard bytes.withUnsafeMutableBytes({ inet_pton(AF_INET6, address, $0.baseAddress) }) == 1 else { return nil }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
            return text(Array(bytes[12..<16]), family: AF_INET)
        }
        for index in 0..<16 {
            let keep = min(max(ipv6Prefix - index * 8, 0), 8)
            bytes[index] &= keep == 8 ? 0xFF : ~(UInt8(0xFF) >> keep)
        }
        return text(bytes, family: AF_INET6).map { $0 + "/\(ipv6Prefix)" }
    }

    private static func text(_ bytes: [UInt8], family: Int32) -> String? {
        var buffer = [CChar](repeating: 0, count: 64)
        let written = bytes.withUnsafeBytes { address in
            buffer.withUnsafeMutableBufferPointer { inet_ntop(family, address.baseAddress, $0.baseAddress, 64) }
        }
        guard written != nil else { return nil }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}
