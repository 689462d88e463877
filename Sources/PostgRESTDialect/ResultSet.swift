import PriceRows
import PriceJSON

/// The rows a function returned, as PostgreSQL's text output (what libpq hands over, in one buffer),
/// with the type of each column. Filters, order and rendering read the cells by that type.
package struct ResultSet: Sendable {
    package var columns: [ResultColumn]
    package var cells: TextCells

    package init(columns: [ResultColumn], cells: TextCells) {
        self.columns = columns
        self.cells = cells
    }

    package init(columns: [ResultColumn], rows: [[String?]]) {
        self.init(columns: columns, cells: TextCells(rows))
    }
}

/// A column of a function's result, named and typed as the function declares it.
package struct ResultColumn: Sendable, Equatable {
    package let name: String
    package let type: ColumnType
    /// `name` as a JSON member name, quoted once for every body that selects the column unrenamed.
    package let key: JSONKey

    package init(name: String, type: ColumnType) {
        self.name = name
        self.type = type
        key = JSONKey(name)
    }

    package static func == (lhs: ResultColumn, rhs: ResultColumn) -> Bool {
        lhs.name == rhs.name && lhs.type == rhs.type
    }
}

/// The column types the exposed functions return. The comparison rules are PostgreSQL's for the
/// cluster's `C.UTF-8` collation: text by code point (UTF-8 byte order), integers by value,
/// timestamps by instant.
package enum ColumnType: Sendable, Equatable {
    /// `text`
    case text
    /// `integer` (int4)
    case integer
    /// `bigint` (int8)
    case bigint
    /// `boolean`: libpq's text output is `t` or `f`
    case boolean
    /// `timestamptz`
    case timestamptz
    /// `double precision` (float8): coordinates. libpq's text output is the shortest exact decimal.
    case double

    package var sqlName: String {
        switch self {
        case .text: return "text"
        case .integer: return "integer"
        case .bigint: return "bigint"
        case .boolean: return "boolean"
        case .timestamptz: return "timestamp with time zone"
        case .double: return "double precision"
        }
    }

    /// A filter operand, read as PostgreSQL would read it for this column, with its SQLSTATE when it cannot be.
    package func value(_ text: String) -> Result<TypedValue, APIError> {
        switch self {
        case .text:
            return .success(.text(Array(text.utf8)))
        case .integer, .bigint:
            let trimmed = text.trimmingSpaces
            var digits = Substring(trimmed)
            if digits.first == "+" || digits.first == "-" { digits = digits.dropFirst() }
            guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(.invalidInput("22P02", "invalid input syntax for type \(sqlName): \"\(JSONBody.printable(text))\""))
            }
            guard let number = Int64(trimmed.hasPrefix("+") ? String(trimmed.dropFirst()) : trimmed),
                  self == .bigint || (number >= Int64(Int32.min) && number <= Int64(Int32.max)) else {
                return .failure(.invalidInput("22003", "value \"\(JSONBody.printable(text))\" is out of range for type \(sqlName)"))
            }
            return .success(.integer(number))
        case .boolean:
            // PostgreSQL reads more spellings (yes, on, 1, prefixes); pricesvc reads true and false in any
            // case (postgrest-py sends Python's True), the ones the OpenAPI document states, and refuses the
            // rest rather than guess.
            switch text.lowercased() {
            case "true": return .success(.boolean(true))
            case "false": return .success(.boolean(false))
            default:
                return .failure(.invalidInput("22P02", "invalid input syntax for type boolean: \"\(JSONBody.printable(text))\"",
                                            hint: "Use true or false"))
            }
        case .timestamptz:
            guard let micros = Timestamp.microseconds(text) else {
                return .failure(.invalidInput("22007", "invalid input syntax for type timestamp with time zone: \"\(JSONBody.printable(text))\"",
                                            hint: "Use ISO 8601, e.g. 2026-11-29T22:00:00Z; a time without an offset is UTC"))
            }
            return .success(.timestamp(micros))
        case .double:
            // A decimal number, as JSON writes one; PostgreSQL's NaN and Infinity spellings are refused
            // (no column of ours holds them).
            guard let number = Self.decimal(text.trimmingSpaces) else {
                return .failure(.invalidInput("22P02", "invalid input syntax for type double precision: \"\(JSONBody.printable(text))\""))
            }
            return .success(.double(number))
        }
    }

    /// A finite decimal number (`-12`, `37.7955`, `1e-3`), at most 64 characters; nil for anything else.
    package static func decimal(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty, bytes.count <= 64 else { return nil }
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - start
        }
        if bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        var count = digits()
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            count += digits()
        }
        guard count > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
            guard digits() > 0 else { return nil }
        }
        guard index == bytes.count, let number = Double(text), number.isFinite else { return nil }
        return number
    }

    /// A cell as PostgreSQL output it; nil for SQL NULL.
    package func cell(_ text: String?) -> TypedValue? {
        guard let text else { return nil }
        switch self {
        case .text: return .text(Array(text.utf8))
        case .integer, .bigint: return Int64(text).map(TypedValue.integer)
        case .boolean: return text == "t" ? .boolean(true) : text == "f" ? .boolean(false) : nil
        case .timestamptz: return Timestamp.microseconds(text).map(TypedValue.timestamp)
        case .double: return Double(text).map(TypedValue.double)
        }
    }
}

/// A value of one of the column types, comparable with values of the same column.
package enum TypedValue: Sendable, Equatable {
    case text([UInt8])
    case integer(Int64)
    /// Microseconds since 1970-01-01 00:00 UTC.
    case timestamp(Int64)
    /// false sorts before true, as in PostgreSQL.
    case boolean(Bool)
    case double(Double)

    package static func < (lhs: TypedValue, rhs: TypedValue) -> Bool {
        switch (lhs, rhs) {
        case (.text(let a), .text(let b)): return a.lexicographicallyPrecedes(b)
        case (.integer(let a), .integer(let b)): return a < b
        case (.timestamp(let a), .timestamp(let b)): return a < b
        case (.boolean(let a), .boolean(let b)): return !a && b
        case (.double(let a), .double(let b)): return a < b
        default: return false
        }
    }
}
