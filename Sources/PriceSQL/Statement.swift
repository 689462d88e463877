import PriceDB
import PriceRows

/// One statement the service or an owner task sends: its SQL, how its parameters are encoded and how
/// its rows decode, side by side, in the spirit of postgres-nio's `row.decode((UUID, String).self)`.
///
/// `Parameters` is the Swift tuple (or struct) a caller fills; `Row` is what one result row decodes to.
/// A row that does not match (another column count, a value of another type, NULL where none is
/// allowed) is a `RowDecodingError`, never a trap, so a schema change shows up as an error value.
public struct Statement<Parameters, Row>: Sendable {
    /// The name every pooled connection prepares it under, and its text.
    public let prepared: PreparedStatement
    public let parameters: [SQLParameter]
    public let columns: [SQLColumn]
    private let encode: @Sendable (Parameters) -> [String?]
    private let decodeRow: @Sendable ([String?]) throws(RowDecodingError) -> Row

    public var name: String { prepared.name }
    public var sql: String { prepared.sql }

    /// For statements whose parameters or rows are not a fixed tuple (a choice of arguments, rows handed
    /// on as text); the tuple forms below are built on it.
    public init(name: String, sql: String, parameters: [SQLParameter], columns: [SQLColumn],
                encode: @escaping @Sendable (Parameters) -> [String?],
                decode: @escaping @Sendable ([String?]) throws(RowDecodingError) -> Row) {
        self.prepared = PreparedStatement(name: name, sql: sql)
        self.parameters = parameters
        self.columns = columns
        self.encode = encode
        self.decodeRow = decode
    }

    /// The statement with these parameters, as one query of a pipeline.
    public func query(_ values: Parameters) -> Query {
        .prepared(prepared, encode(values))
    }

    /// The parameters as sent: PostgreSQL's text format, nil for NULL.
    public func encoded(_ values: Parameters) -> [String?] {
        encode(values)
    }

    /// Every row of `result`, or the first that does not decode.
    public func rows(_ result: QueryResult) -> Result<[Row], RowDecodingError> {
        var rows: [Row] = []
        rows.reserveCapacity(result.cells.rowCount)
        for index in 0..<result.cells.rowCount {
            do throws(RowDecodingError) {
                rows.append(try decodeRow(result.cells.row(index)))
            } catch {
                return .failure(error.at(statement: name, row: index))
            }
        }
        return .success(rows)
    }

    /// The first row of `result`; nil when there is none (or no result at all).
    public func firstRow(_ result: QueryResult?) -> Result<Row?, RowDecodingError> {
        guard let result, result.cells.rowCount > 0 else { return .success(nil) }
        do throws(RowDecodingError) {
            return .success(try decodeRow(result.cells.row(0)))
        } catch {
            return .failure(error.at(statement: name, row: 0))
        }
    }

    /// Name, SQL, parameters and columns, for `pricesvc statements`.
    public var description: StatementDescription {
        StatementDescription(name: name, sql: sql, parameters: parameters, columns: columns)
    }
}

extension Statement where Parameters == Void {
    public func query() -> Query { query(()) }
}

extension Statement {
    /// A statement whose parameters are the tuple of `parameters`' values and whose rows decode to the
    /// tuple of `columns`' types, e.g. `(Param<String>("role", .text), …)` and `(Column<Int>("n", .integer), …)`.
    public init<each P: TextEncodable, each C: TextDecodable>(
        name: String, sql: String, parameters: (repeat Param<each P>), columns: (repeat Column<each C>)
    ) where Parameters == (repeat each P), Row == (repeat each C) {
        var parameterList: [SQLParameter] = []
        for parameter in repeat each parameters { parameterList.append(parameter.description) }
        var columnList: [SQLColumn] = []
        for column in repeat each columns { columnList.append(column.description) }
        self.init(name: name, sql: sql, parameters: parameterList, columns: columnList,
                  encode: { values in
                      var encoded: [String?] = []
                      for value in repeat each values { encoded.append(value.sqlText) }
                      return encoded
                  },
                  decode: { row throws(RowDecodingError) in try RowDecoder.decode(row, as: (repeat each C).self) })
    }
}

