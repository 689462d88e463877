import AnonAuth
import PriceCrypto
import Foundation
import Testing

/// The sign-up challenge without I/O: issuing, and every way a solution is refused. The vectors were
/// made with the `altcha` Python package (2.3.0, `create_challenge_v1`/`solve_challenge_v1`), the
/// independent implementation integration/e2e/test_signup_challenge.py also runs against the server.
@Suite struct SignUpChallengeTests {
    static let secret = Array("an-example-secret-of-at-least-32-bytes!!".utf8)
    let challenges = SignUpChallenges(secret: SignUpChallengeTests.secret, maxNumber: 10_000, lifetimeSeconds: 300)
    let issuedAt = 1_800_000_000

    /// altcha.create_challenge_v1(hmac_key=<derived key>, salt="00112233445566778899aabb", number=4242,
    /// expires=1800000300), solved by altcha.solve_challenge_v1 and encoded by PayloadV1.to_base64().
    static let altchaPayload = "eyJhbGdvcml0aG0iOiAiU0hBLTI1NiIsICJjaGFsbGVuZ2UiOiAiMTY4Y2FjZWM0OWI1MGIxMjI5YjQ0MDYxM2NjMzBkMTllNDZhYTZlZDBlNGE1MDUxZTkyM2NhOWJiMTZlMTJkNSIsICJudW1iZXIiOiA0MjQyLCAic2FsdCI6ICIwMDExMjIzMzQ0NTU2Njc3ODg5OWFhYmI/ZXhwaXJlcz0xODAwMDAwMzAwJiIsICJzaWduYXR1cmUiOiAiNmNmMmM0YjM4NTdhMDNkNjE1ZTc2NGM5YmZhY2Y1NDFkYWViMzYyYTQ3MzZlZTQzYzA3Y2I4Y2E0MzA0ZWI4YiJ9"

    func payload(_ challenge: SignUpChallenge, number: Int, algorithm: String = "SHA-256",
                 signature: String? = nil, salt: String? = nil) -> String {
        let json = #"{"algorithm":"\#(algorithm)","challenge":"\#(challenge.challenge)","number":\#(number),"#
            + #""salt":"\#(salt ?? challenge.salt)","signature":"\#(signature ?? challenge.signature)"}"#
        return Data(json.utf8).base64EncodedString()
    }

    func failure(_ token: String?, now: Int? = nil) -> ChallengeError.Code? {
        if case .failure(let error) = challenges.verify(payload: token, now: now ?? issuedAt) { return error.code }
        return nil
    }

