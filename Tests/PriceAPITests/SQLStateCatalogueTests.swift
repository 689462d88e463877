import Foundation
import PriceDB
import Testing
@testable import PriceAPI

/// The SQL in migrations/ and the SQLSTATE catalogue (`SQLState`) name the same codes: a code the SQL
/// raises has a meaning in Swift, and the catalogue keeps no code the SQL stopped raising.
@Suite("The SQLSTATEs the SQL raises, against the catalogue")
struct SQLStateCatalogueTests {
    static let migrations = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("migrations")

    /// The codes a SQL text raises, by where they appear: `errcode = '…'` (a condition name stays a name,
    /// which the catalogue does not hold), `raise [exception] sqlstate '…'`, and `raise [exception] 'text'` or
    /// `using` without an errcode (P0001). Comments are left out.
    static func raisedCodes(_ sql: String) -> Set<String> {
        let text = sql.split(separator: "\n", omittingEmptySubsequences: false)
            .map { line in line.range(of: "--").map { String(line[..<$0.lowerBound]) } ?? String(line) }
            .joined(separator: "\n")
        var codes: Set<String> = []
        let patterns: [(String, (String) -> String)] = [
            (#"errcode\s*=\s*'([^']*)'"#, { $0 }),
            (#"\braise\s+(?:exception\s+)?sqlstate\s+'([^']*)'"#, { $0 }),
            (#"\braise\s+(?:exception\s+)?(')"#, { _ in "P0001" }),
            (#"\braise\s+(?:exception\s+)?(using)\b(?![^;]*errcode)"#, { _ in "P0001" }),
        ]
        for (pattern, code) in patterns {
            let expression = try! NSRegularExpression(pattern: pattern, options: [.caseInsensitive])
            for match in expression.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                codes.insert(code(String(text[Range(match.range(at: 1), in: text)!])))
            }
        }
        return codes
    }

    static func raisedByMigrations() throws -> [String: [String]] {
        let files = try FileManager.default.contentsOfDirectory(atPath: migrations.path).filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files.count > 20, "migrations/ read from \(migrations.path)")
        var raised: [String: [String]] = [:]
        for file in files {
            let sql = try String(contentsOf: migrations.appendingPathComponent(file), encoding: .utf8)
            for code in raisedCodes(sql) { raised[code, default: []].append(file) }
        }
        return raised
    }

    @Test("every code the SQL raises is in the catalogue, and the catalogue holds no code the SQL does not raise")
    func sqlAndCatalogueAgree() throws {
        let raised = try Self.raisedByMigrations()
        let catalogue = Set(SQLState.raisedBySQL.map(\.code))
        #expect(catalogue.count == SQLState.raisedBySQL.count, "a code is listed twice")
        for (code, files) in raised.sorted(by: { $0.key < $1.key }) where !catalogue.contains(code) {
            Issue.record("\(files.joined(separator: ", ")) raise \(code), which SQLState.raisedBySQL does not know")
        }
        for code in catalogue.subtracting(raised.keys).sorted() {
            Issue.record("SQLState.raisedBySQL lists \(code), which no file in migrations/ raises")
        }
    }

    @Test("the scanner finds each form of raise, and a code it does not know fails the check")
    func scanner() {
        let sql = """
            raise exception using errcode = 'PX999', message = 'new';  -- errcode = 'PX000' in a comment
            RAISE SQLSTATE '22012';
            raise exception 'plain text %', x;
            raise notice 'not an error';
            raise exception using errcode = 'unique_violation';
            raise using message = 'no code';
            """
        let codes = Self.raisedCodes(sql)
        #expect(codes == ["PX999", "22012", "P0001", "unique_violation"])
        #expect(!Set(SQLState.raisedBySQL.map(\.code)).isSuperset(of: codes))
    }

    @Test("each code of pricesvc's own has an answer of its own on the Auth surface, not the internal error",
          arguments: SQLState.raisedBySQL.filter { $0.code.hasPrefix("PT") || $0.code.hasPrefix("PA") })
    func ownCodesAnswerOnAuth(state: SQLState) {
        let error = DatabaseError(code: .server, sqlState: state.code, message: "m", hint: "Retry after 5 seconds")
        #expect(AuthError(database: error, unavailableRetryAfter: 1) != .internalError)
        #expect(AuthError(database: error, attested: true, unavailableRetryAfter: 1) != .internalError)
    }

    @Test("a replayed sign-up challenge (PA010) reads as a failed captcha, or as an attestation refusal for an attested sign-up")
    func challengeUsedByKind() {
        let error = DatabaseError(code: .server, sqlState: SQLState.challengeUsed.code, message: "sign-up challenge already used")
        #expect(APIError(AuthError(database: error, unavailableRetryAfter: 1)).code == "captcha_failed")
        #expect(APIError(AuthError(database: error, attested: true, unavailableRetryAfter: 1)).code == "attestation_challenge_used")
    }

    @Test("the REST status of each code the SQL raises comes from its catalogue entry",
          arguments: SQLState.raisedBySQL)
    func restStatus(state: SQLState) {
        #expect(SQLStateMapping.status(sqlState: state.code, isUnavailable: false, role: .authenticated) == state.restStatus)
    }
}
