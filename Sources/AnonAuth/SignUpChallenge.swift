import PriceJSON
import PriceCrypto

/// A proof-of-work challenge for anonymous sign-up, in ALTCHA's challenge format (the "v1" format:
/// `challenge = SHA-256(salt + number)`, `signature = HMAC-SHA256(key, challenge)`, both lower-case hex).
///
/// The client searches `0...maxNumber` for the number whose hash is `challenge` and sends back the
/// solution payload. The server keeps no state for an issued challenge: the signature proves it issued
/// it, and the expiry travels inside the signed salt as `?expires=<unix seconds>&`.
public struct SignUpChallenge: Sendable, Equatable {
    public static let algorithm = "SHA-256"

    public var challenge: String
    public var maxNumber: Int
    public var salt: String
    public var signature: String

    public init(challenge: String, maxNumber: Int, salt: String, signature: String) {
        self.challenge = challenge
        self.maxNumber = maxNumber
        self.salt = salt
        self.signature = signature
    }

    /// The body of `GET /auth/v1/challenge`: the JSON an ALTCHA widget or library reads.
    public var json: String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.key("algorithm"); writer.string(Self.algorithm)
        writer.key("challenge"); writer.string(challenge)
        writer.key("maxnumber"); writer.number(maxNumber)
        writer.key("salt"); writer.string(salt)
        writer.key("signature"); writer.string(signature)
        writer.endObject()
        return writer.text
    }
}

/// A verified solution, ready to be recorded as spent: the database refuses the same `digest` twice
/// until `expiresAt`, which is what makes each solution single-use across instances.
public struct SpentChallenge: Sendable, Equatable {
    /// SHA-256 of the challenge text.
    public var digest: [UInt8]
    /// Unix seconds after which the challenge would be refused as expired anyway.
    public var expiresAt: Int
}

/// Why a sign-up challenge solution was refused.
public typealias ChallengeError = Refusal<ChallengeErrorCode>

/// The codes of ``ChallengeError``.
public struct ChallengeErrorCode: Sendable, Hashable, CustomStringConvertible {
    private enum Base: String, Sendable {
        case missing, malformed, unsupportedAlgorithm, badSignature, wrongNumber, expired
    }

    private let base: Base
    private init(_ base: Base) { self.base = base }

    /// No `captcha_token` in the request.
    public static let missing = Self(.missing)
    /// Not base64 of a JSON object with the five fields of the right types, or a salt without one expiry.
    public static let malformed = Self(.malformed)
    /// Anything but `SHA-256`.
    public static let unsupportedAlgorithm = Self(.unsupportedAlgorithm)
    /// The challenge was not signed with this service's key.
    public static let badSignature = Self(.badSignature)
    /// `SHA-256(salt + number)` is not the challenge: a wrong number, or an altered salt.
    public static let wrongNumber = Self(.wrongNumber)
    public static let expired = Self(.expired)

    public var description: String { base.rawValue }
}

extension ChallengeError {
    static var missing: ChallengeError {
        ChallengeError(code: .missing, message: "captcha_token is required: solve GET /auth/v1/challenge first")
    }
    static var malformed: ChallengeError {
        ChallengeError(code: .malformed, message: "captcha_token is not an ALTCHA solution payload")
    }
    static var unsupportedAlgorithm: ChallengeError {
        ChallengeError(code: .unsupportedAlgorithm, message: "challenge algorithm is not supported (only SHA-256 is)")
    }
    static var badSignature: ChallengeError { ChallengeError(code: .badSignature, message: "challenge signature is invalid") }
    static var wrongNumber: ChallengeError {
        ChallengeError(code: .wrongNumber, message: "the number does not solve the challenge")
    }
    static var expired: ChallengeError { ChallengeError(code: .expired, message: "challenge has expired: fetch a new one") }
}

/// Issues and verifies sign-up challenges. Pure apart from the random salt and number of `issue(now:)`;
/// the caller supplies the clock.
public struct SignUpChallenges: Sendable {
    /// Domain separation: the challenge key is derived from the JWT secret but never equals a key used
    /// for tokens or client-address MACs, so a MAC made for one purpose is useless for another.
    static let keyLabel = "pricesvc signup-challenge v1"
    /// Longest payload looked at; a real one is about 300 bytes.
    static let maxPayloadBytes = 2048
    /// Tolerated clock difference between the instance that issued a challenge and the one verifying it.
    static let clockSkewSeconds = 60

    let key: [UInt8]
    public let maxNumber: Int
    public let lifetimeSeconds: Int

    /// - Important: `secret` is the JWT secret; the HMAC key is derived from it, so all instances that
    ///   share the secret accept each other's challenges.
    public init(secret: [UInt8], maxNumber: Int, lifetimeSeconds: Int) {
        precondition(maxNumber >= 1 && lifetimeSeconds >= 1, "SignUpChallenges: bad settings")
        self.key = Self.derivedKey(secret: secret)
        self.maxNumber = maxNumber
        self.lifetimeSeconds = lifetimeSeconds
    }

