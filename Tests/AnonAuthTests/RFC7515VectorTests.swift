import Testing
import AnonAuth
import PriceCrypto

/// RFC 7515 Appendix A.1: the HS256 example, byte for byte (note the CR LF and spaces inside its JSON).
@Suite struct RFC7515AppendixA1 {
    let key = Base64URL.decode(
        "AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")!
    let signingInput =
        "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    let signature = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    let exp = 1_300_819_380

    @Test func signatureOverTheExactSigningInputMatches() {
        #expect(key.count == 64)
        #expect(Base64URL.encode(hmacSHA256(key: key, message: Array(signingInput.utf8))) == signature)
    }

    @Test func verifierAcceptsTheExampleTokenBeforeItsExpiry() throws {
        let verifier = TokenVerifier(secrets: [key])
        let verified = try verifier.verify(signingInput + "." + signature, now: exp - 60).get()
        #expect(verified.claims["iss"] == "joe")
        #expect(verified.claims["http://example.com/is_root"] == true)
        #expect(verified.exp == exp)
        #expect(verified.role == nil)
        #expect(verified.token == signingInput + "." + signature)
    }

    @Test func verifierRejectsTheExampleTokenAfterExpiryAndLeeway() {
        let verifier = TokenVerifier(secrets: [key])
        #expect(verifier.verify(signingInput + "." + signature, now: exp + 30).failure?.code == .expired)
    }

    @Test func exampleTokenIsNotAnAccessToken() {
        let verifier = TokenVerifier(secrets: [key])
        #expect(verifier.verifyAccessToken(signingInput + "." + signature, now: exp - 60).failure?.code == .wrongRole)
    }
}
