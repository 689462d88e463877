/// Rows of cells in PostgreSQL's text output, as a query returned them, held in one byte buffer
/// rather than a `String` (and often an allocation) per cell.
///
/// A rendered answer (`ResultSet`) reads the cells as bytes and writes them straight into the body;
/// `rows` gives them as Strings for everything else. Rows may differ in length (a test, or a
/// function whose columns changed): each row knows where its cells start.
///
/// Every cell is valid UTF-8: text that is not is repaired on the way in, exactly as
/// `String(decoding:as:)` repairs it, so the bytes and the Strings always say the same.
public struct TextCells: Sendable, Equatable {
    @usableFromInline
    struct Span: Sendable, Equatable {
        @usableFromInline var start: Int
        /// -1 for SQL NULL.
        @usableFromInline var count: Int

        @usableFromInline init(start: Int, count: Int) { (self.start, self.count) = (start, count) }
    }

    public private(set) var bytes: [UInt8] = []
    @usableFromInline var spans: [Span] = []
    /// Per row, the index in `spans` of its first cell.
    @usableFromInline var rowStarts: [Int] = []

    public init() {}

    /// Room for `cells` cells holding `bytes` bytes in all, in `rows` rows.
    public init(reservingRows rows: Int, cells: Int, bytes byteCount: Int) {
        rowStarts.reserveCapacity(rows)
        spans.reserveCapacity(cells)
        bytes.reserveCapacity(byteCount)
    }

    public init(_ rows: [[String?]]) {
        for row in rows {
            startRow()
            for cell in row {
                if let cell { append(cell) } else { appendNull() }
            }
        }
    }

    // The readers are inlinable: the renderer, in another module, calls them for every cell, and
    // specialised at its call site a read is a few loads rather than a generic call.

    @inlinable public var rowCount: Int { rowStarts.count }

    @inlinable public func columnCount(row: Int) -> Int {
        (row + 1 < rowStarts.count ? rowStarts[row + 1] : spans.count) - rowStarts[row]
    }

    /// Begins a row: the cells appended next are its own.
    public mutating func startRow() {
        rowStarts.append(spans.count)
    }

    public mutating func appendNull() {
        spans.append(Span(start: bytes.count, count: -1))
    }

    public mutating func append(_ text: String) {
        let start = bytes.count
        bytes.append(contentsOf: text.utf8)
        spans.append(Span(start: start, count: bytes.count - start))
    }

    /// A cell from libpq's buffer. ASCII, the common case, is copied as it is; anything else is
    /// decoded as `String(decoding:as:)` would, so invalid UTF-8 reads the same either way.
    public mutating func append(utf8 cell: UnsafeBufferPointer<UInt8>) {
        guard Self.isASCII(cell) else { return append(String(decoding: cell, as: UTF8.self)) }
        let start = bytes.count
        bytes.append(contentsOf: cell)
        spans.append(Span(start: start, count: cell.count))
    }

    @inlinable public func isNull(row: Int, column: Int) -> Bool {
        spans[cellIndex(row, column)].count < 0
    }

    /// Runs `body` with the cell's bytes; nil, without running it, for SQL NULL.
    @inlinable public func withCell<Result>(row: Int, column: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result? {
        let span = spans[cellIndex(row, column)]
        guard span.count >= 0 else { return nil }
        return try bytes.withUnsafeBufferPointer { all in
            try body(UnsafeBufferPointer(rebasing: all[span.start..<(span.start + span.count)]))
        }
    }

    /// The cell as a String; nil for SQL NULL.
    @inlinable public func string(row: Int, column: Int) -> String? {
        withCell(row: row, column: column) { String(decoding: $0, as: UTF8.self) }
    }

    public func row(_ row: Int) -> [String?] {
        (0..<columnCount(row: row)).map { string(row: row, column: $0) }
    }

    public var rows: [[String?]] {
        (0..<rowCount).map(row)
    }

    @inlinable func cellIndex(_ row: Int, _ column: Int) -> Int {
        precondition(column >= 0 && column < columnCount(row: row), "column \(column) of a row of \(columnCount(row: row))")
        return rowStarts[row] + column
    }

    /// Eight bytes at a time while it can.
    static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var index = 0
        let raw = UnsafeRawPointer(base)
        while index + 8 <= bytes.count {
            if raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { return false }
            index += 8
        }
        while index < bytes.count {
            if base[index] >= 0x80 { return false }
            index += 1
        }
        return true
    }
}
