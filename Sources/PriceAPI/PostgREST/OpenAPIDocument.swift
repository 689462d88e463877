import PriceJSON

/// The OpenAPI 3 description of exactly the surface `Router` serves, returned by `GET /rest/v1/`: an
/// `operationId`, the security and every status each operation can answer (with its error body), the
/// bounds the database enforces, and PostgREST's read options on the functions. It describes the
/// deployment it is served by: the sign-up challenge appears only when challenges are on.
///
/// It is built from the route table (`operations`): each row names its own answers, and the parts
/// many rows share (error responses, read options, the two forms of a function call) come from one
/// builder each. its paths and methods are the router's own table (`Resource.table`); integration/e2e/test_fuzz_openapi.py holds it to the server.
public enum OpenAPIDocument {
    public static func json(signUpChallenge: Bool) -> String {
        signUpChallenge ? withChallenge : withoutChallenge
    }

    private static let withoutChallenge = document(signUpChallenge: false).serialized()
    private static let withChallenge = document(signUpChallenge: true).serialized()

    static func document(signUpChallenge: Bool) -> JSONValue {
        var paths = JSONObject()
        for operation in operations(signUpChallenge: signUpChallenge) {
            var methods = paths[operation.path]?.objectValue ?? JSONObject()
            precondition(methods[operation.method] == nil, "\(operation.method) \(operation.path) is in the route table twice")
            methods[operation.method] = operation.json
            paths[operation.path] = .object(methods)
        }
        return [
            "openapi": "3.0.3",
            "info": [
                "title": "pricesvc",
                "version": "1.0.0",
                "description": "Community-reported parking prices: a strict subset of PostgREST (/rest/v1) and Supabase Auth (/auth/v1). Every /rest/v1 and /auth/v1 request carries the anon key in the apikey header; docs/api.md says exactly which PostgREST options are supported.",
            ],
            "servers": [["url": "/"]],
            "components": components,
            "paths": .object(paths),
        ]
    }

    // MARK: the route table

    /// One operation per method of each resource in the route table (`Resource.table`, which the router
    /// reads too), in its order; the sign-up challenge only where challenges are on.
    static func operations(signUpChallenge: Bool) -> [Operation] {
        Resource.table.filter { signUpChallenge || $0 != .signUpChallenge }.flatMap { resource in
            resource.methods.map { operation(resource, method: $0.lowercased(), signUpChallenge: signUpChallenge) }
        }
    }

    private static func operation(_ resource: Resource, method: String, signUpChallenge: Bool) -> Operation {
        let path = resource.path
        switch resource {
        case .openAPI:
            return Operation(method: method, path: path, operationId: "openapi", summary: "This document", security: .apikey,
                             responses: [(200, ["description": "OpenAPI document", "content": ["application/openapi+json": ["schema": ["type": "object"]]]])])
        case .reports:
            guard method != "post" else { return reportsInsert }
            return Operation(method: method, path: path, operationId: "price_reports_" + method,
                             summary: "Denied: reports are never readable or changeable", security: .apikeyAndBearer,
                             responses: [], errors: [403])
        case .rpc(let name):
            guard let function = readFunctions.first(where: { $0.name == name }) else {
                preconditionFailure("\(name) is in the route table but not among the read functions")
            }
            return function.operation(method)
        case .signUp:
            return Operation(method: method, path: path, operationId: "signup",
                             summary: "Anonymous sign-in: a new user and session (no email, no phone)", security: .apikey,
                             requestBody: ["content": ["application/json": ["schema": signUpBody(challenge: signUpChallenge)]]],
                             responses: [
                                 (200, ["description": "Session", "content": ["application/json": ["schema": ref("schemas", "Session")]]]),
                                 (422, errorAnswer("Email or phone sign-up is not offered (email_provider_disabled, phone_provider_disabled)", .auth)),
                             ],
                             errors: [400, 503])
        case .signUpChallenge:
            return challenge
        case .token:
            return Operation(method: method, path: path, operationId: "token_refresh",
                             summary: "Rotate a refresh token (grant_type=refresh_token)", security: .apikey,
                             parameters: [["name": "grant_type", "in": "query", "required": true, "schema": ["type": "string", "enum": ["refresh_token"]]]],
                             requestBody: ["required": true, "content": ["application/json": ["schema": [
                                 "type": "object", "required": ["refresh_token"],
                                 "properties": ["refresh_token": [
                                     "type": "string", "minLength": 1, "maxLength": 256,
                                     "description": "A refresh token this server issued; any other is 400 refresh_token_not_found",
                                 ]],
                             ]]]],
                             responses: [(200, ["description": "New session", "content": ["application/json": ["schema": ref("schemas", "Session")]]])],
                             errors: [400, 403, 503])
        case .logout:
            return Operation(method: method, path: path, operationId: "logout",
                             summary: "Revoke sessions: scope global (default), local or others", security: .apikeyAndBearer,
                             parameters: [["name": "scope", "in": "query", "schema": ["type": "string", "enum": ["global", "local", "others"]]]],
                             responses: [(204, ["description": "Signed out (no body)"])],
                             errors: [400, 403, 503])
        case .user:
            return Operation(method: method, path: path, operationId: "user", summary: "The signed-in user", security: .apikeyAndBearer,
                             responses: [(200, ["description": "User", "content": ["application/json": ["schema": ref("schemas", "User")]]])],
                             errors: [403, 503])
        case .health:
            return Operation(method: method, path: path, operationId: "healthz", summary: "The process is up", security: .none,
                             responses: [(200, ["description": "ok", "content": ["application/json": ["schema": [
                                 "type": "object", "properties": ["status": ["type": "string", "enum": ["ok"]]],
                             ]]]])])
        case .ready:
            return Operation(method: method, path: path, operationId: "readyz",
                             summary: "Database reachable and every shipped migration applied", security: .none,
                             responses: [
                                 (200, ["description": "ready", "content": ["application/json": ["schema": ["type": "object"]]]]),
                                 (503, ["description": "not ready", "headers": ["Retry-After": ref("headers", "RetryAfter")],
                                        "content": ["application/json": ["schema": ["type": "object"]]]]),
                             ])
        }
    }

