import AppAttest
import PriceCrypto
import Testing

/// authData's layout without I/O: what parses, and every way it is refused.
@Suite struct AuthenticatorDataTests {
    static let keyId = [UInt8](repeating: 9, count: 32)
    /// A COSE EC2 P-256 key: {1: 2, 3: -7, -1: 1, -2: x, -3: y}.
    static let cose: [UInt8] = [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + [UInt8](repeating: 1, count: 32)
        + [0x22, 0x58, 0x20] + [UInt8](repeating: 2, count: 32)

    static func authData(flags: UInt8 = 0x40, counter: UInt32 = 0, aaguid: [UInt8] = Array("appattest".utf8) + [0, 0, 0, 0, 0, 0, 0],
                         credentialId: [UInt8] = keyId, idLength: Int? = nil, after: [UInt8] = cose) -> [UInt8] {
        let length = idLength ?? credentialId.count
        return sha256("TEAM.app") + [flags] + withUnsafeBytes(of: counter.bigEndian, Array.init) + aaguid
            + [UInt8(length >> 8), UInt8(length & 0xff)] + credentialId + after
    }

    func refused(_ bytes: [UInt8]) -> Bool {
        if case .failure(let error) = AuthenticatorData.parse(bytes) { return error.code == .malformed }
        return false
    }

    @Test func aWellFormedOneParses() throws {
        guard case .success(let parsed) = AuthenticatorData.parse(Self.authData(counter: 7)) else {
            Issue.record("refused")
            return
        }
        #expect(parsed.rpIdHash == sha256("TEAM.app") && parsed.counter == 7 && parsed.credentialId == Self.keyId)
        #expect(AttestationEnvironment(aaguid: parsed.aaguid) == .production)
        #expect(parsed.coseP256Point == [0x04] + [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 2, count: 32))
        // Whole CBOR maps after the key (extensions) are allowed.
        #expect(!refused(Self.authData(after: Self.cose + [0xa1, 0x01, 0x02])))
    }

    @Test func everyDeviationIsMalformed() {
        #expect(refused([]))
        #expect(refused(Array(Self.authData().prefix(54))))
        #expect(refused(Self.authData(flags: 0x01)))                      // no attested credential data
        #expect(refused(Self.authData(idLength: 0)))
        #expect(refused(Self.authData(idLength: 0xffff)))                 // longer than the input
        #expect(refused(Self.authData(after: [])))                        // no key
        #expect(refused(Self.authData(after: [0x01])))                    // a key that is not a map
        #expect(refused(Self.authData(after: Self.cose + [0x00])))        // loose bytes after the key
        #expect(refused(Self.authData(after: Self.cose + [0xa1, 0x01])))  // a truncated map after it
        #expect(refused(Self.authData(after: Array(Self.cose.dropLast()))))
    }

    @Test func environmentsAreTheTwoAaguids() {
        #expect(AttestationEnvironment(aaguid: Array("appattestdevelop".utf8)) == .development)
        #expect(AttestationEnvironment(aaguid: Array("appattest".utf8) + [0, 0, 0, 0, 0, 0, 1]) == nil)
        #expect(AttestationEnvironment(aaguid: []) == nil)
    }
}
