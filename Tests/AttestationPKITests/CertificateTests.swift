import AttestationPKI
import Foundation
import Testing

/// Certificates as both verifiers read them, on the Sony reference chain (integration/fixtures/android-key-attestation).
@Suite struct CertificateTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("integration/fixtures/android-key-attestation")

    func sonyChain() throws -> [Certificate] {
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("sony-xperia10-iii_sdk33_TEE_EC.pem"), encoding: .utf8)
        return try #require(Certificate.pem(text))
    }

    @Test func serialsReadAsTheStatusListSpellsThem() throws {
        // openssl x509 -serial: 01, 16580768335559031605, 03882667606589968575, E8FA196314D2FA18.
        #expect(try sonyChain().map(\.serialHex) == ["1", "16580768335559031605", "3882667606589968575", "e8fa196314d2fa18"])
    }

    @Test func theSubjectPublicKeyInfoIsTheWholeDERElement() throws {
        for certificate in try sonyChain() {
            let info = certificate.subjectPublicKeyInfo
            #expect(info.first == 0x30)
            #expect(try DERReader.single(info).tag == .sequence)
            #expect(certificate.der.count > info.count)
        }
    }

    @Test func extensionsAreFoundByOIDAndCounted() throws {
        let chain = try sonyChain()
        #expect(chain[0].extensionValues(oid: "1.3.6.1.4.1.11129.2.1.17").count == 1)
        #expect(chain[1].extensionValues(oid: "1.3.6.1.4.1.11129.2.1.17").isEmpty)
        #expect(chain[0].extensionValue(oid: "1.2.840.113635.100.8.2") == nil)
    }

    @Test func thePathOpenSSLBuildsMustBeTheOneSentInItsOrder() throws {
        let chain = try sonyChain()
        let at = 1_466_875_140 // 2016-06-25T17:19:00Z, the vector's verify_at
        let tolerances: PathTolerances = [.anchorValidity, .issuerCAFlags]
        #expect(Certificate.verifyPath(Array(chain.dropLast()), anchor: chain[3], at: at, tolerating: tolerances) == nil)
        // Without the tolerances, the batch certificate's missing keyCertSign fails as RFC 5280 says.
        #expect(Certificate.verifyPath(Array(chain.dropLast()), anchor: chain[3], at: at) != nil)
        #expect(Certificate.verifyPath([chain[0], chain[2], chain[1]], anchor: chain[3], at: at, tolerating: tolerances) != nil)
        #expect(Certificate.verifyPath([chain[0], chain[1]], anchor: chain[3], at: at, tolerating: tolerances) != nil)
        #expect(Certificate.verifyPath(Array(chain.dropLast()), anchor: chain[3], at: at - 86_400 * 400, tolerating: tolerances) != nil)
    }

    @Test func pemTextThatIsNotWholeBlocksIsRefused() throws {
        let text = try String(contentsOf: Self.fixtures.appendingPathComponent("sony-xperia10-iii_sdk33_TEE_EC.pem"), encoding: .utf8)
        #expect(Certificate.pem("") == nil)
        #expect(Certificate.pem(String(text.prefix(text.count / 2))) == nil)
        #expect(Certificate.pem("-----BEGIN CERTIFICATE-----\n" + text) == nil)
        #expect(Certificate(der: []) == nil)
        #expect(Certificate(der: try sonyChain()[0].der + [0]) == nil)
    }
}
