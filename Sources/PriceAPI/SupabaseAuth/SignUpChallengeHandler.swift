import AnonAuth
import PriceHTTPMessage

/// `GET /auth/v1/challenge`: a signed, expiring ALTCHA challenge. Stateless, so it is answered on the
/// event loop; the solution comes back in the sign-up body's `gotrue_meta_security.captcha_token`.
extension AuthHandler {
    func signUpChallenge(type: String?) -> HTTPResponse {
        // One kind of challenge for both platforms: App Attest hashes it into clientDataHash, Android
        // passes its UTF-8 to setAttestationChallenge.
        if type == "app_attest" || type == "android_key_attestation" {
            let platform = type == "app_attest" ? "App Attest" : "Android Key Attestation"
            guard let attestation, type == "app_attest" ? attestation.verifier != nil : attestation.android != nil else {
                return APIError(.attestationDisabled(platform: platform)).response
            }
            return .json(200, attestation.challenges.json(now: now()), headers: [("Cache-Control", "no-store")])
        }
        if let type, type != "altcha" {
            return APIError(.validationFailed("type must be altcha, app_attest or android_key_attestation")).response
        }
        guard let signUpChallenges else {
            // Supabase Auth's way of saying a feature is switched off (cf. email_provider_disabled).
            return APIError(.signUpChallengeDisabled).response
        }
        return .json(200, signUpChallenges.issue(now: now()).json, headers: [("Cache-Control", "no-store")])
    }
}
