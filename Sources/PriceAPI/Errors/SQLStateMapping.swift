import PriceDB

/// PostgREST's SQLSTATE → HTTP status table, for the subset pricesvc can meet, plus the
/// `PTxyz` convention (a function raising `PT429` answers 429).
enum SQLStateMapping {
    /// The request's database role matters for 42501: an anonymous caller is told to
    /// authenticate (401), a signed-in one is forbidden (403).
    static func status(sqlState: String?, isUnavailable: Bool, role: RequestRole) -> Int {
        if isUnavailable { return 503 }
        guard let state = sqlState, state.utf8.count == 5 else { return 500 }
        if state.hasPrefix("PT"), let status = Int(state.dropFirst(2)), (100...599).contains(status) {
            return status
        }
        switch state {
        case "42501": return role == .anon ? 401 : 403
        case "23505", "23503", "40001", "40P01": return 409
        case "23502", "23514", "P0001": return 400
        case "42883", "42P01": return 404
        // PostgREST answers 405 here (a GET calling a volatile function). pricesvc never asks for a
        // read-only transaction, so 25006 means the node became a standby (failover): retry later.
        case "25006": return 503
        case "57014": return 503
        case "57P01", "57P02", "57P03", "53300", "53400": return 503
        default: break
        }
        switch state.prefix(2) {
        case "08": return 503
        case "22": return 400
        case "53": return 503
        default: return 500
        }
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
