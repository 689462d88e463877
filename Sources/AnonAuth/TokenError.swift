/// Why a token was refused.
public typealias TokenError = Refusal<TokenErrorCode>

/// The codes of ``TokenError``.
public struct TokenErrorCode: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Sendable {
        case malformed, oversize, unsupportedAlgorithm, badSignature, expired, notYetValid
        case wrongAudience, wrongRole, missingClaim
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// Not three base64url segments of JSON objects, or a claim of the wrong type.
    public static let malformed = Self(.malformed)
    /// Longer than the verifier's `maxTokenBytes`; refused before any decoding.
    public static let oversize = Self(.oversize)
    /// `alg` missing or anything but `HS256` (`none`, `RS256`, `HS512`, ...), or a `crit` header.
    public static let unsupportedAlgorithm = Self(.unsupportedAlgorithm)
    /// No configured secret produces this signature.
    public static let badSignature = Self(.badSignature)
    public static let expired = Self(.expired)
    /// `nbf` or `iat` lies further in the future than the leeway allows.
    public static let notYetValid = Self(.notYetValid)
    public static let wrongAudience = Self(.wrongAudience)
    public static let wrongRole = Self(.wrongRole)
    public static let missingClaim = Self(.missingClaim)

    public var description: String { base.rawValue }
}

extension TokenError {
    static var malformed: TokenError { TokenError(code: .malformed, message: "token is malformed") }
    static var oversize: TokenError { TokenError(code: .oversize, message: "token is too large") }
    static var unsupportedAlgorithm: TokenError {
        TokenError(code: .unsupportedAlgorithm, message: "token algorithm is not supported (only HS256 is)")
    }
    static var badSignature: TokenError { TokenError(code: .badSignature, message: "token signature is invalid") }
    static var expired: TokenError { TokenError(code: .expired, message: "token has expired") }
    static var notYetValid: TokenError { TokenError(code: .notYetValid, message: "token is not valid yet") }
    static var wrongAudience: TokenError { TokenError(code: .wrongAudience, message: "token audience is not accepted here") }
    static var wrongRole: TokenError { TokenError(code: .wrongRole, message: "token role is not accepted here") }

    static func missingClaim(_ name: String) -> TokenError {
        TokenError(code: .missingClaim, message: "token is missing a valid '\(name)' claim")
    }

    static func badClaim(_ name: String) -> TokenError {
        TokenError(code: .malformed, message: "token claim '\(name)' has the wrong type")
    }
}
