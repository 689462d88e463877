import AnonAuth
import AppAttest
import AttestationPKI
import PostgRESTDialect
import PriceCrypto
import PriceJSON

/// `PRICESVC_SIGNUP_ATTESTATION`: whether sign-up looks at App Attest.
public enum SignUpAttestationMode: String, Sendable, CaseIterable {
    /// Today's behaviour: an attestation is not looked at.
    case off
    /// An attestation, when sent, makes the identity attested (a bad one is refused).
    case optional
    /// A sign-up without a valid attestation is refused.
    case required
}

/// What App Attest sign-up needs, built once at start-up.
public struct SignUpAttestation: Sendable {
    public let mode: SignUpAttestationMode
    let verifier: AttestationVerifier
    let challenges: AttestationChallenges

    public init(mode: SignUpAttestationMode, verifier: AttestationVerifier, challenges: AttestationChallenges) {
        self.mode = mode
        self.verifier = verifier
        self.challenges = challenges
    }
}

/// A refused attested sign-up: Supabase Auth's error shape, the code naming the reason.
struct AttestationRefusal: Error, Equatable {
    let code: String
    let message: String

    var apiError: APIError { .auth(400, code, message) }

    static let required = AttestationRefusal(code: "attestation_required",
        message: "This server requires App Attest at sign-up: captcha_token must be {\"type\":\"app_attest\",...}")
    static let malformed = AttestationRefusal(code: "attestation_malformed",
        message: "captcha_token must be a JSON object with type app_attest and base64 key_id and attestation, and challenge")
    static let challengeUsed = AttestationRefusal(code: "attestation_challenge_used",
        message: "The challenge was already used: fetch a new one")
    static let keyUsed = AttestationRefusal(code: "attestation_key_used",
        message: "This App Attest key already made an identity: generate a new key")
}

/// The `captcha_token` of an App Attest sign-up, a JSON object as text:
/// `{"type":"app_attest","key_id":"<base64>","attestation":"<base64>","challenge":"<text>"}`.
struct AttestationToken: Equatable {
    var keyId: [UInt8]
    var attestation: [UInt8]
    var challenge: String

    /// The base64 of the largest attestation object the verifier reads, and the rest of the token.
    static let maxTokenBytes = AttestationVerifier.maxAttestationBytes * 4 / 3 + 1024

    /// nil when `token` is no App Attest token at all (absent, or not a JSON object naming type
    /// app_attest: an ALTCHA payload, say); a failure when it names app_attest but is malformed.
    static func parse(_ token: String?) -> Result<AttestationToken, AttestationRefusal>? {
        guard let token, token.utf8.first == UInt8(ascii: "{") else { return nil }
        guard token.utf8.count <= maxTokenBytes,
              case .object(let fields)? = try? JSONValue.parse(Array(token.utf8), maxBytes: token.utf8.count, maxDepth: 2) else {
            return .failure(.malformed)
        }
        guard fields["type"]?.stringValue == "app_attest" else { return nil }
        guard let keyText = fields["key_id"]?.stringValue, let keyId = decodeBase64(keyText), keyId.count == 32,
              let attestationText = fields["attestation"]?.stringValue, let attestation = decodeBase64(attestationText),
              !attestation.isEmpty, let challenge = fields["challenge"]?.stringValue, !challenge.isEmpty else {
            return .failure(.malformed)
        }
        return .success(AttestationToken(keyId: keyId, attestation: attestation, challenge: challenge))
    }
}

/// A verified App Attest sign-up, ready for `auth.sign_up_attested`.
struct VerifiedAttestation: Equatable {
    var spent: SpentChallenge
    var key: AttestedKey
}

extension SignUpAttestation {
    /// The challenge, then every step of the attestation against SHA-256 of the challenge, at `now`.
    func verify(_ token: AttestationToken, now: Int) -> Result<VerifiedAttestation, AttestationRefusal> {
        let spent: SpentChallenge
        switch challenges.verify(token.challenge, now: now) {
        case .success(let verified): spent = verified
        case .failure(let error):
            return .failure(AttestationRefusal(code: error.code == .expired ? "attestation_challenge_expired" : "attestation_challenge_invalid",
                                               message: error.code == .expired ? "The challenge has expired: fetch a new one"
                                                                               : "The challenge was not issued by this server"))
        }
        switch verifier.verify(attestation: token.attestation, keyId: token.keyId,
                               clientDataHash: sha256(token.challenge), at: now) {
        case .success(let key): return .success(VerifiedAttestation(spent: spent, key: key))
        case .failure(let error): return .failure(AttestationRefusal(code: "attestation_\(error.code)", message: error.message))
        }
    }
}
