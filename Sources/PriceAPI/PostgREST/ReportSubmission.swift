import PriceJSON

/// `POST /rest/v1/price_reports` parsed and checked before it reaches the database.
/// The database enforces every rule again; this layer exists to give a person a precise
/// message, and to make sure only the client-writable columns are ever sent.
struct ReportSubmission: Sendable, Equatable {
    static let columns = ["location_id", "rate_kind", "price_cents", "currency", "client_report_id", "lat", "lng"]
    /// The place's position as the app knows it (WGS 84 degrees; both or neither): stored, never returned
    /// (not even in `return=representation`), and counted only towards community places (docs/api.md).
    static let coordinateColumns: Set<String> = ["lat", "lng"]
    /// The bounds of `lat` and `lng` (the table's checks `price_reports_lat_range` and
    /// `price_reports_lng_range` say the same); the OpenAPI document states them from here.
    static let latitudeBound = 90.0
    static let longitudeBound = 180.0
    /// Rows in one batch; the OpenAPI document states the same bound from here.
    static let maxRows = 10
    /// The largest `price_cents` (the table's check `price_reports_price_cents_range` says the same);
    /// the OpenAPI document states it from here.
    static let maxPriceCents: Int64 = 1_000_000

    /// Each row as the author sent it: only client-writable keys, in the author's order.
    var rows: [JSONObject]
    var returnRepresentation: Bool
    /// `Prefer: count=exact`: the number of rows stored, in `Content-Range`.
    var countExact = false

    /// Every row has the same keys, so the first row tells whether `currency` was sent.
    var sendsCurrency: Bool { rows.first?["currency"] != nil }

    /// Every row names its client_report_id, so sending the submission again stores nothing twice.
    var isIdempotent: Bool { rows.allSatisfy { $0["client_report_id"]?.stringValue != nil } }

    /// The rows as one JSON array with exactly the client-writable keys, each object's keys in
    /// `columns` order: the parameter of the insert statement (`jsonb_to_recordset`).
    var parameterJSON: String {
        var writer = JSONWriter(capacity: 120 * rows.count)
        writer.beginArray()
        for row in rows {
            writer.beginObject()
            for column in Self.columns {
                guard let value = row[column] else { continue }
                writer.key(column)
                writer.value(value)
            }
            writer.endObject()
        }
        writer.endArray()
        return writer.text
    }

    static func parse(body: [UInt8], contentType: String?, prefer: String?) -> Result<ReportSubmission, APIError> {
        guard JSONBody.isJSONContentType(contentType) else {
            return .failure(APIError(.notJSONContentType(received: .some(contentType))))
        }
        let document: JSONValue
        switch JSONBody.parse(body) {
        case .success(let value): document = value
        case .failure(let error): return .failure(error)
        }
        let objects: [JSONValue]
        if document.objectValue != nil {
            objects = [document]
        } else if let elements = document.arrayValue {
            guard !elements.isEmpty else {
                return .failure(APIError(.emptyArray))
            }
            guard elements.count <= maxRows else {
                return .failure(APIError(.tooManyRows(sent: elements.count, max: maxRows)))
            }
            objects = elements
        } else {
            return .failure(APIError(.notObjectOrArray))
        }

        var rows: [JSONObject] = []
        var firstKeys: Set<String>?
        for (index, object) in objects.enumerated() {
            guard let members = object.objectValue else {
                return .failure(APIError(.elementNotObject(index)))
            }
            for member in members {
                let (key, value) = (member.key, member.value)
                guard columns.contains(key) else {
                    return .failure(APIError(.unknownColumn(key, table: "price_reports", writable: columns)))
                }
                if case .failure(let error) = check(column: key, value: value) { return .failure(error) }
            }
            if case .failure(let error) = checkCoordinates(members) { return .failure(error) }
            let keys = Set(members.keys)
            if let expected = firstKeys, expected != keys {
                return .failure(APIError(.keysDiffer(element: index)))
            }
            firstKeys = keys
            rows.append(members)
        }
        let preferences: PreferHeader
        switch PreferHeader.parse(prefer, accepting: PreferHeader.forInserts) {
        case .success(let parsed): preferences = parsed
        case .failure(let error): return .failure(error)
        }
        return .success(ReportSubmission(rows: rows, returnRepresentation: preferences.contains("return=representation"),
                                         countExact: preferences.contains("count=exact")))
    }

