import PriceRows
import PriceHTTPMessage
import PriceJSON

extension ReadOptions {
    /// Filters, orders and pages the rows, then answers as PostgREST does: the body in the
    /// negotiated media type, `Content-Range` (with the total under `count=exact`), 206 for a
    /// partial page of a counted result, 416 past its end, 406 PGRST116 for a single object
    /// that is not exactly one row. Runs on the worker; pure.
    ///
    /// - Parameter maxBytes: the largest body answered (`PRICESVC_MAX_RESPONSE_BYTES`). A larger one is
    ///   400 `PGRST190`, decided from a lower bound of the size before anything is written, or else
    ///   as soon as the writer passes the cap: the body is never built whole (ten clients asking for
    ///   55 MB answers once took the process to 1 GiB).
    package func render(_ result: ResultSet, maxBytes: Int = ReadOptions.defaultMaxResponseBytes) -> HTTPResponse {
        let types = result.columns.map(\.type)
        let cells = result.cells
        if let odd = (0..<cells.rowCount).first(where: { cells.columnCount(row: $0) != types.count }) {
            // The function's columns changed under the service: refuse rather than misread them.
            return APIError(.internalError(details: "The function returned \(cells.columnCount(row: odd)) columns, expected \(types.count)")).response
        }
        // Rows by index into `cells`: filtering and ordering move integers, not rows.
        var rows = Array(0..<cells.rowCount)
        if !filters.isEmpty {
            rows = rows.filter { row in
                filters.allSatisfy { $0.evaluate(types[$0.column].cell(cells.string(row: row, column: $0.column))) == true }
            }
        }
        if !order.isEmpty {
            // Decorate once so each comparison does not re-read the cells; stable, so ties keep the function's order.
            let keyed = rows.map { row in (row, order.map { types[$0.column].cell(cells.string(row: row, column: $0.column)) }) }
            rows = keyed.sorted { lhs, rhs in
                for (index, term) in order.enumerated() {
                    let (a, b) = (lhs.1[index], rhs.1[index])
                    switch (a, b) {
                    case (nil, nil): continue
                    case (nil, _): return term.nullsFirst
                    case (_, nil): return !term.nullsFirst
                    case (let a?, let b?):
                        if a == b { continue }
                        return term.descending ? b < a : a < b
                    }
                }
                return lhs.0 < rhs.0
            }.map(\.0)
        }
        let total = rows.count
        let lower = range.lower
        // `upper < total` before adding: bounds are at most 2^31-1 (RowRange), but no trap must be reachable here.
        let end = range.upper.map { $0 < total ? $0 + 1 : total } ?? total
        let page = lower < end ? Array(rows[lower..<end]) : []

        if case .object = format, page.count != 1 {
            return APIError(.notSingleObject(rows: page.count)).response
        }
        let counted: Int? = countExact ? total : nil
        let upper = lower + page.count - 1
        var status = 200
        if let counted {
            if lower > counted {
                var refusal = APIError(.offsetPastTotal(offset: lower, total: counted)).response
                refusal.headers.append(("Content-Range", "*/\(counted)"))
                return refusal
            }
            if page.count < counted { status = 206 }
        }
        let rangeText = counted != 0 && lower <= upper ? "\(lower)-\(upper)" : "*"
        var headers = [("Content-Range", "\(rangeText)/\(counted.map(String.init) ?? "*")")]
        if countExact { headers.append(("Preference-Applied", "count=exact")) }

        let columns = select ?? result.columns.enumerated().map { ($0.element.name, $0.offset) }
        // Unrenamed, every column's member name was quoted when its column was made.
        let fields = select.map(Self.fields) ?? result.columns.enumerated().map { ($0.element.key, $0.offset) }
        // A lower bound of each row's size (JSON keys and braces, CSV separators): a page that must pass the
        // cap is refused before anything is written.
        let leastPerRow: Int
        switch format {
        case .json(stripNulls: false), .object(stripNulls: false): leastPerRow = columns.reduce(2) { $0 + $1.name.utf8.count + 4 }
        case .json, .object: leastPerRow = 3
        case .csv: leastPerRow = columns.count
        case .geoJSON: leastPerRow = 60
        }
        guard page.count <= maxBytes / max(leastPerRow, 1) else { return Self.tooLarge(maxBytes, rows: page.count) }
        switch format {
        case .csv:
            guard let text = Self.csv(page.map(cells.row), columns: columns, maxBytes: maxBytes) else {
                return Self.tooLarge(maxBytes, rows: page.count)
            }
            return HTTPResponse(status: status, headers: [("Content-Type", "text/csv; charset=utf-8")] + headers,
                                body: Array(text.utf8))
        case .json(let stripNulls):
            var writer = JSONWriter(capacity: min(200 * page.count + 2, maxBytes))
            var scratch: [UInt8] = []
            writer.beginArray()
            for row in page {
                Self.object(cells, row: row, fields: fields, types: types, stripNulls: stripNulls, scratch: &scratch, into: &writer)
                if writer.count >= maxBytes { return Self.tooLarge(maxBytes, rows: page.count) }
            }
            writer.endArray()
            let media = stripNulls ? "application/vnd.pgrst.array+json; nulls=stripped; charset=utf-8" : "application/json; charset=utf-8"
            return HTTPResponse(status: status, headers: [("Content-Type", media)] + headers, body: writer.bytes)
        case .geoJSON:
            // The point's columns give the geometry; every other selected column is a property.
            guard let lat = result.columns.firstIndex(where: { $0.name == "lat" && $0.type == .double }),
                  let lng = result.columns.firstIndex(where: { $0.name == "lng" && $0.type == .double }) else {
                return APIError(.internalError(details: "The result has no lat and lng columns")).response
            }
            let properties = fields.filter { $0.column != lat && $0.column != lng }
            var writer = JSONWriter(capacity: min(300 * page.count + 64, maxBytes))
            var scratch: [UInt8] = []
            writer.beginObject()
            writer.key("type"); writer.string("FeatureCollection")
            writer.key("features")
            writer.beginArray()
            for row in page {
                writer.beginObject()
                writer.key("type"); writer.string("Feature")
                writer.key("geometry")
                if let latitude = cells.string(row: row, column: lat), let longitude = cells.string(row: row, column: lng) {
                    writer.beginObject()
                    writer.key("type"); writer.string("Point")
                    writer.key("coordinates")
                    writer.beginArray()
                    writer.number(literal: longitude)
                    writer.number(literal: latitude)
                    writer.endArray()
                    writer.endObject()
                } else {
                    writer.null()
                }
                writer.key("properties")
                Self.object(cells, row: row, fields: properties, types: types, stripNulls: false, scratch: &scratch, into: &writer)
                writer.endObject()
                if writer.count >= maxBytes { return Self.tooLarge(maxBytes, rows: page.count) }
            }
            writer.endArray()
            writer.endObject()
            return HTTPResponse(status: status, headers: [("Content-Type", "application/geo+json; charset=utf-8")] + headers,
                                body: writer.bytes)
        case .object(let stripNulls):
            var writer = JSONWriter(capacity: 256)
            var scratch: [UInt8] = []
            Self.object(cells, row: page[0], fields: fields, types: types, stripNulls: stripNulls, scratch: &scratch,
                        into: &writer)
            if writer.count > maxBytes { return Self.tooLarge(maxBytes, rows: 1) }
            let media = "application/vnd.pgrst.object+json\(stripNulls ? "; nulls=stripped" : ""); charset=utf-8"
            return HTTPResponse(status: status, headers: [("Content-Type", media)] + headers, body: writer.bytes)
        }
    }