/// A name and its SQL type: a parameter's (the type the statement casts it to) or a result column's.
public struct SQLField: Sendable, Equatable {
    public var name: String
    public var type: SQLType
    public init(_ name: String, _ type: SQLType) { (self.name, self.type) = (name, type) }
}

/// A parameter, `$1…` in order.
public typealias SQLParameter = SQLField
/// A result column, in the order the statement selects them.
public typealias SQLColumn = SQLField

/// A typed parameter: `Value` is what the caller passes, `type` what the SQL casts it to.
public struct Param<Value: TextEncodable>: Sendable {
    public let description: SQLParameter
    public init(_ name: String, _ type: SQLType) { description = SQLParameter(name, type) }
}

/// A typed column: `Value` is what its text decodes to (an Optional when it may be NULL).
public struct Column<Value: TextDecodable>: Sendable {
    public let description: SQLColumn
    public init(_ name: String, _ type: SQLType) { description = SQLColumn(name, type) }
}

/// The SQL types the statements name, as PostgreSQL spells them. A column's is the type PostgreSQL
/// describes for it (e.g. `text` for `user_id::text`; an e2e test checks each against the database),
/// a parameter's the type the SQL casts it to.
public enum SQLType: String, Sendable, Equatable {
    case text, name, void, integer, bigint, boolean, uuid, bytea, jsonb, json, timestamptz, interval
    case doublePrecision = "double precision"
    case textArray = "text[]"

    /// Whether libpq's text output `value` (a cell's bytes) reads as this type; only the types a client's
    /// answer depends on are checked (the rest, e.g. a timestamp's text, are passed on as PostgreSQL
    /// printed them). An integer is what `Int64(_:)` reads (a sign, then one or more digits, in range),
    /// a boolean `t` or `f`.
    func accepts(utf8 value: UnsafeBufferPointer<UInt8>) -> Bool {
        switch self {
        case .integer, .bigint: return Self.isInt64(value)
        case .boolean: return value.count == 1 && (value[0] == UInt8(ascii: "t") || value[0] == UInt8(ascii: "f"))
        // Rendered as a JSON number: a digit after the sign (NaN and Infinity would be no JSON).
        case .doublePrecision:
            let first = value.first == UInt8(ascii: "-") ? 1 : 0
            return first < value.count && value[first] >= UInt8(ascii: "0") && value[first] <= UInt8(ascii: "9")
        default: return true
        }
    }

    static func isInt64(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative || text.first == UInt8(ascii: "+") { index = 1 }
        guard index < text.count else { return false }
        // Accumulated as a negative number, whose range is one larger: -9223372036854775808 fits.
        var value: Int64 = 0
        while index < text.count {
            let digit = text[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return false }
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (next, underflow) = shifted.subtractingReportingOverflow(Int64(digit))
            guard !overflow, !underflow else { return false }
            value = next
            index += 1
        }
        return negative || value != .min
    }
}

/// Why a row did not decode: which statement, which row, which column, and what was wrong.
public struct RowDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    public var statement = ""
    public var row = 0
    public var message: String

    public init(message: String) { self.message = message }

    func at(statement: String, row: Int) -> RowDecodingError {
        var located = self
        located.statement = statement
        located.row = row
        return located
    }

    public var description: String { "\(statement) row \(row): \(message)" }
}

/// Decodes one text row into a tuple, checking the column count first.
enum RowDecoder {
    static func decode<each C: TextDecodable>(_ row: [String?], as: (repeat each C).Type) throws(RowDecodingError) -> (repeat each C) {
        var expected = 0
        for _ in repeat (each C).self { expected += 1 }
        guard row.count == expected else {
            throw RowDecodingError(message: "\(row.count) columns, expected \(expected)")
        }
        var cursor = Cursor(row: row)
        return (repeat try cursor.next((each C).self))
    }

    private struct Cursor {
        let row: [String?]
        var index = 0

        mutating func next<Value: TextDecodable>(_ type: Value.Type) throws(RowDecodingError) -> Value {
            defer { index += 1 }
            guard let value = Value.decode(text: row[index]) else {
                throw RowDecodingError(message: "column \(index + 1) is \(row[index].map { "'\($0.prefix(40))'" } ?? "NULL"), "
                                           + "not \(Value.typeDescription)")
            }
            return value
        }
    }
}

