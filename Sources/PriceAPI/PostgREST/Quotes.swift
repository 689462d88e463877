import PriceHTTP

extension PriceService {
    /// `POST|GET /rest/v1/rpc/price_quotes`: the arguments are parsed here, on the event loop (a bad one
    /// is answered without a worker); the plan is identity + the function call in one pipeline, whose
    /// rows come back already as a JSON array.
    func callQuotes(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let quote: QuoteQuery
        switch QuoteQuery.parse(method: request.method, body: request.body, contentType: request.header("content-type"),
                                query: request.query) {
        case .success(let parsed): quote = parsed
        case .failure(let error): return .answer(error.response)
        }
        let (statement, parameters) = quote.call
        return .database(functionRowsPlan(.prepared(statement, parameters), caller: caller))
    }
}
