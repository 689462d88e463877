import PriceDB
import PriceJSON

extension PriceService {
    /// `POST /rest/v1/price_reports`: identity + insert (+ receipts) in one pipeline.
    func submitReports(_ request: HTTPRequest, caller: Caller) -> HTTPResponse {
        let submission: ReportSubmission
        switch ReportSubmission.parse(body: request.body, contentType: request.header("content-type"),
                                      prefer: request.header("prefer")) {
        case .success(let parsed): submission = parsed
        case .failure(let error): return error.response
        }
        let insert = submission.sendsCurrency ? Statements.insertReports : Statements.insertReportsDefaultCurrency
        var queries = [identityQuery(caller), .prepared(insert, [submission.parameterJSON])]
        if submission.returnRepresentation { queries.append(.prepared(Statements.receipts, [])) }
        let results: [QueryResult]
        do {
            results = try database.run(queries)
        } catch {
            return databaseFailure(error, role: caller.role).response
        }
        guard submission.returnRepresentation else {
            return .empty(201, headers: [("Content-Range", "*/*")])
        }
        let receiptsText = results.last?.rows.first?.first ?? nil
        return .json(201, Self.representation(submission, receipts: receiptsText),
                     headers: [("Content-Range", "*/*"), ("Preference-Applied", "return=representation")])
    }

    /// The rows as the author sent them, plus `id`, `created_at` and (when not sent) the defaulted
    /// `currency` from the trigger's receipts.
    static func representation(_ submission: ReportSubmission, receipts text: String?) -> String {
        let receipts = text.flatMap { try? JSONValue.parse(Array($0.utf8), maxBytes: 1 << 20, maxDepth: 4) }?.arrayValue ?? []
        var out = "["
        for (index, row) in submission.rows.enumerated() {
            if index > 0 { out += "," }
            var fields: [String] = []
            let receipt: JSONValue = index < receipts.count ? receipts[index] : .null
            fields.append("\"id\":" + (receipt["id"]?.serialized() ?? "null"))
            for column in ReportSubmission.columns {
                if let value = row.values[column] {
                    fields.append(JSONString.quoted(column) + ":" + value.serialized())
                } else if column == "currency", let currency = receipt["currency"] {
                    fields.append("\"currency\":" + currency.serialized())
                }
            }
            fields.append("\"created_at\":" + (receipt["created_at"]?.serialized() ?? "null"))
            out += "{" + fields.joined(separator: ",") + "}"
        }
        return out + "]"
    }

    /// `POST|GET /rest/v1/rpc/price_median(s)`: identity + function call in one pipeline; the
    /// function returns its rows already as a JSON array.
    func callMedian(_ name: String, _ request: HTTPRequest, caller: Caller) -> HTTPResponse {
        let query: MedianQuery
        switch MedianQuery.parse(function: name, method: request.method, body: request.body,
                                 contentType: request.header("content-type"), query: request.query) {
        case .success(let parsed): query = parsed
        case .failure(let error): return error.response
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
        do {
            let results = try reads.run([identityQuery(caller), .prepared(statement, parameters)])
            let json = results.last?.rows.first?.first ?? nil
            return .json(200, json ?? "[]", headers: [("Content-Range", "*/*")])
        } catch {
            return databaseFailure(error, role: caller.role).response
        }
    }
}
