import Testing
import AnonAuth
import PriceCrypto

@Suite struct RefreshTokens {
    @Test func generatedTokenIs32RandomBytesInBase64URLWithItsSHA256() {
        let (token, hash) = RefreshToken.generate()
        #expect(token.utf8.count == 43)
        #expect(Base64URL.decode(token)?.count == 32)
        #expect(hash == sha256(token))
        #expect(RefreshToken.hash(token) == hash)
    }

    @Test func everyTokenIsDifferent() {
        let tokens = Set((0..<100).map { _ in RefreshToken.generate().token })
        #expect(tokens.count == 100)
    }

    @Test func absurdInputIsRefusedWithoutHashing() {
        #expect(RefreshToken.hash("") == nil)
        #expect(RefreshToken.hash(String(repeating: "a", count: 257)) == nil)
        #expect(RefreshToken.hash(String(repeating: "a", count: 256)) == sha256(String(repeating: "a", count: 256)))
        #expect(RefreshToken.hash("abc def") == nil)
        #expect(RefreshToken.hash("abc=") == nil)
        #expect(RefreshToken.hash("ab'; drop table x; --") == nil)
    }
}

@Suite struct ClientKeys {
    @Test func keyIsHMACOfThePrefixedIP() {
        let keys = ClientKey(secret: currentSecret)
        #expect(keys.key(forIP: "203.0.113.7") == hmacSHA256(key: currentSecret, message: Array("ip:203.0.113.7".utf8)))
        #expect(keys.key(forIP: "203.0.113.7").count == 32)
    }

    @Test func differentIPsAndSecretsGiveUnrelatedKeys() {
        let keys = ClientKey(secret: currentSecret)
        #expect(keys.key(forIP: "203.0.113.7") != keys.key(forIP: "203.0.113.8"))
        #expect(keys.key(forIP: "2001:db8::1") != ClientKey(secret: previousSecret).key(forIP: "2001:db8::1"))
        #expect(keys.key(forIP: "203.0.113.7") == ClientKey(secret: currentSecret).key(forIP: "203.0.113.7"))
    }
}

@Suite struct SecretPolicy {
    @Test func secretsShorterThan32BytesAreRefused() {
        #expect(throws: JWTSecretError.self) { try JWTSecret.validate(Array("too short".utf8)) }
        #expect(throws: JWTSecretError.self) { try JWTSecret.validate([UInt8](repeating: 7, count: 31)) }
        #expect(throws: Never.self) { try JWTSecret.validate([UInt8](repeating: 7, count: 32)) }
    }

    @Test func refusalSaysHowLongTheSecretMustBe() {
        do {
            try JWTSecret.validate([1, 2, 3])
            Issue.record("expected a refusal")
        } catch {
            #expect(error.message == "JWT secret is 3 bytes; at least 32 bytes are required")
        }
    }
}
