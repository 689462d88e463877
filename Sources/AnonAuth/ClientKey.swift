import PriceCrypto

/// Turns a client IP into the key the database rate-limits on.
///
/// HMAC under the service secret rather than a plain hash: the IPv4 space is small enough to hash
/// exhaustively, so an unkeyed digest would store the raw IPs in all but name.
public struct ClientKey: Sendable {
    private let secret: [UInt8]

    public init(secret: [UInt8]) {
        self.secret = secret
    }

    /// HMAC-SHA256(secret, "ip:" + ip). The prefix keeps these MACs apart from any other use of the secret.
    public func key(forIP ip: String) -> [UInt8] {
        hmacSHA256(key: secret, message: Array(("ip:" + ip).utf8))
    }
}
