import AttestationPKI
import PriceCrypto

/// What the deployment accepts, beyond a genuine chain: the apps, and whether an unlocked test device counts.
public struct KeyAttestationPolicy: Sendable, Equatable {
    /// Android package names; an attestation naming none of them is refused. Empty accepts any package
    /// (the CLI without `--package`); sign-up requires at least one.
    public var packageNames: Set<String>
    /// SHA-256 digests of the app's signing certificates; empty: any.
    public var signingCertificateDigests: Set<[UInt8]>
    /// Accept any verified boot state and an unlocked bootloader (test devices).
    public var allowsUnverifiedBoot: Bool

    public init(packageNames: Set<String>, signingCertificateDigests: Set<[UInt8]> = [], allowsUnverifiedBoot: Bool = false) {
        self.packageNames = packageNames
        self.signingCertificateDigests = signingCertificateDigests
        self.allowsUnverifiedBoot = allowsUnverifiedBoot
    }
}

/// A trust anchor: a pinned subject public key, with the name a verdict reports.
public struct AttestationRoot: Sendable, Equatable {
    public var name: String
    public var subjectPublicKeyInfo: [UInt8]

    /// Google's two roots, built in.
    public static let google: [AttestationRoot] = GoogleAttestationRoots.all.map { root in
        AttestationRoot(name: root.name, subjectPublicKeyInfo: Certificate.pem(root.pem)![0].subjectPublicKeyInfo)
    }

    /// The keys of a PEM file's certificates (a test PKI), named `roots-file-1`, `roots-file-2`, ...; nil
    /// when the text holds no certificate or one that does not parse.
    public static func pem(_ text: String) -> [AttestationRoot]? {
        guard let certificates = Certificate.pem(text) else { return nil }
        return certificates.enumerated().map { AttestationRoot(name: "roots-file-\($0.offset + 1)", subjectPublicKeyInfo: $0.element.subjectPublicKeyInfo) }
    }
}

/// What a verified attestation establishes: a key made in a device's secure hardware for an accepted app.
public struct AttestedAndroidKey: Sendable, Equatable {
    public var keyDescription: KeyDescription
    /// The leaf's subjectPublicKeyInfo (DER): the attested key.
    public var publicKeyInfo: [UInt8]
    /// SHA-256 of `publicKeyInfo`: one identity per key.
    public var keyID: [UInt8]
    /// The pinned root the chain ends at (`AttestationRoot.name`).
    public var root: String
    /// The first attested package the policy accepts (the first attested one when it accepts any).
    public var packageName: String?
}

/// Verifies Android Key Attestation certificate chains at a time the caller gives, against pinned root
/// keys, a status list and a policy. Holds no state between calls.
public struct KeyAttestationVerifier: Sendable {
    /// Real chains have 3 to 5 certificates (RKP's have 4); a longer one is refused unread.
    public static let maxCertificates = 8

    let roots: [AttestationRoot]
    let statusList: AttestationStatusList?
    public let policy: KeyAttestationPolicy

    /// - Parameters:
    ///   - roots: the pinned keys; Google's unless a test replaces them.
    ///   - statusList: Google's revocation list; nil checks no revocation (no file configured).
    public init(roots: [AttestationRoot] = AttestationRoot.google, statusList: AttestationStatusList?, policy: KeyAttestationPolicy) {
        self.roots = roots
        self.statusList = statusList
        self.policy = policy
    }

