import Testing
import PriceDB

@Suite("bytea parameters in PostgreSQL's text format")
struct ByteaTextTests {
    @Test("bytes become \\x and lower-case hex, every byte two digits")
    func hex() {
        #expect(ByteaText.hex([]) == "\\x")
        #expect(ByteaText.hex([0x00, 0x0f, 0xa0, 0xff]) == "\\x000fa0ff")
    }
}
