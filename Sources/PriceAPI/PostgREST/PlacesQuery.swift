import PriceDB
import PriceHTTPMessage
import PriceJSON
import PriceSQL
import PostgRESTDialect

/// A call of `places_nearby`: the places within `radius_m` of (`lat`, `lng`), nearest first, with their
/// medians and, for a stay, their published cost.
///
/// Arguments are resolved the way PostgREST resolves a function: `lat` and `lng` are required, `radius_m`,
/// `rate_kind`, `starts_at`, `duration` and `max_results` optional; unknown or missing names mean "no such
/// function". Each is checked here for its type only (a decimal number, an integer, the forms
/// `price_quotes` takes for the stay), so a 400 for a malformed value never takes a worker; the bounds
/// (lat, lng, radius, results, both or neither of the stay) are the database's, which names each
/// (22023).
struct PlacesQuery: Sendable, Equatable {
    var arguments: Statements.PlacesArguments

    static let functionName = RPCFunction.placesNearby.rawValue

    /// The function's result columns, as its statements select them (one list, PriceSQL's).
    static let columns = Statements.placesColumns.map(ResultColumn.init)

    static let argumentNames: Set<String> = ["lat", "lng", "radius_m", "rate_kind", "starts_at", "duration", "max_results"]

    /// - Parameter queryArguments: in the GET form, the query parameters that are not read options.
    static func parse(isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                      contentType: String?) -> Result<PlacesQuery, APIError> {
        let call: RPCCall
        switch RPCCall.read(functionName, isRead: isRead, queryArguments: queryArguments, body: body, contentType: contentType) {
        case .success(let read): call = read
        case .failure(let error): return .failure(error)
        }
        let names = call.arguments.map(\.name)
        guard names.contains("lng"), call.checkNames(allowed: argumentNames, required: "lat", available: RPCFunction.signatures) == nil else {
            return .failure(RPCCall.noSuchFunction(functionName, arguments: names, available: RPCFunction.signatures))
        }
        var arguments = Statements.PlacesArguments(lat: "", lng: "")
        for (key, argument) in call.arguments {
            switch key {
            case "lat", "lng":
                guard let number = decimal(argument) else {
                    return .failure(.invalidInput("22P02", "\(key) must be a number of degrees, e.g. 37.7955",
                                                details: details(argument)))
                }
                if key == "lat" { arguments.lat = number } else { arguments.lng = number }
            case "radius_m", "max_results":
                switch integer(argument, named: key) {
                case .success(let number): if key == "radius_m" { arguments.radiusMetres = number } else { arguments.maxResults = number }
                case .failure(let error): return .failure(error)
                }
            default:
                // JSON null for the stay's arguments is their default (no stay); any other null is a value
                // the database refuses by name (22023), so it is passed on as null.
                if case .json(.null) = argument {
                    if key == "rate_kind" { return .failure(.invalidInput("22023", "unknown rate_kind NULL",
                                                                        hint: "rate_kind is one of " + RateKind.allCases.map(\.rawValue).joined(separator: ", "))) }
                    continue
                }
                let text: String
                switch argument.string(named: key) {
                case .success(let value): text = value
                case .failure(let error): return .failure(error)
                }
                switch key {
                case "rate_kind": arguments.rateKind = text
                case "starts_at":
                    switch QuoteQuery.checkedStartsAt(text) {
                    case .success(let value): arguments.startsAt = value
                    case .failure(let error): return .failure(error)
                    }
                default:
                    switch QuoteQuery.checkedDuration(text) {
                    case .success(let value): arguments.duration = value
                    case .failure(let error): return .failure(error)
                    }
                }
            }
        }
        return .success(PlacesQuery(arguments: arguments))
    }

    /// A finite decimal number, from JSON or query-string text: what `double precision` reads, less NaN
    /// and the infinities (the database would only refuse them as out of range).
    static func decimal(_ argument: RPCCall.Argument) -> String? {
        switch argument {
        case .text(let value):
            // The query string's form, as the OpenAPI document states it: no exponent, no sign but a minus.
            guard value.utf8.count <= 24, value.wholeMatch(of: degreesForm) != nil else { return nil }
            return value
        case .json(.number(let number)):
            return ColumnType.decimal(number.text) == nil ? nil : number.text
        case .json: return nil
        }
    }

    /// Degrees in the query string (`OpenAPIDocument`'s pattern for `lat` and `lng`).
    static let degreesPattern = "-?[0-9]{1,3}([.][0-9]{1,15})?"
    nonisolated(unsafe) private static let degreesForm = try! Regex(degreesPattern)

    /// An `integer`, from a JSON integer or query-string digits; 22003 beyond PostgreSQL's range.
    static func integer(_ argument: RPCCall.Argument, named name: String) -> Result<String, APIError> {
        let parsed: Result<TypedValue, APIError>
        switch argument {
        case .text(let value): parsed = ColumnType.integer.value(value)
        case .json(.number(let number)): parsed = ColumnType.integer.value(number.text)
        case .json: return .failure(.invalidInput("22P02", "\(name) must be an integer", details: details(argument)))
        }
        switch parsed {
        case .success(.integer(let number)): return .success(String(number))
        case .success: return .failure(.invalidInput("22P02", "\(name) must be an integer"))
        case .failure(let error): return .failure(error)
        }
    }

