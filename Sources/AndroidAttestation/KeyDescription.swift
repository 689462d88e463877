import AttestationPKI

/// Where a key lives, as KeyMint's `SecurityLevel` enumerates it.
public enum SecurityLevel: Int64, Sendable, Equatable {
    case software = 0
    case trustedEnvironment = 1
    case strongBox = 2

    /// The spelling of Google's verifier (and of the reference vectors' `expected`).
    public var name: String {
        switch self {
        case .software: return "SOFTWARE"
        case .trustedEnvironment: return "TRUSTED_ENVIRONMENT"
        case .strongBox: return "STRONG_BOX"
        }
    }
}

/// `RootOfTrust.verifiedBootState`.
public enum VerifiedBootState: Int64, Sendable, Equatable {
    case verified = 0
    case selfSigned = 1
    case unverified = 2
    case failed = 3

    public var name: String {
        switch self {
        case .verified: return "VERIFIED"
        case .selfSigned: return "SELF_SIGNED"
        case .unverified: return "UNVERIFIED"
        case .failed: return "FAILED"
        }
    }
}

/// `RootOfTrust ::= SEQUENCE { verifiedBootKey OCTET STRING, deviceLocked BOOLEAN, verifiedBootState
/// ENUMERATED, verifiedBootHash OCTET STRING (attestation version 3 and later) }`.
public struct RootOfTrust: Sendable, Equatable {
    public var verifiedBootKey: [UInt8]
    public var deviceLocked: Bool
    public var verifiedBootState: VerifiedBootState
    public var verifiedBootHash: [UInt8]?
}

/// `AttestationApplicationId ::= SEQUENCE { packageInfos SET OF SEQUENCE { packageName OCTET STRING,
/// version INTEGER }, signatureDigests SET OF OCTET STRING }`: who asked for the key.
public struct AttestationApplicationID: Sendable, Equatable {
    public struct Package: Sendable, Equatable {
        public var name: String
        public var version: Int64
    }
    public var packages: [Package]
    /// SHA-256 of each signing certificate of the app.
    public var signatureDigests: [[UInt8]]
}

/// The fields of an `AuthorizationList` that policy and the verdict need; other tags are read (they must
/// be well-formed DER and in ascending order) and skipped.
public struct AuthorizationList: Sendable, Equatable {
    public var purposes: [Int64] = []
    public var algorithm: Int64?
    public var keySize: Int64?
    public var noAuthRequired = false
    public var creationDateTime: Int64?
    /// 0 generated, 1 derived, 2 imported, 3 reserved, 4 securely imported.
    public var origin: Int64?
    public var rootOfTrust: RootOfTrust?
    public var osVersion: Int64?
    public var osPatchLevel: Int64?
    public var attestationApplicationID: AttestationApplicationID?
    public var vendorPatchLevel: Int64?
    public var bootPatchLevel: Int64?

    public init() {}

    /// `origin` in Google's spelling.
    public var originName: String? {
        switch origin {
        case nil: return nil
        case 0: return "GENERATED"
        case 1: return "DERIVED"
        case 2: return "IMPORTED"
        case 3: return "RESERVED"
        case 4: return "SECURELY_IMPORTED"
        case let other?: return String(other)
        }
    }
}

/// The KeyDescription extension (OID 1.3.6.1.4.1.11129.2.1.17) of an attestation certificate:
/// `SEQUENCE { attestationVersion INTEGER, attestationSecurityLevel SecurityLevel, keyMintVersion INTEGER,
/// keyMintSecurityLevel SecurityLevel, attestationChallenge OCTET STRING, uniqueId OCTET STRING,
/// softwareEnforced AuthorizationList, hardwareEnforced AuthorizationList }`.
///
/// - Important: it is read as strict DER. Two encodings that Google's verifier tolerates are refused: a
///   BOOLEAN other than 0x00/0xFF (the `invalid_malformed_rot_device_locked` reference chain) and
///   AuthorizationList tags out of ascending order (`invalid_tags_not_in_ascending_order`). DER gives each
///   value one encoding, and a device that cannot encode DER is not one this service counts. The order of
///   the elements of a SET OF is not checked (the fields read from them are lists, not sets).
public struct KeyDescription: Sendable, Equatable {
    public static let oid = "1.3.6.1.4.1.11129.2.1.17"
    /// An AuthorizationList has about 40 tags defined; more entries than this is not a device's.
    static let maxEntries = 96
    /// Purposes, digests, packages and signature digests: a handful each.
    static let maxSetElements = 32

    public var attestationVersion: Int64
    public var attestationSecurityLevel: SecurityLevel
    public var keyMintVersion: Int64
    public var keyMintSecurityLevel: SecurityLevel
    public var attestationChallenge: [UInt8]
    public var uniqueID: [UInt8]
    public var softwareEnforced: AuthorizationList
    public var hardwareEnforced: AuthorizationList

