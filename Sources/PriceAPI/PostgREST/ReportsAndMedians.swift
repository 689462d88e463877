import PriceDB
import PriceHTTPMessage
import PriceJSON
import PriceRows
import PriceSQL

/// `POST /rest/v1/price_reports`: identity + insert (+ receipts) in one pipeline.
struct ReportHandler: Sendable {
    /// `Retry-After` of a 503 while the database is unreachable.
    let unavailableRetryAfter: Int

    func submit(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        let submission: ReportSubmission
        switch ReportSubmission.parse(body: request.body, contentType: request.header("content-type"),
                                      prefer: request.header("prefer")) {
        case .success(let parsed): submission = parsed
        case .failure(let error): return .answer(error.response)
        }
        if let error = submission.checkQuery(request.query) { return .answer(error.response) }
        let insert = submission.sendsCurrency ? Statements.insertReports : Statements.insertReportsDefaultCurrency
        var queries = [caller.submitterIdentityQuery, insert.query(submission.parameterJSON)]
        if submission.returnRepresentation { queries.append(Statements.receipts.query()) }
        let (role, retryAfter) = (caller.role, unavailableRetryAfter)
        // Every row with a client_report_id: a repeat stores nothing twice and answers with the first
        // report's receipt (reports.sql), so the hold may repeat it even when its outcome is unknown.
        return .database(DatabasePlan(queries, repetition: submission.isIdempotent ? .always : .ifNotApplied) { outcome in
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
            // No receipts (a row that does not decode included) leaves the representation's ids null.
            let receiptsText = (try? Statements.receipts.firstRow(results.last).get()) ?? nil
            return .json(201, Self.representation(submission, receipts: receiptsText),
                         headers: [contentRange] + preferenceApplied)
        })
    }

    /// The rows as the author sent them (but `lat` and `lng`), plus `id`, `created_at` and (when not sent) the defaulted
    /// `currency` from the trigger's receipts.
    static func representation(_ submission: ReportSubmission, receipts text: String?) -> String {
        let receipts = text.flatMap { try? JSONValue.parse(Array($0.utf8), maxBytes: 1 << 20, maxDepth: 4) }?.arrayValue ?? []
        var writer = JSONWriter(capacity: 160 * submission.rows.count)
        writer.beginArray()
        for (index, row) in submission.rows.enumerated() {
            let receipt: JSONValue = index < receipts.count ? receipts[index] : .null
            writer.beginObject()
            writer.key("id"); writer.value(receipt["id"] ?? .null)
            // Never the coordinates: a report's position is never returned, to anyone (docs/api.md).
            for column in ReportSubmission.columns where !ReportSubmission.coordinateColumns.contains(column) {
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
}

/// `POST|GET|HEAD /rest/v1/rpc/price_median(s)`: identity + function call in one pipeline.
/// The read options (filters, select, order, paging, media type, count) are parsed and checked
/// here, before any hand-off, and applied to the function's rows on the worker.
struct MedianHandler: Sendable {
    let calls: FunctionCallPlanner

    func call(_ name: String, _ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
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
        let call: Query
        let rows: @Sendable (QueryResult) -> Result<TextCells, RowDecodingError>
        switch (query.locations, query.rateKinds) {
        case (.one(let id), .functionDefault):
            (call, rows) = (Statements.median.query(id), Statements.median.cells)
        case (.many, .functionDefault):
            (call, rows) = (Statements.medians.query(query.locationsParameter), Statements.medians.cells)
        case (.one(let id), .one(let kind)):
            (call, rows) = (Statements.medianOfKind.query((id, kind)), Statements.medianOfKind.cells)
        case (.many, .one(let kind)):
            (call, rows) = (Statements.mediansOfKind.query((query.locationsParameter, kind)), Statements.mediansOfKind.cells)
        case (.one(let id), .all):
            (call, rows) = (Statements.medianOfAllKinds.query((id, RateKind.arrayLiteral)), Statements.medianOfAllKinds.cells)
        case (.many, .all):
            (call, rows) = (Statements.mediansOfAllKinds.query((query.locationsParameter, RateKind.arrayLiteral)),
                            Statements.mediansOfAllKinds.cells)
        }
        return .database(calls.plan(call, rows: rows, columns: MedianQuery.columns, options: options, caller: caller))
    }
}

/// Identity + one call of a set-returning function; the read options are applied to its rows on the
/// worker, as PostgREST applies them to a function's result. Shared by the median and quote handlers.
struct FunctionCallPlanner: Sendable {
    let unavailableRetryAfter: Int
    let maxResponseBytes: Int
    /// `statement_timeout` of an expensive call, set for its transaction only.
    let expensiveStatementTimeoutMilliseconds: Int

    /// The call's rows decode with `rows` (checked against its statement's columns) and are rendered
    /// under `options`, whose `columns` are the same in the same order. Read-only, so a replica may
    /// answer it; an expensive call runs under its own, lower statement timeout.
    func plan(_ call: Query, rows: @escaping @Sendable (QueryResult) -> Result<TextCells, RowDecodingError>,
              columns: [ResultColumn], options: ReadOptions, caller: Caller,
              cost: DatabaseShare.Cost = .ordinary) -> DatabasePlan {
        let (role, retryAfter, maxBytes) = (caller.role, unavailableRetryAfter, maxResponseBytes)
        var queries = [caller.identityQuery]
        if cost == .expensive {
            queries.append(Statements.expensiveStatementTimeout.query(expensiveStatementTimeoutMilliseconds))
        }
        queries.append(call)
        return DatabasePlan(queries, readOnly: true, cost: cost) { outcome in
            let failure: DatabaseError
            switch outcome {
            case .success(let results):
                switch rows(results.last ?? QueryResult()) {
                case .success(let decoded):
                    return options.render(ResultSet(columns: columns, cells: decoded), maxBytes: maxBytes)
                case .failure(let error):
                    failure = DatabaseError(code: .protocolViolation, message: error.description)
                }
            case .failure(let error):
                failure = error
            }
            return APIError(database: failure, role: role, unavailableRetryAfter: retryAfter).response
        }
    }
}

extension ResultColumn {
    /// A statement's column as PostgREST's read options see it: the types they compare and render
    /// apart; any other is compared and rendered as text.
    init(_ column: SQLColumn) {
        let type: ColumnType
        switch column.type {
        case .integer: type = .integer
        case .bigint: type = .bigint
        case .boolean: type = .boolean
        case .timestamptz: type = .timestamptz
        case .doublePrecision: type = .double
        default: type = .text
        }
        self.init(name: column.name, type: type)
    }
}
