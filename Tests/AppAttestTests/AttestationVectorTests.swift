import AppAttest
import AttestationPKI
import Foundation
import PriceCrypto
import Testing

/// The real attestation objects of integration/fixtures/app-attest/vectors.json (made by iPhones), through the
/// verifier sign-up uses, against Apple's pinned root.
@Suite struct AttestationVectorTests {
    struct Vector {
        let name: String
        let appID: String
        let environment: String
        let attestation: [UInt8]
        let keyId: [UInt8]
        let clientDataHash: [UInt8]
        let verifyAt: Int
    }

    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func vectors() throws -> [Vector] {
        let data = try Data(contentsOf: repository.appendingPathComponent("integration/fixtures/app-attest/vectors.json"))
        let document = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        let entries = try #require(document?["vectors"] as? [[String: Any]])
        return try entries.filter { $0["kind"] as? String == "attestation" }.map { entry in
            func text(_ key: String) throws -> String { try #require(entry[key] as? String, "\(key)") }
            func bytes(_ key: String) throws -> [UInt8] {
                let value = try text(key)
                return try #require(decodeBase64(value), "\(key) is not base64")
            }
            let verifyAt = try text("verify_at")
            return Vector(name: try text("name"), appID: try text("app_id"), environment: try text("environment"),
                          attestation: try bytes("attestation_b64"), keyId: try bytes("key_id_b64"),
                          clientDataHash: try bytes("client_data_hash_b64"),
                          verifyAt: try #require(Self.unixSeconds(verifyAt)))
        }
    }

    static func unixSeconds(_ text: String) -> Int? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return Int(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970) }
    }

    func verifier(_ appIDs: [String], development: Bool = true) throws -> AttestationVerifier {
        try #require(AttestationVerifier(appIDs: appIDs, rootPEM: appleAppAttestationRootCA, acceptsDevelopment: development))
    }

    @Test func theFourRealAttestationsVerifyAtTheirTime() throws {
        let vectors = try Self.vectors()
        #expect(vectors.count == 4)
        for vector in vectors {
            let result = try verifier([vector.appID]).verify(attestation: vector.attestation, keyId: vector.keyId,
                                                             clientDataHash: vector.clientDataHash, at: vector.verifyAt)
            guard case .success(let key) = result else {
                Issue.record("\(vector.name): \(result)")
                continue
            }
            #expect(key.appID == vector.appID)
            #expect(key.environment.rawValue == vector.environment, "\(vector.name)")
            #expect(key.keyId == vector.keyId)
            #expect(key.publicKey.count == 65 && sha256(key.publicKey) == vector.keyId)
            #expect(key.counter == 0)
            #expect(!key.receipt.isEmpty)
        }
    }

    @Test func eachFailsOutsideItsLeafsValidityAndForAnotherApp() throws {
        for vector in try Self.vectors() {
            let verifier = try verifier([vector.appID])
            for at in [vector.verifyAt - 400 * 86_400, vector.verifyAt + 400 * 86_400] {
                let result = verifier.verify(attestation: vector.attestation, keyId: vector.keyId,
                                             clientDataHash: vector.clientDataHash, at: at)
                #expect(failure(result) == .certificateChain, "\(vector.name) at \(at)")
            }
            let other = try self.verifier(["ABCDE12345.org.example.other"]).verify(
                attestation: vector.attestation, keyId: vector.keyId, clientDataHash: vector.clientDataHash, at: vector.verifyAt)
            #expect(failure(other) == .appIdMismatch, "\(vector.name)")
        }
    }

    @Test func aDevelopmentKeyIsRefusedUnlessDevelopmentIsAccepted() throws {
        let vectors = try Self.vectors()
        let development = try #require(vectors.first { $0.environment == "development" })
        let result = try verifier([development.appID], development: false).verify(
            attestation: development.attestation, keyId: development.keyId,
            clientDataHash: development.clientDataHash, at: development.verifyAt)
        #expect(failure(result) == .environment)
    }

