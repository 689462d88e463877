import PriceCrypto
import PriceJSON

/// One-time challenges for App Attest sign-up (`GET /auth/v1/challenge?type=app_attest`), issued without
/// state: `aa1.<expires>.<nonce>.<mac>`, where `mac` is HMAC-SHA256 under a key derived from the JWT secret
/// over `aa1.<expires>.<nonce>`. The app passes `SHA-256(challenge as UTF-8)` to `attestKey` as its
/// clientDataHash; the sign-up records the challenge as spent (`SpentChallenge`), as the ALTCHA one is.
public struct AttestationChallenges: Sendable {
    static let keyLabel = "pricesvc app-attest-challenge v1"
    static let prefix = "aa1"
    /// A challenge is about 100 characters; a longer text is refused unread.
    static let maxChallengeBytes = 160
    static let clockSkewSeconds = 60

    let key: [UInt8]
    public let lifetimeSeconds: Int

    /// - Important: `secret` is the JWT secret: every instance that shares it accepts the others' challenges.
    public init(secret: [UInt8], lifetimeSeconds: Int) {
        precondition(lifetimeSeconds >= 1, "AttestationChallenges: bad lifetime")
        self.key = hmacSHA256(key: secret, message: Array(Self.keyLabel.utf8))
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// A fresh challenge: 16 random bytes, expiring `lifetimeSeconds` from `now`.
    public func issue(now: Int) -> (challenge: String, expiresAt: Int) {
        issue(now: now, nonce: hex(secureRandomBytes(count: 16)))
    }

    /// A challenge with a chosen nonce (tests).
    public func issue(now: Int, nonce: String) -> (challenge: String, expiresAt: Int) {
        let expires = now + lifetimeSeconds
        let signed = "\(Self.prefix).\(expires).\(nonce)"
        return (signed + "." + hex(hmacSHA256(key: key, message: Array(signed.utf8))), expires)
    }

    /// The body of `GET /auth/v1/challenge?type=app_attest`.
    public func json(now: Int) -> String {
        let issued = issue(now: now)
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("challenge"); writer.string(issued.challenge)
        writer.key("expires_at"); writer.number(issued.expiresAt)
        writer.endObject()
        return writer.text
    }

    /// Checks that this service issued `challenge` and that it has not expired; whether it was used
    /// already is for the database to say (the returned `SpentChallenge`).
    public func verify(_ challenge: String, now: Int) -> Result<SpentChallenge, ChallengeError> {
        guard challenge.utf8.count <= Self.maxChallengeBytes else { return .failure(.malformed) }
        let parts = challenge.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == Self.prefix, parts[1].utf8.count <= 12,
              parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let expires = Int(parts[1]) else { return .failure(.malformed) }
        let signed = "\(parts[0]).\(parts[1]).\(parts[2])"
        let expected = hex(hmacSHA256(key: key, message: Array(signed.utf8)))
        guard constantTimeEqual(Array(parts[3].utf8), Array(expected.utf8)) else { return .failure(.badSignature) }
        guard now <= expires else { return .failure(.expired) }
        guard expires <= now + lifetimeSeconds + Self.clockSkewSeconds else { return .failure(.malformed) }
        return .success(SpentChallenge(digest: sha256(challenge), expiresAt: expires))
    }
}
