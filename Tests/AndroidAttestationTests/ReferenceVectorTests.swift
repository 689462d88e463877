import AndroidAttestation
import AttestationPKI
import Foundation
import Testing

/// The real chains of integration/fixtures/android-key-attestation (Pixel and Sony devices, from Google's
/// android/keyattestation test data), through the verifier sign-up uses, against Google's pinned roots.
@Suite struct ReferenceVectorTests {
    struct Vector {
        let name: String
        let chain: [[UInt8]]
        let verifyAt: Int
        let validFrom: Int
        let validUntil: Int
        let challenge: [UInt8]?
        let expected: [String: Any]?
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("integration/fixtures/android-key-attestation")

    static func vectors() throws -> [Vector] {
        let data = try Data(contentsOf: fixtures.appendingPathComponent("vectors.json"))
        let document = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let entries = try #require(document["vectors"] as? [[String: Any]])
        return try entries.map { entry in
            func text(_ key: String) throws -> String { try #require(entry[key] as? String, "\(key)") }
            let pem = try String(contentsOf: fixtures.appendingPathComponent(try text("file")), encoding: .utf8)
            let chain = try #require(Certificate.pem(pem)).map(\.der)
            #expect(chain.count == entry["certificates"] as? Int)
            return Vector(name: try text("name"), chain: chain, verifyAt: try #require(unixSeconds(try text("verify_at"))),
                          validFrom: try #require(unixSeconds(try text("valid_from"))),
                          validUntil: try #require(unixSeconds(try text("valid_until"))),
                          challenge: (entry["challenge_b64"] as? String).flatMap { decodeBase64($0) },
                          expected: entry["expected"] as? [String: Any])
        }
    }

    static func unixSeconds(_ text: String) -> Int? {
        let formatter = ISO8601DateFormatter()
        return formatter.date(from: text).map { Int($0.timeIntervalSince1970) }
    }

    static let package = "com.google.wireless.android.security.attestationverifier.collector"

    func verifier(packages: Set<String>, anyBootState: Bool, statusList: AttestationStatusList? = nil) -> KeyAttestationVerifier {
        KeyAttestationVerifier(statusList: statusList, policy: KeyAttestationPolicy(packageNames: packages, allowsUnverifiedBoot: anyBootState))
    }

    func failure<T>(_ result: Result<T, KeyAttestationError>) -> KeyAttestationError.Code? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    /// The hardware-backed chains: every one ends at Google's RSA root.
    func hardwareVectors() throws -> [Vector] {
        try Self.vectors().filter { $0.name.hasPrefix("blueline") || $0.name.hasPrefix("sony") }
    }

    func packageName(_ vector: Vector) throws -> String {
        let description = try KeyDescription.parse(try #require(Certificate(der: vector.chain[0])?.extensionValue(oid: KeyDescription.oid)))
        return try #require(description.attestationApplicationID?.packages.first?.name)
    }

    // MARK: fields

    /// The fields the verifier reads, spelled as the vectors' `expected` spells them.
    static func rendered(_ list: AuthorizationList) -> [String: Any] {
        var fields: [String: Any] = [:]
        if !list.purposes.isEmpty { fields["purposes"] = list.purposes.map(String.init) }
        if let value = list.algorithm { fields["algorithms"] = String(value) }
        if let value = list.keySize { fields["keySize"] = String(value) }
        if list.noAuthRequired { fields["noAuthRequired"] = true }
        if let value = list.creationDateTime { fields["creationDateTime"] = String(value) }
        if let value = list.originName { fields["origin"] = value }
        if let root = list.rootOfTrust {
            var rendered: [String: Any] = ["verifiedBootKey": encodeBase64(root.verifiedBootKey), "deviceLocked": root.deviceLocked,
                                           "verifiedBootState": root.verifiedBootState.name]
            if let hash = root.verifiedBootHash { rendered["verifiedBootHash"] = encodeBase64(hash) }
            fields["rootOfTrust"] = rendered
        }
        if let value = list.osVersion { fields["osVersion"] = String(value) }
        if let value = list.osPatchLevel { fields["osPatchLevel"] = String(value) }
        if let value = list.vendorPatchLevel { fields["vendorPatchLevel"] = String(value) }
        if let value = list.bootPatchLevel { fields["bootPatchLevel"] = String(value) }
        if let application = list.attestationApplicationID {
            fields["attestationApplicationId"] = [
                "packages": application.packages.map { ["name": $0.name, "version": String($0.version)] },
                "signatures": application.signatureDigests.map(encodeBase64),
            ] as [String: Any]
        }
        return fields
    }

    static func canonical(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static let readKeys: Set<String> = ["purposes", "algorithms", "keySize", "noAuthRequired", "creationDateTime", "origin",
                                        "rootOfTrust", "osVersion", "osPatchLevel", "vendorPatchLevel", "bootPatchLevel",
                                        "attestationApplicationId"]

    @Test func everyVectorsKeyDescriptionReadsAsItsExpectedFields() throws {
        let vectors = try Self.vectors().filter { $0.expected != nil }
        #expect(vectors.count == 8)
        for vector in vectors {
            let expected = try #require(vector.expected)
            let value = try #require(Certificate(der: vector.chain[0])?.extensionValue(oid: KeyDescription.oid), "\(vector.name)")
            let description = try KeyDescription.parse(value)
            #expect(String(description.attestationVersion) == expected["attestationVersion"] as? String, "\(vector.name)")
            #expect(description.attestationSecurityLevel.name == expected["attestationSecurityLevel"] as? String, "\(vector.name)")
            #expect(String(description.keyMintVersion) == expected["keyMintVersion"] as? String, "\(vector.name)")
            #expect(description.keyMintSecurityLevel.name == expected["keyMintSecurityLevel"] as? String, "\(vector.name)")
            #expect(encodeBase64(description.attestationChallenge) == expected["attestationChallenge"] as? String, "\(vector.name)")
            #expect(encodeBase64(description.uniqueID) == expected["uniqueId"] as? String, "\(vector.name)")
            for (name, list) in [("softwareEnforced", description.softwareEnforced), ("hardwareEnforced", description.hardwareEnforced)] {
                let wanted = ((expected[name] as? [String: Any]) ?? [:]).filter { Self.readKeys.contains($0.key) }
                let read = try Self.canonical(Self.rendered(list)), want = try Self.canonical(wanted)
                #expect(read == want, "\(vector.name) \(name)")
            }
        }
    }

    @Test func theTwoStrictDERViolationsAreRefusedNotCrashedOn() throws {
        for vector in try Self.vectors().filter({ $0.name.hasPrefix("invalid/") }) {
            let value = try #require(Certificate(der: vector.chain[0])?.extensionValue(oid: KeyDescription.oid))
            #expect(throws: DERError.self, "\(vector.name)") { try KeyDescription.parse(value) }
            let result = verifier(packages: [], anyBootState: true).verify(chain: vector.chain, challenge: [], at: vector.verifyAt)
            // The malformed-boolean chain is genuine; the out-of-order one's leaf signature does not verify.
            let code = vector.name.contains("malformed_rot") ? KeyAttestationError.Code.malformedExtension : .certificateChain
            #expect(failure(result) == code, "\(vector.name): \(result)")
        }
    }

    // MARK: verdicts

    @Test func everyHardwareChainVerifiesAtItsTime() throws {
        let vectors = try hardwareVectors()
        #expect(vectors.count == 6)
        for vector in vectors {
            let unlocked = vector.name.hasPrefix("blueline")
            let result = verifier(packages: [try packageName(vector)], anyBootState: unlocked)
                .verify(chain: vector.chain, challenge: try #require(vector.challenge), at: vector.verifyAt)
            guard case .success(let key) = result else {
                Issue.record("\(vector.name): \(result)")
                continue
            }
            #expect(key.root == "google-rsa-4096")
            #expect(key.packageName == (try packageName(vector)))
            #expect(key.publicKeyInfo == Certificate(der: vector.chain[0])?.subjectPublicKeyInfo)
            #expect(key.keyDescription.attestationSecurityLevel != .software)
        }
    }

    @Test func theUnlockedTestDevicesAreRefusedWithoutAnyBootState() throws {
        for vector in try hardwareVectors() where vector.name.hasPrefix("blueline") {
            let result = verifier(packages: [try packageName(vector)], anyBootState: false)
                .verify(chain: vector.chain, challenge: try #require(vector.challenge), at: vector.verifyAt)
            #expect(failure(result) == .bootState, "\(vector.name)")
        }
    }

    @Test func eachIsRefusedOutsideItsValidityForAnotherChallengeAndForAnotherPackage() throws {
        for vector in try hardwareVectors() {
            let challenge = try #require(vector.challenge)
            let verifier = verifier(packages: [try packageName(vector)], anyBootState: true)
            for at in [vector.validFrom - 86_400, vector.validUntil + 3 * 365 * 86_400] {
                #expect(failure(verifier.verify(chain: vector.chain, challenge: challenge, at: at)) == .certificateChain, "\(vector.name) at \(at)")
            }
            #expect(failure(verifier.verify(chain: vector.chain, challenge: Array("another".utf8), at: vector.verifyAt)) == .challengeMismatch)
            let other = self.verifier(packages: ["org.example.other"], anyBootState: true)
            #expect(failure(other.verify(chain: vector.chain, challenge: challenge, at: vector.verifyAt)) == .packageMismatch, "\(vector.name)")
            let digest = KeyAttestationVerifier(statusList: nil, policy: KeyAttestationPolicy(
                packageNames: [try packageName(vector)], signingCertificateDigests: [[UInt8](repeating: 1, count: 32)], allowsUnverifiedBoot: true))
            #expect(failure(digest.verify(chain: vector.chain, challenge: challenge, at: vector.verifyAt)) == .signingCertificateMismatch)
        }
    }

    @Test func theRootsKeyIsPinnedNotItsCertificate() throws {
        // blueline's chains end at the 2016 RSA root certificate, expired on 2026-05-24; their other
        // certificates are valid until 2028, and the root's key is the pinned one.
        let vector = try #require(try hardwareVectors().first { $0.name == "blueline/sdk28/TEE_EC_NONE" })
        let at = try #require(Self.unixSeconds("2027-01-01T00:00:00Z"))
        let result = verifier(packages: [try packageName(vector)], anyBootState: true)
            .verify(chain: vector.chain, challenge: try #require(vector.challenge), at: at)
        #expect((try? result.get())?.root == "google-rsa-4096", "\(result)")
    }

    @Test func softwareAttestationChainsEndAtNoPinnedRoot() throws {
        let vectors = try Self.vectors().filter { $0.name.hasPrefix("marlin") }
        #expect(vectors.count == 2)
        for vector in vectors {
            let result = verifier(packages: [], anyBootState: true).verify(chain: vector.chain, challenge: try #require(vector.challenge), at: vector.verifyAt)
            #expect(failure(result) == .unknownRoot, "\(vector.name)")
        }
    }

    @Test func aRevokedSerialAnywhereInTheChainIsRefused() throws {
        let vector = try #require(try hardwareVectors().first { $0.name == "sony-xperia10-iii/sdk33/TEE_EC" })
        let challenge = try #require(vector.challenge)
        for index in vector.chain.indices {
            let serial = try #require(Certificate(der: vector.chain[index])).serialHex
            let list = try AttestationStatusList.parse(Array("{\"entries\":{\"\(serial.uppercased())\":{\"status\":\"REVOKED\",\"reason\":\"KEY_COMPROMISE\"}}}".utf8)).get()
            let result = verifier(packages: [try packageName(vector)], anyBootState: false, statusList: list)
                .verify(chain: vector.chain, challenge: challenge, at: vector.verifyAt)
            #expect(failure(result) == .revokedCertificate, "certificate \(index)")
        }
        let unrelated = try AttestationStatusList.parse(Array("{\"entries\":{\"0abc\":{\"status\":\"SUSPENDED\"}}}".utf8)).get()
        #expect(unrelated.entry(serialHex: "abc")?.status == "SUSPENDED")
        let result = verifier(packages: [try packageName(vector)], anyBootState: false, statusList: unrelated)
            .verify(chain: vector.chain, challenge: challenge, at: vector.verifyAt)
        #expect((try? result.get()) != nil, "\(result)")
    }

    @Test func aStatusFileThatIsNotGooglesFormatIsRefused() {
        for text in ["", "[]", "{}", "{\"entries\":[]}", "{\"entries\":{\"xyz\":{\"status\":\"REVOKED\"}}}", "{\"entries\":{\"ab\":{}}}"] {
            if case .success = AttestationStatusList.parse(Array(text.utf8)) { Issue.record("accepted \(text)") }
        }
    }

    @Test func theBuiltInRootsAreTheReferenceRoots() throws {
        let data = try Data(contentsOf: Self.fixtures.appendingPathComponent("roots.json"))
        let roots = try #require(try JSONSerialization.jsonObject(with: data) as? [String])
        #expect(roots == [GoogleAttestationRoots.rsa, GoogleAttestationRoots.ecdsaP384])
        #expect(AttestationRoot.google.count == 2)
    }
}
