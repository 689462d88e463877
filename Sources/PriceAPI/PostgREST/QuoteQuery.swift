import Foundation
import PriceDB
import PriceSQL
import PostgRESTDialect

/// A call of `price_quotes`: the community median beside the published cost of a planned stay.
///
/// Arguments are resolved the way PostgREST resolves a function, as for the median functions:
/// `location_ids` is required, `rate_kind`, `starts_at` (a timestamp, e.g. `2026-03-02T17:30:00-05:00`) and
/// `duration` (ISO 8601, e.g. `PT2H`) are optional; unknown or missing names mean "no such function".
/// An argument left out is left out of the SQL call too, so the function's own defaults apply (hourly,
/// now, one hour). Parsed on the event loop: `starts_at` and `duration` are checked here against the
/// forms the OpenAPI document states (so a schema-valid value is accepted and nothing else is); a known
/// rate kind, a duration within 366 days and at most 50 ids are the database's to decide, as for
/// `price_medians`. Its rows take PostgREST's read options like the median functions' (`columns`).
struct QuoteQuery: Sendable, Equatable {
    var locationIDs: [String]
    var rateKind: String?
    var startsAt: String?
    var duration: String?

    static let functionName = RPCFunction.priceQuotes.rawValue

    /// The function's result columns, as its statements select them (one list, PriceSQL's); the read
    /// options (filters, select, order, …) name them.
    static let columns = Statements.quoteColumns.map(ResultColumn.init)

    /// - Parameter queryArguments: in the GET form, the query parameters that are not read options.
    static func parse(isRead: Bool, queryArguments: [(String, String)], body: [UInt8],
                      contentType: String?) -> Result<QuoteQuery, APIError> {
        let call: RPCCall
        switch RPCCall.read(functionName, isRead: isRead, queryArguments: queryArguments, body: body, contentType: contentType) {
        case .success(let read): call = read
        case .failure(let error): return .failure(error)
        }
        if let error = call.checkNames(allowed: ["location_ids", "rate_kind", "starts_at", "duration"], required: "location_ids",
                                       available: RPCFunction.signatures) {
            return .failure(error)
        }
        var quote = QuoteQuery(locationIDs: [], rateKind: nil, startsAt: nil, duration: nil)
        for (key, argument) in call.arguments {
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
            case "starts_at":
                switch checkedStartsAt(text) {
                case .success(let value): quote.startsAt = value
                case .failure(let error): return .failure(error)
                }
            default:
                switch checkedDuration(text) {
                case .success(let value): quote.duration = value
                case .failure(let error): return .failure(error)
                }
            }
        }
        return .success(quote)
    }

    /// A `starts_at` in the form the OpenAPI document states (`places_nearby` takes the same), else 22007.
    static func checkedStartsAt(_ text: String) -> Result<String, APIError> {
        guard text.utf8.count <= maxArgumentBytes, text.wholeMatch(of: startsAtForm) != nil,
              Timestamp.microseconds(text) != nil else {
            return .failure(.invalidInput("22007", "invalid input syntax for type timestamp with time zone: "
                                            + "\"\(JSONBody.printable(String(text.prefix(60))))\"",
                                        hint: "starts_at is ISO 8601, e.g. 2026-03-02T17:30:00-05:00; without an offset it is UTC"))
        }
        return .success(text)
    }

    /// A `duration` in the form the OpenAPI document states, else 22023.
    static func checkedDuration(_ text: String) -> Result<String, APIError> {
        guard text.utf8.count <= maxArgumentBytes, text.wholeMatch(of: durationForm) != nil else {
            return .failure(.invalidInput("22023", "duration must be an ISO 8601 duration of more than 0 and at most 366 days: "
                                            + "PT<hours>H[<minutes>M], PT<minutes>M or P<days>D[T<hours>H]",
                                        details: "Got '\(JSONBody.printable(String(text.prefix(60))))'",
                                        hint: "e.g. PT2H, PT90M, PT1H30M, P1D"))
        }
        return .success(text)
    }

    /// The longest `starts_at` or `duration` worth matching (the longest valid ones have 32 and 11
    /// characters): a longer one is refused before the regular expression sees it.
    static let maxArgumentBytes = 64

    /// The `starts_at` pricesvc passes on: ISO 8601 as `Timestamp` reads it (a date, or a date and time to
    /// the microsecond with an optional offset; year 0 is no year to PostgreSQL). Checked here, before the database,
    /// so that what the OpenAPI document states (`startsAtPattern`) is what is accepted.
    static let startsAtCore = "([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(0[1-9]|1[0-2])-DAY"
        + "([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9]([.][0-9]{1,6})?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?)?"
    /// The document's form: days up to 28, so every value it describes is a real date.
    static let startsAtPattern = OpenAPIDocument.anchored(startsAtCore.replacingOccurrences(of: "DAY", with: "(0[1-9]|1[0-9]|2[0-8])"))
    /// The durations accepted: ISO 8601, more than 0 and at most 366 days by construction (at most
    /// 999 hours 59 minutes, 9999 minutes, or 365 days and 23 hours), so the document states them exactly.
    static let durationCore = "P(T([1-9][0-9]{0,2}H([0-5]?[0-9]M)?|[1-9][0-9]{0,3}M)|([1-9][0-9]?|[12][0-9]{2}|3[0-5][0-9]|36[0-5])D(T(1?[0-9]|2[0-3])H)?)"
    static let durationPattern = OpenAPIDocument.anchored(durationCore)

    nonisolated(unsafe) private static let startsAtForm =
        try! Regex(startsAtCore.replacingOccurrences(of: "DAY", with: "(0[1-9]|[12][0-9]|3[01])"))
    nonisolated(unsafe) private static let durationForm = try! Regex(durationCore)

    /// The call's arguments: the ids as one JSON array (as for `price_medians`), and the optional
    /// arguments present; `Statements.quotes(for:)` picks the statement that passes exactly those.
    var arguments: Statements.QuoteArguments {
        Statements.QuoteArguments(locationIDs: RPCCall.jsonArray(locationIDs), rateKind: rateKind,
                                  startsAt: startsAt, duration: duration)
    }

    /// The prepared statement for the arguments given, and its parameters as sent.
    var call: (PreparedStatement, [String?]) {
        let statement = Statements.quotes(for: arguments)
        return (statement.prepared, statement.encoded(arguments))
    }
}
