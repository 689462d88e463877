import PriceDB

/// SQLSTATE → HTTP status on the REST surface, from the catalogue (`SQLState`).
enum SQLStateMapping {
    /// The request's database role matters for 42501: an anonymous caller is told to
    /// authenticate (401), a signed-in one is forbidden (403).
    static func status(sqlState: String?, isUnavailable: Bool, role: RequestRole) -> Int {
        if isUnavailable { return 503 }
        guard let state = sqlState, state.utf8.count == 5 else { return 500 }
        if state == SQLState.insufficientPrivilege.code, role == .anon { return 401 }
        return SQLState.known[state]?.restStatus ?? SQLState.restStatus(unnamed: state)
    }

    /// `Retry-After` for a PT429 the database raised, on either surface: the seconds its hint names,
    /// else a minute.
    static func retryAfter(_ error: DatabaseError) -> Int {
        retryAfter(fromHint: error.hint) ?? 60
    }

    /// Reads `Retry after N seconds` from a hint, the convention the SQL side uses for PT429.
    static func retryAfter(fromHint hint: String?) -> Int? {
        guard let hint else { return nil }
        let prefix = "Retry after "
        guard hint.hasPrefix(prefix) else { return nil }
        let digits = hint.dropFirst(prefix.count).prefix { $0.isASCII && $0.isNumber }
        return Int(digits).map { max(1, $0) }
    }
}

/// The database role a request runs as.
enum RequestRole: String, Sendable {
    case anon
    case authenticated
}
