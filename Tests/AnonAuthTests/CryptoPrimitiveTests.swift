import Testing
import AnonAuth
import PriceCrypto
import CCrypto

@Suite struct CryptoPrimitives {
    @Test func sha256MatchesFIPS180Vectors() {
        #expect(hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func hmacSHA256MatchesRFC4231() {
        // Test case 1
        #expect(
            hex(hmacSHA256(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        // Test case 2: a key shorter than the output
        #expect(
            hex(hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block size is hashed first
        #expect(
            hex(
                hmacSHA256(
                    key: [UInt8](repeating: 0xAA, count: 131),
                    message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func hmacAcceptsEmptyKeyAndMessage() {
        // Well-known HMAC-SHA256("", "")
        #expect(
            hex(hmacSHA256(key: [], message: []))
                == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
    }

    @Test func constantTimeEqualComparesContentAndLength() {
        #expect(constantTimeEqual([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEqual([1, 2, 3], [1, 2]))
        #expect(constantTimeEqual([], []))
    }

    @Test func secureRandomBytesAreFreshEachCall() {
        let first = secureRandomBytes(count: 32)
        let second = secureRandomBytes(count: 32)
        #expect(first.count == 32)
        #expect(first != second)
        #expect(secureRandomBytes(count: 0).isEmpty)
    }
}

@Suite struct Base64URLCoding {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func matchesRFC4648VectorsWithoutPadding(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func usesTheURLSafeAlphabet() {
        #expect(Base64URL.encode([0xFB, 0xFF]) == "-_8")
        #expect(Base64URL.decode("-_8") == [0xFB, 0xFF])
    }

    @Test(arguments: ["Zg==", "Zm8=", "Zm9v YmFy", "Zm9v\nYmFy", "Zm+v", "Zm/v", "Z", "Zm9vY", "Zh", "Zm9", "é"])
    func rejectsPaddingForeignCharactersImpossibleLengthsAndNonCanonicalBits(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func roundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }
}

/// The prepared key against libcrypto's own one-shot HMAC(), over key and message lengths around the
/// 64-byte block (keys longer than a block are hashed first).
@Suite struct PreparedHMACKey {
    private func libcryptoHMAC(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let keyBytes = key.isEmpty ? [0] : key
        keyBytes.withUnsafeBufferPointer { keyPointer in
            message.withUnsafeBufferPointer { messagePointer in
                _ = HMAC(EVP_sha256(), keyPointer.baseAddress, Int32(key.count),
                         messagePointer.baseAddress ?? keyPointer.baseAddress, message.count, &digest, &length)
            }
        }
        return digest
    }

    @Test(arguments: [0, 1, 20, 32, 63, 64, 65, 100, 131, 200])
    func matchesLibcryptoForEveryKeyLength(keyLength: Int) {
        var generator = SystemRandomNumberGenerator()
        let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let prepared = HMACSHA256Key(key)
        for messageLength in [0, 1, 55, 56, 63, 64, 65, 119, 120, 300, 1000] {
            let message = (0..<messageLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let expected = libcryptoHMAC(key: key, message: message)
            #expect(prepared.authenticate(message) == expected, "key \(keyLength) B, message \(messageLength) B")
            #expect(hmacSHA256(key: key, message: message) == expected)
        }
    }

    @Test func aKeyIsReusableAndMessagesDoNotLeakIntoEachOther() {
        let prepared = HMACSHA256Key(Array("Jefe".utf8))
        let first = prepared.authenticate(Array("what do ya want for nothing?".utf8))
        _ = prepared.authenticate(Array(repeating: 0x41, count: 500))
        #expect(prepared.authenticate(Array("what do ya want for nothing?".utf8)) == first)
        #expect(hex(first) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }
}
