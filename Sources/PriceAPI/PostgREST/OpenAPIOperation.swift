import PriceJSON

extension OpenAPIDocument {
    /// One row of the route table: a method on a path, and everything it can answer.
    struct Operation {
        enum Security {
            /// Health and metrics: outside the gate.
            case none
            case apikey
            case apikeyAndBearer

            var json: JSONValue {
                switch self {
                case .none: return []
                case .apikey: return [["apikey": []]]
                case .apikeyAndBearer: return [["apikey": [], "bearer": []]]
                }
            }
        }

        /// Every keyed request passes the gate (apikey, body size, per-address rate) before it is
        /// routed, so every keyed operation can answer these.
        static let gateStatuses = [401, 413, 429]

        let method: String
        let path: String
        let operationId: String
        let summary: String
        var description: String? = nil
        let security: Security
        var parameters: [JSONValue] = []
        var requestBody: JSONValue? = nil
        /// Answers described here: the successes, and errors only this operation gives.
        var responses: [(status: Int, response: JSONValue)]
        /// Errors answered with the family's shared response, besides the gate's.
        var errors: [Int] = []

        var family: ErrorFamily { ErrorFamily(path: path) }

        /// The statuses answered with the family's shared responses: the gate's, then the row's own.
        var sharedStatuses: [Int] { (security == .none ? [] : Self.gateStatuses) + errors }

        /// Every status the operation documents.
        var statuses: [Int] { responses.map(\.status) + sharedStatuses }

        var json: JSONValue {
            var members: [(String, JSONValue)] = [
                ("operationId", .string(operationId)), ("summary", .string(summary)),
            ]
            if let description { members.append(("description", .string(description))) }
            members.append(("security", security.json))
            if !parameters.isEmpty { members.append(("parameters", .array(parameters))) }
            if let requestBody { members.append(("requestBody", requestBody)) }
            let shared = sharedStatuses.map { status in
                (String(status), ref("responses", SharedError.named(status).name(family)))
            }
            let answers = responses.map { (String($0.status), $0.response) } + shared
            members.append(("responses", .object(JSONObject(uniqueKeysWithValues: answers))))
            return .object(JSONObject(uniqueKeysWithValues: members))
        }
    }

    /// A function of the read API. PostgREST calls it two ways, and both are described from this:
    /// POST with the arguments as a JSON body, and GET with them in the query string, where they
    /// share it with the read options (so a column named like an argument cannot be filtered).
    struct ReadFunction {
        let name: String
        let summary: String
        let rows: RowShape
        /// The POST body's schema.
        let body: JSONValue
        /// The GET form's query parameters for the arguments.
        let queryArguments: [JSONValue]

        var argumentNames: Set<String> { Set(queryArguments.compactMap { $0["name"]?.stringValue }) }

        /// The errors of a function call that no other operation gives.
        static let callErrors: [(status: Int, response: JSONValue)] = [
            (404, errorAnswer("No such function or arguments (PGRST202)", .rest)),
            (406, errorAnswer("No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)", .rest)),
            (416, errorAnswer("Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total", .rest)),
        ]

        /// Its POST (`post`) or GET form.
        func operation(_ method: String) -> Operation {
            let path = Resource.rpc(name).path
            if method == "post" {
                return Operation(
                    method: method, path: path, operationId: name + "_post", summary: summary, security: .apikeyAndBearer,
                    parameters: readOptions(rows, isGet: false) + filters(rows.columns),
                    requestBody: ["required": true, "content": ["application/json": ["schema": body]]],
                    responses: rowAnswers + Self.callErrors, errors: [400, 503])
            }
            return Operation(
                method: method, path: path, operationId: name + "_get",
                summary: "Same as POST; arguments and options share the query string", security: .apikeyAndBearer,
                parameters: queryArguments + readOptions(rows, isGet: true)
                    + filters(rows.columns.filter { !argumentNames.contains($0.name) }),
                responses: rowAnswers + Self.callErrors, errors: [400, 503])
        }

        private var rowAnswers: [(status: Int, response: JSONValue)] {
            var content: JSONValue = [
                "application/json": ["schema": ["type": "array", "items": ref("schemas", rows.schema)]],
                "application/vnd.pgrst.object+json": ["schema": ref("schemas", rows.schema)],
                "text/csv": ["schema": ["type": "string"]],
            ]
            if rows.geoJSON, case .object(var media) = content {
                media["application/geo+json"] = ["schema": [
                    "type": "object", "required": ["type", "features"],
                    "properties": [
                        "type": ["type": "string", "enum": ["FeatureCollection"]],
                        "features": ["type": "array", "items": [
                            "type": "object", "required": ["type", "geometry", "properties"],
                            "properties": [
                                "type": ["type": "string", "enum": ["Feature"]],
                                "geometry": ["type": "object", "required": ["type", "coordinates"], "properties": [
                                    "type": ["type": "string", "enum": ["Point"]],
                                    "coordinates": ["type": "array", "minItems": 2, "maxItems": 2, "items": ["type": "number"],
                                                    "description": "[lng, lat]"],
                                ]],
                                "properties": ["type": "object", "description": "The row's other columns (as the Place schema, less lat and lng)"],
                            ],
                        ]],
                    ],
                ]]
                content = .object(media)
            }
            func answer(_ description: String) -> JSONValue {
                ["description": .string(description), "headers": ["Content-Range": ref("headers", "ContentRange")], "content": content]
            }
            return [
                (200, answer("The function's rows, filtered, ordered and paged as asked")),
                (206, answer("Part of the rows (Prefer: count=exact and a page smaller than the total)")),
            ]
        }
    }
}
