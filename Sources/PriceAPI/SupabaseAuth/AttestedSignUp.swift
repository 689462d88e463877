import AndroidAttestation
import AnonAuth
import AppAttest
import AttestationPKI
import PostgRESTDialect
import PriceCrypto
import PriceJSON

/// `PRICESVC_SIGNUP_ATTESTATION`: whether sign-up looks at attestations (App Attest, Android Key Attestation).
public enum SignUpAttestationMode: String, Sendable, CaseIterable {
    /// Today's behaviour: an attestation is not looked at.
    case off
    /// An attestation, when sent, makes the identity attested (a bad one is refused).
    case optional
    /// A sign-up without a valid attestation is refused.
    case required
}

/// What attested sign-up needs, built once at start-up: a verifier per platform the deployment takes
/// (at least one), and the challenges both share.
public struct SignUpAttestation: Sendable {
    public let mode: SignUpAttestationMode
    /// App Attest; nil when no app id is configured.
    let verifier: AttestationVerifier?
    /// Android Key Attestation; nil when no package name is configured.
    let android: KeyAttestationVerifier?
    let challenges: AttestationChallenges

    public init(mode: SignUpAttestationMode, verifier: AttestationVerifier?, android: KeyAttestationVerifier? = nil,
                challenges: AttestationChallenges) {
        precondition(verifier != nil || android != nil, "attested sign-up needs App Attest or Android Key Attestation")
        self.mode = mode
        self.verifier = verifier
        self.android = android
        self.challenges = challenges
    }
}

/// A refused attested sign-up: Supabase Auth's error shape, the code naming the reason.
struct AttestationRefusal: Error, Equatable {
    let code: String
    let message: String

    var authError: AuthError { .attestationRefused(code: code, message: message) }
    var apiError: APIError { APIError(authError) }

    static let required = AttestationRefusal(code: "attestation_required",
        message: "This server requires an attestation at sign-up: captcha_token must be {\"type\":\"app_attest\",...} or {\"type\":\"android_key_attestation\",...}")
    static let androidMalformed = AttestationRefusal(code: "attestation_malformed",
        message: "captcha_token must be a JSON object with type android_key_attestation, chain (base64 DER certificates, leaf first) and challenge")
    static func disabled(_ platform: String) -> AttestationRefusal {
        AttestationRefusal(code: "attestation_disabled", message: "This server does not take \(platform) at sign-up")
    }
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
        guard token.utf8.count <= max(maxTokenBytes, KeyAttestationToken.maxTokenBytes),
              case .object(let fields)? = try? JSONValue.parse(Array(token.utf8), maxBytes: token.utf8.count, maxDepth: 2) else {
            return .failure(.malformed)
        }
        guard fields["type"]?.stringValue == "app_attest" else { return nil }
        guard token.utf8.count <= maxTokenBytes else { return .failure(.malformed) }
        guard let keyText = fields["key_id"]?.stringValue, let keyId = decodeBase64(keyText), keyId.count == 32,
              let attestationText = fields["attestation"]?.stringValue, let attestation = decodeBase64(attestationText),
              !attestation.isEmpty, let challenge = fields["challenge"]?.stringValue, !challenge.isEmpty else {
            return .failure(.malformed)
        }
        return .success(AttestationToken(keyId: keyId, attestation: attestation, challenge: challenge))
    }
}

/// The `captcha_token` of an Android sign-up: `{"type":"android_key_attestation","chain":["<base64 DER,
/// leaf first>", ...],"challenge":"<text>"}`. The attestation challenge is the UTF-8 of the challenge text.
struct KeyAttestationToken: Equatable {
    var chain: [[UInt8]]
    var challenge: String

    /// The base64 of the longest chain the verifier reads, and the rest of the token.
    static let maxTokenBytes = KeyAttestationVerifier.maxCertificates * Certificate.maxBytes * 4 / 3 + 1024

