import PriceJSON
import PriceSQL
import PostgRESTDialect

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
        guard function != .priceQuotes, function != .placesNearby, function != .placesMatch else { return .failure(noSuchFunction(function.rawValue, arguments: [])) }
        let call: RPCCall
        switch RPCCall.read(function.rawValue, isRead: isRead, queryArguments: queryArguments, body: body, contentType: contentType) {
        case .success(let read): call = read
        case .failure(let error): return .failure(error)
        }
        let locationKey = function == .priceMedian ? "location_id" : "location_ids"
        if let error = call.checkNames(allowed: [locationKey, "rate_kind"], required: locationKey, available: RPCFunction.signatures) {
            return .failure(error)
        }

        var query = MedianQuery(locations: .one(""), rateKinds: .functionDefault)
        for (key, argument) in call.arguments {
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

    static func noSuchFunction(_ name: String, arguments: [String]) -> APIError {
        RPCCall.noSuchFunction(name, arguments: arguments, available: RPCFunction.signatures)
    }

    /// The first statement parameter: the id itself, or for a list its JSON text, which the SQL
    /// unpacks with jsonb_array_elements_text (no array-literal quoting to get wrong).
    var locationsParameter: String {
        switch locations {
        case .one(let id): return id
        case .many(let ids): return RPCCall.jsonArray(ids)
        }
    }
}