    /// HMAC-SHA256(secret, "pricesvc signup-challenge v1"): the ALTCHA HMAC key.
    public static func derivedKey(secret: [UInt8]) -> [UInt8] {
        hmacSHA256(key: secret, message: Array(keyLabel.utf8))
    }

    /// A fresh challenge: 12 random salt bytes and a secret random number in `0...maxNumber`.
    public func issue(now: Int) -> SignUpChallenge {
        // SystemRandomNumberGenerator reads getrandom(2) on Linux: the number must be unpredictable,
        // or a client could skip the work.
        issue(now: now, nonce: hex(secureRandomBytes(count: 12)), number: Int.random(in: 0...maxNumber))
    }

    /// A challenge with a chosen nonce and number (tests).
    public func issue(now: Int, nonce: String, number: Int) -> SignUpChallenge {
        let salt = nonce + "?expires=\(now + lifetimeSeconds)&"
        let challenge = hex(sha256(salt + String(number)))
        return SignUpChallenge(challenge: challenge, maxNumber: maxNumber, salt: salt,
                               signature: hex(hmacSHA256(key: key, message: Array(challenge.utf8))))
    }

    /// Checks a solution payload (base64 of `{"algorithm","challenge","number","salt","signature"}`, as
    /// ALTCHA clients send it): algorithm, signature, that the number solves the challenge, and expiry.
    /// Whether it was already used is for the database to say (`SpentChallenge`).
    public func verify(payload: String?, now: Int) -> Result<SpentChallenge, ChallengeError> {
        guard let payload, !payload.isEmpty else { return .failure(.missing) }
        guard payload.utf8.count <= Self.maxPayloadBytes, let bytes = Self.decodeBase64(payload),
              case .object(let fields)? = try? JSONValue.parse(bytes, maxBytes: bytes.count, maxDepth: 2),
              let algorithm = fields["algorithm"]?.stringValue, let challenge = fields["challenge"]?.stringValue,
              var salt = fields["salt"]?.stringValue, let signature = fields["signature"]?.stringValue,
              let number = fields["number"]?.numberValue?.asInt64, number >= 0
        else { return .failure(.malformed) }
        guard algorithm == SignUpChallenge.algorithm else { return .failure(.unsupportedAlgorithm) }

        let expectedSignature = hex(hmacSHA256(key: key, message: Array(challenge.utf8)))
        guard constantTimeEqual(Array(signature.utf8), Array(expectedSignature.utf8)) else {
            return .failure(.badSignature)
        }
        // The signature covers the challenge, and the challenge binds salt and number: from here on the
        // salt (and so the expiry in it) is the one this service issued. ALTCHA appends the "&" that
        // keeps a number from being spliced into the salt's last parameter when a client dropped it.
        if !salt.hasSuffix("&") { salt += "&" }
        let expectedChallenge = hex(sha256(salt + String(number)))
        guard constantTimeEqual(Array(challenge.utf8), Array(expectedChallenge.utf8)) else {
            return .failure(.wrongNumber)
        }
        guard let expires = Self.expiry(inSalt: salt) else { return .failure(.malformed) }
        guard now <= expires else { return .failure(.expired) }
        // Signed by this key with an expiry beyond any this service issues: refused, so a spent row can
        // never be kept for long.
        guard expires <= now + lifetimeSeconds + Self.clockSkewSeconds else { return .failure(.malformed) }
        return .success(SpentChallenge(digest: sha256(challenge), expiresAt: expires))
    }

    /// The one `expires=<digits>` parameter of the salt's query part; `nil` for none, several, or a
    /// non-numeric one (several could be read differently by different parsers).
    static func expiry(inSalt salt: String) -> Int? {
        guard let question = salt.firstIndex(of: "?") else { return nil }
        var found: Int?
        var count = 0
        for parameter in salt[salt.index(after: question)...].split(separator: "&") {
            let parts = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == "expires" else { continue }
            count += 1
            guard parts.count == 2, !parts[1].isEmpty, parts[1].utf8.count <= 12,
                  parts[1].utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
            found = Int(parts[1])
        }
        return count == 1 ? found : nil
    }

    /// Standard base64 (RFC 4648 §4, what `btoa` and Python's `b64encode` produce), padding optional,
    /// decoded by the one strict decoder this module has.
    static func decodeBase64(_ text: String) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        var padding = 0
        while utf8.last == UInt8(ascii: "="), padding < 2 {
            utf8.removeLast()
            padding += 1
        }
        if padding > 0, (utf8.count + padding) % 4 != 0 { return nil }
        for index in utf8.indices {
            switch utf8[index] {
            case UInt8(ascii: "+"): utf8[index] = UInt8(ascii: "-")
            case UInt8(ascii: "/"): utf8[index] = UInt8(ascii: "_")
            case UInt8(ascii: "-"), UInt8(ascii: "_"): return nil
            default: break
            }
        }
        return utf8.withUnsafeBufferPointer { Base64URL.decode($0) }
    }
}
