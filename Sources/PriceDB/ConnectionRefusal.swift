/// A connection attempt the server refused for good: retrying the same connection string cannot
/// succeed until someone changes a password, a role, a database or `pg_hba.conf`.
///
/// Start-up waits (`ConnectionPool.waitUntilReachable`) retry a server that is down or starting, but
/// stop at once on a refusal, so a typo in a role name costs one clear line instead of a 30-second
/// "unreachable". The server's SQLSTATE decides when it is known; libpq does not expose the SQLSTATE of a
/// failed connection, so its message text is read instead.
/// - Important: The message patterns are the server's English texts. A server with another `lc_messages`
///   is not recognised, and its refusals are retried like an outage, as before.
public struct ConnectionRefusal: Sendable, Equatable, CustomStringConvertible {
    /// The SQLSTATE the server sends for this refusal (`28P01`, `28000`, `3D000`, or `42501` for a
    /// database the role may not connect to); empty when libpq refused the server instead: a TLS
    /// certificate that does not verify under `sslmode=verify-full`.
    public let sqlState: String
    /// What went wrong, for a person: `password authentication failed`, `role does not exist`, …
    public let reason: String

    public var description: String { sqlState.isEmpty ? reason : "\(reason), SQLSTATE \(sqlState)" }

    /// libpq refused the server (its TLS certificate), rather than the server refusing the login.
    public var isServerRejected: Bool { sqlState.isEmpty }

    /// nil when the failure may be temporary (server down, starting up, out of connections) or unknown.
    /// A SQLSTATE, when there is one, wins over the text.
    public static func classify(sqlState: String?, message: String) -> ConnectionRefusal? {
        let text = message.lowercased()
        let matched = patterns.first { pattern in pattern.texts.allSatisfy(text.contains) }
        switch (sqlState, matched) {
        case (nil, let pattern?):
            return ConnectionRefusal(sqlState: pattern.sqlState, reason: pattern.reason)
        case (let state?, let pattern?) where pattern.sqlState == state:
            return ConnectionRefusal(sqlState: state, reason: pattern.reason)
        case (let state?, _):
            return fallbackReasons[state].map { ConnectionRefusal(sqlState: state, reason: $0) }
        default: return nil
        }
    }

    /// The SQLSTATEs that mean "this login is refused", whatever the text, with the reason given when
    /// the text is not one of `patterns`.
    private static let fallbackReasons = ["28P01": "authentication failed", "28000": "authorization rejected",
                                          "3D000": "database does not exist"]
    static let refusalStates = Set(fallbackReasons.keys)

    /// Server (and libpq) texts, lowercased; every text of a pattern must appear.
    private static let patterns: [(texts: [String], sqlState: String, reason: String)] = [
        (["password authentication failed"], "28P01", "password authentication failed"),
        (["no password supplied"], "28P01", "the server wants a password and none was given"),
        (["peer authentication failed"], "28000", "peer authentication failed"),
        (["ident authentication failed"], "28000", "ident authentication failed"),
        (["no pg_hba.conf entry"], "28000", "pg_hba.conf has no entry for this connection"),
        (["pg_hba.conf rejects connection"], "28000", "pg_hba.conf rejects this connection"),
        (["is not permitted to log in"], "28000", "the role may not log in"),
        (["role \"", "\" does not exist"], "28000", "the role does not exist"),
        (["database \"", "\" does not exist"], "3D000", "the database does not exist"),
        (["permission denied for database"], "42501", "the role may not connect to this database"),
        // libpq's own refusals of the server under sslmode=verify-ca/verify-full: no SQLSTATE.
        (["certificate verify failed"], "", "the server's TLS certificate does not verify against sslrootcert (another CA, or expired)"),
        (["server certificate for \"", "does not match host name"], "", "the server's TLS certificate is not for this host name"),
        (["root certificate file", "does not exist"], "", "sslrootcert names no file, and verifying the server needs its CA"),
        (["server does not support ssl, but ssl was required"], "", "the server does not offer TLS, and sslmode requires it"),
    ]
}

extension DatabaseError {
    /// Set when connecting failed for a reason that retrying cannot fix (see ``ConnectionRefusal``).
    public var connectionRefusal: ConnectionRefusal? {
        guard code == .connectFailed || code == .server || code == .connectionLost else { return nil }
        // `role "x" does not exist` also appears in ordinary query errors (`set role`); only a failed
        // connection, or the server's own refusal states, mean the login itself was refused.
        if code != .connectFailed, !(sqlState.map(ConnectionRefusal.refusalStates.contains) ?? false) { return nil }
        return ConnectionRefusal.classify(sqlState: sqlState, message: message)
    }
}
