/// Why a key attestation was refused: the check that failed, as a stable code (the `error_code` of a
/// refused sign-up, docs/attestation.md), and a message safe to return to the client (it names the check,
/// never echoes input).
public struct KeyAttestationError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case malformedChain = "malformed_chain"
            case unsupportedAlgorithm = "unsupported_algorithm"
            case unknownRoot = "unknown_root"
            case certificateChain = "certificate_chain"
            case revokedCertificate = "revoked_certificate"
            case missingExtension = "missing_extension"
            case duplicatedExtension = "duplicated_extension"
            case malformedExtension = "malformed_extension"
            case softwareSecurityLevel = "software_security_level"
            case challengeMismatch = "challenge_mismatch"
            case packageMismatch = "package_mismatch"
            case signingCertificateMismatch = "signing_certificate_mismatch"
            case bootState = "boot_state"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Not 2 to `maxCertificates` DER certificates, or one that does not parse.
        public static let malformedChain = Code(.malformedChain)
        /// A key or signature algorithm OpenSSL here cannot use (ML-DSA on OpenSSL 3.0): not verifiable,
        /// so refused, and told apart from a bad signature.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The last certificate's public key is none of the pinned roots' (Google's, or the roots file's).
        public static let unknownRoot = Code(.unknownRoot)
        /// A signature or validity period does not hold at the verification time.
        public static let certificateChain = Code(.certificateChain)
        /// A certificate's serial is REVOKED or SUSPENDED in the status list.
        public static let revokedCertificate = Code(.revokedCertificate)
        /// No certificate carries the KeyDescription extension.
        public static let missingExtension = Code(.missingExtension)
        /// A second KeyDescription below the first (an extended chain), one in a certificate other than the
        /// leaf, or two in one certificate.
        public static let duplicatedExtension = Code(.duplicatedExtension)
        /// The KeyDescription is not the strict DER of its schema.
        public static let malformedExtension = Code(.malformedExtension)
        /// The key is software-backed (attestation or KeyMint security level SOFTWARE).
        public static let softwareSecurityLevel = Code(.softwareSecurityLevel)
        /// The attestation challenge is not the one issued.
        public static let challengeMismatch = Code(.challengeMismatch)
        /// No attested package is one of the accepted package names.
        public static let packageMismatch = Code(.packageMismatch)
        /// No attested signing-certificate digest is one of the accepted ones.
        public static let signingCertificateMismatch = Code(.signingCertificateMismatch)
        /// Not verified boot on a locked bootloader (and unverified boot is not allowed).
        public static let bootState = Code(.bootState)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}