    private static var reportsInsert: Operation {
        // A batch is all or nothing and every row has the same keys, so each set of optional keys is its own array form.
        let required = ["location_id", "rate_kind", "price_cents"]
        let optionalSets: [[String]] = [[], ["currency"], ["client_report_id"], ["currency", "client_report_id"]]
        // lat and lng go together: each set of optional keys with both of them, or with neither.
        let batches: [JSONValue] = (optionalSets + optionalSets.map { $0 + ["lat", "lng"] }).map { optional in
            let keys = required + optional
            return ["type": "array", "minItems": 1, "maxItems": .number(JSONNumber(ReportSubmission.maxRows)), "items": [
                "type": "object", "additionalProperties": false,
                "required": .array(keys.map { .string($0) }), "properties": reportProperties(keys),
            ]]
        }
        return Operation(
            method: "post", path: Resource.reports.path, operationId: "price_reports_insert",
            summary: "Submit one report, or up to \(ReportSubmission.maxRows) as an array (all or nothing; every row with the same keys)",
            description: "The query string may hold columns=<the rows' keys> (supabase-py sends it with a list) and select=*; anything else is 400 PGRST127.",
            security: .apikeyAndBearer,
            parameters: [[
                "name": "Prefer", "in": "header",
                "description": "return=minimal (default): empty 201; return=representation: the stored rows; count=exact: the number stored in Content-Range. Any other preference is 400 PGRST122",
                "schema": ["type": "string", "enum": [
                    "return=minimal", "return=representation", "return=minimal,count=exact", "return=representation,count=exact", "",
                ]],
            ]],
            requestBody: ["required": true, "content": ["application/json": ["schema": [
                "oneOf": .array([ref("schemas", "PriceReport"), ref("schemas", "PlacedPriceReport")] + batches),
            ]]]],
            responses: [
                (201, ["description": "Stored. No body with return=minimal (the default); with Prefer: return=representation the stored rows as a JSON array of StoredReport",
                       "headers": ["Content-Range": ref("headers", "ContentRange")]]),
                (409, errorAnswer("client_report_id already used with other values (23505)", .rest)),
            ],
            errors: [400, 403, 503])
    }

    private static var challenge: Operation {
        let string: JSONValue = ["type": "string"]
        return Operation(
            method: "get", path: Resource.signUpChallenge.path, operationId: "signup_challenge",
            summary: "A proof-of-work challenge (ALTCHA format) to solve before sign-up", security: .apikey,
            responses: [(200, ["description": "Challenge", "content": ["application/json": ["schema": [
                "type": "object", "required": ["algorithm", "challenge", "maxnumber", "salt", "signature"],
                "properties": [
                    "algorithm": ["type": "string", "enum": ["SHA-256"]], "challenge": string,
                    "maxnumber": ["type": "integer"], "salt": string, "signature": string,
                ],
            ]]]])])
    }