    /// Parses the extension's value (the contents of its OCTET STRING).
    public static func parse(_ extensionValue: [UInt8]) throws(DERError) -> KeyDescription {
        let sequence = try DERReader.single(extensionValue)
        guard sequence.tag == .sequence else { throw DERError("KeyDescription is not a SEQUENCE", at: 0) }
        var fields = try sequence.reader()
        let version = try fields.read(.integer).int64()
        let securityLevel = try level(fields.read(.enumerated))
        let keyMintVersion = try fields.read(.integer).int64()
        let keyMintLevel = try level(fields.read(.enumerated))
        let challenge = try fields.read(.octetString).octets()
        let uniqueID = try fields.read(.octetString).octets()
        let software = try authorizationList(fields.read(.sequence))
        let hardware = try authorizationList(fields.read(.sequence))
        try fields.finish()
        return KeyDescription(attestationVersion: version, attestationSecurityLevel: securityLevel,
                              keyMintVersion: keyMintVersion, keyMintSecurityLevel: keyMintLevel,
                              attestationChallenge: challenge, uniqueID: uniqueID,
                              softwareEnforced: software, hardwareEnforced: hardware)
    }

    /// The application id from whichever list carries it (KeyMint puts it in softwareEnforced).
    public var attestationApplicationID: AttestationApplicationID? {
        hardwareEnforced.attestationApplicationID ?? softwareEnforced.attestationApplicationID
    }

    static func level(_ element: DERElement) throws(DERError) -> SecurityLevel {
        guard let level = SecurityLevel(rawValue: try element.int64()) else {
            throw DERError("unknown security level", at: element.offset)
        }
        return level
    }

    static func authorizationList(_ element: DERElement) throws(DERError) -> AuthorizationList {
        var list = AuthorizationList()
        var entries = try element.reader()
        var previous: UInt32?
        var count = 0
        while !entries.isAtEnd {
            let entry = try entries.read()
            count += 1
            guard count <= maxEntries else { throw DERError("AuthorizationList has too many entries", at: entry.offset) }
            guard entry.tag.tagClass == .contextSpecific, entry.tag.constructed else {
                throw DERError("AuthorizationList entry is not [n] EXPLICIT", at: entry.offset)
            }
            if let previous, entry.tag.number <= previous {
                throw DERError("AuthorizationList tags not in ascending order", at: entry.offset)
            }
            previous = entry.tag.number
            let value = try entry.explicitInner()
            switch entry.tag.number {
            case 1: list.purposes = try integers(value)
            case 2: list.algorithm = try value.int64()
            case 3: list.keySize = try value.int64()
            case 503: try value.null(); list.noAuthRequired = true
            case 701: list.creationDateTime = try value.int64()
            case 702: list.origin = try value.int64()
            case 704: list.rootOfTrust = try rootOfTrust(value)
            case 705: list.osVersion = try value.int64()
            case 706: list.osPatchLevel = try value.int64()
            case 709: list.attestationApplicationID = try applicationID(value)
            case 718: list.vendorPatchLevel = try value.int64()
            case 719: list.bootPatchLevel = try value.int64()
            default: break
            }
        }
        return list
    }

    static func integers(_ set: DERElement) throws(DERError) -> [Int64] {
        guard set.tag == .set else { throw DERError("expected a SET OF INTEGER", at: set.offset) }
        var reader = try set.reader()
        var values: [Int64] = []
        while !reader.isAtEnd {
            guard values.count < maxSetElements else { throw DERError("SET OF too large", at: set.offset) }
            values.append(try reader.read(.integer).int64())
        }
        return values
    }

    static func rootOfTrust(_ element: DERElement) throws(DERError) -> RootOfTrust {
        guard element.tag == .sequence else { throw DERError("RootOfTrust is not a SEQUENCE", at: element.offset) }
        var fields = try element.reader()
        let key = try fields.read(.octetString).octets()
        let locked = try fields.read(.boolean).boolean()
        let stateElement = try fields.read(.enumerated)
        guard let state = VerifiedBootState(rawValue: try stateElement.int64()) else {
            throw DERError("unknown verified boot state", at: stateElement.offset)
        }
        let hash = try fields.readIfPresent(.octetString)?.octets()
        try fields.finish()
        return RootOfTrust(verifiedBootKey: key, deviceLocked: locked, verifiedBootState: state, verifiedBootHash: hash)
    }

    /// `[709] EXPLICIT OCTET STRING` whose bytes are the DER of an AttestationApplicationId.
    static func applicationID(_ element: DERElement) throws(DERError) -> AttestationApplicationID {
        let inner = try DERReader.single(element.octets())
        guard inner.tag == .sequence else { throw DERError("AttestationApplicationId is not a SEQUENCE", at: element.offset) }
        var fields = try inner.reader()
        var packageSet = try fields.read(.set).reader()
        var packages: [AttestationApplicationID.Package] = []
        while !packageSet.isAtEnd {
            guard packages.count < maxSetElements else { throw DERError("too many packages", at: element.offset) }
            var info = try packageSet.read(.sequence).reader()
            let nameBytes = try info.read(.octetString).octets()
            let version = try info.read(.integer).int64()
            try info.finish()
            guard let name = String(validating: nameBytes, as: UTF8.self) else {
                throw DERError("package name is not UTF-8", at: element.offset)
            }
            packages.append(.init(name: name, version: version))
        }
        var digestSet = try fields.read(.set).reader()
        var digests: [[UInt8]] = []
        while !digestSet.isAtEnd {
            guard digests.count < maxSetElements else { throw DERError("too many signature digests", at: element.offset) }
            digests.append(try digestSet.read(.octetString).octets())
        }
        try fields.finish()
        return AttestationApplicationID(packages: packages, signatureDigests: digests)
    }
}
