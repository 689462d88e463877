import PriceHTTPMessage
import PriceSQL

/// `POST|GET|HEAD /rest/v1/rpc/price_quotes`: the read options and the arguments are parsed here, on
/// the event loop (a bad one is answered without a worker); the plan is identity + the function call
/// in one pipeline, and the options are applied to the function's rows on the worker, as for the
/// median functions.
struct QuoteHandler: Sendable {
    let calls: FunctionCallPlanner

    func call(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let isRead = request.method == "GET" || request.method == "HEAD"
        let options: ReadOptions
        let queryArguments: [(String, String)]
        switch ReadOptions.parse(query: request.query, headers: request, columns: QuoteQuery.columns,
                                 relation: QuoteQuery.functionName, isRead: isRead) {
        case .success(let parsed): (options, queryArguments) = parsed
        case .failure(let error): return .answer(error.response)
        }
        let quote: QuoteQuery
        switch QuoteQuery.parse(isRead: isRead, queryArguments: queryArguments, body: request.body,
                                contentType: request.header("content-type")) {
        case .success(let parsed): quote = parsed
        case .failure(let error): return .answer(error.response)
        }
        let statement = Statements.quotes(for: quote.arguments)
        return .database(calls.plan(statement.query(quote.arguments), rows: statement.cells, columns: QuoteQuery.columns,
                                    options: options, caller: caller, cost: .expensive))
    }
}
