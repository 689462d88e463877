import AnonAuth
import PriceCrypto
import Testing

/// The App Attest sign-up challenge without I/O: issued statelessly, accepted only as issued and unexpired.
@Suite struct AttestationChallengeTests {
    static let secret = Array("an-example-secret-of-at-least-32-bytes!!".utf8)
    let challenges = AttestationChallenges(secret: AttestationChallengeTests.secret, lifetimeSeconds: 300)
    let issuedAt = 1_800_000_000

    func refusal(_ challenge: String, now: Int? = nil) -> ChallengeError.Code? {
        if case .failure(let error) = challenges.verify(challenge, now: now ?? issuedAt) { return error.code }
        return nil
    }

    @Test func anIssuedChallengeVerifiesUntilItExpiresAndSpendsItsDigest() throws {
        let issued = challenges.issue(now: issuedAt, nonce: "00112233445566778899aabbccddeeff")
        #expect(issued.expiresAt == issuedAt + 300)
        #expect(issued.challenge.hasPrefix("aa1.1800000300.00112233445566778899aabbccddeeff."))
        guard case .success(let spent) = challenges.verify(issued.challenge, now: issuedAt + 300) else {
            Issue.record("refused")
            return
        }
        #expect(spent.digest == sha256(issued.challenge) && spent.expiresAt == issuedAt + 300)
        #expect(refusal(issued.challenge, now: issuedAt + 301) == .expired)
    }

    @Test func theMACIsHMACUnderADerivedKey() {
        let issued = challenges.issue(now: issuedAt, nonce: "ab")
        let key = hmacSHA256(key: Self.secret, message: Array("pricesvc app-attest-challenge v1".utf8))
        #expect(issued.challenge == "aa1.1800000300.ab." + hex(hmacSHA256(key: key, message: Array("aa1.1800000300.ab".utf8))))
        // Another deployment's secret: not ours.
        let other = AttestationChallenges(secret: Array("another-secret-of-at-least-32-bytes-long".utf8), lifetimeSeconds: 300)
        #expect(refusal(other.issue(now: issuedAt).challenge) == .badSignature)
    }

    @Test func alteredOrMalformedChallengesAreRefused() {
        let issued = challenges.issue(now: issuedAt, nonce: "00").challenge
        var parts = issued.split(separator: ".").map(String.init)
        parts[1] = String(issuedAt + 9_000)  // a later expiry under the old MAC
        #expect(refusal(parts.joined(separator: ".")) == .badSignature)
        #expect(refusal(String(issued.dropLast()) + (issued.last == "0" ? "1" : "0")) == .badSignature)
        for text in ["", "aa1", "aa1.1.2", "aa2.1800000300.00.00", "aa1.-5.00.00", "aa1.1800000300.00.00.00", "aa1.x.00.00",
                     String(repeating: "a", count: 200)] {
            #expect(refusal(text) == .malformed, "\(text)")
        }
    }

    @Test func anExpiryBeyondAnyIssuedIsRefused() {
        let longLived = AttestationChallenges(secret: Self.secret, lifetimeSeconds: 86_400)
        // Signed with the same key (same secret and label), but valid far longer than this service issues.
        #expect(refusal(longLived.issue(now: issuedAt).challenge) == .malformed)
    }
}
