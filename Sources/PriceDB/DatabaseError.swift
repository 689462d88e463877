/// Every failure PriceDB reports: a server error with its SQLSTATE fields, or a client-side condition
/// (lost connection, exhausted pool, refused migration) named by `code`.
///
/// The HTTP layer maps these once, in one place; `isUnavailable` is the single question it needs
/// answered to choose 503.
public struct DatabaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. New codes can be added without breaking callers that switch on
    /// `==` against the static members.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable, Hashable {
            case server, connectionLost, connectFailed, timeout, poolExhausted, poolClosed
            case protocolViolation, invalidParameter, migrationChecksumMismatch, migrationFailed
            case schemaNewerThanMigrations, lockWaitExceeded
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The server answered with an error; `sqlState` says which.
        public static let server = Code(.server)
        /// The connection broke while in use (socket error, EOF, FATAL from the server).
        public static let connectionLost = Code(.connectionLost)
        /// A new connection could not be established.
        public static let connectFailed = Code(.connectFailed)
        /// The server did not finish the batch before the batch timeout; the connection was dropped.
        public static let timeout = Code(.timeout)
        /// No connection became free within the checkout timeout.
        public static let poolExhausted = Code(.poolExhausted)
        /// `close()` was called on the pool.
        public static let poolClosed = Code(.poolClosed)
        /// libpq or the server did something PriceDB does not expect (e.g. COPY, extra results).
        public static let protocolViolation = Code(.protocolViolation)
        /// A parameter or SQL text cannot be sent (contains a NUL byte); nothing was sent.
        public static let invalidParameter = Code(.invalidParameter)
        /// An already-applied versioned migration file changed on disk.
        public static let migrationChecksumMismatch = Code(.migrationChecksumMismatch)
        /// A migration file could not be read, is misnamed or out of order, or failed to apply.
        public static let migrationFailed = Code(.migrationFailed)
        /// The database recorded a higher schema version than the migrations directory declares: an
        /// older pricesvc refused to migrate a newer schema.
        public static let schemaNewerThanMigrations = Code(.schemaNewerThanMigrations)
        /// `migrate` waited for locks longer than its limit, retrying each time its lock timeout ended.
        public static let lockWaitExceeded = Code(.lockWaitExceeded)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// Five-character SQLSTATE when the server (or libpq) supplied one.
    public var sqlState: String?
    public var message: String
    public var detail: String?
    public var hint: String?
    /// Non-localized severity from the server (`ERROR`, `FATAL`, `PANIC`), when known.
    public var severity: String?
    /// How far the failed round trip got, as `ConnectionPool.run` saw it; `.unknown` unless it says
    /// otherwise. What decides whether repeating the batch can apply it twice (`DatabaseHold`).
    public var reach: Reach = .unknown

    /// How far a failed round trip got before it failed.
    public enum Reach: Sendable, Hashable, CustomStringConvertible {
        /// No byte of the batch left the process (no connection, refused, found dead before sending).
        case notSent
        /// Sent, and the server answered one of its statements with an error, so its implicit
        /// transaction cannot commit: nothing of it remains.
        case rolledBack
        /// Sent, then the connection went before the answer: it may or may not have committed.
        case unknown

        public var description: String {
            switch self {
            case .notSent: return "not sent"
            case .rolledBack: return "sent, rolled back"
            case .unknown: return "sent, outcome unknown"
            }
        }
    }

    public init(code: Code, sqlState: String? = nil, message: String, detail: String? = nil,
                hint: String? = nil, severity: String? = nil, reach: Reach = .unknown) {
        self.reach = reach
        self.code = code
        self.sqlState = sqlState
        self.message = message
        self.detail = detail
        self.hint = hint
        self.severity = severity
    }

    /// True when the database, not the request, is the problem: the caller should answer 503 and may
    /// retry later.
    ///
    /// Covers connection exceptions (class 08), admin/crash shutdown and "cannot connect now"
    /// (57P01–57P03), a server that turned read-only (25006), any FATAL/PANIC, and the pool-side
    /// conditions. The pipeline discards the connection after any of them.
    public var isUnavailable: Bool {
        switch code {
        case .connectionLost, .connectFailed, .timeout, .poolExhausted, .poolClosed:
            return true
        default:
            return Self.sqlStateMeansConnectionGone(sqlState) || Self.sqlStateMeansServerReadOnly(sqlState)
                || severity == "FATAL" || severity == "PANIC"
        }
    }

    /// 25006 read_only_sql_transaction: pricesvc never opens a read-only transaction itself, so a write
    /// refused this way reached a standby, e.g. a demoted primary after a failover, before the proxy in
    /// front of the cluster noticed. The node is the problem, not the request: 503, and the connection
    /// goes, so the next one is routed to the new leader.
    static func sqlStateMeansServerReadOnly(_ sqlState: String?) -> Bool {
        sqlState == "25006"
    }

    /// SQLSTATEs after which the session is gone, whatever the severity says.
    static func sqlStateMeansConnectionGone(_ sqlState: String?) -> Bool {
        guard let sqlState else { return false }
        return sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03"].contains(sqlState)
    }

    /// One sentence for an operator (the CLI prints it): what failed, in words rather than code names,
    /// then the server's or libpq's own text with its SQLSTATE, detail and hint.
    public var explanation: String {
        var text: String
        switch code {
        case .connectFailed:
            if let refusal = connectionRefusal, refusal.isServerRejected {
                text = "refused to connect to the database (\(refusal)); retrying will not help: \(message)"
            } else if let refusal = connectionRefusal {
                text = "the database refused the connection (\(refusal)); retrying will not help: \(message)"
            } else {
                text = "cannot connect to the database: \(message)"
            }
        case .server: text = "the database answered with an error\(sqlState.map { " \($0)" } ?? ""): \(message)"
        case .connectionLost: text = "the database connection broke: \(message)"
        case .timeout: text = "the database did not answer in time: \(message)"
        case .poolExhausted, .poolClosed: text = message
        case .protocolViolation: text = "unexpected answer from the database: \(message)"
        case .invalidParameter: text = "cannot send the statement: \(message)"
        case .migrationChecksumMismatch, .migrationFailed:
            text = message
            if let sqlState { text += " (SQLSTATE \(sqlState))" }
        default: text = message
        }
        if let detail { text += " (detail: \(detail))" }
        if let hint { text += " (hint: \(hint))" }
        return text
    }

    public var description: String {
        var text = "\(code)"
        if let sqlState { text += " \(sqlState)" }
        text += ": \(message)"
        if let detail { text += " (detail: \(detail))" }
        if let hint { text += " (hint: \(hint))" }
        return text
    }
}
