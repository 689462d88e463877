import PriceHTTP
import PriceJSON

/// Every error pricesvc answers with, as a value. The two wire shapes are PostgREST's
/// `{code, details, hint, message}` under /rest/v1 and Supabase Auth's `{code, error_code, msg}`
/// under /auth/v1; both are rendered here and nowhere else.
package struct APIError: Error, Sendable, Equatable {
    package enum Shape: Sendable { case postgrest, auth }

    package var status: Int
    package var code: String
    package var message: String
    package var details: String?
    package var hint: String?
    /// Seconds for `Retry-After` (429 and 503).
    package var retryAfter: Int?
    package var shape: Shape

    package init(status: Int, code: String, message: String, details: String? = nil,
                hint: String? = nil, retryAfter: Int? = nil, shape: Shape = .postgrest) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
        self.retryAfter = retryAfter
        self.shape = shape
    }

    package var response: HTTPResponse {
        var headers: [(String, String)] = []
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        var writer = JSONWriter()
        writer.beginObject()
        switch shape {
        case .postgrest:
            writer.key("code"); writer.string(code)
            writer.key("details"); writer.string(details)
            writer.key("hint"); writer.string(hint)
            writer.key("message"); writer.string(message)
        case .auth:
            writer.key("code"); writer.number(status)
            writer.key("error_code"); writer.string(code)
            writer.key("msg"); writer.string(message)
        }
        writer.endObject()
        return .json(status, writer.text, headers: headers)
    }
}

extension APIError {
    package static func badRequest(_ code: String, _ message: String, details: String? = nil, hint: String? = nil) -> APIError {
        APIError(status: 400, code: code, message: message, details: details, hint: hint)
    }

    package static func auth(_ status: Int, _ errorCode: String, _ message: String, retryAfter: Int? = nil) -> APIError {
        APIError(status: status, code: errorCode, message: message, retryAfter: retryAfter, shape: .auth)
    }

    /// Supabase Auth's answer to a refused captcha, here a sign-up challenge solution.
    package static func captchaFailed(_ reason: String) -> APIError {
        .auth(400, "captcha_failed", "captcha protection: request disallowed (\(reason))")
    }

    package static func rateLimited(retryAfter: Int, shape: Shape = .postgrest) -> APIError {
        switch shape {
        case .postgrest:
            return APIError(status: 429, code: "PGRST429", message: "Too many requests from this address",
                            hint: "Retry after \(retryAfter) seconds", retryAfter: retryAfter)
        case .auth:
            return .auth(429, "over_request_rate_limit", "Request rate limit reached", retryAfter: retryAfter)
        }
    }

    /// One address already has `limit` requests waiting for or holding a database connection.
    package static func databaseShareExceeded(limit: Int, shape: Shape = .postgrest) -> APIError {
        let retryAfter = 1
        switch shape {
        case .postgrest:
            return APIError(status: 429, code: "PGRST429",
                            message: "Too many requests from this address in progress: at most \(limit) at once",
                            details: "The limit is on requests waiting for or holding a database connection (db-requests-per-ip)",
                            hint: "Retry after \(retryAfter) seconds", retryAfter: retryAfter)
        case .auth:
            return .auth(429, "over_request_rate_limit",
                         "Too many requests from this address in progress: at most \(limit) at once", retryAfter: retryAfter)
        }
    }

    /// Every slot of the expensive class is taken (from any clients): the server is busy for quotes.
    package static func expensiveCallsBusy(limit: Int, retryAfter: Int) -> APIError {
        APIError(status: 503, code: "PGRST003",
                 message: "Server busy: \(limit) quotes are being priced, the most at once (expensive-requests-in-flight)",
                 retryAfter: retryAfter)
    }

    package static let notFound = APIError(status: 404, code: "PGRST125", message: "Invalid path specified in request URL")

    package static func methodNotAllowed(_ method: String) -> APIError {
        APIError(status: 405, code: "PGRST117", message: "Unsupported HTTP method: \(method)")
    }

    package static let payloadTooLarge = APIError(status: 413, code: "PGRST413",
                                          message: "Request body is larger than the limit",
                                          hint: "The limit is on the body's size in bytes (max-body-bytes): send a smaller body")
}
