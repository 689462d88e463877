import Testing
import PriceDB
import PriceDBTestKit

@Suite("bytea parameters in PostgreSQL's text format")
struct ByteaTextTests {
    @Test("bytes become \\x and lower-case hex, every byte two digits")
    func hex() {
        #expect(ByteaText.hex([]) == "\\x")
        #expect(ByteaText.hex([0x00, 0x0f, 0xa0, 0xff]) == "\\x000fa0ff")
    }
}

@Suite struct StartingASession {
    @Test func settingsTheServiceReliesOnTravelInTheStartupPacket() {
        let options = SessionSettings(statementTimeoutMilliseconds: 5000).libpqOptions
        #expect(options.contains("-c default_transaction_isolation=read\\ committed"))
        #expect(options.contains("-c default_transaction_read_only=off"))
        #expect(options.contains("-c statement_timeout=5000"))
        #expect(options.contains("-c role=none"))
        #expect(options.contains("-c bytea_output=hex"))
    }

    @Test func aSessionStartsWithThemInEffect() throws {
        let database = try ScratchDatabase()
        var configuration = PoolConfiguration(conninfo: database.conninfo, size: 1)
        configuration.sessionSettings = SessionSettings(statementTimeoutMilliseconds: 1234)
        let pool = ConnectionPool(configuration)
        let results = try pool.run([.sql("""
            select current_setting('jit'), current_setting('statement_timeout'),
                   current_setting('default_transaction_isolation'), current_setting('bytea_output')
            """)])
        #expect(results[0].rows == [["off", "1234ms", "read committed", "hex"]])
    }

    @Test func everyValueIsOneEscapedWord() {
        let options = SessionSettings(statementTimeoutMilliseconds: 1).libpqOptions
        // Split on unescaped spaces: -c, name=value, -c, name=value, ...
        var words: [String] = []
        var current = ""
        var escaped = false
        for character in options {
            if escaped { current.append(character); escaped = false; continue }
            if character == "\\" { escaped = true; continue }
            if character == " " { words.append(current); current = ""; continue }
            current.append(character)
        }
        words.append(current)
        #expect(words.count == SessionSettings(statementTimeoutMilliseconds: 1).values.count * 2)
        #expect(words.enumerated().allSatisfy { $0.offset % 2 == 1 || $0.element == "-c" })
        #expect(words.contains("default_transaction_isolation=read committed"))
    }
}