    /// nil when `token` names no android_key_attestation type (as `AttestationToken.parse`).
    static func parse(_ token: String?) -> Result<KeyAttestationToken, AttestationRefusal>? {
        guard let token, token.utf8.first == UInt8(ascii: "{") else { return nil }
        guard token.utf8.count <= maxTokenBytes,
              case .object(let fields)? = try? JSONValue.parse(Array(token.utf8), maxBytes: token.utf8.count, maxDepth: 2) else {
            return .failure(.androidMalformed)
        }
        guard fields["type"]?.stringValue == "android_key_attestation" else { return nil }
        guard fields.count == 3, let items = fields["chain"]?.arrayValue, !items.isEmpty,
              items.count <= KeyAttestationVerifier.maxCertificates,
              let challenge = fields["challenge"]?.stringValue, !challenge.isEmpty else {
            return .failure(.androidMalformed)
        }
        var chain: [[UInt8]] = []
        for item in items {
            guard let text = item.stringValue, let der = decodeBase64(text), !der.isEmpty, der.count <= Certificate.maxBytes else {
                return .failure(.androidMalformed)
            }
            chain.append(der)
        }
        return .success(KeyAttestationToken(chain: chain, challenge: challenge))
    }
}

/// A verified Android sign-up, ready for `auth.sign_up_android_attested`.
struct VerifiedKeyAttestation: Equatable {
    var spent: SpentChallenge
    var key: AttestedAndroidKey
}

/// A verified App Attest sign-up, ready for `auth.sign_up_attested`.
struct VerifiedAttestation: Equatable {
    var spent: SpentChallenge
    var key: AttestedKey
}

/// A sign-up's verified attestation, of either platform.
enum VerifiedSignUpAttestation: Equatable {
    case appAttest(VerifiedAttestation)
    case android(VerifiedKeyAttestation)
}

extension SignUpAttestation {
    /// The attestation a sign-up's captcha_token carries, verified at `now`: nil when it carries none.
    func verify(captchaToken: String?, now: Int) -> Result<VerifiedSignUpAttestation, AttestationRefusal>? {
        switch AttestationToken.parse(captchaToken) {
        case .failure(let refusal)?: return .failure(refusal)
        case .success(let token)?: return verify(token, now: now).map(VerifiedSignUpAttestation.appAttest)
        case nil: break
        }
        switch KeyAttestationToken.parse(captchaToken) {
        case .failure(let refusal)?: return .failure(refusal)
        case .success(let token)?: return verify(token, now: now).map(VerifiedSignUpAttestation.android)
        case nil: return nil
        }
    }

    func spend(_ challenge: String, now: Int) -> Result<SpentChallenge, AttestationRefusal> {
        challenges.verify(challenge, now: now).mapError { error in
            AttestationRefusal(code: error.code == .expired ? "attestation_challenge_expired" : "attestation_challenge_invalid",
                               message: error.code == .expired ? "The challenge has expired: fetch a new one"
                                                               : "The challenge was not issued by this server")
        }
    }

    /// The challenge, then every step of the attestation against SHA-256 of the challenge, at `now`.
    func verify(_ token: AttestationToken, now: Int) -> Result<VerifiedAttestation, AttestationRefusal> {
        guard let verifier else { return .failure(.disabled("App Attest")) }
        let spent: SpentChallenge
        switch spend(token.challenge, now: now) {
        case .success(let verified): spent = verified
        case .failure(let refusal): return .failure(refusal)
        }
        switch verifier.verify(attestation: token.attestation, keyId: token.keyId,
                               clientDataHash: sha256(token.challenge), at: now) {
        case .success(let key): return .success(VerifiedAttestation(spent: spent, key: key))
        case .failure(let error): return .failure(AttestationRefusal(code: "attestation_\(error.code)", message: error.message))
        }
    }

    /// The challenge, then the chain, its KeyDescription and the policy, with the challenge text's UTF-8
    /// as the attestation challenge, at `now`.
    func verify(_ token: KeyAttestationToken, now: Int) -> Result<VerifiedKeyAttestation, AttestationRefusal> {
        guard let android else { return .failure(.disabled("Android Key Attestation")) }
        let spent: SpentChallenge
        switch spend(token.challenge, now: now) {
        case .success(let verified): spent = verified
        case .failure(let refusal): return .failure(refusal)
        }
        switch android.verify(chain: token.chain, challenge: Array(token.challenge.utf8), at: now) {
        case .success(let key): return .success(VerifiedKeyAttestation(spent: spent, key: key))
        case .failure(let error): return .failure(AttestationRefusal(code: "attestation_\(error.code)", message: error.message))
        }
    }
}
