/// Why a token was refused.
///
/// `message` is short and safe to return to the client: it never contains the token or any part of it.
/// New codes can be added without breaking callers that switch on the ones they map.
public struct TokenError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case malformed, oversize, unsupportedAlgorithm, badSignature, expired, notYetValid
            case wrongAudience, wrongRole, missingClaim
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Not three base64url segments of JSON objects, or a claim of the wrong type.
        public static let malformed = Code(.malformed)
        /// Longer than the verifier's `maxTokenBytes`; refused before any decoding.
        public static let oversize = Code(.oversize)
        /// `alg` missing or anything but `HS256` (`none`, `RS256`, `HS512`, ...), or a `crit` header.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// No configured secret produces this signature.
        public static let badSignature = Code(.badSignature)
        public static let expired = Code(.expired)
        /// `nbf` or `iat` lies further in the future than the leeway allows.
        public static let notYetValid = Code(.notYetValid)
        public static let wrongAudience = Code(.wrongAudience)
        public static let wrongRole = Code(.wrongRole)
        public static let missingClaim = Code(.missingClaim)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
}

extension TokenError {
    static let malformed = TokenError(code: .malformed, message: "token is malformed")
    static let oversize = TokenError(code: .oversize, message: "token is too large")
    static let unsupportedAlgorithm = TokenError(
        code: .unsupportedAlgorithm, message: "token algorithm is not supported (only HS256 is)")
    static let badSignature = TokenError(code: .badSignature, message: "token signature is invalid")
    static let expired = TokenError(code: .expired, message: "token has expired")
    static let notYetValid = TokenError(code: .notYetValid, message: "token is not valid yet")
    static let wrongAudience = TokenError(code: .wrongAudience, message: "token audience is not accepted here")
    static let wrongRole = TokenError(code: .wrongRole, message: "token role is not accepted here")

    static func missingClaim(_ name: String) -> TokenError {
        TokenError(code: .missingClaim, message: "token is missing a valid '\(name)' claim")
    }

    static func badClaim(_ name: String) -> TokenError {
        TokenError(code: .malformed, message: "token claim '\(name)' has the wrong type")
    }
}
