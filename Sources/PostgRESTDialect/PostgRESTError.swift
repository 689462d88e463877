/// Every error pricesvc answers with on /rest/v1 (and on the admin listener) under a PostgREST code, one
/// case each, as PostgREST's `Error/Types.hs` has one constructor each: `apiError` below is the one place
/// a case gets its status, code, message, details and hint. PostgreSQL's own errors, passed through with
/// their SQLSTATE, are `.database`; input refused before asking PostgreSQL, with the SQLSTATE it would
/// raise, is `.invalidInput`.
package enum PostgRESTError: Error, Sendable, Equatable {
    // The gateway: API key, token, CORS, framing, limits, routing.
    case noAPIKey
    case invalidAPIKey
    case authorizationNotBearer
    /// This instance's own signing key left the ring: it cannot verify tokens until it reads the new one.
    case signingKeyRetired
    case invalidToken(String)
    case expiredToken(String)
    case corsOriginRefused(origin: String)
    /// - Parameter framingHint: the API listener says how to frame a request; the admin listener does not.
    case malformedRequest(reason: String, framingHint: Bool)
    case payloadTooLarge
    case rateLimited(retryAfter: Int)
    /// One address already has `limit` requests waiting for or holding a database connection.
    case requestsInProgress(limit: Int)
    /// Every slot of the expensive class is taken (from any clients): the server is busy for quotes.
    case expensiveCallsBusy(limit: Int, retryAfter: Int)
    case workerTimeout(retryAfter: Int)
    /// One address's requests are piling up while they wait for the database to come back (a failover):
    /// the database's absence, not the client's fault, so 503 rather than the share's 429.
    case waitingForDatabase(retryAfter: Int)
    case notFound
    case methodNotAllowed(String)
    case unknownTable(String, hint: String)
    case noSuchFunction(String, arguments: [String], available: String)
    /// A table that takes inserts only, read: what PostgreSQL's 42501 would say, decided without it.
    case tableNotReadable(String, anonymous: Bool, hint: String)

    // Bodies.
    /// - Parameter received: the Content-Type sent (nil: none), named in the details when given.
    case notJSONContentType(received: String??)
    case invalidJSON(details: String)
    case emptyArray
    case tooManyRows(sent: Int, max: Int)
    case notObjectOrArray
    case elementNotObject(Int)
    case keysDiffer(element: Int)
    case argumentsNotObject
    case unknownColumn(String, table: String, writable: [String])

    // Read options, Prefer, Accept, the result.
    case notImplemented(String, hint: String? = nil)
    case notEmbedded(String, relation: String)
    case filterWithoutOperator(value: String, key: String, operators: String)
    case malformedFilter(key: String, operators: String)
    case overLimit(option: String, limit: String)
    case notAnInteger(name: String, text: String)
    case selectRepeats(item: String, name: String)
    case malformedSelect(String)
    case malformedOrder(String)
    case aggregatesNotAllowed
    case noRelationship(relation: String, name: String)
    case backwardsRange
    case negativeLimit
    case offsetPastTotal(offset: Int, total: Int)
    case noAcceptableMediaType(listed: String, available: String)
    case notSingleObject(rows: Int)
    case invalidPreferences(invalid: [String], accepted: [String])
    case responseTooLarge(maxBytes: Int, rows: Int)
    case internalError(details: String)

    // PostgreSQL's codes.
    /// Refused before the database, with the SQLSTATE PostgreSQL would raise for this input (22P02, 23514, …).
    case invalidInput(sqlState: String, message: String, details: String? = nil, hint: String? = nil)
    /// An error PostgreSQL raised, with the status `SQLState` gives it (nil state: no SQLSTATE, e.g. lost).
    case database(status: Int, sqlState: String?, message: String, details: String? = nil, hint: String? = nil,
                  retryAfter: Int? = nil)

    package var apiError: APIError {
        switch self {
        case .noAPIKey:
            return row(401, "PGRST000", "No API key found in request",
                       hint: "Send a publishable key (pricesvc keys publishable create) in the apikey header")
        case .invalidAPIKey:
            return row(401, "PGRST000", "Invalid API key",
                       hint: "The apikey header must hold one of this service's publishable keys (or its anon key)")
        case .authorizationNotBearer:
            return row(401, "PGRST301", "Authorization header must be 'Bearer <token>'")
        case .signingKeyRetired:
            return row(401, "PGRST301", "invalid token", details: "this instance's signing key was retired")
        case .invalidToken(let message):
            return row(401, "PGRST301", message)
        case .expiredToken(let message):
            return row(401, "PGRST303", message)
        case .corsOriginRefused(let origin):
            return row(403, "PGRST403", "CORS request refused: origin not allowed",
                       details: "Origin '\(JSONBody.printable(origin))' is not one of the allowed origins")
        case .malformedRequest(let reason, let framingHint):
            return row(400, "PGRST400", "Malformed request: \(reason)",
                       hint: framingHint ? "Send one Content-Length or Transfer-Encoding: chunked, never both, and no space before a header's colon" : nil)
        case .payloadTooLarge:
            return row(413, "PGRST413", "Request body is larger than the limit",
                       hint: "The limit is on the body's size in bytes (max-body-bytes): send a smaller body")
        case .rateLimited(let retryAfter):
            return row(429, "PGRST429", "Too many requests from this address",
                       hint: "Retry after \(retryAfter) seconds", retryAfter: retryAfter)
        case .requestsInProgress(let limit):
            return row(429, "PGRST429", "Too many requests from this address in progress: at most \(limit) at once",
                       details: "The limit is on requests waiting for or holding a database connection (db-requests-per-ip)",
                       hint: "Retry after 1 seconds", retryAfter: 1)
        case .expensiveCallsBusy(let limit, let retryAfter):
            return row(503, "PGRST003",
                       "Server busy: \(limit) quotes are being priced, the most at once (expensive-requests-in-flight)",
                       retryAfter: retryAfter)
        case .workerTimeout(let retryAfter):
            return row(503, "PGRST003", "Server busy: timed out waiting for a database worker", retryAfter: retryAfter)
        case .waitingForDatabase(let retryAfter):
            return row(503, "PGRST003", "Database unavailable: this address's requests are waiting for it, retry shortly",
                       retryAfter: retryAfter)
        case .notFound:
            return row(404, "PGRST125", "Invalid path specified in request URL")
        case .methodNotAllowed(let method):
            return row(405, "PGRST117", "Unsupported HTTP method: \(method)")
        case .unknownTable(let name, let hint):
            return row(404, "PGRST205", "Could not find the table 'public.\(JSONBody.printable(name))' in the schema cache",
                       hint: hint)
        case .noSuchFunction(let name, let arguments, let available):
            let list = arguments.map { JSONBody.printable($0) }.sorted().joined(separator: ", ")
            return row(404, "PGRST202", "Could not find the function public.\(JSONBody.printable(name))(\(list)) in the schema cache",
                       hint: "Available: \(available)")
        case .tableNotReadable(let table, let anonymous, let hint):
            return row(anonymous ? 401 : 403, "42501", "permission denied for table \(table)", hint: hint)

        case .notJSONContentType(let received):
            return row(400, "PGRST107", "Content-Type must be application/json",
                       details: received.map { "Received \($0.map { "'\($0.prefix(100))'" } ?? "no Content-Type")" })
        case .invalidJSON(let details):
            return row(400, "PGRST102", "Empty or invalid json", details: details)
        case .emptyArray:
            return row(400, "PGRST102", "Empty array: send at least one report")
        case .tooManyRows(let sent, let max):
            return row(400, "PGRST102", "Too many reports in one request", details: "\(sent) reports sent, at most \(max) allowed")
        case .notObjectOrArray:
            return row(400, "PGRST102", "Body must be a JSON object or an array of objects")
        case .elementNotObject(let index):
            return row(400, "PGRST102", "Element \(index) of the array is not a JSON object")
        case .keysDiffer(let index):
            return row(400, "PGRST102", "All object keys must match", details: "Element \(index) has different keys than element 0")
        case .argumentsNotObject:
            return row(400, "PGRST102", "Function arguments must be a JSON object")
        case .unknownColumn(let key, let table, let writable):
            return row(400, "PGRST204", "Could not find the '\(JSONBody.printable(key))' column of '\(table)' in the schema cache",
                       hint: "Writable columns: \(writable.joined(separator: ", "))")

        case .notImplemented(let details, let hint):
            return row(400, "PGRST127", "Feature not implemented", details: details, hint: hint)
        case .notEmbedded(let name, let relation):
            return row(400, "PGRST108", "'\(JSONBody.printable(name))' is not an embedded resource in this request",
                       hint: "Results of \(relation) embed nothing; filter, order and limit on its own columns")
        case .filterWithoutOperator(let value, let key, let operators):
            return row(400, "PGRST100", "failed to parse filter (\(JSONBody.printable(value)))",
                       details: "expecting an operator: \(operators), as in \(JSONBody.printable(key))=eq.value")
        case .malformedFilter(let key, let operators):
            return row(400, "PGRST100", "failed to parse filter (\(JSONBody.printable(key)))",
                       details: "expecting an operator: \(operators)")
        case .overLimit(let option, let limit):
            return row(400, "PGRST100", "\(option) is over pricesvc's limit", details: limit)
        case .notAnInteger(let name, let text):
            return row(400, "PGRST100", "failed to parse \(name) parameter (\(JSONBody.printable(text)))",
                       details: "\(name) must be an integer up to 2147483647")
        case .selectRepeats(let item, let name):
            return row(400, "PGRST100",
                       "failed to parse select parameter: '\(JSONBody.printable(item))' repeats '\(JSONBody.printable(name))'",
                       details: "each column or alias may appear once in select; * already includes every column",
                       hint: "Select each column once, or give the repeat another alias (alias:column)")
        case .malformedSelect(let text):
            return row(400, "PGRST100", "failed to parse select parameter (\(JSONBody.printable(text)))",
                       details: "each item is *, a column, or alias:column")
        case .malformedOrder(let text):
            return row(400, "PGRST100", "failed to parse order (\(JSONBody.printable(text)))",
                       details: "each term is column[.asc|.desc][.nullsfirst|.nullslast]")
        case .aggregatesNotAllowed:
            return row(400, "PGRST123", "Use of aggregate functions is not allowed")
        case .noRelationship(let relation, let name):
            return row(400, "PGRST200",
                       "Could not find a relationship between '\(relation)' and '\(JSONBody.printable(name))' in the schema cache",
                       details: "Function results embed nothing: \(relation) has no relationships")
        case .backwardsRange:
            return row(416, "PGRST103", "Requested range not satisfiable",
                       details: "The lower boundary must be lower than or equal to the upper boundary in the Range header.")
        case .negativeLimit:
            return row(416, "PGRST103", "Requested range not satisfiable", details: "Limit should be greater than or equal to zero.")
        case .offsetPastTotal(let offset, let total):
            return row(416, "PGRST103", "Requested range not satisfiable",
                       details: "An offset of \(offset) was requested, but there are only \(total) rows.")
        case .noAcceptableMediaType(let listed, let available):
            return row(406, "PGRST107", "None of these media types are available: \(listed)", hint: "Available: \(available)")
        case .notSingleObject(let rows):
            return row(406, "PGRST116", "Cannot coerce the result to a single JSON object", details: "The result contains \(rows) rows")
        case .invalidPreferences(let invalid, let accepted):
            return row(400, "PGRST122", "Invalid preferences given with handling=strict",
                       details: "Invalid preferences: \(invalid.joined(separator: ", "))",
                       hint: "Accepted here: \(accepted.sorted().joined(separator: ", ")); pricesvc always handles preferences strictly")
        case .responseTooLarge(let maxBytes, let rows):
            return row(400, "PGRST190", "Response is larger than the server's limit of \(maxBytes) bytes",
                       details: "The \(rows) rows asked for, with the columns selected, make a body over \(maxBytes) bytes",
                       hint: "Select fewer columns, filter, or page with limit/offset or Range")
        case .internalError(let details):
            return row(500, "PGRST000", "Internal error", details: details)

        case .invalidInput(let sqlState, let message, let details, let hint):
            return row(400, sqlState, message, details: details, hint: hint)
        case .database(let status, let sqlState, let message, let details, let hint, let retryAfter):
            return row(status, sqlState ?? "PGRST000", message, details: details, hint: hint, retryAfter: retryAfter)
        }
    }

    private func row(_ status: Int, _ code: String, _ message: String, details: String? = nil, hint: String? = nil,
                     retryAfter: Int? = nil) -> APIError {
        APIError(status: status, code: code, message: message, details: details, hint: hint, retryAfter: retryAfter)
    }
}

extension APIError {
    package init(_ error: PostgRESTError) { self = error.apiError }
}
