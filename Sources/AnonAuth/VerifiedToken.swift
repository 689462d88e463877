import PriceJSON

/// A token whose signature, algorithm and time claims have been checked, with the claims the service uses
/// already decoded.
///
/// `token` is the original compact string: it is what goes into `request.jwt` so PostgreSQL can verify it
/// again itself, rather than trusting claims the service re-serialized.
public struct VerifiedToken: Sendable, Equatable {
    public let token: String
    /// The whole payload, in token order.
    public let claims: JSONObject
    public let role: String?
    /// `sub` as the token holds it when it is UUID text, else `nil`.
    public let sub: String?
    /// `session_id` as the token holds it when it is UUID text, else `nil`.
    public let sessionID: String?
    public let exp: Int?
    /// `aud` as a list (RFC 7519 allows a single string or an array); empty when absent.
    public let aud: [String]
    public let isAnonymous: Bool

    /// Decodes the claims the service relies on; a present claim of the wrong type is an error, not `nil`.
    init(token: String, claims: JSONObject) throws(TokenError) {
        self.token = token
        self.claims = claims
        role = try Self.optionalString(claims, "role")
        sub = try Self.optionalString(claims, "sub").flatMap { UUIDText.isValid($0) ? $0 : nil }
        sessionID = try Self.optionalString(claims, "session_id").flatMap { UUIDText.isValid($0) ? $0 : nil }
        exp = try Self.numericDate(claims, "exp")
        switch claims["aud"] {
        case nil: aud = []
        case .string(let audience)?: aud = [audience]
        case .array(let audiences)?:
            var strings: [String] = []
            for audience in audiences {
                guard case .string(let string) = audience else { throw .badClaim("aud") }
                strings.append(string)
            }
            aud = strings
        default: throw .badClaim("aud")
        }
        isAnonymous = claims["is_anonymous"] == .bool(true)
    }

    static func optionalString(_ claims: JSONObject, _ name: String) throws(TokenError) -> String? {
        switch claims[name] {
        case nil: return nil
        case .string(let value)?: return value
        default: throw .badClaim(name)
        }
    }

    /// RFC 7519 NumericDate: seconds since the epoch, possibly fractional; floored and clamped so that
    /// comparisons with the clock never overflow.
    static func numericDate(_ claims: JSONObject, _ name: String) throws(TokenError) -> Int? {
        switch claims[name] {
        case nil: return nil
        case .number(let number)?:
            if let integer = number.asInt64 { return Int(integer) }
            let value = number.asDouble ?? (number.text.hasPrefix("-") ? -.greatestFiniteMagnitude : .greatestFiniteMagnitude)
            let bound = 4.0e18
            return Int(min(max(value, -bound), bound).rounded(.down))
        default: throw .badClaim(name)
        }
    }
}
