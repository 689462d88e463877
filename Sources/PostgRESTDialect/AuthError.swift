/// Every error pricesvc answers with on /auth/v1, under Supabase Auth's `error_code`, one case each:
/// `apiError` below is the one place a case gets its status, error_code and message. The codes are
/// Supabase Auth's (ErrorCode in its Go source, the SDKs' `AuthError.code`) where it has one, else
/// pricesvc's own in the same style (`signup_challenge_disabled`, `attestation_*`).
package enum AuthError: Error, Sendable, Equatable {
    // The gateway.
    case noAPIKey
    case invalidAPIKey
    case badJWT(String)
    case noAuthorization
    case requestTooLarge
    case malformedRequest(reason: String)
    case requestRateLimit(retryAfter: Int)
    case requestsInProgress(limit: Int)
    case serverBusy(retryAfter: Int)

    // Bodies and parameters.
    case badJSON(String)
    case validationFailed(String)
    /// `email` or `phone`: only anonymous sign-in is offered.
    case providerDisabled(String)

    // Sign-up, its challenge and attestation.
    case signUpChallengeDisabled
    case captchaFailed(reason: String)
    /// GET /auth/v1/challenge for a platform the deployment does not take.
    case attestationDisabled(platform: String)
    /// A refused attested sign-up, the code (`attestation_…`) naming the reason.
    case attestationRefused(code: String, message: String)

    // Sessions.
    case refreshTokenNotFound
    /// The token's hash matched, but its live descendant did not: it was rotated under another secret.
    case refreshTokenRotatedElsewhere
    case refreshTokenReused
    case sessionNotFound
    case userNotFound
    /// A token PostgreSQL refused (PT401), its message.
    case invalidJWT(String)

    // The database and the instance.
    /// PT429 from a limit in the database, its message.
    case rateLimited(String, retryAfter: Int)
    case databaseUnavailable(retryAfter: Int)
    /// This instance's signing key is not one PostgreSQL accepts now: it must not mint tokens.
    case signingKeyRetired(retryAfter: Int)
    case noUserReturned
    case malformedIdentifiers
    case internalError

    package var apiError: APIError {
        switch self {
        case .noAPIKey: return row(401, "no_api_key", "No API key found in request")
        case .invalidAPIKey: return row(401, "invalid_api_key", "Invalid API key")
        case .badJWT(let message): return row(401, "bad_jwt", message)
        case .noAuthorization: return row(401, "no_authorization", "This endpoint requires a Bearer access token")
        case .requestTooLarge: return row(413, "request_too_large", "Request body is larger than the limit")
        case .malformedRequest(let reason): return row(400, "bad_request", "Malformed request: \(reason)")
        case .requestRateLimit(let retryAfter):
            return row(429, "over_request_rate_limit", "Request rate limit reached", retryAfter: retryAfter)
        case .requestsInProgress(let limit):
            return row(429, "over_request_rate_limit", "Too many requests from this address in progress: at most \(limit) at once",
                       retryAfter: 1)
        case .serverBusy(let retryAfter): return row(503, "service_unavailable", "Server busy, retry shortly", retryAfter: retryAfter)

        case .badJSON(let message): return row(400, "bad_json", message)
        case .validationFailed(let message): return row(400, "validation_failed", message)
        case .providerDisabled(let field):
            return row(422, "\(field)_provider_disabled", "Only anonymous sign-in is offered: sign up without \(field)")

        case .signUpChallengeDisabled:
            return row(422, "signup_challenge_disabled", "This server does not ask for a sign-up challenge")
        case .captchaFailed(let reason): return row(400, "captcha_failed", "captcha protection: request disallowed (\(reason))")
        case .attestationDisabled(let platform):
            return row(422, "attestation_disabled", "This server does not take \(platform) at sign-up")
        case .attestationRefused(let code, let message): return row(400, code, message)

        case .refreshTokenNotFound: return row(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
        case .refreshTokenRotatedElsewhere:
            return row(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found (rotated under another secret)")
        case .refreshTokenReused:
            return row(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used; the session has been revoked")
        case .sessionNotFound: return row(403, "session_not_found", "Session from the access token no longer exists")
        case .userNotFound: return row(403, "user_not_found", "User from the access token no longer exists")
        case .invalidJWT(let message): return row(401, "bad_jwt", "invalid JWT: \(message)")

        case .rateLimited(let message, let retryAfter): return row(429, "over_request_rate_limit", message, retryAfter: retryAfter)
        case .databaseUnavailable(let retryAfter):
            return row(503, "service_unavailable", "Database unavailable, retry shortly", retryAfter: retryAfter)
        case .signingKeyRetired(let retryAfter):
            return row(503, "service_unavailable", "This instance's signing key was retired; retry shortly", retryAfter: retryAfter)
        case .noUserReturned: return row(500, "unexpected_failure", "Sign-up returned no user")
        case .malformedIdentifiers: return row(500, "unexpected_failure", "Malformed identifiers from the database")
        case .internalError: return row(500, "unexpected_failure", "Internal error")
        }
    }

    private func row(_ status: Int, _ code: String, _ message: String, retryAfter: Int? = nil) -> APIError {
        APIError(status: status, code: code, message: message, retryAfter: retryAfter, shape: .auth)
    }
}

extension APIError {
    package init(_ error: AuthError) { self = error.apiError }
}