    private static func signUpBody(challenge: Bool) -> JSONValue {
        let captcha: JSONValue = challenge
            ? ["type": "object", "required": ["captcha_token"], "properties": ["captcha_token": [
                "type": "string", "minLength": 1, "description": "A solved GET /auth/v1/challenge: base64 of the ALTCHA solution JSON",
            ]]]
            : ["description": "Ignored: this deployment asks for no sign-up challenge"]
        let notOffered: (String) -> JSONValue = { what in
            ["type": "string", "nullable": true, "enum": ["", nil], "description": .string("\(what) sign-up is not offered (422)")]
        }
        var members: [(String, JSONValue)] = [("type", "object")]
        if challenge { members.append(("required", ["gotrue_meta_security"])) }
        members.append(("properties", [
            "data": ["type": "object", "nullable": true, "description": "Becomes user_metadata: at most 1 KiB as JSON, no NUL characters"],
            "email": notOffered("Email"),
            "phone": notOffered("Phone"),
            "gotrue_meta_security": captcha,
        ]))
        return .object(JSONObject(uniqueKeysWithValues: members))
    }

    // MARK: the read functions

    static var readFunctions: [ReadFunction] {
        let locationID: JSONValue = ["type": "string", "pattern": .string(anchored("[^\u{0}]*"))]
        let locationIDs: JSONValue = ["type": "array", "maxItems": 50, "items": locationID]
        let locationIDsQuery: JSONValue = ["name": "location_ids", "in": "query", "required": true, "schema": [
            "type": "string", "pattern": .string(anchored("\\{([^{}\",\u{0}]+(,[^{}\",\u{0}]+){0,49})?\\}")),
            "example": "{sfmta:garage-1,sfmta:garage-2}", "description": "PostgreSQL's array literal, at most 50 ids",
        ]]
        // null (POST) or empty (GET, how the SDKs send null in a query string) asks for every kind at once.
        let medianRateKind: JSONValue = [
            "type": "string", "enum": .array(rateKinds + [nil]), "nullable": true, "default": "hourly",
            "description": "One rate kind (default hourly); null for every rate kind in one call",
        ]
        let medianRateKindQuery: JSONValue = [
            "name": "rate_kind", "in": "query", "description": "One rate kind (default hourly); empty for every rate kind",
            "schema": ["type": "string", "enum": .array(rateKinds + [""])],
        ]
        let (startsAt, duration) = (QuoteQuery.startsAtPattern, QuoteQuery.durationPattern)
        let startsAtText = "When the stay starts (default now): ISO 8601, without an offset UTC"
        let degrees = anchored(PlacesQuery.degreesPattern)
        let placesStayText = "A stay, as price_quotes takes it: give starts_at and duration together (else 400, 22023) for the published columns"
        let durationText = "How long the stay lasts (default PT1H): PT<hours>H[<minutes>M], PT<minutes>M or P<days>D[T<hours>H], more than 0 and at most 366 days; locations x days (a started day counting whole) at most 1830 per call"

        return [
            ReadFunction(
                name: "price_median", summary: "Medians for one location, if at least 3 distinct people reported it", rows: .median,
                body: ["type": "object", "required": ["location_id"], "additionalProperties": false,
                       "properties": ["location_id": locationID, "rate_kind": medianRateKind]],
                queryArguments: [
                    ["name": "location_id", "in": "query", "required": true, "schema": [
                        "type": "string", "pattern": .string(anchored(#"(?!(not\.)?[a-z]+(\([a-z]+\))?\.)"# + "[^\u{0}]*")),
                        "description": "A value that reads as an operator expression (eq.x) is a filter, as in PostgREST",
                    ]],
                    medianRateKindQuery,
                ]),
            ReadFunction(
                name: "price_medians", summary: "Medians for up to 50 locations; locations below the threshold are absent", rows: .median,
                body: ["type": "object", "required": ["location_ids"], "additionalProperties": false,
                       "properties": ["location_ids": locationIDs, "rate_kind": medianRateKind]],
                queryArguments: [locationIDsQuery, medianRateKindQuery]),
            ReadFunction(
                name: "price_quotes",
                summary: "For up to 50 locations: the community median beside what the city's published (CDS) rates charge for a stay from starts_at for duration; locations with neither are absent",
                rows: .quote,
                body: ["type": "object", "required": ["location_ids"], "additionalProperties": false, "properties": [
                    "location_ids": locationIDs,
                    "rate_kind": ["type": "string", "enum": .array(rateKinds), "default": "hourly"],
                    "starts_at": ["type": "string", "pattern": .string(startsAt), "example": "2026-03-02T17:30:00-05:00", "description": .string(startsAtText)],
                    "duration": ["type": "string", "pattern": .string(duration), "example": "PT2H", "description": .string(durationText)],
                ]],
                queryArguments: [
                    locationIDsQuery,
                    ["name": "rate_kind", "in": "query", "description": "One rate kind (default hourly)",
                     "schema": ["type": "string", "enum": .array(rateKinds)]],
                    ["name": "starts_at", "in": "query", "description": .string(startsAtText),
                     "schema": ["type": "string", "pattern": .string(startsAt), "example": "2026-03-02T17:30:00-05:00"]],
                    ["name": "duration", "in": "query", "description": .string(durationText),
                     "schema": ["type": "string", "pattern": .string(duration), "example": "PT2H"]],
                ]),
            ReadFunction(
                name: "places_nearby",
                summary: "The places within radius_m metres of a point, nearest first (then by location_id), each with its community median and, for a stay (starts_at and duration, both or neither), its published cost",
                rows: .place,
                body: ["type": "object", "required": ["lat", "lng"], "additionalProperties": false, "properties": [
                    "lat": ["type": "number", "minimum": -90, "maximum": 90, "example": 37.7955],
                    "lng": ["type": "number", "minimum": -180, "maximum": 180, "example": -122.3937],
                    "radius_m": ["type": "integer", "minimum": 1, "maximum": 5000, "default": 500],
                    "rate_kind": ["type": "string", "enum": .array(rateKinds), "default": "hourly"],
                    "starts_at": ["type": "string", "nullable": true, "pattern": .string(startsAt), "example": "2026-03-02T17:30:00-05:00",
                                  "description": .string(placesStayText)],
                    "duration": ["type": "string", "nullable": true, "pattern": .string(duration), "example": "PT2H",
                                 "description": .string(placesStayText)],
                    "max_results": ["type": "integer", "minimum": 1, "maximum": 100, "default": 20],
                ]],
                queryArguments: [
                    ["name": "lat", "in": "query", "required": true, "description": "Degrees north, -90 to 90",
                     "schema": ["type": "string", "pattern": .string(degrees), "example": "37.7955"]],
                    ["name": "lng", "in": "query", "required": true, "description": "Degrees east, -180 to 180",
                     "schema": ["type": "string", "pattern": .string(degrees), "example": "-122.3937"]],
                    ["name": "radius_m", "in": "query", "description": "Metres, 1 to 5000 (default 500)",
                     "schema": ["type": "integer", "minimum": 1, "maximum": 5000]],
                    ["name": "rate_kind", "in": "query", "description": "One rate kind (default hourly)",
                     "schema": ["type": "string", "enum": .array(rateKinds)]],
                    ["name": "starts_at", "in": "query", "description": .string(placesStayText),
                     "schema": ["type": "string", "pattern": .string(startsAt), "example": "2026-03-02T17:30:00-05:00"]],
                    ["name": "duration", "in": "query", "description": .string(placesStayText),
                     "schema": ["type": "string", "pattern": .string(duration), "example": "PT2H"]],
                    ["name": "max_results", "in": "query", "description": "At most this many places, 1 to 100 (default 20)",
                     "schema": ["type": "integer", "minimum": 1, "maximum": 100]],
                ]),
            ReadFunction(
                name: "places_match",
                summary: "Which existing place an app's own candidate (a name at a point) is: up to 5 places within radius_m, by trigram similarity of their normalised names, then the nearer, then by location_id",
                rows: .match,
                body: ["type": "object", "required": ["name", "lat", "lng"], "additionalProperties": false, "properties": [
                    "name": ["type": "string", "minLength": 1, "maxLength": 200, "pattern": .string(anchored("[^\u{0}]*")), "example": "Ferry Building Garage",
                             "description": "At most 200 characters, with a letter or a digit (else 400, 22023)"],
                    "lat": ["type": "number", "minimum": -90, "maximum": 90, "example": 37.7955],
                    "lng": ["type": "number", "minimum": -180, "maximum": 180, "example": -122.3937],
                    "radius_m": ["type": "integer", "minimum": 1, "maximum": 1000, "default": 150],
                ]],
                queryArguments: [
                    ["name": "name", "in": "query", "required": true, "description": "The candidate's name, at most 200 characters",
                     "schema": ["type": "string", "minLength": 1, "maxLength": 200,
                                "pattern": .string(anchored(#"(?!(not\.)?[a-z]+(\([a-z]+\))?\.)"# + "[^\u{0}]*")),
                                "example": "Ferry Building Garage"]],
                    ["name": "lat", "in": "query", "required": true, "description": "Degrees north, -90 to 90",
                     "schema": ["type": "string", "pattern": .string(degrees), "example": "37.7955"]],
                    ["name": "lng", "in": "query", "required": true, "description": "Degrees east, -180 to 180",
                     "schema": ["type": "string", "pattern": .string(degrees), "example": "-122.3937"]],
                    ["name": "radius_m", "in": "query", "description": "Metres, 1 to 1000 (default 150)",
                     "schema": ["type": "integer", "minimum": 1, "maximum": 1000]],
                ]),
        ]
    }
}
