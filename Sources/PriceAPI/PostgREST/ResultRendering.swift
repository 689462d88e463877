import PriceHTTP
import PriceJSON

extension ReadOptions {
    /// Filters, orders and pages the rows, then answers as PostgREST does: the body in the
    /// negotiated media type, `Content-Range` (with the total under `count=exact`), 206 for a
    /// partial page of a counted result, 416 past its end, 406 PGRST116 for a single object
    /// that is not exactly one row. Runs on the worker; pure.
    func render(_ result: ResultSet) -> HTTPResponse {
        let types = result.columns.map(\.type)
        guard result.rows.allSatisfy({ $0.count == types.count }) else {
            // The function's columns changed under the service: refuse rather than misread them.
            return APIError(status: 500, code: "PGRST000", message: "Internal error",
                            details: "The function returned \(result.rows.first?.count ?? 0) columns, expected \(types.count)").response
        }
        var rows = result.rows.filter { row in
            filters.allSatisfy { $0.evaluate(types[$0.column].cell(row[$0.column])) == true }
        }
        if !order.isEmpty {
            // Decorate once so each comparison does not re-read the cells; stable, so ties keep the function's order.
            let keyed = rows.enumerated().map { item in (item.offset, item.element, order.map { types[$0.column].cell(item.element[$0.column]) }) }
            rows = keyed.sorted { lhs, rhs in
                for (index, term) in order.enumerated() {
                    let (a, b) = (lhs.2[index], rhs.2[index])
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
            }.map(\.1)
        }
        let total = rows.count
        let lower = range.lower
        let end = range.upper.map { min($0 + 1, total) } ?? total
        let page = lower < end ? Array(rows[lower..<end]) : []

        if case .object = format, page.count != 1 {
            return APIError(status: 406, code: "PGRST116", message: "Cannot coerce the result to a single JSON object",
                            details: "The result contains \(page.count) rows").response
        }
        let counted: Int? = countExact ? total : nil
        let upper = lower + page.count - 1
        var status = 200
        if let counted {
            if lower > counted {
                return APIError(status: 416, code: "PGRST103", message: "Requested range not satisfiable",
                                details: "An offset of \(lower) was requested, but there are only \(counted) rows.")
                    .response.adding([("Content-Range", "*/\(counted)")])
            }
            if page.count < counted { status = 206 }
        }
        let rangeText = counted != 0 && lower <= upper ? "\(lower)-\(upper)" : "*"
        var headers = [("Content-Range", "\(rangeText)/\(counted.map(String.init) ?? "*")")]
        if countExact { headers.append(("Preference-Applied", "count=exact")) }

        let columns = select ?? result.columns.enumerated().map { ($0.element.name, $0.offset) }
        switch format {
        case .csv:
            return HTTPResponse(status: status, headers: [("Content-Type", "text/csv; charset=utf-8")] + headers,
                                body: Array(Self.csv(page, columns: columns).utf8))
        case .json(let stripNulls):
            var writer = JSONWriter(capacity: 200 * page.count + 2)
            writer.beginArray()
            for row in page { Self.object(row, columns: columns, types: types, stripNulls: stripNulls, into: &writer) }
            writer.endArray()
            let media = stripNulls ? "application/vnd.pgrst.array+json; nulls=stripped; charset=utf-8" : "application/json; charset=utf-8"
            return HTTPResponse(status: status, headers: [("Content-Type", media)] + headers, body: writer.bytes)
        case .object(let stripNulls):
            var writer = JSONWriter(capacity: 256)
            Self.object(page[0], columns: columns, types: types, stripNulls: stripNulls, into: &writer)
            let media = "application/vnd.pgrst.object+json\(stripNulls ? "; nulls=stripped" : ""); charset=utf-8"
            return HTTPResponse(status: status, headers: [("Content-Type", media)] + headers, body: writer.bytes)
        }
    }

    /// A row as `row_to_json` writes it: integers as numbers, booleans as true/false, timestamps in ISO 8601.
    static func object(_ row: [String?], columns: [(name: String, column: Int)], types: [ColumnType],
                       stripNulls: Bool, into writer: inout JSONWriter) {
        writer.beginObject()
        for (name, column) in columns {
            guard let text = row[column] else {
                if !stripNulls { writer.key(name); writer.null() }
                continue
            }
            writer.key(name)
            switch types[column] {
            case .text: writer.string(text)
            case .integer, .bigint: writer.number(literal: text)
            case .boolean: writer.bool(text == "t")
            case .timestamptz: writer.string(Timestamp.jsonForm(text))
            }
        }
        writer.endObject()
    }

    /// PostgREST's CSV: a header line of column names, then one line per row with each value in
    /// PostgreSQL's text output, quoted the way a record's fields are (NULL is empty).
    static func csv(_ rows: [[String?]], columns: [(name: String, column: Int)]) -> String {
        var lines = [columns.map(\.name).joined(separator: ",")]
        for row in rows {
            lines.append(columns.map { row[$0.column].map(csvField) ?? "" }.joined(separator: ","))
        }
        return lines.joined(separator: "\n")
    }

    /// record_out's rule: quote when empty or holding `"`, `\`, `(`, `)`, `,` or white space;
    /// double the quotes and backslashes inside.
    static func csvField(_ text: String) -> String {
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
