/// The policy for HS256 signing secrets.
///
/// RFC 7518 §3.2 requires an HS256 key of at least 256 bits; a shorter one can be brute-forced offline from
/// any single token, after which anyone can mint reporter identities.
public enum JWTSecret {
    public static let minimumByteCount = 32

    public static func validate(_ secret: [UInt8]) throws(JWTSecretError) {
        guard secret.count >= minimumByteCount else {
            throw JWTSecretError(
                message: "JWT secret is \(secret.count) bytes; at least \(minimumByteCount) bytes are required")
        }
    }
}

public struct JWTSecretError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
