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
        if let error = submission.checkQuery(request.query) { return .answer(error.response) }
        let insert = submission.sendsCurrency ? Statements.insertReports : Statements.insertReportsDefaultCurrency
        var queries = [caller.submitterIdentityQuery, .prepared(insert, [submission.parameterJSON])]
        if submission.returnRepresentation { queries.append(.prepared(Statements.receipts, [])) }
        let (role, retryAfter) = (caller.role, settings.unavailableRetryAfter)
        return .database(DatabasePlan(queries) { outcome in
            let results: [QueryResult]
            switch outcome {
            case .success(let value): results = value
            case .failure(let error):
                return APIError(database: error, role: role, unavailableRetryAfter: retryAfter).response
            }
            // PostgREST's Content-Range for a write: */<rows stored> under count=exact (a retry
            // with a known client_report_id stores none), else */*.
            let stored = results.count > 1 ? results[1].affectedRows : 0
            let contentRange = ("Content-Range", submission.countExact ? "*/\(stored)" : "*/*")
            let applied = [submission.returnRepresentation ? "return=representation" : nil,
                           submission.countExact ? "count=exact" : nil].compactMap { $0 }
            let preferenceApplied = applied.isEmpty ? [] : [("Preference-Applied", applied.joined(separator: ", "))]
            guard submission.returnRepresentation else {
                return .empty(201, headers: [contentRange] + preferenceApplied)
            }
            let receiptsText = results.last?.rows.first?.first ?? nil
            return .json(201, Self.representation(submission, receipts: receiptsText),
                         headers: [contentRange] + preferenceApplied)
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

    /// `POST|GET|HEAD /rest/v1/rpc/price_median(s)`: identity + function call in one pipeline.
    /// The read options (filters, select, order, paging, media type, count) are parsed and checked
    /// here, before any hand-off, and applied to the function's rows on the worker.
    func callMedian(_ name: String, _ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        guard let function = RPCFunction(rawValue: name) else {
            return .answer(MedianQuery.noSuchFunction(name, arguments: []).response)
        }
        let isRead = request.method == "GET" || request.method == "HEAD"
        let options: ReadOptions
        let queryArguments: [(String, String)]
        switch ReadOptions.parse(query: request.query, headers: request, columns: MedianQuery.columns,
                                 relation: name, isRead: isRead) {
        case .success(let parsed): (options, queryArguments) = parsed
        case .failure(let error): return .answer(error.response)
        }
        let query: MedianQuery
        switch MedianQuery.parse(function: function, isRead: isRead, queryArguments: queryArguments,
                                 body: request.body, contentType: request.header("content-type")) {
        case .success(let parsed): query = parsed
        case .failure(let error): return .answer(error.response)
        }
        var parameters: [String?] = [query.locationsParameter]
        let statement: PreparedStatement
        switch (query.locations, query.rateKinds) {
        case (.one, .functionDefault): statement = Statements.median
        case (.many, .functionDefault): statement = Statements.medians
        case (.one, .one(let kind)): statement = Statements.medianOfKind; parameters.append(kind)
        case (.many, .one(let kind)): statement = Statements.mediansOfKind; parameters.append(kind)
        case (.one, .all): statement = Statements.medianOfAllKinds; parameters.append(RateKind.arrayLiteral)
        case (.many, .all): statement = Statements.mediansOfAllKinds; parameters.append(RateKind.arrayLiteral)
        }
        return .database(functionRowsPlan(.prepared(statement, parameters), columns: MedianQuery.columns,
                                          options: options, caller: caller))
    }

    /// Identity + one call of a set-returning function whose statement selects `columns`, in that
    /// order; the read options are applied to its rows on the worker, as PostgREST applies them to a
    /// function's result. Read-only, so a replica may answer it.
    /// An expensive call runs under its own, lower statement timeout, set for this transaction only.
    func functionRowsPlan(_ call: Query, columns: [ResultColumn], options: ReadOptions, caller: Caller,
                          cost: DatabaseShare.Cost = .ordinary) -> DatabasePlan {
        let (role, retryAfter, maxBytes) = (caller.role, settings.unavailableRetryAfter, settings.maxResponseBytes)
        var queries = [caller.identityQuery]
        if cost == .expensive {
            queries.append(.prepared(Statements.expensiveStatementTimeout,
                                     [String(settings.expensiveStatementTimeoutMilliseconds)]))
        }
        queries.append(call)
        return DatabasePlan(queries, readOnly: true, cost: cost) { outcome in
            switch outcome {
            case .success(let results):
                return options.render(ResultSet(columns: columns, rows: results.last?.rows ?? []), maxBytes: maxBytes)
            case .failure(let error):
                return APIError(database: error, role: role, unavailableRetryAfter: retryAfter).response
            }
        }
    }
}
