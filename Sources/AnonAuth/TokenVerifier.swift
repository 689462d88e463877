import PriceJSON
import PriceCrypto

/// Verifies HS256 tokens in-process on every request (an access token seen lately comes from the
/// verifier's `VerifiedTokenCache`, with its time claims and role checked again).
///
/// Order matters: the size is checked before decoding anything, the algorithm before the signature, and
/// the signature before the payload is even parsed, so an unauthenticated sender can only ever learn
/// "malformed", "oversize", "unsupported algorithm" or "bad signature".
public struct TokenVerifier: Sendable {
    /// Current secret first, then previous ones still accepted during a rotation, each prepared once.
    private let keys: [HMACSHA256Key]
    /// Seconds of clock skew tolerated on `exp`, `nbf` and `iat` (matches `private.jwt_leeway()` in SQL).
    public let leeway: Int
    public let maxTokenBytes: Int
    /// Access tokens verified lately; nil when the verifier was made without one.
    public let cache: VerifiedTokenCache?
    /// How many keys it verifies with (the current one first).
    public var keyCount: Int { keys.count }

    /// - Parameter cacheEntries: slots of the access-token cache (0: every token is verified in full).
    /// - Important: `secrets` must not be empty; verification with no key would reject everything silently.
    public init(secrets: [[UInt8]], leeway: Int = 30, maxTokenBytes: Int = 8192, cacheEntries: Int = 0) {
        precondition(!secrets.isEmpty, "TokenVerifier needs at least one secret")
        self.keys = secrets.map(HMACSHA256Key.init)
        self.leeway = leeway
        self.maxTokenBytes = maxTokenBytes
        cache = cacheEntries > 0 ? VerifiedTokenCache(capacity: cacheEntries) : nil
    }

    /// Checks structure, algorithm, signature and time claims; says nothing about who the token is for.
    public func verify(_ token: String, now: Int) -> Result<VerifiedToken, TokenError> {
        Result { () throws(TokenError) in try verifiedToken(token, now: now).verified }
    }

    /// The roles a user's access token may carry unless a caller says otherwise (built once, not per call).
    public static let userRoles: Set<String> = ["authenticated"]

    /// A user's access token: role in `roles`, audience `authenticated`, a UUID `sub` and an `exp`.
    public func verifyAccessToken(
        _ token: String, now: Int, roles: Set<String> = TokenVerifier.userRoles
    ) -> Result<VerifiedToken, TokenError> {
        if let hit = cache?.entry(for: token), isCurrent(hit, now: now),
           let role = hit.verified.role, roles.contains(role) {
            return .success(hit.verified)
        }
        return Result { () throws(TokenError) in
            let (verified, notBefore, issuedAt) = try verifiedToken(token, now: now)
            guard let role = verified.role, roles.contains(role) else { throw .wrongRole }
            guard verified.aud.contains("authenticated") else { throw .wrongAudience }
            guard verified.sub != nil else { throw .missingClaim("sub") }
            guard verified.exp != nil else { throw .missingClaim("exp") }
            cache?.store(.init(verified: verified, notBefore: notBefore, issuedAt: issuedAt))
            return verified
        }
    }

    /// The time checks of `verifiedToken`, on a cached token: what may have changed since it went in.
    private func isCurrent(_ entry: VerifiedTokenCache.Entry, now: Int) -> Bool {
        !isExpired(entry.verified.exp, now: now) && !isEarly(entry.notBefore, now: now) && !isEarly(entry.issuedAt, now: now)
    }

    /// `exp` is past, beyond the leeway.
    private func isExpired(_ exp: Int?, now: Int) -> Bool {
        exp.map { now - leeway >= $0 } ?? false
    }

    /// An `nbf` or `iat` still ahead, beyond the leeway.
    private func isEarly(_ time: Int?, now: Int) -> Bool {
        time.map { $0 > now + leeway } ?? false
    }

    /// The public `apikey`: role `anon`.
    public func verifyAnonKey(_ token: String, now: Int) -> Result<VerifiedToken, TokenError> {
        Result { () throws(TokenError) in
            let verified = try verifiedToken(token, now: now).verified
            guard verified.role == "anon" else { throw .wrongRole }
            return verified
        }
    }

    /// The checked token, with its `nbf` and `iat` (the cache re-checks them on each hit).
    private func verifiedToken(_ token: String, now: Int) throws(TokenError)
        -> (verified: VerifiedToken, notBefore: Int?, issuedAt: Int?)
    {
        guard token.utf8.count <= maxTokenBytes else { throw .oversize }
        var compact = token
        let claims = try compact.withUTF8 { bytes in
            Result { () throws(TokenError) in try authenticatedClaims(bytes) }
        }.get()
        let verified = try VerifiedToken(token: token, claims: claims)
        if isExpired(verified.exp, now: now) { throw .expired }
        let notBefore = try VerifiedToken.numericDate(claims, "nbf")
        if isEarly(notBefore, now: now) { throw .notYetValid }
        let issuedAt = try VerifiedToken.numericDate(claims, "iat")
        if isEarly(issuedAt, now: now) { throw .notYetValid }
        return (verified, notBefore, issuedAt)
    }

    /// The payload object of a correctly signed HS256 token.
    private func authenticatedClaims(_ bytes: UnsafeBufferPointer<UInt8>) throws(TokenError) -> JSONObject {
        var dots = (0, 0)
        var dotCount = 0
        for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
            dotCount += 1
            switch dotCount {
            case 1: dots.0 = index
            case 2: dots.1 = index
            default: throw .malformed
            }
        }
        guard dotCount == 2 else { throw .malformed }
        let headerBytes = UnsafeBufferPointer(rebasing: bytes[0..<dots.0])
        // The header this service signs with is decoded and checked once, not per request.
        if !headerBytes.elementsEqual(HS256.encodedHeaderBytes) {
            let header = try jsonObject(headerBytes)
            guard header["alg"] == .string("HS256") else { throw .unsupportedAlgorithm }
            // RFC 7515 §4.1.11: extensions listed in "crit" must be understood; this verifier understands none.
            guard header["crit"] == nil else { throw .unsupportedAlgorithm }
        }

        guard let signature = Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[(dots.1 + 1)...])) else {
            throw .malformed
        }
        guard signature.count == HS256.signatureByteCount else { throw .badSignature }
        let signingInput = UnsafeBufferPointer(rebasing: bytes[0..<dots.1])
        // Stopping at the first matching key leaks only which key matched (current or previous), which is not secret.
        guard keys.contains(where: { key in
            constantTimeEqual(HS256.signature(signingInput: signingInput, key: key), signature)
        }) else { throw .badSignature }

        return try jsonObject(UnsafeBufferPointer(rebasing: bytes[(dots.0 + 1)..<dots.1]))
    }

    private func jsonObject(_ segment: UnsafeBufferPointer<UInt8>) throws(TokenError) -> JSONObject {
        guard let decoded = Base64URL.decode(segment),
            case .object(let object)? = try? JSONParser(maxBytes: maxTokenBytes).parse(decoded)
        else { throw .malformed }
        return object
    }
}
