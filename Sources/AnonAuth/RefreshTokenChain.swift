import PriceCrypto

/// A session's refresh tokens form a chain: each token's successor is derived from the token itself,
/// `child = base64url(HMAC-SHA256(key, token))`, under a key derived from the service secret.
///
/// Derivation is what lets a rotated token presented again (a client that lost the answer, or several
/// tabs refreshing at once) be answered with the session's *live* token instead of a new one: the
/// database stores only hashes and tells how many generations down the live token is; the service
/// recomputes it from the presented token. So a token never forks into two valid children, and no
/// plaintext token is ever stored.
///
/// - Important: a secret rotation changes the chain. A rotated token presented again across a rotation
///   cannot be answered with its live token (the hashes no longer match) and is refused.
public struct RefreshTokenChain: Sendable {
    private let key: [UInt8]
    /// The database follows at most this many generations (see auth.refresh_session).
    public static let maxGenerations = 64

    public init(secret: [UInt8]) {
        // Domain separation: this key signs nothing else.
        key = hmacSHA256(key: secret, message: Array("pricesvc refresh-token chain v1".utf8))
    }

    /// The token that follows `token` in its session.
    public func child(of token: String) -> (token: String, hash: [UInt8]) {
        let next = Base64URL.encode(hmacSHA256(key: key, message: Array(token.utf8)))
        return (next, sha256(next))
    }

    /// The token `generations` steps after `token` (1 = its child), or nil for a count outside 1...max.
    public func descendant(of token: String, generations: Int) -> (token: String, hash: [UInt8])? {
        guard generations >= 1, generations <= Self.maxGenerations else { return nil }
        var current = child(of: token)
        for _ in 1..<generations { current = child(of: current.token) }
        return current
    }
}
