import AttestationPKI

/// App Attest's authenticator data (WebAuthn's layout): rpIdHash (32) | flags (1) | counter (4, big-endian)
/// | aaguid (16) | credentialId length (2, big-endian) | credentialId | COSE public key | extensions.
public struct AuthenticatorData: Sendable, Equatable {
    /// Flag bit 6: attested credential data (aaguid, credential id, key) follows the counter.
    static let attestedCredentialFlag: UInt8 = 0x40

    public var rpIdHash: [UInt8]
    public var flags: UInt8
    public var counter: UInt32
    public var aaguid: [UInt8]
    public var credentialId: [UInt8]
    public var credentialPublicKey: CBORValue

    /// Parses the attestation's authData; any deviation from the layout is `.malformed`.
    public static func parse(_ bytes: [UInt8]) -> Result<AuthenticatorData, AttestationError> {
        let malformed = { (what: String) in Result<AuthenticatorData, AttestationError>.failure(AttestationError(.malformed, "authData: \(what)")) }
        guard bytes.count >= 37 + 18 else { return malformed("too short") }
        let flags = bytes[32]
        guard flags & attestedCredentialFlag != 0 else { return malformed("no attested credential data") }
        let counter = bytes[33..<37].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let aaguid = Array(bytes[37..<53])
        let idLength = Int(bytes[53]) << 8 | Int(bytes[54])
        guard idLength >= 1, idLength <= 1023, bytes.count >= 55 + idLength else { return malformed("credential id length") }
        let credentialId = Array(bytes[55..<55 + idLength])
        let decoder = CBORDecoder(maxDepth: 4, maxEntries: 16, maxItems: 64)
        guard case .success(let (key, end)) = decoder.decodePrefix(bytes, from: 55 + idLength),
              case .map = key else { return malformed("credential public key is not a CBOR map") }
        // After the key, "possibly more CBOR" (extensions; Apple's own worked example has a map there
        // without the extensions flag): whole CBOR maps up to the end, at most a few, never loose bytes.
        var position = end
        var extensions = 0
        while position < bytes.count {
            extensions += 1
            guard extensions <= 4, case .success(let (item, itemEnd)) = decoder.decodePrefix(bytes, from: position),
                  case .map = item else { return malformed("trailing data after the credential public key") }
            position = itemEnd
        }
        return .success(AuthenticatorData(rpIdHash: Array(bytes[0..<32]), flags: flags, counter: counter,
                                          aaguid: aaguid, credentialId: credentialId, credentialPublicKey: key))
    }

    /// The uncompressed point (0x04 ‖ x ‖ y) of an EC2 P-256 COSE key (kty 2, crv 1, x and y 32 bytes), or nil.
    public var coseP256Point: [UInt8]? {
        guard credentialPublicKey[int: 1]?.intValue == 2, credentialPublicKey[int: -1]?.intValue == 1,
              let x = credentialPublicKey[int: -2]?.bytesValue, let y = credentialPublicKey[int: -3]?.bytesValue,
              x.count == 32, y.count == 32 else { return nil }
        return [0x04] + x + y
    }
}

/// The two App Attest environments, told apart by authData's aaguid.
public enum AttestationEnvironment: String, Sendable, Equatable {
    case production
    case development

    /// `appattest` followed by seven zero bytes, or `appattestdevelop`.
    public init?(aaguid: [UInt8]) {
        if aaguid == Array("appattest".utf8) + [UInt8](repeating: 0, count: 7) {
            self = .production
        } else if aaguid == Array("appattestdevelop".utf8) {
            self = .development
        } else {
            return nil
        }
    }
}

/// The value of the leaf's `1.2.840.113635.100.8.2` extension: DER `SEQUENCE { [1] EXPLICIT OCTET STRING }`;
/// returns the octet string (the nonce), or nil for anything else (including trailing bytes at any level).
public func appAttestNonce(extensionValue der: [UInt8]) -> [UInt8]? {
    func nonce() throws(DERError) -> [UInt8] {
        let sequence = try DERReader.single(der)
        guard sequence.tag == .sequence else { throw DERError("not a SEQUENCE", at: 0) }
        var fields = try sequence.reader()
        let tagged = try fields.read(.explicit(1))
        try fields.finish()
        return try tagged.explicitInner().octets()
    }
    return try? nonce()
}
