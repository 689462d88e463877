import PriceDB
import Testing
@testable import PriceRows

@Suite("TextCells: a query's rows in one buffer read back as the Strings they were")
struct TextCellsTests {
    @Test func rowsRoundTripWithNullsEmptyCellsAndRaggedRows() {
        let rows: [[String?]] = [["a", nil, ""], [], ["ü", "x\u{0}y", "a longer cell than fifteen bytes"], [nil]]
        let cells = TextCells(rows)
        #expect(cells.rows == rows)
        #expect(cells.rowCount == 4)
        #expect((0..<4).map { cells.columnCount(row: $0) } == [3, 0, 3, 1])
        #expect(cells.isNull(row: 0, column: 1) && !cells.isNull(row: 0, column: 2))
        #expect(cells.withCell(row: 0, column: 1) { $0.count } == nil)
        #expect(cells.withCell(row: 0, column: 2) { $0.count } == 0)
        #expect(cells.string(row: 2, column: 0) == "ü")
        #expect(TextCells([]).rows.isEmpty)
    }

    /// What libpq hands over may be any bytes: each cell reads as `String(decoding:as:)` reads them.
    @Test func cellsFromRawBytesReadAsStringDecodingDoes() {
        var generator = SystemRandomNumberGenerator()
        let pieces: [[UInt8]] = [[0x41], [0xC3, 0xBC], [0xC3], [0xFF], [0xE2, 0x82, 0xAC], [0xED, 0xA0, 0x80], [0x7F], [0x80]]
        for _ in 0..<500 {
            var cells = TextCells()
            var expected: [[String?]] = []
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                cells.startRow()
                var row: [String?] = []
                for _ in 0..<Int.random(in: 0...5, using: &generator) {
                    let raw = (0..<Int.random(in: 0...20, using: &generator)).flatMap { _ in pieces.randomElement(using: &generator)! }
                    raw.withUnsafeBufferPointer { cells.append(utf8: $0) }
                    row.append(String(decoding: raw, as: UTF8.self))
                }
                expected.append(row)
            }
            #expect(cells.rows == expected)
            #expect(cells.bytes.elementsEqual(expected.joined().flatMap { Array($0!.utf8) }), "every byte is valid UTF-8")
        }
    }

    @Test func asciiIsFoundAtEveryOffsetOfAWord() {
        for length in 0..<20 {
            let clean = [UInt8](repeating: 0x61, count: length)
            #expect(clean.withUnsafeBufferPointer(TextCells.isASCII))
            for position in 0..<length {
                var dirty = clean
                dirty[position] = 0x80
                #expect(!dirty.withUnsafeBufferPointer(TextCells.isASCII), "length \(length), byte \(position)")
            }
        }
    }

    @Test func queryResultReadsItsCells() {
        let result = QueryResult(columnNames: ["a", "b"], rows: [["1", nil], ["2", "two"]])
        #expect(result.value("b", row: 1) == "two")
        #expect(result.value("b") == nil)
        #expect(result.value("c") == nil)
        #expect(result.value("a", row: 2) == nil)
        #expect(result.singleValue == "1")
        #expect(QueryResult().singleValue == nil)
        #expect(QueryResult(rows: [[]]).singleValue == nil)
    }
}
