import Testing
@testable import PostgRESTDialect

@Suite("Timestamps as PostgREST reads and writes them")
struct TimestampTests {
    @Test("timestamps: ISO 8601 and PostgreSQL's text form; anything else is refused, not guessed")
    func timestamps() {
        let base = Timestamp.microseconds("2026-11-29T22:00:00Z")
        #expect(base == 1_795_989_600_000_000)
        #expect(Timestamp.microseconds("2026-11-29 22:00:00+00") == base)
        #expect(Timestamp.microseconds("2026-11-29T23:30:00+01:30") == base)
        #expect(Timestamp.microseconds("2026-11-29T22:00") == base)
        #expect(Timestamp.microseconds("2026-11-29T22:00:00.5Z") == base.map { $0 + 500_000 })
        #expect(Timestamp.microseconds("2026-11-29") == base.map { $0 - 22 * 3_600_000_000 })
        for bad in ["yesterday", "2026-02-30", "2026-11-29T25:00", "2026-11-29T22:00:00+", "", "2026-11-29T22:00:00 Z"] {
            #expect(Timestamp.microseconds(bad) == nil, "\(bad)")
        }
        #expect(Timestamp.jsonForm("2026-11-29 22:00:00+00") == "2026-11-29T22:00:00+00:00")
        #expect(Timestamp.jsonForm("2026-11-29 22:00:00.25+05:30") == "2026-11-29T22:00:00.25+05:30")
    }
}