    @Test func anotherClientDataHashOrKeyIdIsRefused() throws {
        let vectors = try Self.vectors()
        let vector = try #require(vectors.first)
        let verifier = try verifier([vector.appID])
        #expect(failure(verifier.verify(attestation: vector.attestation, keyId: vector.keyId,
                                        clientDataHash: sha256("another challenge"), at: vector.verifyAt)) == .nonceMismatch)
        var keyId = vector.keyId
        keyId[0] ^= 1
        #expect(failure(verifier.verify(attestation: vector.attestation, keyId: keyId,
                                        clientDataHash: vector.clientDataHash, at: vector.verifyAt)) == .keyIdMismatch)
    }

    @Test func truncatedOrExtendedObjectsAreMalformed() throws {
        let vectors = try Self.vectors()
        let vector = try #require(vectors.first)
        let verifier = try verifier([vector.appID])
        for bytes in [Array(vector.attestation.dropLast()), vector.attestation + [0], Array(vector.attestation.prefix(10)), []] {
            #expect(failure(verifier.verify(attestation: bytes, keyId: vector.keyId,
                                            clientDataHash: vector.clientDataHash, at: vector.verifyAt)) == .malformed)
        }
    }

    @Test func anotherRootRefusesTheChain() throws {
        let vectors = try Self.vectors()
        let vector = try #require(vectors.first)
        // The App Attest intermediate is no trust anchor: only the pinned root is.
        let other = try #require(AttestationVerifier(appIDs: [vector.appID], rootPEM: Self.unrelatedRoot, acceptsDevelopment: true))
        #expect(failure(other.verify(attestation: vector.attestation, keyId: vector.keyId,
                                     clientDataHash: vector.clientDataHash, at: vector.verifyAt)) == .certificateChain)
    }

    @Test func theBuiltInRootIsTheShippedFileAndApplesFingerprint() throws {
        let file = try String(contentsOf: Self.repository.appendingPathComponent("docs/apple-app-attestation-root-ca.pem"), encoding: .utf8)
        #expect(file.trimmingCharacters(in: .whitespacesAndNewlines) == appleAppAttestationRootCA)
        let body = appleAppAttestationRootCA.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        let der = try #require(decodeBase64(body))
        #expect(hex(sha256(der)) == "1cb9823ba28ba6ad2d33a006941de2ae4f513ef1d4e831b9f7e0fa7b6242c932")
    }

    func failure(_ result: Result<AttestedKey, AttestationError>) -> AttestationError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    /// A self-signed P-256 CA unrelated to Apple (openssl req -x509).
    static let unrelatedRoot = """
    -----BEGIN CERTIFICATE-----
    MIIBkzCCATmgAwIBAgIUY+oqG5fW9VSPX6MsAGPn0Ce/KLUwCgYIKoZIzj0EAwIw
    HjEcMBoGA1UEAwwTVW5yZWxhdGVkIFRlc3QgUm9vdDAgFw0yNjEyMDExNTQ1MDRa
    GA8yMDU3MDExMjE1NDUwNFowHjEcMBoGA1UEAwwTVW5yZWxhdGVkIFRlc3QgUm9v
    dDBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABF5MFWFl8uNh+L/zJJbOXDY43U2v
    mCZQfPQ4W8Hjffl6MA1yNFKs+SUKx4OoclehnCC8Dts68Zzkiw9OsXa3OVajUzBR
    MB0GA1UdDgQWBBTRR2yFqwwYwUodG0jRs88ti3nWnzAfBgNVHSMEGDAWgBTRR2yF
    qwwYwUodG0jRs88ti3nWnzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gA
    MEUCIDlXhLKx0naYnoXq92xoAF02POK9hNKa0CPcrGQojEIBAiEAw/qho9e2wRHv
    /V08YLLBt5m1Kz5E6NlVDFfxL7RsSlY=
    -----END CERTIFICATE-----
    """
}