/// A Swift value read from libpq's text output; `decode` returns nil when the text is not one (NULL
/// included, unless the type is an Optional).
public protocol TextDecodable: Sendable {
    static func decode(text: String?) -> Self?
    static var typeDescription: String { get }
}

extension String: TextDecodable {
    public static func decode(text: String?) -> String? { text }
    public static var typeDescription: String { "text" }
}

extension Int: TextDecodable {
    public static func decode(text: String?) -> Int? { text.flatMap { Int($0) } }
    public static var typeDescription: String { "an integer" }
}

extension Bool: TextDecodable {
    public static func decode(text: String?) -> Bool? {
        switch text {
        case "t": return true
        case "f": return false
        default: return nil
        }
    }
    public static var typeDescription: String { "a boolean (t or f)" }
}

extension Optional: TextDecodable where Wrapped: TextDecodable {
    public static func decode(text: String?) -> Self? {
        guard let text else { return .some(nil) }
        return Wrapped.decode(text: text).map { .some($0) }
    }
    public static var typeDescription: String { Wrapped.typeDescription + " or NULL" }
}

/// A Swift value sent as a text-format parameter (nil is SQL NULL).
public protocol TextEncodable: Sendable {
    var sqlText: String? { get }
}

extension String: TextEncodable {
    public var sqlText: String? { self }
}

extension Int: TextEncodable {
    public var sqlText: String? { String(self) }
}

extension Optional: TextEncodable where Wrapped: TextEncodable {
    public var sqlText: String? { self?.sqlText }
}

/// Bytes sent as `bytea` (PostgreSQL's hex input form), and read back from its hex output (`\\x…`,
/// `bytea_output = hex`, the default).
public struct Bytea: TextEncodable, TextDecodable, Equatable {
    public var bytes: [UInt8]
    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public var sqlText: String? { ByteaText.hex(bytes) }

    public static func decode(text: String?) -> Bytea? {
        guard let text, text.hasPrefix("\\x") else { return nil }
        let digits = Array(text.utf8.dropFirst(2))
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return Bytea(bytes)
    }

    public static var typeDescription: String { "bytea in hex form" }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// Rows handed on as text (to PostgREST's read options), checked against their columns: the count, and
/// each value's type where the answer depends on it (`SQLType.accepts`). NULL is allowed anywhere.
public typealias TextRow = [String?]

extension Statement where Row == TextRow {
    /// A statement whose rows are passed on as text after the check.
    public init(name: String, sql: String, parameters: [SQLParameter], columns: [SQLColumn],
                encode: @escaping @Sendable (Parameters) -> [String?]) {
        self.init(name: name, sql: sql, parameters: parameters, columns: columns, encode: encode,
                  decode: { row throws(RowDecodingError) in try Self.check(row, columns) })
    }

    /// Every row of `result`, checked where it lies in `result`'s buffer: what a rendered answer reads,
    /// with no String made per cell.
    public func cells(_ result: QueryResult) -> Result<TextCells, RowDecodingError> {
        for row in 0..<result.cells.rowCount {
            if let error = Self.refusal(result.cells, row: row, columns) {
                return .failure(error.at(statement: name, row: row))
            }
        }
        return .success(result.cells)
    }

    static func check(_ row: [String?], _ columns: [SQLColumn]) throws(RowDecodingError) -> TextRow {
        if let error = refusal(TextCells([row]), row: 0, columns) { throw error }
        return row
    }

    /// What is wrong with one row: its column count, or the first value its column's type refuses.
    static func refusal(_ cells: TextCells, row: Int, _ columns: [SQLColumn]) -> RowDecodingError? {
        guard cells.columnCount(row: row) == columns.count else {
            return RowDecodingError(message: "\(cells.columnCount(row: row)) columns, expected \(columns.count)")
        }
        for (index, column) in columns.enumerated()
        where !(cells.withCell(row: row, column: index, column.type.accepts(utf8:)) ?? true) {
            let value = cells.string(row: row, column: index) ?? ""
            return RowDecodingError(message: "column \(column.name) is '\(value.prefix(40))', not \(column.type.rawValue)")
        }
        return nil
    }
}

/// What `pricesvc statements` prints for one statement.
public struct StatementDescription: Sendable, Equatable {
    public var name: String
    public var sql: String
    public var parameters: [SQLParameter]
    public var columns: [SQLColumn]
}