    /// The query string of an insert: supabase-py sends `columns` (the rows' keys) with a list, and
    /// `select=*` asks for what `return=representation` gives. Anything else (`on_conflict`, other
    /// columns, filters) would change what an insert means, so it is refused rather than ignored.
    func checkQuery(_ query: [(name: String, value: String)]) -> APIError? {
        guard !query.isEmpty else { return nil }
        let keys = Set(rows.first?.keys ?? [])
        for (name, value) in query {
            switch name {
            case "columns":
                // Names may be quoted, as supabase-py sends them: "location_id","rate_kind".
                let listed = value.split(separator: ",").map { item -> String in
                    let name = item.trimmingSpaces
                    guard name.count >= 2, name.hasPrefix("\""), name.hasSuffix("\"") else { return name }
                    return String(name.dropFirst().dropLast())
                }
                guard Set(listed) == keys, listed.count == keys.count else {
                    return APIError(.notImplemented("columns must name exactly the keys of the rows sent (\(keys.sorted().joined(separator: ",")))"))
                }
            case "select" where value.trimmingSpaces == "*":
                continue
            default:
                return APIError(.notImplemented("'\(JSONBody.printable(name))' is not implemented for inserts into price_reports",
                                        hint: "Inserts take only columns=<the rows' keys> and select=*"))
            }
        }
        return nil
    }

    /// Type checks per column. Range and format rules that the table's CHECK constraints also
    /// hold are repeated only where the database's message would be unhelpful (types, NUL bytes).
    static func check(column: String, value: JSONValue) -> Result<Void, APIError> {
        // A report without coordinates leaves both out: null is not "no coordinates" (the OpenAPI document
        // can then say exactly which bodies are accepted: both numbers, or neither key).
        if value.isNull, coordinateColumns.contains(column) {
            return .failure(.invalidInput("22P02", "\(column) must be a number of degrees",
                                          hint: "Leave lat and lng out for a report without coordinates"))
        }
        if value.isNull {
            return .success(())
        }
        switch column {
        case "price_cents":
            guard value.numberValue != nil else {
                return .failure(typeError(column, "an integer number of cents"))
            }
            guard let cents = value.numberValue?.asInt64 else {
                return .failure(.invalidInput("22P02", "price_cents must be a whole number of cents",
                                            details: "Got \(value.serialized().prefix(40))"))
            }
            guard cents > 0, cents <= maxPriceCents else {
                return .failure(.invalidInput("23514", "price_cents must be between 1 and \(maxPriceCents)",
                                            details: "Got \(cents)"))
            }
        case "lat", "lng":
            let bound = column == "lat" ? latitudeBound : longitudeBound
            guard let number = value.numberValue else {
                return .failure(typeError(column, "a number of degrees, e.g. \(column == "lat" ? "37.7955" : "-122.3937")"))
            }
            guard let degrees = number.asDouble, degrees >= -bound, degrees <= bound else {
                return .failure(.invalidInput("23514", "\(column) must be between \(Int(-bound)) and \(Int(bound))",
                                            details: "Got \(value.serialized().prefix(40))"))
            }
        case "client_report_id":
            guard let text = value.stringValue else { return .failure(typeError(column, "a UUID string")) }
            guard UUIDText.isValid(text) else {
                return .failure(.invalidInput("22P02", "client_report_id must be a UUID",
                                            details: "Got '\(JSONBody.printable(String(text.prefix(60))))'"))
            }
        default:
            guard let text = value.stringValue else { return .failure(typeError(column, "a string")) }
            if text.utf8.contains(0) {
                return .failure(.invalidInput("22P05", "\(column) must not contain NUL characters"))
            }
        }
        return .success(())
    }

    /// `lat` and `lng` go together (the table's check `price_reports_coordinates_together`): a row has
    /// both keys, as numbers (``check(column:value:)``), or neither.
    static func checkCoordinates(_ row: JSONObject) -> Result<Void, APIError> {
        let given = coordinateColumns.filter { row[$0] != nil }
        guard given.count == 1, let one = given.first else { return .success(()) }
        let other = one == "lat" ? "lng" : "lat"
        return .failure(.invalidInput("23514", "lat and lng go together: give both or neither",
                                      details: "Got \(one) without \(other)"))
    }

    private static func typeError(_ column: String, _ expected: String) -> APIError {
        .invalidInput("22P02", "\(column) must be \(expected)")
    }
}
