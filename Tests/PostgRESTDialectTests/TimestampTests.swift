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
        #expect(Timestamp.jsonForm("2026-11-29 17:00:00-05") == "2026-11-29T17:00:00-05:00")
        #expect(Timestamp.jsonForm("1999-01-08 04:05:06.123456-08") == "1999-01-08T04:05:06.123456-08:00")
        // Not PostgreSQL's form: written as it came (the date's own dashes are no offset).
        for text in ["", "2026-11-29", "2026-11-29T22:00:00+00", "2026-11-29 22:00:00", "2026-11-29 22:00:0é+00"] {
            #expect(Timestamp.jsonForm(text) == (text == "2026-11-29 22:00:00" ? "2026-11-29T22:00:00" : text), "\(text)")
        }
        var bytes = Array("[".utf8)
        Timestamp.appendJSONForm("2026-11-29 22:00:00+00", to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "[2026-11-29T22:00:00+00:00", "appends after what is there")
    }
}
