import PriceJSON

/// The `components` of the OpenAPI document: what operations point at with `$ref`. The error
/// responses and the read options are generated from tables, so an operation and the component
/// it names cannot drift apart; the body schemas are written out, since each is said once.
extension OpenAPIDocument {
    static func ref(_ section: String, _ name: String) -> JSONValue {
        ["$ref": .string("#/components/\(section)/\(name)")]
    }

    /// A whole-value regular expression. The `(?!\n)` stops a `$` that would match before a final
    /// newline from letting one through (PCRE and Python `re` semantics).
    static func anchored(_ core: String) -> String { "^" + core + "$(?!\n)" }

    static var components: JSONValue {
        [
            "securitySchemes": [
                "apikey": [
                    "type": "apiKey", "in": "header", "name": "apikey",
                    "description": "The anon key (pricesvc keys prints it), on every /rest/v1 and /auth/v1 request",
                ],
                "bearer": [
                    "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                    "description": "A user's access token from sign-up or refresh",
                ],
            ],
            "headers": [
                "RetryAfter": [
                    "description": "Seconds to wait before retrying",
                    "schema": ["type": "integer", "minimum": 1],
                ],
                "ContentRange": [
                    "description": "The rows returned and, under Prefer: count=exact, the total: 0-24/100, */0, 0-9/*",
                    "schema": ["type": "string", "pattern": #"^(\*|[0-9]+-[0-9]+)/(\*|[0-9]+)$"#],
                ],
            ],
            "schemas": schemas,
            "responses": .object(JSONObject(uniqueKeysWithValues: ErrorFamily.allCases.flatMap { family in
                SharedError.all.map { ($0.name(family), $0.response(family)) }
            })),
            "parameters": .object(JSONObject(uniqueKeysWithValues: readOptionParameters)),
        ]
    }

    // MARK: error responses

    /// Which error body an answer carries: PostgREST's under /rest/v1, Supabase Auth's under /auth/v1.
    enum ErrorFamily: CaseIterable {
        case rest, auth

        init(path: String) { self = path.hasPrefix("/auth/") ? .auth : .rest }

        var prefix: String { self == .rest ? "Rest" : "Auth" }
        var schema: String { self == .rest ? "Error" : "AuthError" }
    }

    /// An error status that many operations answer alike, so it is one component per family.
    struct SharedError {
        let status: Int
        let suffix: String
        let rest: String
        let auth: String
        /// 429 and 503 say when to come back.
        var retryAfter: Bool { status == 429 || status == 503 }

        func name(_ family: ErrorFamily) -> String { family.prefix + suffix }

        func response(_ family: ErrorFamily) -> JSONValue {
            var members: [(String, JSONValue)] = [
                ("description", .string(family == .rest ? rest : auth)),
                ("content", ["application/json": ["schema": ref("schemas", family.schema)]]),
            ]
            if retryAfter { members.append(("headers", ["Retry-After": ref("headers", "RetryAfter")])) }
            return .object(JSONObject(uniqueKeysWithValues: members))
        }

        static let all = [
            SharedError(status: 400, suffix: "BadRequest",
                        rest: "Malformed request: body, argument, filter or option (PGRST100/102/107/108/122/123/127/200/204, 22xxx, 23xxx, 42703, 42804), or an answer over the response-size limit (PGRST190)",
                        auth: "Invalid body or parameters (bad_json, validation_failed, captcha_failed, refresh_token_not_found, refresh_token_already_used)"),
            SharedError(status: 401, suffix: "Unauthorized",
                        rest: "No or wrong apikey, bad or expired token (PGRST000/301/303, PT401), or the request ran as anon and was refused (42501)",
                        auth: "No or wrong apikey (no_api_key, invalid_api_key), bad token (bad_jwt), no access token (no_authorization)"),
            SharedError(status: 403, suffix: "Forbidden",
                        rest: "Signed in, but not allowed (42501)",
                        auth: "The token's session or user no longer exists (session_not_found, user_not_found)"),
            SharedError(status: 413, suffix: "TooLarge",
                        rest: "Body larger than the limit (PGRST413)",
                        auth: "Body larger than the limit (request_too_large)"),
            SharedError(status: 429, suffix: "TooManyRequests",
                        rest: "Per-address request limit or requests in progress (PGRST429), or 10 reports in 60 minutes (PT429)",
                        auth: "Per-address request, in-progress, sign-up or refresh limit (over_request_rate_limit)"),
            SharedError(status: 503, suffix: "Unavailable",
                        rest: "Database unreachable or busy (PGRST000, PGRST003 or the SQLSTATE)",
                        auth: "Database unreachable or busy (service_unavailable)"),
        ]

        static func named(_ status: Int) -> SharedError {
            guard let shared = all.first(where: { $0.status == status }) else {
                preconditionFailure("no shared error response for \(status)")
            }
            return shared
        }
    }

    /// An error only some operations give, described where it is given.
    static func errorAnswer(_ description: String, _ family: ErrorFamily) -> JSONValue {
        ["description": .string(description), "content": ["application/json": ["schema": ref("schemas", family.schema)]]]
    }

    // MARK: read options

    /// The rows a read function returns: the schema of one row and its columns, which is what
    /// `select`, `order` and the filters may name.
    struct RowShape {
        let schema: String
        let columns: [ResultColumn]
        /// Distinguishes this shape's `select` and `order` components from the first shape's.
        let optionSuffix: String

        static let median = RowShape(schema: "Median", columns: MedianQuery.columns, optionSuffix: "")
        static let quote = RowShape(schema: "Quote", columns: QuoteQuery.columns, optionSuffix: "_quotes")
        static let place = RowShape(schema: "Place", columns: PlacesQuery.columns, optionSuffix: "_places", geoJSON: true)
        static let match = RowShape(schema: "PlaceMatch", columns: PlaceMatchQuery.columns, optionSuffix: "_matches")
        static let all = [median, quote, place, match]

        /// Whether `Accept: application/geo+json` answers a FeatureCollection (the rows have lat and lng).
        var geoJSON = false

        private var names: String { "(" + columns.map(\.name).joined(separator: "|") + ")" }

        var selectPattern: String {
            let item = #"(\*|([A-Za-z_][A-Za-z0-9_]*:)?"# + names + ")"
            return anchored("(" + item + "(," + item + ")*)?")
        }

        var orderPattern: String {
            let item = names + #"(\.(asc|desc))?(\.(nullsfirst|nullslast))?"#
            return anchored(item + "(," + item + ")*")
        }
    }

    /// The query and header options every read function takes, in the order operations list them.
    static func readOptions(_ shape: RowShape, isGet: Bool) -> [JSONValue] {
        let names = ["select" + shape.optionSuffix, "order" + shape.optionSuffix, "limit", "offset", "PreferRead",
                     shape.geoJSON ? "AcceptGeoJSON" : "Accept"]
            + (isGet ? ["Range"] : [])
        return names.map { ref("parameters", $0) }
    }

    /// Filters on the columns of a read, as component references.
    static func filters(_ columns: [ResultColumn]) -> [JSONValue] {
        columns.map { ref("parameters", "filter_" + $0.name) }
    }

    private static func query(_ name: String, _ description: String, _ schema: JSONValue) -> JSONValue {
        ["name": .string(name), "in": "query", "description": .string(description), "schema": schema]
    }

    private static func header(_ name: String, _ description: String, _ schema: JSONValue) -> JSONValue {
        ["name": .string(name), "in": "header", "description": .string(description), "schema": schema]
    }

    private static var readOptionParameters: [(String, JSONValue)] {
        let rowCount: JSONValue = ["type": "integer", "minimum": 0, "maximum": .number(JSONNumber(Int(Int32.max)))]
        var parameters: [(String, JSONValue)] = [
            ("limit", query("limit", "At most this many rows (a negative limit is 416)", rowCount)),
            ("offset", query("offset", "Skip this many rows", rowCount)),
            ("PreferRead", header("Prefer", "count=exact puts the total in Content-Range. Any preference not listed is 400 PGRST122.",
                                  ["type": "string", "enum": ["count=exact", "return=representation", "count=exact,return=representation", ""]])),
            ("Accept", header("Accept", "application/json (default, also for */* or an empty Accept), application/vnd.pgrst.object+json (exactly one row, else 406 PGRST116), text/csv; anything else is 406 PGRST107",
                              ["type": "string", "enum": ["application/json", "application/vnd.pgrst.object+json", "text/csv", "*/*", ""]])),
            ("AcceptGeoJSON", header("Accept", "As for the other functions, and application/geo+json: a GeoJSON FeatureCollection, one Point feature per row at [lng, lat], every other column in its properties",
                                     ["type": "string", "enum": ["application/json", "application/vnd.pgrst.object+json", "text/csv",
                                                                 "application/geo+json", "*/*", ""]])),
            ("Range", header("Range", "first-last or first- (rows, GET only); intersected with limit/offset; anything else is ignored",
                             ["type": "string"])),
        ]
        for shape in RowShape.all {
            parameters.append(("select" + shape.optionSuffix, query("select", "Columns to return: *, column, or alias:column, comma-separated; "
                                                                        + "each output name at most once and at most \(ReadOptions.Limits.maxSelectItems) items, else 400 PGRST100",
                                                                    ["type": "string", "pattern": .string(shape.selectPattern),
                                                                     "maxLength": .number(JSONNumber(ReadOptions.Limits.maxSelectBytes))])))
            parameters.append(("order" + shape.optionSuffix, query("order", "column[.asc|.desc][.nullsfirst|.nullslast], comma-separated; "
                                                                       + "at most \(ReadOptions.Limits.maxOrderTerms) terms, else 400 PGRST100",
                                                                  ["type": "string", "pattern": .string(shape.orderPattern),
                                                                   "maxLength": .number(JSONNumber(ReadOptions.Limits.maxOrderBytes))])))
        }
        var seen: Set<String> = []
        for column in RowShape.all.flatMap(\.columns) where seen.insert(column.name).inserted {
            parameters.append(("filter_" + column.name, filter(column)))
        }
        return parameters
    }

    /// A filter parameter: the operators pricesvc reads and an operand of the column's type, as one
    /// pattern. Timestamps stop at day 28 so that every value the pattern describes is a real date.
    private static func filter(_ column: ResultColumn) -> JSONValue {
        let value: String, item: String
        var isValues = "null|not_null"
        var operands = "value, in.(a,b), is.null, is.not_null"
        switch column.type {
        case .text:
            value = "[^\u{0}]*"
            item = "[^\",()\u{0}]+"
        case .integer, .bigint:
            value = "-?[0-9]{1,\(column.type == .integer ? 9 : 18)}"
            item = value
        case .boolean:
            value = "([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])"
            item = value
            isValues += "|true|false|unknown"
            operands = "true|false, in.(true,false), is.null, is.not_null, is.true, is.false, is.unknown"
        case .double:
            value = #"-?[0-9]{1,3}(\.[0-9]{1,15})?"#
            item = value
        case .timestamptz:
            value = #"[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?"#
            item = value
        }
        let typeName = column.type == .timestamptz ? "timestamptz" : column.type.sqlName
        let pattern = #"(not\.)?((eq|neq|gt|gte|lt|lte)\."# + value + #"|in\.\("# + item + "(," + item + #")*\)|is\.("# + isValues + "))"
        return query(column.name, "Filter on \(column.name) (\(typeName)): [not.]eq|neq|gt|gte|lt|lte.\(operands)",
                     ["type": "string", "pattern": .string(anchored(pattern))])
    }

    // MARK: schemas

    /// The columns of a report, as a submission names them.
    static let reportFields: [(String, String)] = [
        ("location_id", "LocationID"), ("rate_kind", "RateKind"), ("price_cents", "PriceCents"),
        ("currency", "Currency"), ("client_report_id", "ClientReportID"), ("lat", "Latitude"), ("lng", "Longitude"),
    ]

    static func reportProperties(_ names: [String]) -> JSONValue {
        .object(JSONObject(uniqueKeysWithValues: reportFields.filter { names.contains($0.0) }.map { ($0.0, ref("schemas", $0.1)) }))
    }

    static let rateKinds: [JSONValue] = RateKind.allCases.map { .string($0.rawValue) }

    private static var schemas: JSONValue {
        let timestamp: JSONValue = ["type": "string", "format": "date-time"]
        // What return=representation answers: never the coordinates (a report's position is never returned).
        var stored = reportProperties(reportFields.map(\.0).filter { !ReportSubmission.coordinateColumns.contains($0) })
            .objectValue!.members.map { ($0.key, $0.value) }
        stored.insert(("id", ["type": "integer"]), at: 0)
        stored.append(("created_at", timestamp))
        return [
            "LocationID": [
                "type": "string", "minLength": 1, "maxLength": 200,
                "pattern": .string(anchored("[^\u{0}-\u{1F}\u{7F}-\u{9F}]*")),
                "example": "sfmta:garage-123", "description": "Provider-qualified; no control characters",
            ],
            "RateKind": ["type": "string", "enum": .array(rateKinds)],
            "PriceCents": ["type": "integer", "minimum": 1, "maximum": .number(JSONNumber(ReportSubmission.maxPriceCents))],
            "Currency": [
                "type": "string", "minLength": 3, "maxLength": 3, "pattern": .string(anchored("[A-Z]{3}")),
                "description": "ISO 4217 code, upper case", "default": "USD",
            ],
            "ClientReportID": [
                "type": "string", "format": "uuid", "nullable": true, "minLength": 36, "maxLength": 36,
                "pattern": .string(anchored("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")),
                "description": "Makes a retry idempotent: the same id with the same values stores nothing new",
            ],
            "Latitude": [
                "type": "number", "minimum": .number(JSONNumber(Int(-ReportSubmission.latitudeBound))),
                "maximum": .number(JSONNumber(Int(ReportSubmission.latitudeBound))),
                "example": 37.7947,
                "description": "The place's latitude as the app knows it (WGS 84 degrees), with lng or not at all (both keys left out; null is refused). Stored and never returned; counted only towards community places, where no import places the location id",
            ],
            "Longitude": [
                "type": "number", "minimum": .number(JSONNumber(Int(-ReportSubmission.longitudeBound))),
                "maximum": .number(JSONNumber(Int(ReportSubmission.longitudeBound))),
                "example": -122.3930,
                "description": "The place's longitude (WGS 84 degrees), with lat or not at all",
            ],
            // lat and lng go together, so a report with them is its own form (both required).
            "PriceReport": [
                "type": "object", "additionalProperties": false,
                "required": ["location_id", "rate_kind", "price_cents"],
                "properties": reportProperties(reportFields.map(\.0).filter { !ReportSubmission.coordinateColumns.contains($0) }),
            ],
            "PlacedPriceReport": [
                "type": "object", "additionalProperties": false,
                "description": "A report with the place's coordinates: lat and lng both",
                "required": ["location_id", "rate_kind", "price_cents", "lat", "lng"],
                "properties": reportProperties(reportFields.map(\.0)),
            ],
            "StoredReport": ["type": "object", "properties": .object(JSONObject(uniqueKeysWithValues: stored))],
            "Median": [
                "type": "object",
                "description": "A row of price_median(s); with select= only the selected (or aliased) columns",
                "properties": [
                    "location_id": ["type": "string"],
                    "rate_kind": ref("schemas", "RateKind"),
                    "currency": ["type": "string"],
                    "median_cents": ["type": "integer"],
                    "reporters": ["type": "integer", "minimum": 3],
                    "reports": ["type": "integer", "minimum": 3],
                    "last_reported_at": timestamp,
                ],
            ],
            "Quote": quoteSchema,
            "Place": placeSchema,
            "PlaceMatch": [
                "type": "object",
                "description": "A row of places_match: a place within the radius, best first (similarity, then distance, then location_id); with select= only the selected (or aliased) columns",
                "properties": [
                    "location_id": ["type": "string"],
                    "name": ["type": "string", "nullable": true],
                    "distance_m": ["type": "integer", "minimum": 0, "maximum": 1000],
                    "similarity": ["type": "number", "minimum": 0, "maximum": 1, "description": "pg_trgm similarity of the normalised names (0 for a place without a name)"],
                ],
            ],
            "Error": [
                "type": "object", "required": ["code", "details", "hint", "message"], "additionalProperties": false,
                "description": "PostgREST's error body",
                "properties": [
                    "code": ["type": "string"], "message": ["type": "string"],
                    "details": ["type": "string", "nullable": true], "hint": ["type": "string", "nullable": true],
                ],
            ],
            "AuthError": [
                "type": "object", "required": ["code", "error_code", "msg"], "description": "Supabase Auth's error body",
                "properties": ["code": ["type": "integer"], "error_code": ["type": "string"], "msg": ["type": "string"]],
            ],
            "User": [
                "type": "object",
                "required": ["id", "aud", "role", "is_anonymous", "app_metadata", "user_metadata", "identities", "created_at", "updated_at"],
                "properties": [
                    "id": ["type": "string", "format": "uuid"], "aud": ["type": "string"], "role": ["type": "string"],
                    "is_anonymous": ["type": "boolean"], "app_metadata": ["type": "object"], "user_metadata": ["type": "object"],
                    "identities": ["type": "array", "items": [:]], "created_at": timestamp, "updated_at": timestamp,
                ],
            ],
            "Session": [
                "type": "object",
                "required": ["access_token", "token_type", "expires_in", "expires_at", "refresh_token", "user"],
                "properties": [
                    "access_token": ["type": "string"], "token_type": ["type": "string", "enum": ["bearer"]],
                    "expires_in": ["type": "integer"], "expires_at": ["type": "integer"],
                    "refresh_token": ["type": "string"], "user": ref("schemas", "User"),
                ],
            ],
        ]
    }

    private static var placeSchema: JSONValue {
        let nullableTimestamp: JSONValue = ["type": "string", "format": "date-time", "nullable": true]
        return [
            "type": "object",
            "description": "A row of places_nearby: a place within the radius, nearest first, with what price_medians returns for its id (null below the threshold) and, for a stay, what price_quotes returns as its published cost (null without a stay or a city feed); with select= only the selected (or aliased) columns",
            "properties": [
                "location_id": ["type": "string"],
                "name": ["type": "string", "nullable": true],
                "source": ["type": "string"],
                "kind": ["type": "string", "enum": ["curb_zone", "parking"]],
                "lat": ["type": "number", "minimum": -90, "maximum": 90, "description": "A point on the place (WGS 84)"],
                "lng": ["type": "number", "minimum": -180, "maximum": 180],
                "distance_m": ["type": "integer", "minimum": 0, "maximum": 5000, "description": "Metres from the point asked about to the place (great-circle; 0 inside a polygon)"],
                "median_cents": ["type": "integer", "nullable": true],
                "reporters": ["type": "integer", "minimum": 3, "nullable": true],
                "currency": ["type": "string", "nullable": true],
                "last_reported_at": nullableTimestamp,
                "published_cents": ["type": "integer", "nullable": true],
                "published_allowed": ["type": "boolean", "nullable": true],
                "published_reason": ["type": "string", "nullable": true, "enum": ["no_parking", "max_stay", "no_data", "feed_error", nil]],
            ],
        ]
    }

    private static var quoteSchema: JSONValue {
        let nullableTimestamp: JSONValue = ["type": "string", "format": "date-time", "nullable": true]
        return [
            "type": "object",
            "description": "A row of price_quotes: the community median beside the published (CDS) cost of the stay. Community columns are null below the threshold, published columns null without a city feed for the location; with select= only the selected (or aliased) columns",
            "properties": [
                "location_id": ["type": "string"],
                "rate_kind": ref("schemas", "RateKind"),
                "currency": ["type": "string"],
                "median_cents": ["type": "integer", "nullable": true],
                "reporters": ["type": "integer", "minimum": 3, "nullable": true],
                "published_cents": ["type": "integer", "nullable": true, "description": "null when published_allowed is false"],
                "published_allowed": ["type": "boolean", "nullable": true],
                "published_reason": ["type": "string", "nullable": true, "enum": ["no_parking", "max_stay", "no_data", nil]],
                "published_source": ["type": "string", "nullable": true],
                "published_updated_at": nullableTimestamp,
            ],
        ]
    }
}