    static func details(_ argument: RPCCall.Argument) -> String {
        switch argument {
        case .text(let value): return "Got '\(JSONBody.printable(String(value.prefix(60))))'"
        case .json(.null): return "Got null"
        case .json(.bool): return "Got a boolean"
        case .json(.array): return "Got an array"
        case .json(.object): return "Got an object"
        case .json: return "Got a string"
        }
    }

    /// The prepared statement for the arguments given, and its parameters as sent.
    var call: (PreparedStatement, [String?]) {
        let statement = Statements.places(for: arguments)
        return (statement.prepared, statement.encoded(arguments))
    }
}

/// A call of `places_match`: which existing places an app's own candidate (a name at a point) may be,
/// best first. `name`, `lat` and `lng` are required, `radius_m` optional; types are checked here, bounds
/// (the name's length, the coordinates, the radius) by the database (22023), as for `places_nearby`.
struct PlaceMatchQuery: Sendable, Equatable {
    var name: String
    var lat: String
    var lng: String
    var radiusMetres: String?

    static let functionName = RPCFunction.placesMatch.rawValue
    static let columns = Statements.placeMatchColumns.map(ResultColumn.init)

    static func parse(isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                      contentType: String?) -> Result<PlaceMatchQuery, APIError> {
        let call: RPCCall
        switch RPCCall.read(functionName, isRead: isRead, queryArguments: queryArguments, body: body, contentType: contentType) {
        case .success(let read): call = read
        case .failure(let error): return .failure(error)
        }
        let names = call.arguments.map(\.name)
        guard names.contains("lat"), names.contains("lng"),
              call.checkNames(allowed: ["name", "lat", "lng", "radius_m"], required: "name", available: RPCFunction.signatures) == nil else {
            return .failure(RPCCall.noSuchFunction(functionName, arguments: names, available: RPCFunction.signatures))
        }
        var query = PlaceMatchQuery(name: "", lat: "", lng: "", radiusMetres: nil)
        for (key, argument) in call.arguments {
            switch key {
            case "name":
                switch argument.string(named: key) {
                case .success(let text): query.name = text
                case .failure(let error): return .failure(error)
                }
            case "lat", "lng":
                guard let number = PlacesQuery.decimal(argument) else {
                    return .failure(.invalidInput("22P02", "\(key) must be a number of degrees, e.g. 37.7955",
                                                details: PlacesQuery.details(argument)))
                }
                if key == "lat" { query.lat = number } else { query.lng = number }
            default:
                switch PlacesQuery.integer(argument, named: key) {
                case .success(let number): query.radiusMetres = number
                case .failure(let error): return .failure(error)
                }
            }
        }
        return .success(query)
    }

    var statement: Statement<(String, String, String, String?), TextRow> {
        Statements.placeMatches[radiusMetres == nil ? 0 : 1]
    }

    var parameters: (String, String, String, String?) { (name, lat, lng, radiusMetres) }
}

/// `POST|GET|HEAD /rest/v1/rpc/places_nearby`: read options and arguments parsed on the event loop; identity +
/// the call in one pipeline; the options (and `Accept: application/geo+json`) applied to its rows on the worker.
struct PlacesHandler: Sendable {
    let calls: FunctionCallPlanner

    func call(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let isRead = request.method == "GET" || request.method == "HEAD"
        let options: ReadOptions
        let queryArguments: [(String, String)]
        switch ReadOptions.parse(query: request.query, headers: request, columns: PlacesQuery.columns,
                                 relation: PlacesQuery.functionName, isRead: isRead, offersGeoJSON: true) {
        case .success(let parsed): (options, queryArguments) = parsed
        case .failure(let error): return .answer(error.response)
        }
        let places: PlacesQuery
        switch PlacesQuery.parse(isRead: isRead, queryArguments: queryArguments, body: request.body,
                                 contentType: request.header("content-type")) {
        case .success(let parsed): places = parsed
        case .failure(let error): return .answer(error.response)
        }
        let statement = Statements.places(for: places.arguments)
        // A stay prices every zoned place in the radius: as expensive as a quote. Without one, a search
        // costs what a median lookup of its results does.
        let cost: DatabaseShare.Cost = places.arguments.startsAt == nil ? .ordinary : .expensive
        return .database(calls.plan(statement.query(places.arguments), rows: statement.cells, columns: PlacesQuery.columns,
                                    options: options, caller: caller, cost: cost))
    }

    /// `POST|GET|HEAD /rest/v1/rpc/places_match`, the same way.
    func match(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let isRead = request.method == "GET" || request.method == "HEAD"
        let options: ReadOptions
        let queryArguments: [(String, String)]
        switch ReadOptions.parse(query: request.query, headers: request, columns: PlaceMatchQuery.columns,
                                 relation: PlaceMatchQuery.functionName, isRead: isRead) {
        case .success(let parsed): (options, queryArguments) = parsed
        case .failure(let error): return .answer(error.response)
        }
        let match: PlaceMatchQuery
        switch PlaceMatchQuery.parse(isRead: isRead, queryArguments: queryArguments, body: request.body,
                                     contentType: request.header("content-type")) {
        case .success(let parsed): match = parsed
        case .failure(let error): return .answer(error.response)
        }
        let statement = match.statement
        return .database(calls.plan(statement.query(match.parameters), rows: statement.cells, columns: PlaceMatchQuery.columns,
                                    options: options, caller: caller))
    }
}