    /// Every check, in order; the first that fails is the answer.
    /// - Parameters:
    ///   - chain: DER certificates, leaf first, root last.
    ///   - challenge: the challenge issued (the bytes the app passed to `setAttestationChallenge`).
    ///   - at: unix seconds at which the chain must hold.
    public func verify(chain: [[UInt8]], challenge: [UInt8], at: Int) -> Result<AttestedAndroidKey, KeyAttestationError> {
        // The certificates.
        guard chain.count >= 2, chain.count <= Self.maxCertificates else {
            return .failure(KeyAttestationError(.malformedChain, "the chain has \(chain.count) certificates, not 2 to \(Self.maxCertificates)"))
        }
        var certificates: [Certificate] = []
        for (index, der) in chain.enumerated() {
            guard let certificate = Certificate(der: der) else {
                return .failure(KeyAttestationError(.malformedChain, "certificate \(index) is not one DER X.509 certificate"))
            }
            certificates.append(certificate)
        }
        if let index = certificates.firstIndex(where: { !$0.algorithmsAreSupported }) {
            return .failure(KeyAttestationError(.unsupportedAlgorithm, "certificate \(index) uses a key or signature algorithm this server cannot verify"))
        }

        // The root's key, then every signature and validity period below it (the leaf's is the device's
        // clock, the root's key is the anchor: neither validity is checked, as in Google's verifier).
        let anchor = certificates[certificates.count - 1]
        guard let root = roots.first(where: { $0.subjectPublicKeyInfo == anchor.subjectPublicKeyInfo }) else {
            return .failure(KeyAttestationError(.unknownRoot, "the chain does not end at a pinned attestation root key"))
        }
        if let reason = Certificate.verifyPath(Array(certificates.dropLast()), anchor: anchor, at: at,
                                               tolerating: [.anchorValidity, .issuerCAFlags, .leafValidity]) {
            return .failure(KeyAttestationError(.certificateChain, "certificate chain: \(reason)"))
        }

        // Revocation.
        if let statusList {
            for (index, certificate) in certificates.enumerated() {
                if let entry = statusList.entry(serialHex: certificate.serialHex) {
                    return .failure(KeyAttestationError(.revokedCertificate, "certificate \(index) is \(entry.status) in the attestation status list"))
                }
            }
        }

        // The extension: from the certificate closest to the root that carries one, which must be the leaf.
        let carriers = certificates.enumerated().map { ($0.offset, $0.element.extensionValues(oid: KeyDescription.oid)) }
            .filter { !$0.1.isEmpty }
        guard let topmost = carriers.last else {
            return .failure(KeyAttestationError(.missingExtension, "no certificate carries the KeyDescription extension"))
        }
        guard carriers.count == 1, topmost.1.count == 1 else {
            return .failure(KeyAttestationError(.duplicatedExtension, "more than one KeyDescription extension in the chain"))
        }
        guard topmost.0 == 0 else {
            return .failure(KeyAttestationError(.duplicatedExtension, "the KeyDescription is in certificate \(topmost.0), not in the leaf: an extended chain"))
        }
        let description: KeyDescription
        do {
            description = try KeyDescription.parse(topmost.1[0])
        } catch {
            return .failure(KeyAttestationError(.malformedExtension, "KeyDescription: \(error)"))
        }

        // The policy.
        guard description.attestationSecurityLevel != .software, description.keyMintSecurityLevel != .software else {
            return .failure(KeyAttestationError(.softwareSecurityLevel, "a software-backed key, not TrustedEnvironment or StrongBox"))
        }
        guard constantTimeEqual(description.attestationChallenge, challenge) else {
            return .failure(KeyAttestationError(.challengeMismatch, "the attestation challenge is not the one issued"))
        }
        let application = description.attestationApplicationID
        let packageName = application?.packages.first { policy.packageNames.isEmpty || policy.packageNames.contains($0.name) }?.name
        if !policy.packageNames.isEmpty, packageName == nil {
            return .failure(KeyAttestationError(.packageMismatch, "no attested package is an accepted package name"))
        }
        if !policy.signingCertificateDigests.isEmpty {
            guard let application, application.signatureDigests.contains(where: { policy.signingCertificateDigests.contains($0) }) else {
                return .failure(KeyAttestationError(.signingCertificateMismatch, "no attested signing certificate is an accepted one"))
            }
        }
        guard let rootOfTrust = description.hardwareEnforced.rootOfTrust else {
            return .failure(KeyAttestationError(.malformedExtension, "a hardware-backed key without a rootOfTrust"))
        }
        if !policy.allowsUnverifiedBoot {
            guard rootOfTrust.verifiedBootState == .verified, rootOfTrust.deviceLocked else {
                return .failure(KeyAttestationError(.bootState, "verified boot state is \(rootOfTrust.verifiedBootState.name), device "
                                                    + (rootOfTrust.deviceLocked ? "locked" : "unlocked") + ": not VERIFIED on a locked bootloader"))
            }
        }
        let leaf = certificates[0]
        return .success(AttestedAndroidKey(keyDescription: description, publicKeyInfo: leaf.subjectPublicKeyInfo,
                                           keyID: sha256(leaf.subjectPublicKeyInfo), root: root.name, packageName: packageName))
    }
}
