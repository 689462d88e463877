import PriceHTTPMessage
import PriceJSON

/// Every error pricesvc answers with, as a value on the wire. The two wire shapes are PostgREST's
/// `{code, details, hint, message}` under /rest/v1 and Supabase Auth's `{code, error_code, msg}`
/// under /auth/v1; both are rendered here and nowhere else. Which errors there are, and each one's
/// status, code and message, is the catalogues' (`PostgRESTError`, `AuthError`, `GatewayError`).
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
    /// Input refused before asking PostgreSQL, with the SQLSTATE it would raise (`PostgRESTError.invalidInput`).
    package static func invalidInput(_ sqlState: String, _ message: String, details: String? = nil, hint: String? = nil) -> APIError {
        APIError(.invalidInput(sqlState: sqlState, message: message, details: details, hint: hint))
    }
}
