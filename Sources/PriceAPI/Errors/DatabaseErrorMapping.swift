import PriceDB

extension APIError {
    /// The one place a database error becomes an HTTP answer on the REST surface.
    init(database error: DatabaseError, role: RequestRole, unavailableRetryAfter: Int) {
        let status = SQLStateMapping.status(sqlState: error.sqlState, isUnavailable: error.isUnavailable, role: role)
        switch status {
        case 503:
            self.init(.database(status: 503, sqlState: error.sqlState,
                                message: error.isUnavailable ? "Database unavailable, retry shortly" : error.message,
                                retryAfter: unavailableRetryAfter))
        case 500:
            // Internal details stay in the server log; the client gets a stable message.
            self.init(.database(status: 500, sqlState: error.sqlState, message: "Internal error"))
        default:
            self.init(.database(status: status, sqlState: error.sqlState, message: error.message, details: error.detail,
                                hint: error.hint, retryAfter: status == 429 ? SQLStateMapping.retryAfter(error) : nil))
        }
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

extension AuthError {
    /// The one place a database error becomes an answer on the Auth surface.
    /// - Parameter attested: the request is an attested sign-up, whose replayed challenge is an attestation
    ///   refusal rather than a failed captcha.
    init(database error: DatabaseError, attested: Bool = false, unavailableRetryAfter: Int) {
        if error.isUnavailable {
            self = .databaseUnavailable(retryAfter: unavailableRetryAfter)
            return
        }
        switch error.sqlState {
        case SQLState.limitReached.code:
            self = .rateLimited(error.message, retryAfter: SQLStateMapping.retryAfter(error))
        case SQLState.refreshTokenNotFound.code:
            self = .refreshTokenNotFound
        case SQLState.invalidToken.code where error.message == "session not found":
            self = .sessionNotFound
        case SQLState.invalidToken.code:
            self = .invalidJWT(error.message)
        case SQLState.sessionOrUserNotFound.code:
            self = error.message == "user not found" ? .userNotFound : .sessionNotFound
        case SQLState.challengeUsed.code:
            self = attested ? AttestationRefusal.challengeUsed.authError : .captchaFailed(reason: "challenge already used: fetch a new one")
        case SQLState.attestationKeyUsed.code:
            self = AttestationRefusal.keyUsed.authError
        default:
            self = .internalError
        }
    }
}
