import PriceDB

extension APIError {
    /// The one place a database error becomes an HTTP answer on the REST surface.
    init(database error: DatabaseError, role: RequestRole, unavailableRetryAfter: Int) {
        let status = SQLStateMapping.status(sqlState: error.sqlState, isUnavailable: error.isUnavailable, role: role)
        if status == 503 {
            self.init(status: 503, code: error.sqlState ?? "PGRST000",
                      message: error.isUnavailable ? "Database unavailable, retry shortly" : error.message,
                      retryAfter: unavailableRetryAfter)
            return
        }
        if status == 500 {
            // Internal details stay in the server log; the client gets a stable message.
            self.init(status: 500, code: error.sqlState ?? "PGRST000", message: "Internal error")
            return
        }
        let retryAfter = status == 429 ? (SQLStateMapping.retryAfter(fromHint: error.hint) ?? 60) : nil
        self.init(status: status, code: error.sqlState ?? "PGRST000", message: error.message,
                  details: error.detail, hint: error.hint, retryAfter: retryAfter)
    }

    /// Metrics label for a database error: "unavailable" or the SQLSTATE class.
    static func metricsKind(_ error: DatabaseError) -> String {
        if error.isUnavailable { return "unavailable" }
        return error.sqlState.map { String($0.prefix(2)) } ?? "unknown"
    }
}
