import PriceDB
import PriceHTTP
import PriceJSON

extension PriceService {
    /// `POST /rest/v1/price_reports`: identity + insert (+ receipts) in one pipeline.
    func submitReports(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let submission: ReportSubmission
        switch ReportSubmission.parse(body: request.body, contentType: request.header("content-type"),
                                      prefer: request.header("prefer")) {
        case .success(let parsed): submission = parsed
        case .failure(let error): return .answer(error.response)
        }
        let insert = submission.sendsCurrency ? Statements.insertReports : Statements.insertReportsDefaultCurrency
        var queries = [caller.identityQuery, .prepared(insert, [submission.parameterJSON])]
        if submission.returnRepresentation { queries.append(.prepared(Statements.receipts, [])) }
        let (role, retryAfter) = (caller.role, settings.unavailableRetryAfter)
        return .database(DatabasePlan(queries) { outcome in
            let results: [QueryResult]
            switch outcome {
            case .success(let value): results = value
            case .failure(let error):
                return APIError(database: error, role: role, unavailableRetryAfter: retryAfter).response
            }
            guard submission.returnRepresentation else {
                return .empty(201, headers: [("Content-Range", "*/*")])
            }
            let receiptsText = results.last?.rows.first?.first ?? nil
            return .json(201, Self.representation(submission, receipts: receiptsText),
                         headers: [("Content-Range", "*/*"), ("Preference-Applied", "return=representation")])
        })
    }

    /// The rows as the author sent them, plus `id`, `created_at` and (when not sent) the defaulted
    /// `currency` from the trigger's receipts.
    static func representation(_ submission: ReportSubmission, receipts text: String?) -> String {
        let receipts = text.flatMap { try? JSONValue.parse(Array($0.utf8), maxBytes: 1 << 20, maxDepth: 4) }?.arrayValue ?? []
        var writer = JSONWriter(capacity: 160 * submission.rows.count)
        writer.beginArray()
        for (index, row) in submission.rows.enumerated() {
            let receipt: JSONValue = index < receipts.count ? receipts[index] : .null
            writer.beginObject()
            writer.key("id"); writer.value(receipt["id"] ?? .null)
            for column in ReportSubmission.columns {
                if let value = row[column] {
                    writer.key(column); writer.value(value)
                } else if column == "currency", let currency = receipt["currency"] {
                    writer.key("currency"); writer.value(currency)
                }
            }
            writer.key("created_at"); writer.value(receipt["created_at"] ?? .null)
            writer.endObject()
        }
        writer.endArray()
        return writer.text
    }

    /// `POST|GET /rest/v1/rpc/price_median(s)`: identity + function call in one pipeline; the
    /// function returns its rows already as a JSON array.
    func callMedian(_ name: String, _ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let query: MedianQuery
        switch MedianQuery.parse(function: name, method: request.method, body: request.body,
                                 contentType: request.header("content-type"), query: request.query) {
        case .success(let parsed): query = parsed
        case .failure(let error): return .answer(error.response)
        }
        let statement: PreparedStatement
        switch (query.locations, query.rateKind) {
        case (.one, nil): statement = Statements.median
        case (.one, .some): statement = Statements.medianOfKind
        case (.many, nil): statement = Statements.medians
        case (.many, .some): statement = Statements.mediansOfKind
        }
        var parameters: [String?] = [query.locationsParameter]
        if let kind = query.rateKind { parameters.append(kind) }
        return .database(functionRowsPlan(.prepared(statement, parameters), caller: caller))
    }

    /// Identity + one function call whose statement aggregates the rows into a JSON array; the answer
    /// is that array, as PostgREST returns a set-returning function's rows (price_median(s), price_quotes).
    func functionRowsPlan(_ call: Query, caller: Caller) -> DatabasePlan {
        let (role, retryAfter) = (caller.role, settings.unavailableRetryAfter)
        return DatabasePlan([caller.identityQuery, call], readOnly: true) { outcome in
            switch outcome {
            case .success(let results):
                let json = results.last?.rows.first?.first ?? nil
                return .json(200, json ?? "[]", headers: [("Content-Range", "*/*")])
            case .failure(let error):
                return APIError(database: error, role: role, unavailableRetryAfter: retryAfter).response
            }
        }
    }
}
