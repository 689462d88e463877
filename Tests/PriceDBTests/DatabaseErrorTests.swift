import Testing
@testable import PriceDB

/// Which errors mean "the database is unavailable" (503) rather than "the request was wrong".
@Suite struct DatabaseErrorTests {
    @Test(arguments: ["08006", "08003", "08001", "57P01", "57P02", "57P03"])
    func connectionClassAndShutdownStatesAreUnavailable(sqlState: String) {
        #expect(DatabaseError(code: .server, sqlState: sqlState, message: "x", severity: "ERROR").isUnavailable)
    }

    @Test func aServerThatTurnedReadOnlyIsUnavailable() {
        // A demoted primary after a failover: the write must go elsewhere, not fail as the client's fault.
        #expect(DatabaseError(code: .server, sqlState: "25006", message: "read-only", severity: "ERROR").isUnavailable)
    }

    @Test func anyFatalIsUnavailable() {
        #expect(DatabaseError(code: .server, sqlState: "28P01", message: "auth", severity: "FATAL").isUnavailable)
        #expect(DatabaseError(code: .server, sqlState: "XX000", message: "x", severity: "PANIC").isUnavailable)
    }

    @Test(arguments: [DatabaseError.Code.connectionLost, .connectFailed, .timeout, .poolExhausted, .poolClosed])
    func poolAndConnectionConditionsAreUnavailable(code: DatabaseError.Code) {
        #expect(DatabaseError(code: code, message: "x").isUnavailable)
    }

    @Test(arguments: ["23505", "PT429", "42501", "57014", "22023"])
    func requestErrorsAreNotUnavailable(sqlState: String) {
        #expect(!DatabaseError(code: .server, sqlState: sqlState, message: "x", severity: "ERROR").isUnavailable)
    }

    @Test func migrationAndProtocolErrorsAreNotUnavailable() {
        for code in [DatabaseError.Code.migrationFailed, .migrationChecksumMismatch, .protocolViolation, .invalidParameter] {
            #expect(!DatabaseError(code: code, message: "x").isUnavailable)
        }
    }

    @Test func codesPrintTheirNames() {
        #expect("\(DatabaseError.Code.poolExhausted)" == "poolExhausted")
        #expect(DatabaseError(code: .server, sqlState: "PT429", message: "cap", hint: "Retry after 5 seconds").description
            == "server PT429: cap (hint: Retry after 5 seconds)")
    }

    @Test func explanationsAreWordsNotCodeNames() {
        let codes: [DatabaseError.Code] = [.server, .connectionLost, .connectFailed, .timeout, .poolExhausted, .poolClosed,
                                            .protocolViolation, .invalidParameter, .migrationChecksumMismatch, .migrationFailed]
        for code in codes {
            let text = DatabaseError(code: code, message: "some text").explanation
            #expect(!text.contains("\(code)"), "\(text)")
            #expect(text.contains("some text"))
        }
        #expect(DatabaseError(code: .connectFailed, message: "timeout expired").explanation
            == "cannot connect to the database: timeout expired")
        #expect(DatabaseError(code: .connectFailed, message: "FATAL:  database \"x\" does not exist").explanation
            == "the database refused the connection (the database does not exist, SQLSTATE 3D000); retrying will not help: FATAL:  database \"x\" does not exist")
        #expect(DatabaseError(code: .migrationFailed, sqlState: "42601", message: "migration 0007_x.sql failed: syntax error",
                              hint: "look").explanation
            == "migration 0007_x.sql failed: syntax error (SQLSTATE 42601) (hint: look)")
    }
}
