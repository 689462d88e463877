import Testing
import AnonAuth
import PriceCrypto

private let userID = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"

private func accessPayload(exp: Int = now + 3600, extra: String = "") -> String {
    #"{"sub":"\#(userID)","role":"authenticated","aud":"authenticated","exp":\#(exp)\#(extra)}"#
}

private let verifier = TokenVerifier(secrets: [currentSecret])

@Suite struct RejectsForgedTokens {
    @Test func acceptsAGenuineToken() {
        let token = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        #expect(verifier.verifyAccessToken(token, now: now).success?.sub?.lowercased() == userID)
    }

    @Test func tamperedPayloadFailsTheSignature() {
        let genuine = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        let parts = genuine.split(separator: ".").map(String.init)
        let otherUser = accessPayload().replacing("6f1e2d3c", with: "00000000")
        let tampered = parts[0] + "." + Base64URL.encode(Array(otherUser.utf8)) + "." + parts[2]
        #expect(verifier.verify(tampered, now: now).failure?.code == .badSignature)
    }

    @Test func tamperedSignatureFails() {
        var token = Array(forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret).utf8)
        // Flip a bit of the first signature character, staying within the alphabet.
        let signatureStart = token.lastIndex(of: UInt8(ascii: "."))! + 1
        token[signatureStart] = token[signatureStart] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(verifier.verify(String(decoding: token, as: UTF8.self), now: now).failure?.code == .badSignature)
    }

    @Test func tokenSignedWithAnotherKeyFails() {
        let token = forgeToken(header: hs256Header, payload: accessPayload(), key: Array("attacker-chosen-secret-32-bytes-long!".utf8))
        #expect(verifier.verify(token, now: now).failure?.code == .badSignature)
    }

    @Test func previousSecretIsAcceptedDuringRotation() {
        let signedBefore = forgeToken(header: hs256Header, payload: accessPayload(), key: previousSecret)
        let rotating = TokenVerifier(secrets: [currentSecret, previousSecret])
        #expect(rotating.verifyAccessToken(signedBefore, now: now).success != nil)
        let signedNow = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        #expect(rotating.verifyAccessToken(signedNow, now: now).success != nil)
        #expect(verifier.verify(signedBefore, now: now).failure?.code == .badSignature, "dropped once rotation ends")
    }

    @Test(arguments: [
        #"{"alg":"none","typ":"JWT"}"#, #"{"alg":"None"}"#, #"{"alg":"RS256","typ":"JWT"}"#,
        #"{"alg":"HS512","typ":"JWT"}"#, #"{"alg":"HS384"}"#, #"{"alg":"ES256"}"#, #"{"alg":"hs256"}"#,
        #"{"alg":"HS256 "}"#, #"{"typ":"JWT"}"#, #"{"alg":null}"#, #"{"alg":["HS256"]}"#,
        #"{"alg":"HS256","crit":["exp"],"exp":1}"#,
    ])
    func anythingButHS256IsRefusedEvenWhenHMACSignedWithTheSecret(header: String) {
        // An "RS256" token whose signature is an HMAC under the shared secret is the classic key-confusion attack.
        let token = forgeToken(header: header, payload: accessPayload(), key: currentSecret)
        #expect(verifier.verify(token, now: now).failure?.code == .unsupportedAlgorithm)
    }

    @Test(arguments: [#"{"typ":"JWT","alg":"HS256"}"#, #"{"alg":"HS256"}"#, #"{ "alg" : "HS256" , "typ" : "JWT" }"#,
                      #"{"alg":"HS256","typ":"JWT","kid":"k1"}"#])
    func anHS256HeaderOtherThanTheServicesOwnIsDecodedAndAccepted(header: String) {
        // The service's own header bytes skip decoding; every other spelling takes the full check.
        let token = forgeToken(header: header, payload: accessPayload(), key: currentSecret)
        #expect(verifier.verifyAccessToken(token, now: now).success?.sub?.lowercased() == userID)
    }

    @Test func unsignedAlgNoneTokenIsRefused() {
        let token = Base64URL.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64URL.encode(Array(accessPayload().utf8)) + "."
        #expect(verifier.verify(token, now: now).failure?.code == .unsupportedAlgorithm)
    }

    @Test func signatureOfTheWrongLengthIsRefused() {
        let genuine = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        let signingInput = String(genuine[..<genuine.lastIndex(of: ".")!])
        let shortSignature = Array(hmacSHA256(key: currentSecret, message: Array(signingInput.utf8)).dropLast())
        #expect(verifier.verify(signingInput + "." + Base64URL.encode(shortSignature), now: now).failure?.code == .badSignature)
        let empty = signingInput + "."
        #expect(verifier.verify(empty, now: now).failure?.code == .badSignature)
    }
}

@Suite struct RejectsMalformedTokens {
    @Test(arguments: ["", ".", "..", "...", "abc", "a.b", "a.b.c.d", "eyJhbGciOiJIUzI1NiJ9.e30"])
    func wrongSegmentCountsAreMalformed(token: String) {
        #expect(verifier.verify(token, now: now).failure?.code == .malformed)
    }

    @Test func paddingOrStandardBase64CharactersInHeaderOrSignatureAreMalformed() {
        let genuine = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        let parts = genuine.split(separator: ".").map(String.init)
        for variant in [
            parts[0] + "=." + parts[1] + "." + parts[2],
            " " + parts[0] + "." + parts[1] + "." + parts[2],
            parts[0] + "." + parts[1] + "." + parts[2] + "=",
            parts[0] + "." + parts[1] + "." + parts[2].replacing("-", with: "+").replacing("_", with: "/") + "%",
        ] {
            #expect(verifier.verify(variant, now: now).failure?.code == .malformed, "\(variant)")
        }
    }

    @Test func payloadIsNeverDecodedBeforeTheSignatureMatches() {
        let parts = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
            .split(separator: ".").map(String.init)
        // Re-encoding the payload changes the signing input, so it fails as a forgery.
        #expect(verifier.verify(parts[0] + "." + parts[1] + "==." + parts[2], now: now).failure?.code == .badSignature)
        // Even correctly signed, a padded payload segment is not canonical base64url.
        let signingInput = parts[0] + "." + parts[1] + "=="
        let signed = signingInput + "." + Base64URL.encode(hmacSHA256(key: currentSecret, message: Array(signingInput.utf8)))
        #expect(verifier.verify(signed, now: now).failure?.code == .malformed)
    }

    @Test func headerAndPayloadMustBeJSONObjects() {
        #expect(verifier.verify(forgeToken(header: "HS256", payload: accessPayload(), key: currentSecret), now: now).failure?.code == .malformed)
        #expect(verifier.verify(forgeToken(header: #"["HS256"]"#, payload: accessPayload(), key: currentSecret), now: now).failure?.code == .malformed)
        #expect(verifier.verify(forgeToken(header: hs256Header, payload: #"["not","claims"]"#, key: currentSecret), now: now).failure?.code == .malformed)
        #expect(verifier.verify(forgeToken(header: hs256Header, payload: "{\"sub\":", key: currentSecret), now: now).failure?.code == .malformed)
    }

    @Test func duplicateClaimsAreMalformedEvenWhenSigned() {
        // Another parser (PostgreSQL's jsonb keeps the last) could read a different role than we did.
        let payload = #"{"role":"anon","role":"authenticated","aud":"authenticated","sub":"\#(userID)","exp":\#(now + 60)}"#
        #expect(verifier.verify(forgeToken(header: hs256Header, payload: payload, key: currentSecret), now: now).failure?.code == .malformed)
    }

    @Test func claimsOfTheWrongTypeAreMalformed() {
        for extra in [#","nbf":"soon""#, #","iat":true"#] {
            let token = forgeToken(header: hs256Header, payload: accessPayload(extra: extra), key: currentSecret)
            #expect(verifier.verify(token, now: now).failure?.code == .malformed, "\(extra)")
        }
        let stringExp = #"{"sub":"\#(userID)","role":"authenticated","aud":"authenticated","exp":"\#(now + 60)"}"#
        #expect(verifier.verify(forgeToken(header: hs256Header, payload: stringExp, key: currentSecret), now: now).failure?.code == .malformed)
        let numericRole = #"{"sub":"\#(userID)","role":1,"aud":"authenticated","exp":\#(now + 60)}"#
        #expect(verifier.verify(forgeToken(header: hs256Header, payload: numericRole, key: currentSecret), now: now).failure?.code == .malformed)
    }

    @Test func oversizeTokensAreRefusedBeforeDecoding() {
        let padding = String(repeating: "x", count: 9000)
        let token = forgeToken(header: hs256Header, payload: accessPayload(extra: #","pad":"\#(padding)""#), key: currentSecret)
        #expect(verifier.verify(token, now: now).failure?.code == .oversize)
        #expect(verifier.verify(String(repeating: "A", count: 8193), now: now).failure?.code == .oversize)
        let generous = TokenVerifier(secrets: [currentSecret], maxTokenBytes: 16_384)
        #expect(generous.verifyAccessToken(token, now: now).success != nil)
    }

    @Test func errorMessagesNeverEchoTheToken() {
        let payload = Base64URL.encode(Array(accessPayload().utf8))
        let attempts = [
            forgeToken(header: #"{"alg":"none"}"#, payload: accessPayload(), key: currentSecret),
            forgeToken(header: hs256Header, payload: accessPayload(), key: previousSecret),
            forgeToken(header: hs256Header, payload: accessPayload(exp: now - 3600), key: currentSecret),
            "x." + payload + ".y",
        ]
        for token in attempts {
            let message = verifier.verify(token, now: now).failure?.message ?? ""
            #expect(!message.isEmpty)
            #expect(!message.contains(payload.prefix(12)))
        }
    }
}

@Suite struct ChecksTimeClaims {
    @Test func expiredTokenIsRefused() {
        let token = forgeToken(header: hs256Header, payload: accessPayload(exp: now - 31), key: currentSecret)
        #expect(verifier.verify(token, now: now).failure?.code == .expired)
        #expect(verifier.verify(token, now: now).failure?.message == "token has expired")
    }

    @Test func expiryWithinTheLeewayIsTolerated() {
        let token = forgeToken(header: hs256Header, payload: accessPayload(exp: now - 29), key: currentSecret)
        #expect(verifier.verifyAccessToken(token, now: now).success != nil)
        let atTheEdge = forgeToken(header: hs256Header, payload: accessPayload(exp: now - 30), key: currentSecret)
        #expect(verifier.verify(atTheEdge, now: now).failure?.code == .expired)
        let strict = TokenVerifier(secrets: [currentSecret], leeway: 0)
        #expect(strict.verify(token, now: now).failure?.code == .expired)
    }

    @Test func fractionalAndHugeExpiriesAreHandled() {
        let fractional = forgeToken(header: hs256Header, payload: accessPayload(extra: "").replacing("\"exp\":\(now + 3600)", with: "\"exp\":\(now + 10).75"), key: currentSecret)
        #expect(verifier.verify(fractional, now: now).success?.exp == now + 10)
        let huge = forgeToken(header: hs256Header, payload: #"{"role":"anon","exp":1e400}"#, key: currentSecret)
        #expect(verifier.verify(huge, now: now).success != nil)
        let negative = forgeToken(header: hs256Header, payload: #"{"role":"anon","exp":-1e400}"#, key: currentSecret)
        #expect(verifier.verify(negative, now: now).failure?.code == .expired)
    }

    @Test func notBeforeInTheFutureIsRefused() {
        let later = forgeToken(header: hs256Header, payload: accessPayload(extra: #","nbf":\#(now + 31)"#), key: currentSecret)
        #expect(verifier.verify(later, now: now).failure?.code == .notYetValid)
        let skewed = forgeToken(header: hs256Header, payload: accessPayload(extra: #","nbf":\#(now + 30)"#), key: currentSecret)
        #expect(verifier.verify(skewed, now: now).success != nil)
    }

    @Test func issuedInTheFutureIsRefused() {
        let token = forgeToken(header: hs256Header, payload: accessPayload(extra: #","iat":\#(now + 120)"#), key: currentSecret)
        #expect(verifier.verify(token, now: now).failure?.code == .notYetValid)
        let skewed = forgeToken(header: hs256Header, payload: accessPayload(extra: #","iat":\#(now + 5)"#), key: currentSecret)
        #expect(verifier.verify(skewed, now: now).success != nil)
    }
}

@Suite struct ChecksAccessTokenClaims {
    private func verifyAccess(_ payload: String) -> TokenError.Code? {
        verifier.verifyAccessToken(forgeToken(header: hs256Header, payload: payload, key: currentSecret), now: now).failure?.code
    }

    @Test func wrongAudienceIsRefused() {
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"authenticated","aud":"anon","exp":\#(now + 60)}"#) == .wrongAudience)
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"authenticated","exp":\#(now + 60)}"#) == .wrongAudience)
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"authenticated","aud":["other","authenticated"],"exp":\#(now + 60)}"#) == nil)
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"authenticated","aud":["other",1],"exp":\#(now + 60)}"#) == .malformed)
    }

    @Test func wrongOrMissingRoleIsRefused() {
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"anon","aud":"authenticated","exp":\#(now + 60)}"#) == .wrongRole)
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"service_role","aud":"authenticated","exp":\#(now + 60)}"#) == .wrongRole)
        #expect(verifyAccess(#"{"sub":"\#(userID)","aud":"authenticated","exp":\#(now + 60)}"#) == .wrongRole)
    }

    @Test func subjectMustBeAUUIDAndExpiryIsRequired() {
        #expect(verifyAccess(#"{"role":"authenticated","aud":"authenticated","exp":\#(now + 60)}"#) == .missingClaim)
        #expect(verifyAccess(#"{"sub":"joe","role":"authenticated","aud":"authenticated","exp":\#(now + 60)}"#) == .missingClaim)
        #expect(verifyAccess(#"{"sub":"\#(userID)","role":"authenticated","aud":"authenticated"}"#) == .missingClaim)
    }

    @Test func subjectIsReadInEitherCaseButOnlyInCanonicalForm() {
        let upper = userID.uppercased()
        let token = forgeToken(header: hs256Header, payload: #"{"sub":"\#(upper)","role":"authenticated","aud":"authenticated","exp":\#(now + 60)}"#, key: currentSecret)
        #expect(verifier.verifyAccessToken(token, now: now).success?.sub?.lowercased() == userID)
        for sub in ["{\(userID)}", userID.replacing("-", with: ""), String(userID.dropLast()) + "g", userID + "0"] {
            #expect(verifyAccess(#"{"sub":"\#(sub)","role":"authenticated","aud":"authenticated","exp":\#(now + 60)}"#) == .missingClaim, "\(sub)")
        }
    }

    @Test func anonKeyNeedsTheAnonRole() {
        let anon = forgeToken(header: hs256Header, payload: #"{"role":"anon","iss":"pricesvc"}"#, key: currentSecret)
        #expect(verifier.verifyAnonKey(anon, now: now).success?.role == "anon")
        let other = forgeToken(header: hs256Header, payload: #"{"role":"service_role","iss":"pricesvc"}"#, key: currentSecret)
        #expect(verifier.verifyAnonKey(other, now: now).failure?.code == .wrongRole)
        let forged = forgeToken(header: hs256Header, payload: #"{"role":"anon","iss":"pricesvc"}"#, key: previousSecret)
        #expect(verifier.verifyAnonKey(forged, now: now).failure?.code == .badSignature)
    }
}

/// The cache of verified access tokens: a verifier with one answers every call exactly as one without.
@Suite struct CachesVerifiedAccessTokens {
    @Test func aRepeatedTokenIsAHitAndGivesTheSameClaims() throws {
        let cached = TokenVerifier(secrets: [currentSecret], cacheEntries: 8)
        let token = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        let first = try cached.verifyAccessToken(token, now: now).get()
        let second = try cached.verifyAccessToken(token, now: now + 5).get()
        #expect(first == second)
        #expect(second.token == token)
        #expect(cached.cache?.hits == 1 && cached.cache?.misses == 1)
    }

    @Test func aCachedTokenStillExpires() {
        let cached = TokenVerifier(secrets: [currentSecret], cacheEntries: 8)
        let token = forgeToken(header: hs256Header, payload: accessPayload(exp: now + 100), key: currentSecret)
        #expect(cached.verifyAccessToken(token, now: now).success != nil)
        #expect(cached.verifyAccessToken(token, now: now + 100 + cached.leeway).failure?.code == .expired)
    }

    @Test func aCachedTokenIsNotYetValidWhenTheClockGoesBack() {
        let cached = TokenVerifier(secrets: [currentSecret], cacheEntries: 8)
        let token = forgeToken(header: hs256Header, payload: accessPayload(extra: #","iat":\#(now),"nbf":\#(now)"#), key: currentSecret)
        #expect(cached.verifyAccessToken(token, now: now).success != nil)
        #expect(cached.verifyAccessToken(token, now: now - 1000).failure?.code == .notYetValid)
    }

    @Test func aCachedTokenIsCheckedAgainstTheRolesOfEachCall() {
        let cached = TokenVerifier(secrets: [currentSecret], cacheEntries: 8)
        let token = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        #expect(cached.verifyAccessToken(token, now: now).success != nil)
        #expect(cached.verifyAccessToken(token, now: now, roles: ["service_role"]).failure?.code == .wrongRole)
    }

    @Test func aTokenDifferingInOneByteIsNotAHit() {
        let cached = TokenVerifier(secrets: [currentSecret], cacheEntries: 1)
        let token = forgeToken(header: hs256Header, payload: accessPayload(), key: currentSecret)
        #expect(cached.verifyAccessToken(token, now: now).success != nil)
        var bytes = Array(token.utf8)
        bytes[bytes.count - 2] = bytes[bytes.count - 2] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let altered = String(decoding: bytes, as: UTF8.self)
        #expect(cached.verifyAccessToken(altered, now: now).failure?.code == .badSignature)
        #expect(cached.cache?.hits == 0)
    }

    /// Random calls (genuine, expired, future, wrong-role, forged and altered tokens, a clock that also
    /// goes back, a few slots so tokens evict each other): the cached verifier agrees with a plain one on
    /// every call, and does hit.
    /// A failure names the token, the time and the roles (in the two results), which replay it.
    @Test func agreesWithAVerifierWithoutACache() {
        var random = SystemRandomNumberGenerator()
        let plain = TokenVerifier(secrets: [currentSecret, previousSecret])
        let cached = TokenVerifier(secrets: [currentSecret, previousSecret], cacheEntries: 3)
        var tokens: [String] = []
        for index in 0..<12 {
            let exp = now + Int.random(in: -200...400, using: &random)
            let role = index % 5 == 4 ? "anon" : "authenticated"
            let times = Bool.random(using: &random) ? #","iat":\#(now + Int.random(in: -100...100, using: &random))"# : ""
            let payload = #"{"sub":"\#(userID)","role":"\#(role)","aud":"authenticated","exp":\#(exp)\#(times)}"#
            let key = [currentSecret, previousSecret, Array("not-a-key-of-this-verifier-at-all-0123".utf8)][index % 3]
            tokens.append(forgeToken(header: hs256Header, payload: payload, key: key))
        }
        tokens.append(String(tokens[0].dropLast()))
        for step in 0..<6_000 {
            let token = tokens.randomElement(using: &random)!
            let at = now + Int.random(in: -150...500, using: &random)
            let roles: Set<String> = Int.random(in: 0..<10, using: &random) == 0 ? ["anon"] : TokenVerifier.userRoles
            let expected = plain.verifyAccessToken(token, now: at, roles: roles)
            let actual = cached.verifyAccessToken(token, now: at, roles: roles)
            #expect(actual == expected, "step \(step), now \(at), roles \(roles)")
        }
        #expect((cached.cache?.hits ?? 0) > 300)
    }
}
