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
        let retryAfter = status == 429 ? SQLStateMapping.retryAfter(error) : nil
        self.init(status: status, code: error.sqlState ?? "PGRST000", message: error.message,
                  details: error.detail, hint: error.hint, retryAfter: retryAfter)
    }

    /// Whose fault a failed round trip was, for metrics. The client's when the answer is 4xx (the same
    /// table that picks the status decides), the database's otherwise.
    enum MetricsKind: Equatable {
        /// A SQLSTATE class, e.g. "23" for a check violation.
        case client(String)
        /// "unavailable" or a SQLSTATE class.
        case database(String)
    }

    static func metricsKind(_ error: DatabaseError) -> MetricsKind {
        if error.isUnavailable { return .database("unavailable") }
        let sqlStateClass = error.sqlState.map { String($0.prefix(2)) } ?? "other"
        // The role only decides between 401 and 403 for 42501; either is the client's.
        let status = SQLStateMapping.status(sqlState: error.sqlState, isUnavailable: false, role: .authenticated)
        return (400..<500).contains(status) ? .client(sqlStateClass) : .database(sqlStateClass)
    }
}
