/// What either surface answers before a handler runs (limits, framing, API key, token): one case each,
/// and the one place that says how each reads under /rest/v1 (`PostgRESTError`) and under /auth/v1
/// (`AuthError`), as Supabase's gateway answers both.
package enum GatewayError: Error, Sendable, Equatable {
    case rateLimited(retryAfter: Int)
    case requestsInProgress(limit: Int)
    case payloadTooLarge
    case malformedRequest(reason: String)
    case workerTimeout(retryAfter: Int)
    /// The per-address share is full while the database is unavailable (`DatabaseShare`).
    case waitingForDatabase(retryAfter: Int)
    case noAPIKey
    case invalidAPIKey
    case authorizationNotBearer
    case signingKeyRetired
    case invalidToken(String)
    case expiredToken(String)

    package var postgrest: PostgRESTError {
        switch self {
        case .rateLimited(let retryAfter): return .rateLimited(retryAfter: retryAfter)
        case .requestsInProgress(let limit): return .requestsInProgress(limit: limit)
        case .payloadTooLarge: return .payloadTooLarge
        case .malformedRequest(let reason): return .malformedRequest(reason: reason, framingHint: true)
        case .workerTimeout(let retryAfter): return .workerTimeout(retryAfter: retryAfter)
        case .waitingForDatabase(let retryAfter): return .waitingForDatabase(retryAfter: retryAfter)
        case .noAPIKey: return .noAPIKey
        case .invalidAPIKey: return .invalidAPIKey
        case .authorizationNotBearer: return .authorizationNotBearer
        case .signingKeyRetired: return .signingKeyRetired
        case .invalidToken(let message): return .invalidToken(message)
        case .expiredToken(let message): return .expiredToken(message)
        }
    }

    package var auth: AuthError {
        switch self {
        case .rateLimited(let retryAfter): return .requestRateLimit(retryAfter: retryAfter)
        case .requestsInProgress(let limit): return .requestsInProgress(limit: limit)
        case .payloadTooLarge: return .requestTooLarge
        case .malformedRequest(let reason): return .malformedRequest(reason: reason)
        case .workerTimeout(let retryAfter): return .serverBusy(retryAfter: retryAfter)
        case .waitingForDatabase(let retryAfter): return .databaseUnavailable(retryAfter: retryAfter)
        case .noAPIKey: return .noAPIKey
        case .invalidAPIKey: return .invalidAPIKey
        // Supabase Auth names every refused token bad_jwt, with PostgREST's message.
        case .authorizationNotBearer, .signingKeyRetired, .invalidToken, .expiredToken: return .badJWT(postgrest.apiError.message)
        }
    }

    package func apiError(_ shape: APIError.Shape) -> APIError {
        switch shape {
        case .postgrest: return postgrest.apiError
        case .auth: return auth.apiError
        }
    }
}