    /// The answer when a body would pass `PRICESVC_MAX_RESPONSE_BYTES`. PostgREST has no such limit
    /// (it has `db-max-rows`, which truncates silently); 400 like its PGRST124 (max-affected), with a
    /// code of pricesvc's own outside PostgREST's range, and a hint at what makes the answer smaller.
    package static func tooLarge(_ maxBytes: Int, rows: Int) -> HTTPResponse {
        APIError(.responseTooLarge(maxBytes: maxBytes, rows: rows)).response
    }

    /// A row as `row_to_json` writes it: integers as numbers, booleans as true/false, timestamps in ISO 8601,
    /// each cell copied from `cells`' buffer into the body.
    /// `fields`: the selected columns with their names quoted once (`fields(_:)`, `ResultColumn.key`);
    /// `scratch` is reused for each timestamp's bytes.
    package static func object(_ cells: TextCells, row: Int, fields: [(key: JSONKey, column: Int)], types: [ColumnType],
                               stripNulls: Bool, scratch: inout [UInt8], into writer: inout JSONWriter) {
        writer.beginObject()
        for (key, column) in fields {
            let written: Void? = cells.withCell(row: row, column: column) { text in
                writer.key(key)
                switch types[column] {
                case .text: writer.string(utf8: text)
                case .integer, .bigint, .double: writer.number(literal: text)
                case .boolean: writer.bool(text.count == 1 && text[0] == UInt8(ascii: "t"))
                case .timestamptz:
                    scratch.removeAll(keepingCapacity: true)
                    Timestamp.appendJSONForm(utf8: text, to: &scratch)
                    writer.string(utf8: scratch)
                }
            }
            if written == nil, !stripNulls { writer.key(key); writer.null() }
        }
        writer.endObject()
    }

    /// The selected columns with their JSON member names prepared once, for every row of a body.
    package static func fields(_ columns: [(name: String, column: Int)]) -> [(key: JSONKey, column: Int)] {
        columns.map { (JSONKey($0.name), $0.column) }
    }

    /// PostgREST's CSV: a header line of column names, then one line per row with each value in
    /// PostgreSQL's text output, quoted the way a record's fields are (NULL is empty).
    /// `nil` as soon as the text passes `maxBytes`.
    package static func csv(_ rows: [[String?]], columns: [(name: String, column: Int)], maxBytes: Int = .max) -> String? {
        var text = columns.map(\.name).joined(separator: ",")
        for row in rows {
            text += "\n"
            text += columns.map { row[$0.column].map(csvField) ?? "" }.joined(separator: ",")
            if text.utf8.count > maxBytes { return nil }
        }
        return text.utf8.count > maxBytes ? nil : text
    }

    /// record_out's rule: quote when empty or holding `"`, `\`, `(`, `)`, `,` or white space;
    /// double the quotes and backslashes inside. First, a field a spreadsheet would run as a formula
    /// (starting with `=`, `+`, `-`, `@`, tab or carriage return: OWASP's list) gets a leading `'`, so
    /// a location id a reporter chose cannot become a formula in an analyst's sheet. No value pricesvc
    /// answers is a negative number, so nothing else changes.
    package static func csvField(_ raw: String) -> String {
        let text = raw.unicodeScalars.first.map { "=+-@\t\r".unicodeScalars.contains($0) } == true ? "'" + raw : raw
        let needsQuotes = text.isEmpty || text.unicodeScalars.contains {
            "\"\\(),".unicodeScalars.contains($0) || $0 == " " || ($0.value >= 0x09 && $0.value <= 0x0d)
        }
        guard needsQuotes else { return text }
        var out = "\""
        for character in text.unicodeScalars {
            if character == "\"" || character == "\\" { out.unicodeScalars.append(character) }
            out.unicodeScalars.append(character)
        }
        return out + "\""
    }
}
