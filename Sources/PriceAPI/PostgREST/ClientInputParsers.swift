import PriceHTTPMessage

/// The parsers of what a client sends to /rest/v1, callable from outside the module on plain values:
/// for fuzz targets (a separate package cannot see internal types). Each runs exactly the code a
/// request runs, where it runs, and returns the HTTP status the input would get, so a target can
/// check that the answer is one PostgREST gives as well as that nothing traps.
public enum ClientInputParsers {
    /// Read options on `price_medians` (`isQuotes`: `price_quotes`), then rendering of a few rows with
    /// them under `maxResponseBytes`: filters, select, order, limit/offset, Range, Accept, Prefer.
    public static func readOptions(query: [(name: String, value: String)], request: HTTPRequest,
                                   isQuotes: Bool = false, maxResponseBytes: Int = ServiceSettings.defaultMaxResponseBytes) -> Int {
        let columns = isQuotes ? QuoteQuery.columns : MedianQuery.columns
        let isRead = request.method == "GET" || request.method == "HEAD"
        switch ReadOptions.parse(query: query, headers: request, columns: columns,
                                 relation: isQuotes ? QuoteQuery.functionName : "price_medians", isRead: isRead) {
        case .failure(let error): return error.status
        case .success(let (options, _)):
            return options.render(ResultSet(columns: columns, rows: sampleRows(columns)), maxBytes: max(maxResponseBytes, 0)).status
        }
    }

    /// The `Range` header alone: nil when it is ignored, else the page it asks for, clamped.
    public static func rangeHeader(_ text: String) -> (from: Int, to: Int?, backwards: Bool)? {
        RowRange.parseHeader(text)
    }

    /// A call of `price_median(s)` (`many`) or `price_quotes` (`quotes`): its arguments from a JSON body
    /// (POST) or the query string (GET). 200 when it would reach the database.
    public static func functionCall(_ function: String, request: HTTPRequest) -> Int {
        let isRead = request.method == "GET" || request.method == "HEAD"
        let columns = function == QuoteQuery.functionName ? QuoteQuery.columns : MedianQuery.columns
        let arguments: [(String, String)]
        switch ReadOptions.parse(query: request.query, headers: request, columns: columns, relation: function, isRead: isRead) {
        case .failure(let error): return error.status
        case .success(let (_, split)): arguments = split
        }
        if function == QuoteQuery.functionName {
            switch QuoteQuery.parse(isRead: isRead, queryArguments: arguments, body: request.body,
                                    contentType: request.header("content-type")) {
            case .failure(let error): return error.status
            case .success(let quote): _ = quote.call; return 200
            }
        }
        guard let rpc = RPCFunction(rawValue: function) else { return 404 }
        switch MedianQuery.parse(function: rpc, isRead: isRead, queryArguments: arguments, body: request.body,
                                 contentType: request.header("content-type")) {
        case .failure(let error): return error.status
        case .success(let query): _ = query.locationsParameter; return 200
        }
    }

    /// `POST /rest/v1/price_reports`: body, Content-Type, Prefer and the query string. 201 when it would
    /// reach the database.
    public static func reportSubmission(_ request: HTTPRequest) -> Int {
        switch ReportSubmission.parse(body: request.body, contentType: request.header("content-type"),
                                      prefer: request.header("prefer")) {
        case .failure(let error): return error.status
        case .success(let submission):
            if let error = submission.checkQuery(request.query) { return error.status }
            _ = submission.parameterJSON
            return 201
        }
    }

    /// A row per column type with values at the ends of their ranges (and a NULL), for rendering.
    private static func sampleRows(_ columns: [ResultColumn]) -> [[String?]] {
        let extremes: [[String?]] = [
            columns.map { column in
                switch column.type {
                case .text: return "a\u{1F17F}\"\\,"
                case .integer: return "2147483647"
                case .bigint: return "9223372036854775807"
                case .boolean: return "t"
                case .timestamptz: return "2026-11-29 22:00:00+00"
                case .double: return "-122.39370000000001"
                }
            },
            columns.map { column in
                switch column.type {
                case .text: return ""
                case .integer: return "-2147483648"
                case .bigint: return "-9223372036854775808"
                case .boolean: return "f"
                case .timestamptz: return "0001-01-01 00:00:00+00"
                case .double: return "1e-300"
                }
            },
            columns.map { _ in nil },
        ]
        return extremes
    }
}
