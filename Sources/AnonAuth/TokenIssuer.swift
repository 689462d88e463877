import PriceJSON
import PriceCrypto

/// Signs the service's tokens with the current secret.
///
/// - Important: validate the secret with ``JWTSecret/validate(_:)`` when loading configuration; the issuer
///   signs with whatever it is given.
public struct TokenIssuer: Sendable {
    private let secret: [UInt8]
    public let issuer: String
    /// Seconds an access token lives. It is also how long a revoked session's tokens keep working at most,
    /// because access tokens are verified without a database lookup.
    public let accessTokenLifetime: Int

    public init(secret: [UInt8], issuer: String = "pricesvc", accessTokenLifetime: Int = 3600) {
        self.secret = secret
        self.issuer = issuer
        self.accessTokenLifetime = accessTokenLifetime
    }

    /// An access token for an anonymous user's session, in the claim shape Supabase clients expect.
    /// The ids are UUID text as the database printed it (lower-case), copied into the claims unchanged.
    public func accessToken(userID: String, sessionID: String, now: Int) -> (token: String, expiresAt: Int) {
        let expiresAt = now + accessTokenLifetime
        let claims: JSONObject = [
            "sub": .string(userID),
            "role": "authenticated",
            "aud": "authenticated",
            "iat": .number(JSONNumber(now)),
            "exp": .number(JSONNumber(expiresAt)),
            "iss": .string(issuer),
            "session_id": .string(sessionID),
            "is_anonymous": true,
        ]
        return (HS256.sign(claims: claims, secret: secret), expiresAt)
    }

    /// The public `apikey`: `{"role":"anon","iss":<issuer>}` with no expiry. Deterministic, so every
    /// instance sharing a secret prints the same key.
    public func anonKey() -> String {
        HS256.sign(claims: ["role": "anon", "iss": .string(issuer)], secret: secret)
    }

    /// Signs arbitrary claims, in their order. For tools (benchmarks minting reporters, tests), not for the
    /// request path.
    public func sign(claims: JSONObject) -> String {
        HS256.sign(claims: claims, secret: secret)
    }
}
