import Foundation
import Testing
import AnonAuth
import PriceCrypto
import PriceJSON

@Suite struct IssuingTokens {
    let issuer = TokenIssuer(secret: currentSecret)
    let verifier = TokenVerifier(secrets: [currentSecret])
    /// UUID text as the database prints it, which the issuer copies into the claims.
    let userID = "6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9"
    let sessionID = "0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f"

    private func segments(_ token: String) -> [String] {
        token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
    }

    private func decodedText(_ segment: String) -> String {
        String(decoding: Base64URL.decode(segment)!, as: UTF8.self)
    }

    @Test func accessTokenCarriesSupabaseClaimsInAFixedOrder() {
        let (token, expiresAt) = issuer.accessToken(userID: userID, sessionID: sessionID, now: now)
        #expect(expiresAt == now + 3600)
        let parts = segments(token)
        #expect(parts.count == 3)
        #expect(decodedText(parts[0]) == #"{"alg":"HS256","typ":"JWT"}"#)
        #expect(
            decodedText(parts[1])
                == #"{"sub":"6f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9","role":"authenticated","aud":"authenticated","#
                + #""iat":1800000000,"exp":1800003600,"iss":"pricesvc","#
                + #""session_id":"0a1b2c3d-4e5f-4607-8819-2a3b4c5d6e7f","is_anonymous":true}"#)
    }

    @Test func accessTokenVerifiesAsAnAccessToken() throws {
        let (token, expiresAt) = issuer.accessToken(userID: userID, sessionID: sessionID, now: now)
        let verified = try verifier.verifyAccessToken(token, now: now + 10).get()
        #expect(verified.sub == userID)
        #expect(verified.sessionID == sessionID)
        #expect(verified.role == "authenticated")
        #expect(verified.aud == ["authenticated"])
        #expect(verified.exp == expiresAt)
        #expect(verified.isAnonymous)
        #expect(verified.token == token)
    }

    @Test func lifetimeIsConfigurable() {
        let shortLived = TokenIssuer(secret: currentSecret, accessTokenLifetime: 60)
        let (token, expiresAt) = shortLived.accessToken(userID: userID, sessionID: sessionID, now: now)
        #expect(expiresAt == now + 60)
        #expect(verifier.verifyAccessToken(token, now: now + 60 + 30).failure?.code == .expired)
    }

    @Test func anonKeyIsTheFixedAnonRoleTokenWithoutExpiry() throws {
        let key = issuer.anonKey()
        let parts = segments(key)
        #expect(decodedText(parts[0]) == #"{"alg":"HS256","typ":"JWT"}"#)
        #expect(decodedText(parts[1]) == #"{"role":"anon","iss":"pricesvc"}"#)
        #expect(key == TokenIssuer(secret: currentSecret).anonKey(), "same secret, same key on every instance")
        #expect(key != TokenIssuer(secret: previousSecret).anonKey())
        let verified = try verifier.verifyAnonKey(key, now: now).get()
        #expect(verified.role == "anon")
        #expect(verified.exp == nil)
    }

    @Test func anonKeyIsNotAnAccessTokenAndAccessTokenIsNotAnAnonKey() {
        #expect(verifier.verifyAccessToken(issuer.anonKey(), now: now).failure?.code == .wrongRole)
        let (token, _) = issuer.accessToken(userID: userID, sessionID: sessionID, now: now)
        #expect(verifier.verifyAnonKey(token, now: now).failure?.code == .wrongRole)
    }

    @Test func arbitraryClaimsAreSignedInTheirOrder() throws {
        let token = issuer.sign(claims: ["role": "price_analyst", "aud": "authenticated", "sub": .string(userID), "exp": 1_900_000_000])
        let verified = try verifier.verifyAccessToken(token, now: now, roles: ["price_analyst"]).get()
        #expect(verified.claims.keys == ["role", "aud", "sub", "exp"])
    }
}

struct RefreshTokenChainTests {
    let chain = RefreshTokenChain(secret: Array("an-example-secret-of-at-least-32-bytes!!".utf8))

    @Test func theChildIsDeterministicSoPresentingATokenTwiceCannotFork() {
        let token = RefreshToken.generate().token
        #expect(chain.child(of: token).token == chain.child(of: token).token)
        #expect(chain.child(of: token).token != token)
        #expect(chain.child(of: token).hash == sha256(chain.child(of: token).token))
    }

    @Test func childrenAreRefreshTokensTheServiceAccepts() {
        let child = chain.child(of: RefreshToken.generate().token)
        #expect(child.token.utf8.count == 43)
        #expect(RefreshToken.hash(child.token) == child.hash)
    }

    @Test func descendantsFollowTheChainGenerationByGeneration() {
        let token = RefreshToken.generate().token
        let child = chain.child(of: token)
        let grandchild = chain.child(of: child.token)
        #expect(chain.descendant(of: token, generations: 1)?.token == child.token)
        #expect(chain.descendant(of: token, generations: 2)?.token == grandchild.token)
        #expect(chain.descendant(of: token, generations: 0) == nil)
        #expect(chain.descendant(of: token, generations: RefreshTokenChain.maxGenerations + 1) == nil)
    }

    @Test func anotherSecretGivesAnotherChain() {
        let other = RefreshTokenChain(secret: Array("a-different-secret-of-at-least-32-bytes!".utf8))
        let token = RefreshToken.generate().token
        #expect(chain.child(of: token).token != other.child(of: token).token)
    }
}
