/// Why an attestation was refused: the step that failed, as a stable code, and a message safe to return
/// to the client (it names the step, never echoes input).
public struct AttestationError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case malformed = "malformed_attestation"
            case unsupportedFormat = "unsupported_format"
            case certificateChain = "certificate_chain"
            case nonceMismatch = "nonce_mismatch"
            case keyIdMismatch = "key_id_mismatch"
            case appIdMismatch = "app_id_mismatch"
            case counterNotZero = "counter_not_zero"
            case environment = "environment"
            case credentialIdMismatch = "credential_id_mismatch"
            case publicKeyMismatch = "public_key_mismatch"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Not a CBOR map with `fmt`, `attStmt` {`x5c` [leaf, intermediate], `receipt`} and `authData`, or
        /// an authData that does not parse (step 1 and 5's layout).
        public static let malformed = Code(.malformed)
        /// `fmt` is not `apple-appattest`.
        public static let unsupportedFormat = Code(.unsupportedFormat)
        /// The chain does not lead to the pinned root at the validation time (step 2).
        public static let certificateChain = Code(.certificateChain)
        /// The leaf's `1.2.840.113635.100.8.2` extension is missing or is not SHA-256(authData ‖ clientDataHash) (step 3).
        public static let nonceMismatch = Code(.nonceMismatch)
        /// SHA-256 of the leaf's public key is not the key id sent (step 4).
        public static let keyIdMismatch = Code(.keyIdMismatch)
        /// authData's rpIdHash is not SHA-256 of an accepted `TEAMID.bundle.id` (step 5).
        public static let appIdMismatch = Code(.appIdMismatch)
        public static let counterNotZero = Code(.counterNotZero)
        /// aaguid is neither App Attest environment, or is the development one where it is not accepted.
        public static let environment = Code(.environment)
        /// authData's credential id is not the key id.
        public static let credentialIdMismatch = Code(.credentialIdMismatch)
        /// authData's COSE key is not the leaf certificate's public key.
        public static let publicKeyMismatch = Code(.publicKeyMismatch)

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
