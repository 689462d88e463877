import PriceDB

extension PriceService {
    /// `POST|GET /rest/v1/rpc/price_quotes`: identity + function call in one pipeline; the function's
    /// rows come back already as a JSON array.
    func callQuotes(_ request: HTTPRequest, caller: Caller) -> HTTPResponse {
        let quote: QuoteQuery
        switch QuoteQuery.parse(method: request.method, body: request.body, contentType: request.header("content-type"),
                                query: request.query) {
        case .success(let parsed): quote = parsed
        case .failure(let error): return error.response
        }
        let (statement, parameters) = quote.call
        do {
            let results = try database.run([identityQuery(caller), .prepared(statement, parameters)])
            let json = results.last?.rows.first?.first ?? nil
            return .json(200, json ?? "[]", headers: [("Content-Range", "*/*")])
        } catch {
            return databaseFailure(error, role: caller.role).response
        }
    }
}