    @Test func theKeyIsDerivedFromTheSecretAndSeparatedFromOtherUses() {
        #expect(hex(SignUpChallenges.derivedKey(secret: Self.secret))
                    == "9bae1857b3da7b9a27ca3b54147047a003336073f6dd6b482b8c8753031ba3aa")
        #expect(SignUpChallenges.derivedKey(secret: Self.secret) != ClientKey(secret: Self.secret).key(forIP: ""))
    }

    @Test func anIssuedChallengeIsByteForByteWhatAltchaMakesFromTheSameInputs() {
        let issued = challenges.issue(now: issuedAt, nonce: "00112233445566778899aabb", number: 4242)
        #expect(issued.salt == "00112233445566778899aabb?expires=1800000300&")
        #expect(issued.challenge == "168cacec49b50b1229b440613cc30d19e46aa6ed0e4a5051e923ca9bb16e12d5")
        #expect(issued.signature == "6cf2c4b3857a03d615e764c9bfacf541daeb362a4736ee43c07cb8ca4304eb8b")
        #expect(issued.maxNumber == 10_000)
        #expect(issued.json == #"{"algorithm":"SHA-256","challenge":"\#(issued.challenge)","maxnumber":10000,"#
                    + #""salt":"00112233445566778899aabb?expires=1800000300&","signature":"\#(issued.signature)"}"#)
    }

    @Test func aSolutionEncodedByAltchaIsAccepted() throws {
        let spent = try challenges.verify(payload: Self.altchaPayload, now: issuedAt).get()
        #expect(spent.expiresAt == 1_800_000_300)
        #expect(spent.digest == sha256("168cacec49b50b1229b440613cc30d19e46aa6ed0e4a5051e923ca9bb16e12d5"))
        // Unpadded base64 is accepted too (some encoders drop the padding).
        var unpadded = Self.altchaPayload
        while unpadded.hasSuffix("=") { unpadded.removeLast() }
        #expect((try? challenges.verify(payload: unpadded, now: issuedAt).get()) == spent)
    }

    @Test func freshChallengesDifferAndTheirNumberIsInRange() throws {
        let first = challenges.issue(now: issuedAt), second = challenges.issue(now: issuedAt)
        #expect(first.salt != second.salt && first.challenge != second.challenge)
        let number = try #require((0...10_000).first { hex(sha256(first.salt + String($0))) == first.challenge })
        #expect((try? challenges.verify(payload: payload(first, number: number), now: issuedAt + 299).get()) != nil)
    }

    @Test func aMissingTokenIsRefusedAsMissing() {
        #expect(failure(nil) == .missing)
        #expect(failure("") == .missing)
    }

    @Test(arguments: ["not base64 at all!", "e30=", "W10=", "eyJhbGdvcml0aG0iOiJTSEEtMjU2In0=",
                      Data(#"{"algorithm":"SHA-256","challenge":"a","number":"1","salt":"s","signature":"b"}"#.utf8)
                          .base64EncodedString(),
                      Data(#"{"algorithm":"SHA-256","challenge":"a","number":1.5,"salt":"s","signature":"b"}"#.utf8)
                          .base64EncodedString(),
                      String(repeating: "A", count: 4096), "e30"])
    func aTokenThatIsNotASolutionPayloadIsMalformed(_ token: String) {
        #expect(failure(token) == .malformed)
    }

    @Test func onlySHA256IsAccepted() {
        let issued = challenges.issue(now: issuedAt, nonce: "aa", number: 7)
        #expect(failure(payload(issued, number: 7, algorithm: "SHA-1")) == .unsupportedAlgorithm)
    }

    @Test func aChallengeSignedWithAnotherKeyIsRefused() {
        let other = SignUpChallenges(secret: Array("another-secret-of-at-least-32-bytes!!!".utf8), maxNumber: 10_000,
                                     lifetimeSeconds: 300)
        let foreign = other.issue(now: issuedAt, nonce: "aa", number: 7)
        #expect(failure(payload(foreign, number: 7)) == .badSignature)
        let issued = challenges.issue(now: issuedAt, nonce: "aa", number: 7)
        var tampered = Array(issued.signature)
        tampered[0] = tampered[0] == "0" ? "1" : "0"
        #expect(failure(payload(issued, number: 7, signature: String(tampered))) == .badSignature)
        #expect(failure(payload(issued, number: 7, signature: issued.signature.uppercased())) == .badSignature)
    }

    @Test func aWrongNumberOrAnAlteredSaltIsRefused() {
        let issued = challenges.issue(now: issuedAt, nonce: "aa", number: 7)
        #expect(failure(payload(issued, number: 8)) == .wrongNumber)
        // Stretching the expiry in the salt breaks the hash the signature covers.
        #expect(failure(payload(issued, number: 7, salt: "aa?expires=1900000000&")) == .wrongNumber)
        #expect(failure(payload(issued, number: 7, salt: "aa?expires=1800000300&expires=1900000000&")) == .wrongNumber)
    }

    @Test func aChallengeIsValidUntilItsExpiryAndNotAfter() {
        let issued = challenges.issue(now: issuedAt, nonce: "aa", number: 7)
        let token = payload(issued, number: 7)
        #expect(failure(token, now: issuedAt + 300) == nil)
        #expect(failure(token, now: issuedAt + 301) == .expired)
    }

    @Test func aSignedChallengeWithoutOneClearExpiryIsRefused() {
        // Only someone holding the key can make these; they must still not be accepted for ever.
        let key = SignUpChallenges.derivedKey(secret: Self.secret)
        func signed(salt: String, number: Int) -> SignUpChallenge {
            let challenge = hex(sha256(salt + String(number)))
            return SignUpChallenge(challenge: challenge, maxNumber: 10, salt: salt,
                                   signature: hex(hmacSHA256(key: key, message: Array(challenge.utf8))))
        }
        #expect(failure(payload(signed(salt: "aa&", number: 1), number: 1)) == .malformed)
        #expect(failure(payload(signed(salt: "aa?expires=1800000100&expires=1800000200&", number: 1), number: 1)) == .malformed)
        #expect(failure(payload(signed(salt: "aa?expires=soon&", number: 1), number: 1)) == .malformed)
        #expect(failure(payload(signed(salt: "aa?expires=4000000000&", number: 1), number: 1)) == .malformed)
        #expect(failure(payload(signed(salt: "aa?expires=1800000100&", number: 1), number: 1)) == nil)
    }
}
