import PriceCrypto

/// Opaque refresh tokens: 32 bytes from the CSPRNG, base64url (43 characters).
///
/// Only `hash` is stored. A leaked table of hashes cannot be turned back into tokens, and because the
/// token has 256 bits of entropy a plain SHA-256 (no salt, no slow KDF) is enough and keeps lookups indexed.
public enum RefreshToken {
    public static let randomByteCount = 32
    /// Anything longer is not one of ours; refuse it before hashing or touching the database.
    public static let maxLength = 256

    public static func generate() -> (token: String, hash: [UInt8]) {
        let token = Base64URL.encode(secureRandomBytes(count: randomByteCount))
        return (token, sha256(token))
    }

    /// SHA-256 of the token's UTF-8, or `nil` for input that cannot be a refresh token (empty, longer than
    /// ``maxLength``, or outside the base64url alphabet), which the caller answers like an unknown token.
    public static func hash(_ token: String) -> [UInt8]? {
        let length = token.utf8.count
        guard length > 0, length <= maxLength, Base64URL.isAlphabet(token) else { return nil }
        return sha256(token)
    }
}
