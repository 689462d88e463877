import PriceJSON
import PriceSQL

/// A call of one of the median functions, with its named arguments checked the way
/// PostgREST resolves a function: unknown or missing argument names mean "no such function".
struct MedianQuery: Sendable, Equatable {
    enum Locations: Sendable, Equatable {
        case one(String)
        case many([String])
    }

    /// Which rate kinds to read.
    enum RateKinds: Sendable, Equatable {
        /// `rate_kind` omitted: the function's default (hourly).
        case functionDefault
        case one(String)
        /// `rate_kind: null` (or an empty `rate_kind=` in the GET form, which is how the SDKs send
        /// null in a query string): every rate kind in one call.
        case all
    }

    var locations: Locations
    var rateKinds: RateKinds

    /// The result columns of both functions, as their statements select them (one list, PriceSQL's).
    static let columns = Statements.medianColumns.map(ResultColumn.init)

    /// - Parameter queryArguments: in the GET form, the query parameters that are not read options.
    static func parse(function: RPCFunction, isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                      contentType: String?) -> Result<MedianQuery, APIError> {
        guard function != .priceQuotes else { return .failure(noSuchFunction(function.rawValue, arguments: [])) }
        let arguments: [(String, Argument)]
        switch namedArguments(isRead: isRead, queryArguments: queryArguments, body: body, contentType: contentType) {
        case .success(let read): arguments = read
        case .failure(let error): return .failure(error)
        }

        let names = arguments.map(\.0)
        let locationKey = function == .priceMedian ? "location_id" : "location_ids"
        let allowed: Set<String> = [locationKey, "rate_kind"]
        guard names.allSatisfy(allowed.contains), names.contains(locationKey), Set(names).count == names.count else {
            return .failure(noSuchFunction(function.rawValue, arguments: names))
        }

        var query = MedianQuery(locations: .one(""), rateKinds: .functionDefault)
        for (key, argument) in arguments {
            switch key {
            case "rate_kind":
                switch argument {
                case .json(.null), .text(""):
                    query.rateKinds = .all
                    continue
                default: break
                }
                switch argument.string(named: key) {
                case .success(let text): query.rateKinds = .one(text)
                case .failure(let error): return .failure(error)
                }
            case "location_id":
                switch argument.string(named: key) {
                case .success(let text): query.locations = .one(text)
                case .failure(let error): return .failure(error)
                }
            default:
                switch argument.stringArray(named: key) {
                case .success(let list): query.locations = .many(list)
                case .failure(let error): return .failure(error)
                }
            }
        }
        return .success(query)
    }

    /// A function call's named arguments as PostgREST reads them: the query parameters of a GET or
    /// HEAD that are not read options (`ReadOptions.parse` splits them off), else the members of a JSON
    /// object body (none for an empty body). Names are checked by the caller.
    static func namedArguments(isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                               contentType: String?) -> Result<[(String, Argument)], APIError> {
        var arguments: [(String, Argument)] = []
        if isRead {
            for (key, value) in queryArguments { arguments.append((key, .text(value))) }
        } else if !body.isEmpty {
            guard ReportSubmission.isJSONContentType(contentType) else {
                return .failure(.badRequest("PGRST107", "Content-Type must be application/json"))
            }
            let document: JSONValue
            switch JSONBody.parse(body) {
            case .success(let value): document = value
            case .failure(let error): return .failure(error)
            }
            guard let members = document.objectValue else {
                return .failure(.badRequest("PGRST102", "Function arguments must be a JSON object"))
            }
            for member in members { arguments.append((member.key, .json(member.value))) }
        }
        return .success(arguments)
    }

    static func noSuchFunction(_ name: String, arguments: [String]) -> APIError {
        let list = arguments.map { JSONBody.printable($0) }.sorted().joined(separator: ", ")
        return APIError(status: 404, code: "PGRST202",
                        message: "Could not find the function public.\(JSONBody.printable(name))(\(list)) in the schema cache",
                        hint: "Available: price_median(location_id, rate_kind), price_medians(location_ids, rate_kind), "
                            + "price_quotes(location_ids, rate_kind, starts_at, duration)")
    }

    enum Argument {
        case text(String)
        case json(JSONValue)

        func string(named name: String) -> Result<String, APIError> {
            switch self {
            case .text(let text):
                return checked(text, name)
            case .json(let value):
                guard let text = value.stringValue else {
                    return .failure(.badRequest("22P02", "\(name) must be a string"))
                }
                return checked(text, name)
            }
        }

        func stringArray(named name: String) -> Result<[String], APIError> {
            switch self {
            case .text(let literal):
                guard let list = PostgresArrayLiteral.parse(literal) else {
                    return .failure(.badRequest("22P02", "\(name) must be an array literal such as {a,b}",
                                                details: "Got '\(JSONBody.printable(String(literal.prefix(60))))'"))
                }
                for item in list { if case .failure(let error) = checked(item, name) { return .failure(error) } }
                return .success(list)
            case .json(let value):
                guard let elements = value.arrayValue else {
                    return .failure(.badRequest("22P02", "\(name) must be an array of strings"))
                }
                var list: [String] = []
                list.reserveCapacity(elements.count)
                for element in elements {
                    guard let text = element.stringValue else {
                        return .failure(.badRequest("22P02", "\(name) must be an array of strings"))
                    }
                    if case .failure(let error) = checked(text, name) { return .failure(error) }
                    list.append(text)
                }
                return .success(list)
            }
        }

        private func checked(_ text: String, _ name: String) -> Result<String, APIError> {
            text.utf8.contains(0)
                ? .failure(.badRequest("22P05", "\(name) must not contain NUL characters"))
                : .success(text)
        }
    }

    /// The first statement parameter: the id itself, or for a list its JSON text, which the SQL
    /// unpacks with jsonb_array_elements_text (no array-literal quoting to get wrong).
    var locationsParameter: String {
        switch locations {
        case .one(let id): return id
        case .many(let ids): return Self.jsonArray(ids)
        }
    }

    /// A list of ids as one JSON array parameter.
    static func jsonArray(_ ids: [String]) -> String {
        var writer = JSONWriter(capacity: 32 * ids.count)
        writer.beginArray()
        for id in ids { writer.string(id) }
        writer.endArray()
        return writer.text
    }
}

/// PostgREST's GET form for array arguments: `{a,b,"c,d"}`.
enum PostgresArrayLiteral {
    static func parse(_ literal: String) -> [String]? {
        let scalars = Array(literal.unicodeScalars)
        guard scalars.first == "{", scalars.last == "}" else { return nil }
        var items: [String] = []
        var index = 1
        let end = scalars.count - 1
        if index == end { return [] }
        while index < end {
            var item = String.UnicodeScalarView()
            if scalars[index] == "\"" {
                index += 1
                while index < end, scalars[index] != "\"" {
                    if scalars[index] == "\\", index + 1 < end { index += 1 }
                    item.append(scalars[index])
                    index += 1
                }
                guard index < end else { return nil }
                index += 1
            } else {
                while index < end, scalars[index] != "," {
                    guard scalars[index] != "\"", scalars[index] != "{" else { return nil }
                    item.append(scalars[index])
                    index += 1
                }
            }
            items.append(String(item))
            if index < end {
                guard scalars[index] == "," else { return nil }
                index += 1
                if index == end { return nil }
            }
        }
        return items
    }
}
