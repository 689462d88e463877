import PriceJSON

/// Every error pricesvc answers with, as a value. The two wire shapes are PostgREST's
/// `{code, details, hint, message}` under /rest/v1 and Supabase Auth's `{code, error_code, msg}`
/// under /auth/v1; both are rendered here and nowhere else.
public struct APIError: Error, Sendable, Equatable {
    public enum Shape: Sendable { case postgrest, auth }

    public var status: Int
    public var code: String
    public var message: String
    public var details: String?
    public var hint: String?
    /// Seconds for `Retry-After` (429 and 503).
    public var retryAfter: Int?
    public var shape: Shape

    public init(status: Int, code: String, message: String, details: String? = nil,
                hint: String? = nil, retryAfter: Int? = nil, shape: Shape = .postgrest) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.hint = hint
        self.retryAfter = retryAfter
        self.shape = shape
    }

    public var response: HTTPResponse {
        var headers: [(String, String)] = []
        if let retryAfter { headers.append(("Retry-After", String(retryAfter))) }
        let body: String
        switch shape {
        case .postgrest:
            body = "{\"code\":\(JSONString.quoted(code)),\"details\":\(Self.nullable(details)),"
                + "\"hint\":\(Self.nullable(hint)),\"message\":\(JSONString.quoted(message))}"
        case .auth:
            body = "{\"code\":\(status),\"error_code\":\(JSONString.quoted(code)),"
                + "\"msg\":\(JSONString.quoted(message))}"
        }
        return .json(status, body, headers: headers)
    }

    private static func nullable(_ text: String?) -> String {
        text.map(JSONString.quoted) ?? "null"
    }
}

extension APIError {
    static func badRequest(_ code: String, _ message: String, details: String? = nil, hint: String? = nil) -> APIError {
        APIError(status: 400, code: code, message: message, details: details, hint: hint)
    }

    static func auth(_ status: Int, _ errorCode: String, _ message: String, retryAfter: Int? = nil) -> APIError {
        APIError(status: status, code: errorCode, message: message, retryAfter: retryAfter, shape: .auth)
    }

    /// Supabase Auth's answer to a refused captcha, here a sign-up challenge solution.
    static func captchaFailed(_ reason: String) -> APIError {
        .auth(400, "captcha_failed", "captcha protection: request disallowed (\(reason))")
    }

    static func rateLimited(retryAfter: Int, shape: Shape = .postgrest) -> APIError {
        switch shape {
        case .postgrest:
            return APIError(status: 429, code: "PGRST429", message: "Too many requests from this address",
                            hint: "Retry after \(retryAfter) seconds", retryAfter: retryAfter)
        case .auth:
            return .auth(429, "over_request_rate_limit", "Request rate limit reached", retryAfter: retryAfter)
        }
    }

    static let notFound = APIError(status: 404, code: "PGRST125", message: "Invalid path specified in request URL")

    static func methodNotAllowed(_ method: String) -> APIError {
        APIError(status: 405, code: "PGRST117", message: "Unsupported HTTP method: \(method)")
    }

    static let payloadTooLarge = APIError(status: 413, code: "PGRST413",
                                          message: "Request body is larger than the limit",
                                          hint: "Send at most 10 reports per request")
}
