/// The OpenAPI 3 description of exactly the surface `Router` serves, returned by `GET /rest/v1/`.
/// tests/e2e checks that every path and method listed here is answered, and nothing else is.
public enum OpenAPIDocument {
    public static var json: String { json(signUpChallenge: false) }

    public static func json(signUpChallenge: Bool) -> String { document }

    static let document = #"""
{
  "openapi": "3.0.3",
  "info": {
    "title": "pricesvc",
    "version": "1.0.0",
    "description": "Community-reported parking prices. A strict subset of the PostgREST and Supabase Auth protocols. Every /rest/v1 and /auth/v1 request carries the anon key in the apikey header."
  },
  "servers": [{"url": "/"}],
  "components": {
    "securitySchemes": {
      "apikey": {"type": "apiKey", "in": "header", "name": "apikey"},
      "bearer": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}
    },
    "schemas": {
      "PriceReport": {
        "type": "object",
        "additionalProperties": false,
        "required": ["location_id", "rate_kind", "price_cents"],
        "properties": {
          "location_id": {"type": "string", "minLength": 1, "maxLength": 200, "example": "sfmta:garage-123"},
          "rate_kind": {"type": "string", "enum": ["hourly", "daily", "flat", "monthly"]},
          "price_cents": {"type": "integer", "minimum": 1, "maximum": 1000000},
          "currency": {"type": "string", "pattern": "^[A-Z]{3}$", "default": "USD"},
          "client_report_id": {"type": "string", "format": "uuid"}
        }
      },
      "StoredReport": {
        "allOf": [
          {"$ref": "#/components/schemas/PriceReport"},
          {"type": "object", "properties": {"id": {"type": "integer"}, "created_at": {"type": "string", "format": "date-time"}}}
        ]
      },
      "Median": {
        "type": "object",
        "properties": {
          "location_id": {"type": "string"},
          "rate_kind": {"type": "string"},
          "currency": {"type": "string"},
          "median_cents": {"type": "integer"},
          "reporters": {"type": "integer"},
          "reports": {"type": "integer"},
          "last_reported_at": {"type": "string", "format": "date-time"}
        }
      },
      "Error": {
        "type": "object",
        "properties": {
          "code": {"type": "string"},
          "message": {"type": "string"},
          "details": {"type": "string", "nullable": true},
          "hint": {"type": "string", "nullable": true}
        }
      },
      "AuthError": {
        "type": "object",
        "properties": {"code": {"type": "integer"}, "error_code": {"type": "string"}, "msg": {"type": "string"}}
      },
      "User": {
        "type": "object",
        "properties": {
          "id": {"type": "string", "format": "uuid"},
          "aud": {"type": "string"},
          "role": {"type": "string"},
          "is_anonymous": {"type": "boolean"},
          "app_metadata": {"type": "object"},
          "user_metadata": {"type": "object"},
          "identities": {"type": "array", "items": {}},
          "created_at": {"type": "string", "format": "date-time"},
          "updated_at": {"type": "string", "format": "date-time"}
        }
      },
      "Session": {
        "type": "object",
        "properties": {
          "access_token": {"type": "string"},
          "token_type": {"type": "string", "enum": ["bearer"]},
          "expires_in": {"type": "integer"},
          "expires_at": {"type": "integer"},
          "refresh_token": {"type": "string"},
          "user": {"$ref": "#/components/schemas/User"}
        }
      }
    }
  },
  "security": [{"apikey": [], "bearer": []}],
  "paths": {
    "/rest/v1/": {
      "get": {"summary": "This document", "responses": {"200": {"description": "OpenAPI document"}}}
    },
    "/rest/v1/price_reports": {
      "post": {
        "summary": "Submit one report, or up to 10 as an array (all or nothing)",
        "parameters": [{"name": "Prefer", "in": "header", "schema": {"type": "string", "enum": ["return=minimal", "return=representation"]}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {
          "oneOf": [
            {"$ref": "#/components/schemas/PriceReport"},
            {"type": "array", "minItems": 1, "maxItems": 10, "items": {"$ref": "#/components/schemas/PriceReport"}}
          ]}}}},
        "responses": {
          "201": {"description": "Stored. Empty body for return=minimal; the rows for return=representation",
                  "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/StoredReport"}}}}},
          "400": {"description": "Invalid body", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}},
          "401": {"description": "Missing or invalid key or token, or not signed in"},
          "409": {"description": "Conflict"},
          "413": {"description": "Body larger than the limit"},
          "429": {"description": "Over 10 reports in 60 minutes, or the per-IP request limit; see Retry-After"},
          "503": {"description": "Database unavailable; see Retry-After"}
        }
      },
      "get": {"summary": "Denied: reports are never readable", "responses": {"401": {"description": "anon"}, "403": {"description": "signed in"}}},
      "patch": {"summary": "Denied", "responses": {"401": {"description": "anon"}, "403": {"description": "signed in"}}},
      "put": {"summary": "Denied", "responses": {"401": {"description": "anon"}, "403": {"description": "signed in"}}},
      "delete": {"summary": "Denied", "responses": {"401": {"description": "anon"}, "403": {"description": "signed in"}}}
    },
    "/rest/v1/rpc/price_median": {
      "post": {
        "summary": "Median for one location, if at least 3 distinct people reported it",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["location_id"], "additionalProperties": false,
          "properties": {"location_id": {"type": "string"}, "rate_kind": {"type": "string", "default": "hourly"}}}}}},
        "responses": {"200": {"description": "Zero or more rows", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Median"}}}}},
                      "400": {"description": "Invalid argument"}, "401": {"description": "Not signed in"}, "404": {"description": "Unknown argument names"}}
      },
      "get": {
        "summary": "Same as POST, arguments in the query string",
        "parameters": [{"name": "location_id", "in": "query", "required": true, "schema": {"type": "string"}},
                       {"name": "rate_kind", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "Zero or more rows"}, "401": {"description": "Not signed in"}}
      }
    },
    "/rest/v1/rpc/price_medians": {
      "post": {
        "summary": "Medians for up to 50 locations; locations below the threshold are absent",
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["location_ids"], "additionalProperties": false,
          "properties": {"location_ids": {"type": "array", "maxItems": 50, "items": {"type": "string"}}, "rate_kind": {"type": "string", "default": "hourly"}}}}}},
        "responses": {"200": {"description": "Zero or more rows", "content": {"application/json": {"schema": {"type": "array", "items": {"$ref": "#/components/schemas/Median"}}}}},
                      "400": {"description": "More than 50 ids or invalid argument"}, "401": {"description": "Not signed in"}, "404": {"description": "Unknown argument names"}}
      },
      "get": {
        "summary": "Same as POST; location_ids as an array literal {a,b}",
        "parameters": [{"name": "location_ids", "in": "query", "required": true, "schema": {"type": "string", "example": "{sfmta:garage-1,sfmta:garage-2}"}},
                       {"name": "rate_kind", "in": "query", "schema": {"type": "string"}}],
        "responses": {"200": {"description": "Zero or more rows"}, "401": {"description": "Not signed in"}}
      }
    },
    "/auth/v1/signup": {
      "post": {
        "summary": "Anonymous sign-in: a new user and session (no email, no phone)",
        "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {"data": {"type": "object"},
                        "gotrue_meta_security": {"type": "object", "properties": {"captcha_token": {"type": "string", "description": "Solved /auth/v1/challenge (ALTCHA payload, base64 JSON); required only when sign-up challenges are on"}}}}}}}},
        "responses": {"200": {"description": "Session", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
                      "400": {"description": "captcha_failed: the challenge solution is missing, wrong, expired or already used", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthError"}}}},
                      "422": {"description": "Email or phone sign-up is not offered", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthError"}}}},
                      "429": {"description": "Sign-up limit for this address; see Retry-After"}}
      }
    },
    "/auth/v1/challenge": {
      "get": {
        "summary": "A proof-of-work challenge (ALTCHA format) to solve before sign-up, when the server asks for one",
        "responses": {"200": {"description": "Challenge", "content": {"application/json": {"schema": {"type": "object",
                        "required": ["algorithm", "challenge", "maxnumber", "salt", "signature"],
                        "properties": {"algorithm": {"type": "string", "enum": ["SHA-256"]}, "challenge": {"type": "string"}, "maxnumber": {"type": "integer"},
                                       "salt": {"type": "string"}, "signature": {"type": "string"}}}}}},
                      "422": {"description": "Sign-up challenges are off (signup_challenge_disabled)", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/AuthError"}}}}}
      }
    },
    "/auth/v1/token": {
      "post": {
        "summary": "Rotate a refresh token (grant_type=refresh_token)",
        "parameters": [{"name": "grant_type", "in": "query", "required": true, "schema": {"type": "string", "enum": ["refresh_token"]}}],
        "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object", "required": ["refresh_token"], "properties": {"refresh_token": {"type": "string"}}}}}},
        "responses": {"200": {"description": "New session", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Session"}}}},
                      "400": {"description": "refresh_token_not_found or refresh_token_already_used"},
                      "429": {"description": "Refresh limit for this address"}}
      }
    },
    "/auth/v1/logout": {
      "post": {
        "summary": "Revoke refresh tokens: scope global (default), local or others",
        "parameters": [{"name": "scope", "in": "query", "schema": {"type": "string", "enum": ["global", "local", "others"]}}],
        "responses": {"204": {"description": "Signed out"}, "401": {"description": "No access token"}}
      }
    },
    "/auth/v1/user": {
      "get": {
        "summary": "The signed-in user",
        "responses": {"200": {"description": "User", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/User"}}}}, "401": {"description": "No access token"}}
      }
    },
    "/healthz": {"get": {"summary": "Process is up", "security": [], "responses": {"200": {"description": "ok"}}}},
    "/readyz": {"get": {"summary": "Database reachable and migrations current", "security": [], "responses": {"200": {"description": "ready"}, "503": {"description": "not ready"}}}},
    "/metrics": {"get": {"summary": "Prometheus metrics", "security": [], "responses": {"200": {"description": "text exposition format"}}}}
  }
}
"""#
}
