import AnonAuth
import PriceCrypto

func hexBytes(_ hex: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = hex.makeIterator()
    while let high = iterator.next(), let low = iterator.next() {
        bytes.append(UInt8(String([high, low]), radix: 16)!)
    }
    return bytes
}

/// Builds a compact JWS from raw header and payload text, signed with HMAC-SHA256 under `key`,
/// so tests can forge exactly the token an attacker would send.
func forgeToken(header: String, payload: String, key: [UInt8]) -> String {
    let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(payload.utf8))
    return signingInput + "." + Base64URL.encode(hmacSHA256(key: key, message: Array(signingInput.utf8)))
}

let hs256Header = #"{"alg":"HS256","typ":"JWT"}"#
let currentSecret = Array("current-secret-of-at-least-32-bytes!!".utf8)
let previousSecret = Array("previous-secret-of-at-least-32-bytes!".utf8)
let now = 1_800_000_000

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }

    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
