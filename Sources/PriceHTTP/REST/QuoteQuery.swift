import Foundation
import PriceDB
import PriceJSON

/// A call of `price_quotes`: the community median beside the published cost of a planned stay.
///
/// Arguments are resolved the way PostgREST resolves a function: `location_ids` is required, `rate_kind`,
/// `starts_at` (a timestamp, e.g. `2026-03-02T17:30:00-05:00`) and `duration` (ISO 8601, e.g. `PT2H`) are
/// optional; unknown or missing names mean "no such function". An argument left out is left out of the
/// SQL call too, so the function's own defaults apply (hourly, now, one hour).
public struct QuoteQuery: Sendable, Equatable {
    public var locationIDs: [String]
    public var rateKind: String?
    public var startsAt: String?
    public var duration: String?

    public static let functionName = RPCFunction.priceQuotes.rawValue

    public static func parse(method: String, body: [UInt8], contentType: String?,
                             query: [(name: String, value: String)]) -> Result<QuoteQuery, APIError> {
        var arguments: [(String, MedianQuery.Argument)] = []
        if method == "GET" {
            for (key, value) in query { arguments.append((key, .text(value))) }
        } else if !body.isEmpty {
            guard ReportSubmission.isJSONContentType(contentType) else {
                return .failure(.badRequest("PGRST107", "Content-Type must be application/json"))
            }
            switch JSONBody.parse(body) {
            case .success(let document):
                guard let members = document.objectValue else {
                    return .failure(.badRequest("PGRST102", "Function arguments must be a JSON object"))
                }
                for member in members { arguments.append((member.key, .json(member.value))) }
            case .failure(let error):
                return .failure(error)
            }
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

    /// The prepared statement for the arguments given, and its parameters.
    var call: (PreparedStatement, [String?]) {
        let given: [(Statements.QuoteArgument, String?)] = [(.rateKind, rateKind), (.startsAt, startsAt), (.duration, duration)]
        let present = given.filter { $0.1 != nil }
        let ids = "[" + locationIDs.map(quotedJSON).joined(separator: ",") + "]"
        return (Statements.quotes(passing: Set(present.map(\.0))), [ids] + present.map(\.1))
    }
}

extension Statements {
    /// The optional arguments of `public.price_quotes`, in its signature's order, with their casts.
    enum QuoteArgument: Int, CaseIterable, Hashable {
        case rateKind, startsAt, duration

        var sql: String {
            switch self {
            case .rateKind: "rate_kind => $%d"
            case .startsAt: "starts_at => $%d::timestamptz"
            case .duration: "duration => $%d::interval"
            }
        }
    }

    /// `quotes` without the arguments a request leaves out (one statement per combination, all prepared
    /// on every connection). With all of them it is exactly `quotes`, which the bench's pgbench runs.
    static func quotes(passing arguments: Set<QuoteArgument>) -> PreparedStatement {
        let ordered = QuoteArgument.allCases.filter(arguments.contains)
        let mask = ordered.reduce(0) { $0 | (1 << $1.rawValue) }
        if mask == (1 << QuoteArgument.allCases.count) - 1 { return quotes }
        var list = ["location_ids => array(select pg_catalog.jsonb_array_elements_text($1::jsonb))"]
        for (index, argument) in ordered.enumerated() {
            list.append(argument.sql.replacingOccurrences(of: "%d", with: String(index + 2)))
        }
        return PreparedStatement(name: "pricesvc_quotes_\(mask)", sql: """
            select coalesce(pg_catalog.json_agg(q), '[]')::text
            from public.price_quotes(\(list.joined(separator: ",\n                         "))) q
            """)
    }

    static let allQuotes: [PreparedStatement] = (0..<(1 << QuoteArgument.allCases.count)).map { mask in
        quotes(passing: Set(QuoteArgument.allCases.filter { mask & (1 << $0.rawValue) != 0 }))
    }
}

/// A JSON string literal, through `JSONValue` (the ids travel as one JSON array parameter).
private func quotedJSON(_ text: String) -> String {
    JSONValue.string(text).serialized()
}
