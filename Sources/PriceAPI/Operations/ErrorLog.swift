import Foundation
import PostgRESTDialect
import PriceDB
import PriceHTTPMessage
import PriceJSON
import PriceTelemetry

/// One JSON line on stderr for every answer of 5xx, with the database's error when there was one (a
/// statement timeout once showed only as `"status":503` in the access log). It says
/// what an operator needs to find the cause: the route label, the request id (the access log's), the
/// status and the SQLSTATE or error code, and for the database's failures its message. Never a header,
/// a query string or a body: tokens travel there. Always on, unlike the access log.
enum ErrorLog {
    /// A database failure answered 5xx: `kind` is "unavailable" or the SQLSTATE class (as in
    /// `pricesvc_database_errors_total`). PostgreSQL's own message names no parameter value.
    static func databaseError(_ error: DatabaseError, kind: String, status: Int, route: String, requestID: String) {
        write(route: route, requestID: requestID, status: status, code: error.sqlState ?? (error.isUnavailable ? "08000" : "-"),
              kind: kind, message: error.message)
    }

    /// Logs `response` when it is a 5xx, then hands it back unchanged. Its code is the one the client
    /// got (`code` of a PostgREST body, `error_code` of an Auth body).
    static func serverError(_ response: HTTPResponse, route: String, requestID: String) -> HTTPResponse {
        guard response.status >= 500 else { return response }
        var code = "-"
        if case .success(let body) = JSONBody.parse(response.body) {
            code = body["code"]?.stringValue ?? body["error_code"]?.stringValue ?? "-"
        }
        write(route: route, requestID: requestID, status: response.status, code: code, kind: nil, message: nil)
        return response
    }

    static func line(time: Date, route: String, requestID: String, status: Int, code: String, kind: String?,
                     message: String?) -> String {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.key("time"); writer.string(LogTimestamp.text(time))
        writer.key("level"); writer.string("error")
        writer.key("request_id"); writer.string(requestID)
        writer.key("route"); writer.string(route)
        if status > 0 { writer.key("status"); writer.number(status) }
        writer.key("sqlstate"); writer.string(String(code.prefix(16)))
        if let kind { writer.key("kind"); writer.string(kind) }
        // One line, bounded: libpq's connection messages span lines.
        if let message {
            let flat = message.split(whereSeparator: \.isNewline).joined(separator: " ")
            writer.key("message"); writer.string(String(flat.prefix(300)))
        }
        writer.endObject()
        return writer.text + "\n"
    }

    private static func write(route: String, requestID: String, status: Int, code: String, kind: String?, message: String?) {
        let text = line(time: Date(), route: route, requestID: requestID, status: status, code: code, kind: kind, message: message)
        // One write(2) per line keeps lines from different threads whole.
        _ = text.withCString { pointer in
            Foundation.write(STDERR_FILENO, pointer, strlen(pointer))
        }
    }
}
