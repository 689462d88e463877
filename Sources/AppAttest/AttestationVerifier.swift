import AttestationPKI
import PriceCrypto

/// What a verified attestation establishes: a Secure Enclave key of a genuine device, made by `appID`.
public struct AttestedKey: Sendable, Equatable {
    public var appID: String
    public var environment: AttestationEnvironment
    /// SHA-256 of `publicKey`, as the app's `keyId`.
    public var keyId: [UInt8]
    /// Uncompressed P-256 point, 65 bytes.
    public var publicKey: [UInt8]
    public var counter: UInt32
    /// Apple's receipt, kept for an operator who later asks Apple for the key's risk metric.
    public var receipt: [UInt8]
}

/// Verifies App Attest attestation objects (the steps of Apple's "Validating apps that connect to your
/// server"), against one pinned root, at a time the caller gives. Holds no state between calls.
public struct AttestationVerifier: Sendable {
    public static let nonceExtensionOID = "1.2.840.113635.100.8.2"
    /// An attestation object is about 5 KiB (two certificates and a receipt); a larger one is refused unread.
    public static let maxAttestationBytes = 16_384
    /// Tolerated clock difference between the instance that issued a challenge and the one verifying it.
    static let clockSkewSeconds = 60

    /// SHA-256("TEAMID.bundle.id") → the app id, for every accepted app.
    let appIDsByHash: [[UInt8]: String]
    let root: Certificate
    public let acceptsDevelopment: Bool

    /// - Parameters:
    ///   - appIDs: `TEAMID.bundle.id` of every app the deployment accepts.
    ///   - rootPEM: the trust anchor (Apple's App Attestation Root CA, or a test root); its first certificate.
    ///   - acceptsDevelopment: whether keys of the `appattestdevelop` environment are accepted.
    public init?(appIDs: [String], rootPEM: String, acceptsDevelopment: Bool) {
        guard let root = Certificate.pem(rootPEM)?.first else { return nil }
        var byHash: [[UInt8]: String] = [:]
        for appID in appIDs { byHash[sha256(appID)] = appID }
        self.appIDsByHash = byHash
        self.root = root
        self.acceptsDevelopment = acceptsDevelopment
    }

    /// Every step, in order; the first that fails is the answer.
    /// - Parameters:
    ///   - attestation: the attestation object (CBOR) the app got from `attestKey`.
    ///   - keyId: the app's key id (32 bytes, SHA-256 of the public key).
    ///   - clientDataHash: what the app passed to `attestKey`.
    ///   - at: unix seconds at which the certificates must be valid.
    public func verify(attestation: [UInt8], keyId: [UInt8], clientDataHash: [UInt8], at: Int) -> Result<AttestedKey, AttestationError> {
        // 1. The object.
        guard attestation.count <= Self.maxAttestationBytes else {
            return .failure(AttestationError(.malformed, "attestation object is larger than \(Self.maxAttestationBytes) bytes"))
        }
        let object: CBORValue
        switch CBORDecoder().decode(attestation) {
        case .success(let value): object = value
        case .failure(let error): return .failure(AttestationError(.malformed, "attestation object: \(error)"))
        }
        guard case .map(let pairs) = object, pairs.count == 3, let format = object[text: "fmt"]?.textValue,
              let statement = object[text: "attStmt"], let authDataBytes = object[text: "authData"]?.bytesValue else {
            return .failure(AttestationError(.malformed, "attestation object is not a map of fmt, attStmt and authData"))
        }
        guard format == "apple-appattest" else {
            return .failure(AttestationError(.unsupportedFormat, "fmt is not apple-appattest"))
        }
        guard case .map(let statementPairs) = statement, statementPairs.count == 2,
              let chain = statement[text: "x5c"]?.arrayValue, chain.count == 2,
              let leafDER = chain[0].bytesValue, let intermediateDER = chain[1].bytesValue,
              let receipt = statement[text: "receipt"]?.bytesValue else {
            return .failure(AttestationError(.malformed, "attStmt is not a map of x5c [leaf, intermediate] and receipt"))
        }
        guard let leaf = Certificate(der: leafDER), let intermediate = Certificate(der: intermediateDER) else {
            return .failure(AttestationError(.malformed, "x5c holds a certificate that does not parse"))
        }
        let authData: AuthenticatorData
        switch AuthenticatorData.parse(authDataBytes) {
        case .success(let parsed): authData = parsed
        case .failure(let error): return .failure(error)
        }

        // 2. The chain, to the pinned root, at `at`.
        if let reason = Certificate.verifyPath([leaf, intermediate], anchor: root, at: at) {
            return .failure(AttestationError(.certificateChain, "certificate chain: \(reason)"))
        }

        // 3. The nonce.
        guard let extensionValue = leaf.extensionValue(oid: Self.nonceExtensionOID),
              let nonce = appAttestNonce(extensionValue: extensionValue) else {
            return .failure(AttestationError(.nonceMismatch, "leaf certificate has no well-formed nonce extension"))
        }
        guard constantTimeEqual(nonce, sha256(authDataBytes + clientDataHash)) else {
            return .failure(AttestationError(.nonceMismatch, "nonce is not SHA-256(authData || clientDataHash): another challenge"))
        }

        // 4. The key id.
        guard let publicKey = leaf.p256PublicKey else {
            return .failure(AttestationError(.malformed, "leaf public key is not a P-256 point"))
        }
        let computedKeyId = sha256(publicKey)
        guard constantTimeEqual(computedKeyId, keyId) else {
            return .failure(AttestationError(.keyIdMismatch, "key id is not SHA-256 of the attested public key"))
        }

        // 5. authData.
        guard let appID = appIDsByHash[authData.rpIdHash] else {
            return .failure(AttestationError(.appIdMismatch, "rpIdHash is not that of an accepted app id"))
        }
        guard authData.counter == 0 else {
            return .failure(AttestationError(.counterNotZero, "counter is \(authData.counter), not 0"))
        }
        guard let environment = AttestationEnvironment(aaguid: authData.aaguid) else {
            return .failure(AttestationError(.environment, "aaguid is neither appattest nor appattestdevelop"))
        }
        guard environment == .production || acceptsDevelopment else {
            return .failure(AttestationError(.environment, "a development key, and this deployment accepts production keys only"))
        }
        guard authData.credentialId == computedKeyId else {
            return .failure(AttestationError(.credentialIdMismatch, "authData credential id is not the key id"))
        }
        guard authData.coseP256Point == publicKey else {
            return .failure(AttestationError(.publicKeyMismatch, "authData's public key is not the leaf certificate's"))
        }
        return .success(AttestedKey(appID: appID, environment: environment, keyId: computedKeyId,
                                    publicKey: publicKey, counter: authData.counter, receipt: receipt))
    }
}
