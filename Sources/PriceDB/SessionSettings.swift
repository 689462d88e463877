/// The session settings the service relies on, sent in every connection's startup packet.
///
/// Role and database defaults (`ALTER ROLE authenticator SET ...`) apply at connection start too, and a
/// role may change its own defaults: whoever holds the service's password could plant, say,
/// `default_transaction_isolation = serializable` (every insert then fails the cap trigger's check) or
/// `bytea_output = escape`. Startup-packet options take precedence over those defaults, so each one the
/// service depends on is stated here and cannot be planted.
public struct SessionSettings: Sendable, Equatable {
    public var statementTimeoutMilliseconds: Int

    public init(statementTimeoutMilliseconds: Int) {
        self.statementTimeoutMilliseconds = statementTimeoutMilliseconds
    }

    /// Name and value, in the order they are sent.
    public var values: [(name: String, value: String)] {
        [
            ("role", "none"),
            ("default_transaction_isolation", "read committed"),
            ("default_transaction_read_only", "off"),
            ("default_transaction_deferrable", "off"),
            ("statement_timeout", String(statementTimeoutMilliseconds)),
            ("lock_timeout", "0"),
            // The service never idles inside a transaction; a planted tiny value would kill pipelines.
            ("idle_in_transaction_session_timeout", "60000"),
            ("idle_session_timeout", "0"),
            ("search_path", "public"),
            ("row_security", "on"),
            // Every statement of the service takes milliseconds at most; compiling one with JIT takes as
            // long, and an estimate skewed by a popular location would otherwise do it on every call.
            ("jit", "off"),
            ("bytea_output", "hex"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO"),
            ("IntervalStyle", "postgres"),
            ("TimeZone", "UTC"),
        ]
    }

    /// libpq's `options` value: `-c name=value` pairs, spaces and backslashes in values escaped.
    public var libpqOptions: String {
        values.map { name, value in
            var escaped = ""
            for character in value {
                if character == " " || character == "\\" { escaped.append("\\") }
                escaped.append(character)
            }
            return "-c \(name)=\(escaped)"
        }.joined(separator: " ")
    }
}
