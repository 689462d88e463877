import PriceJSON
import PriceCrypto

/// JWS compact serialization with HMAC-SHA256 (RFC 7515), the only algorithm pricesvc signs or accepts.
///
/// PostgreSQL's `auth.jwt()` re-verifies the same compact string with pgcrypto, so what is signed here is
/// exactly `base64url(header) "." base64url(payload)` and nothing else.
enum HS256 {
    /// `{"alg":"HS256","typ":"JWT"}`, fixed so every token this service issues has the same header bytes.
    static let encodedHeader = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))

    /// The same header as bytes, which a verifier recognises without decoding it.
    static let encodedHeaderBytes = Array(encodedHeader.utf8)

    static let signatureByteCount = 32

    /// The compact token for `claims`, serialized in their stored order.
    static func sign(claims: JSONObject, secret: [UInt8]) -> String {
        let signingInput = encodedHeader + "." + Base64URL.encode(JSONValue.object(claims).serializedBytes())
        let signature = hmacSHA256(key: secret, message: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// The signature over `signingInput` (the first two segments and the dot between them).
    static func signature(signingInput: UnsafeBufferPointer<UInt8>, key: HMACSHA256Key) -> [UInt8] {
        key.authenticate(UnsafeRawBufferPointer(signingInput))
    }
}
