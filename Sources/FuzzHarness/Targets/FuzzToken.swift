import AnonAuth
import PriceJSON

private let secret = ServiceHarness.secret
private let issuer = TokenIssuer(secret: secret)
private let verifier = TokenVerifier(secrets: [Array("an-older-secret-still-accepted-in-rotation".utf8), secret])
/// The same keys with a token cache of a few slots, so tokens evict each other: it must answer as `verifier` does.
private let cachedVerifier = TokenVerifier(secrets: [Array("an-older-secret-still-accepted-in-rotation".utf8), secret],
                                           cacheEntries: 3)
private let challenges = SignUpChallenges(secret: secret, maxNumber: 1000, lifetimeSeconds: 300)
private let now = ServiceHarness.now

/// The token parsers: JWT verification (as `apikey`, as a user's access token), refresh tokens,
/// base64url, and sign-up challenge payloads. The input is tried as a token, and when it is a JSON
/// object, also as the claims of a token signed with the service's secret, so that claim checking is
/// reached past the signature. Beyond not crashing: base64url decodes only canonical text (it
/// encodes back to the same); a token the issuer signed verifies to exactly its claims, and one
/// accepted as an access token has the role, audience, UUID `sub` and unexpired `exp` it must have;
/// and a verifier with a token cache answers every access-token check as one without, a cache hit
/// included, also an hour and a day later (a hit re-checks the token's time claims).
func fuzzToken(_ input: UnsafeRawBufferPointer) {
    let text = String(decoding: input, as: UTF8.self)

    check(text, signedByUs: false)
    _ = RefreshToken.hash(text)
    if let decoded = Base64URL.decode(text) {
        fuzzRequire(Base64URL.encode(decoded) == text, "base64url accepted non-canonical \(printable(text))")
    }
    _ = challenges.verify(payload: text, now: now)

    if case .object(let claims)? = try? JSONParser(maxBytes: 8192, maxDepth: 8).parse(input) {
        let token = issuer.sign(claims: claims)
        if case .success(let verified) = check(token, signedByUs: true) {
            fuzzRequire(verified.claims == claims, "claims changed on the way through: \(printable(text))")
        }
    }
    return
}

@discardableResult
private func check(_ token: String, signedByUs: Bool) -> Result<VerifiedToken, TokenError> {
    let result = verifier.verify(token, now: now)
    if case .success(let verified) = result {
        fuzzRequire(verified.token == token, "verified another token than given: \(printable(token))")
        fuzzRequire(signedByUs || token.contains("."), "accepted a token with no signature: \(printable(token))")
        if let exp = verified.exp { fuzzRequire(exp > now - verifier.leeway, "accepted an expired token: \(printable(token))") }
    }
    for later in [0, 0, 3600, 86_400] {
        fuzzRequire(cachedVerifier.verifyAccessToken(token, now: now + later) == verifier.verifyAccessToken(token, now: now + later),
                    "the token cache answered otherwise than a full verification, \(later) s on: \(printable(token))")
    }
    if case .success(let user) = verifier.verifyAccessToken(token, now: now) {
        fuzzRequire(result.isSuccess, "an access token that does not verify: \(printable(token))")
        fuzzRequire(user.role == "authenticated" && user.aud.contains("authenticated") && user.sub != nil && user.exp != nil,
                    "an access token without role, audience, sub or exp: \(printable(token))")
    }
    if case .success(let anon) = verifier.verifyAnonKey(token, now: now) {
        fuzzRequire(result.isSuccess && anon.role == "anon", "an anon key that is not one: \(printable(token))")
    }
    return result
}

extension Result {
    fileprivate var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
