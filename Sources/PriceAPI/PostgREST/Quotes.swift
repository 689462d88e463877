import PriceHTTP

extension PriceService {
    /// `POST|GET /rest/v1/rpc/price_quotes`: the arguments are parsed here, on the event loop (a bad one
    /// is answered without a worker); the plan is identity + the function call in one pipeline, whose
    /// rows come back already as a JSON array.
    func callQuotes(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let quote: QuoteQuery
        let isRead = request.method == "GET" || request.method == "HEAD"
        switch QuoteQuery.parse(isRead: isRead, queryArguments: request.query.map { ($0.name, $0.value) },
                                body: request.body, contentType: request.header("content-type")) {
        case .success(let parsed): quote = parsed
        case .failure(let error): return .answer(error.response)
        }
        let (statement, parameters) = quote.call
        let (role, retryAfter) = (caller.role, settings.unavailableRetryAfter)
        return .database(DatabasePlan([caller.identityQuery, .prepared(statement, parameters)], readOnly: true) { outcome in
            switch outcome {
            case .success(let results):
                let json = results.last?.rows.first?.first ?? nil
                return .json(200, json ?? "[]", headers: [("Content-Range", "*/*")])
            case .failure(let error):
                return APIError(database: error, role: role, unavailableRetryAfter: retryAfter).response
            }
        })
    }
}
