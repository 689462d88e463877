import PriceRows

/// A named statement that every pooled connection prepares once and then executes by name.
///
/// - Important: Names must be unique per SQL text across the whole pool: a connection that has
///   already prepared `name` will not prepare it again with different SQL.
public struct PreparedStatement: Sendable, Hashable {
    public var name: String
    public var sql: String

    public init(name: String, sql: String) {
        self.name = name
        self.sql = sql
    }
}

/// One statement of a pipelined batch. Parameters travel in PostgreSQL's text format; `nil` is SQL NULL.
///
/// - Important: Extended query protocol: one SQL statement per query, no `;`-separated lists.
public enum Query: Sendable {
    /// Executes a `PreparedStatement`; connections that have not prepared it yet do so in the same pipeline.
    case prepared(PreparedStatement, [String?] = [])
    /// Executes SQL through the unnamed statement (parsed every time).
    case sql(String, [String?] = [])

    var parameters: [String?] {
        switch self {
        case .prepared(_, let parameters), .sql(_, let parameters): return parameters
        }
    }
}

/// The outcome of one successful query: text values exactly as PostgreSQL prints them.
public struct QueryResult: Sendable, Equatable {
    public var columnNames: [String]
    /// The rows, in PostgreSQL's text output, in one buffer.
    public var cells: TextCells
    /// Rows inserted/updated/deleted/returned, as the command tag reports them (0 when it has no count).
    public var affectedRows: Int
    /// The command tag, e.g. `INSERT 0 1` or `SELECT 3`.
    public var commandTag: String

    public init(columnNames: [String] = [], rows: [[String?]] = [], affectedRows: Int = 0, commandTag: String = "") {
        self.init(columnNames: columnNames, cells: TextCells(rows), affectedRows: affectedRows, commandTag: commandTag)
    }

    public init(columnNames: [String], cells: TextCells, affectedRows: Int, commandTag: String) {
        self.columnNames = columnNames
        self.cells = cells
        self.affectedRows = affectedRows
        self.commandTag = commandTag
    }

    /// The rows as Strings, nil for SQL NULL (made on each read: the hot paths read `cells`).
    public var rows: [[String?]] { cells.rows }

    /// Index of the first column named `name`, if any.
    public func columnIndex(_ name: String) -> Int? {
        columnNames.firstIndex(of: name)
    }

    /// The value in `row` under column `name`; nil for SQL NULL, an unknown column or a row out of range.
    public func value(_ name: String, row: Int = 0) -> String? {
        guard let column = columnIndex(name), row >= 0, row < cells.rowCount, column < cells.columnCount(row: row) else { return nil }
        return cells.string(row: row, column: column)
    }

    /// First column of the first row: the whole answer of `select f(...)` style queries.
    public var singleValue: String? {
        guard cells.rowCount > 0, cells.columnCount(row: 0) > 0 else { return nil }
        return cells.string(row: 0, column: 0)
    }
}
