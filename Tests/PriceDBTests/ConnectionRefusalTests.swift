import Testing
@testable import PriceDB

/// Which failed connections are worth retrying at start-up: an outage is, a refused login is not.
@Suite struct ConnectionRefusalTests {
    static let prefix = "connection to server on socket \"/run/pg/.s.PGSQL.5432\" failed: "

    @Test(arguments: [
        ("FATAL:  password authentication failed for user \"authenticator\"", "28P01"),
        ("fe_sendauth: no password supplied", "28P01"),
        ("FATAL:  role \"nobody\" does not exist", "28000"),
        ("FATAL:  Peer authentication failed for user \"postgres\"", "28000"),
        ("FATAL:  no pg_hba.conf entry for host \"10.0.0.7\", user \"authenticator\", database \"pricesvc\", no encryption", "28000"),
        ("FATAL:  role \"anon\" is not permitted to log in", "28000"),
        ("FATAL:  database \"pricesvcc\" does not exist", "3D000"),
        ("FATAL:  permission denied for database \"pricesvc\"", "42501"),
    ])
    func libpqMessagesOfARefusedLoginAreRecognised(message: String, sqlState: String) throws {
        let refusal = try #require(ConnectionRefusal.classify(sqlState: nil, message: Self.prefix + message))
        #expect(refusal.sqlState == sqlState)
        #expect(DatabaseError(code: .connectFailed, message: Self.prefix + message).connectionRefusal == refusal)
    }

    /// libpq's refusals of a server whose certificate does not verify (sslmode=verify-full): no SQLSTATE,
    /// and no retry, since the same server presents the same certificate.
    @Test(arguments: [
        ("SSL error: certificate verify failed", "does not verify"),
        ("server certificate for \"db.pricesvc.test\" does not match host name \"other.pricesvc.test\"", "host name"),
        ("root certificate file \"/nonexistent/ca.crt\" does not exist\nEither provide the file or change sslmode to disable server certificate verification.", "sslrootcert"),
        ("server does not support SSL, but SSL was required", "does not offer TLS"),
    ])
    func aServerCertificateThatDoesNotVerifyIsNotRetried(message: String, words: String) throws {
        let error = DatabaseError(code: .connectFailed, message: "connection to server at \"127.0.0.1\", port 5432 failed: " + message)
        let refusal = try #require(error.connectionRefusal)
        #expect(refusal.isServerRejected && refusal.reason.contains(words))
        #expect(error.explanation.hasPrefix("refused to connect to the database (") && !error.explanation.contains("SQLSTATE"))
    }

    @Test(arguments: [
        "No such file or directory\n\tIs the server running locally and accepting connections on that socket?",
        "FATAL:  the database system is starting up",
        "FATAL:  the database system is shutting down",
        "FATAL:  sorry, too many clients already",
        "timeout expired",
        "Connection refused",
    ])
    func outagesAreNotRefusals(message: String) {
        #expect(ConnectionRefusal.classify(sqlState: nil, message: Self.prefix + message) == nil)
        #expect(DatabaseError(code: .connectFailed, message: Self.prefix + message).connectionRefusal == nil)
    }

    @Test func theSQLStateWinsOverTheText() {
        #expect(ConnectionRefusal.classify(sqlState: "3D000", message: "database \"x\" does not exist")?.reason
            == "the database does not exist")
        #expect(ConnectionRefusal.classify(sqlState: "28P01", message: "Passwort-Authentifizierung fehlgeschlagen")?.sqlState
            == "28P01")
        #expect(ConnectionRefusal.classify(sqlState: "57P03", message: "role \"x\" does not exist") == nil)
    }

    @Test func aQueryThatNamesAMissingRoleIsNotARefusedLogin() {
        let error = DatabaseError(code: .server, sqlState: "42704", message: "role \"ghost\" does not exist", severity: "ERROR")
        #expect(error.connectionRefusal == nil)
        let fatal = DatabaseError(code: .server, sqlState: "28000", message: "role \"ghost\" does not exist", severity: "FATAL")
        #expect(fatal.connectionRefusal?.sqlState == "28000")
    }
}
