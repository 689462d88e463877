import PriceDB

/// A call of `price_quotes`: the community median beside the published cost of a planned stay.
///
/// Arguments are resolved the way PostgREST resolves a function, as for the median functions:
/// `location_ids` is required, `rate_kind`, `starts_at` (a timestamp, e.g. `2026-03-02T17:30:00-05:00`) and
/// `duration` (ISO 8601, e.g. `PT2H`) are optional; unknown or missing names mean "no such function".
/// An argument left out is left out of the SQL call too, so the function's own defaults apply (hourly,
/// now, one hour). Parsed on the event loop; what the values mean (a known rate kind, a valid time and
/// duration, at most 50 ids) is the database's to decide, exactly as for `price_medians`.
struct QuoteQuery: Sendable, Equatable {
    var locationIDs: [String]
    var rateKind: String?
    var startsAt: String?
    var duration: String?

    static let functionName = RPCFunction.priceQuotes.rawValue

    static func parse(isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                      contentType: String?) -> Result<QuoteQuery, APIError> {
        let arguments: [(String, MedianQuery.Argument)]
        switch MedianQuery.namedArguments(isRead: isRead, queryArguments: queryArguments, body: body,
                                          contentType: contentType) {
        case .success(let read): arguments = read
        case .failure(let error): return .failure(error)
        }
        let names = arguments.map(\.0)
        let allowed: Set<String> = ["location_ids", "rate_kind", "starts_at", "duration"]
        guard names.allSatisfy(allowed.contains), names.contains("location_ids"), Set(names).count == names.count else {
            return .failure(MedianQuery.noSuchFunction(functionName, arguments: names))
        }
        var quote = QuoteQuery(locationIDs: [], rateKind: nil, startsAt: nil, duration: nil)
        for (key, argument) in arguments {
            if key == "location_ids" {
                switch argument.stringArray(named: key) {
                case .success(let list): quote.locationIDs = list
                case .failure(let error): return .failure(error)
                }
                continue
            }
            let text: String
            switch argument.string(named: key) {
            case .success(let value): text = value
            case .failure(let error): return .failure(error)
            }
            switch key {
            case "rate_kind": quote.rateKind = text
            case "starts_at": quote.startsAt = text
            default: quote.duration = text
            }
        }
        return .success(quote)
    }

    /// The prepared statement for the arguments given, and its parameters: the ids as one JSON array
    /// (as for `price_medians`), then the optional arguments present, in the function's order.
    var call: (PreparedStatement, [String?]) {
        let given: [(Statements.QuoteArgument, String?)] = [(.rateKind, rateKind), (.startsAt, startsAt), (.duration, duration)]
        let present = given.filter { $0.1 != nil }
        return (Statements.quotes(passing: Set(present.map(\.0))), [MedianQuery.jsonArray(locationIDs)] + present.map(\.1))
    }
}
