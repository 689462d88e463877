internal import CLibPQ
import Glibc
import PriceRows

/// The libpq calls both connection kinds share: connecting and turning a `PGresult` into Swift values.
enum LibPQ {
    /// Opens a blocking connection. `conninfo` may be a URL or `key=value` string; the explicit
    /// `connect_timeout`, `application_name` and `options` override whatever it says.
    static func connect(conninfo: String, connectTimeout: Duration, applicationName: String?,
                        options: String? = nil) throws(DatabaseError) -> OpaquePointer
    {
        var settings = [("dbname", conninfo),
                        ("connect_timeout", String(max(1, Int((connectTimeout / .seconds(1)).rounded(.up)))))]
        if let applicationName { settings.append(("application_name", applicationName)) }
        if let options { settings.append(("options", options)) }
        // NULL-terminated C arrays; expand_dbname = 1 makes libpq parse `conninfo` and let later keys win.
        var keywords: [UnsafePointer<CChar>?] = settings.map { UnsafePointer(strdup($0.0)) }
        var values: [UnsafePointer<CChar>?] = settings.map { UnsafePointer(strdup($0.1)) }
        keywords.append(nil)
        values.append(nil)
        defer { (keywords + values).forEach { free(UnsafeMutablePointer(mutating: $0)) } }
        let handle = PQconnectdbParams(keywords, values, 1)
        guard let handle else {
            throw DatabaseError(code: .connectFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = errorMessage(handle)
            PQfinish(handle)
            throw DatabaseError(code: .connectFailed, message: message)
        }
        return handle
    }

    /// libpq's last error text for the connection, without its trailing newline.
    static func errorMessage(_ handle: OpaquePointer) -> String {
        guard let text = PQerrorMessage(handle) else { return "unknown libpq error" }
        let message = String(cString: text).trimmingTrailingWhitespace
        return message.isEmpty ? "unknown libpq error" : message
    }

    static func queryResult(_ result: OpaquePointer) -> QueryResult {
        let columns = PQnfields(result)
        let rowCount = PQntuples(result)
        let names = (0..<columns).map { String(cString: PQfname(result, $0)) }
        // Each value's length is known (PQgetlength): no strlen per cell, and one buffer for them all.
        var total = 0
        for row in 0..<rowCount {
            for column in 0..<columns { total += Int(PQgetlength(result, row, column)) }
        }
        var cells = TextCells(reservingRows: Int(rowCount), cells: Int(rowCount) * Int(columns), bytes: total)
        for row in 0..<rowCount {
            cells.startRow()
            for column in 0..<columns {
                guard PQgetisnull(result, row, column) == 0, let value = PQgetvalue(result, row, column) else {
                    cells.appendNull()
                    continue
                }
                let length = Int(PQgetlength(result, row, column))
                value.withMemoryRebound(to: UInt8.self, capacity: length) {
                    cells.append(utf8: UnsafeBufferPointer(start: $0, count: length))
                }
            }
        }
        let tag = String(cString: PQcmdStatus(result))
        return QueryResult(columnNames: names, cells: cells,
                           affectedRows: Int(String(cString: PQcmdTuples(result))) ?? 0, commandTag: tag)
    }

    /// Reads the error fields of a failed result. Without a SQLSTATE the error came from libpq itself,
    /// which almost always means the connection is gone.
    static func error(_ result: OpaquePointer, connectionIsBad: Bool) -> DatabaseError {
        let sqlState = field(result, "C")
        let message = field(result, "M")
            ?? PQresultErrorMessage(result).map { String(cString: $0).trimmingTrailingWhitespace }
            ?? "unknown error"
        let code: DatabaseError.Code = sqlState != nil ? .server : (connectionIsBad ? .connectionLost : .protocolViolation)
        return DatabaseError(code: code, sqlState: sqlState, message: message, detail: field(result, "D"),
                             hint: field(result, "H"), severity: field(result, "V"))
    }

    /// `PG_DIAG_*` are character-literal macros (`'C'`, `'M'`, …), which Swift does not import.
    private static func field(_ result: OpaquePointer, _ code: Unicode.Scalar) -> String? {
        guard let value = PQresultErrorField(result, Int32(code.value)) else { return nil }
        return String(cString: value)
    }

    static func containsNUL(_ text: String) -> Bool {
        text.utf8.contains(0)
    }
}

extension String {
    var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text = text.dropLast() }
        return String(text)
    }
}
