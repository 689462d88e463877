/// The OpenAPI 3 description of exactly the surface `Router` serves, returned by `GET /rest/v1/`: an
/// `operationId`, the security and every status each operation can answer (with its error body), the
/// bounds the database enforces, and PostgREST's read options on the functions. It describes the
/// deployment it is served by: the sign-up challenge appears only when challenges are on.
/// RouterTests holds it to the router; tests/e2e/test_fuzz_openapi.py holds it to the server.
public enum OpenAPIDocument {
    /// The document for a deployment without sign-up challenges (the default).
    public static var json: String { json(signUpChallenge: false) }

    public static func json(signUpChallenge: Bool) -> String {
        signUpChallenge ? withChallenge : withoutChallenge
    }

    private static let withoutChallenge = document(signUpChallenge: false)
    private static let withChallenge = document(signUpChallenge: true)

    private static func document(signUpChallenge: Bool) -> String {
        let challengePath = signUpChallenge ? ##"""
  "/auth/v1/challenge": {
   "get": {
    "operationId": "signup_challenge",
    "summary": "A proof-of-work challenge (ALTCHA format) to solve before sign-up",
    "security": [
     {
      "apikey": []
     }
    ],
    "responses": {
     "200": {
      "description": "Challenge",
      "content": {
       "application/json": {
        "schema": {
         "type": "object",
         "required": [
          "algorithm",
          "challenge",
          "maxnumber",
          "salt",
          "signature"
         ],
         "properties": {
          "algorithm": {
           "type": "string",
           "enum": [
            "SHA-256"
           ]
          },
          "challenge": {
           "type": "string"
          },
          "maxnumber": {
           "type": "integer"
          },
          "salt": {
           "type": "string"
          },
          "signature": {
           "type": "string"
          }
         }
        }
       }
      }
     },
     "401": {
      "$ref": "#/components/responses/AuthUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/AuthTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/AuthTooManyRequests"
     }
    }
   }
  },
"""## + "\n" : ""
        let captcha = signUpChallenge
            ? #"{"type": "object", "required": ["captcha_token"], "properties": {"captcha_token": {"type": "string", "minLength": 1, "description": "A solved GET /auth/v1/challenge: base64 of the ALTCHA solution JSON"}}}"#
            : #"{"description": "Ignored: this deployment asks for no sign-up challenge"}"#
        let signUpSchema = #"{"type": "object", "# + (signUpChallenge ? #""required": ["gotrue_meta_security"], "# : "") + #""properties": {"#
            + #""data": {"type": "object", "nullable": true, "description": "Becomes user_metadata: at most 1 KiB as JSON, no NUL characters"}, "#
            + #""email": {"type": "string", "nullable": true, "enum": ["", null], "description": "Email sign-up is not offered (422)"}, "#
            + #""phone": {"type": "string", "nullable": true, "enum": ["", null], "description": "Phone sign-up is not offered (422)"}, "#
            + #""gotrue_meta_security": "# + captcha + "}}"
        return #"""
{
 "openapi": "3.0.3",
 "info": {
  "title": "pricesvc",
  "version": "1.0.0",
  "description": "Community-reported parking prices: a strict subset of PostgREST (/rest/v1) and Supabase Auth (/auth/v1). Every /rest/v1 and /auth/v1 request carries the anon key in the apikey header; docs/api.md says exactly which PostgREST options are supported."
 },
 "servers": [
  {
   "url": "/"
  }
 ],
 "components": {
  "securitySchemes": {
   "apikey": {
    "type": "apiKey",
    "in": "header",
    "name": "apikey",
    "description": "The anon key (pricesvc keys prints it), on every /rest/v1 and /auth/v1 request"
   },
   "bearer": {
    "type": "http",
    "scheme": "bearer",
    "bearerFormat": "JWT",
    "description": "A user's access token from sign-up or refresh"
   }
  },
  "headers": {
   "RetryAfter": {
    "description": "Seconds to wait before retrying",
    "schema": {
     "type": "integer",
     "minimum": 1
    }
   },
   "ContentRange": {
    "description": "The rows returned and, under Prefer: count=exact, the total: 0-24/100, */0, 0-9/*",
    "schema": {
     "type": "string",
     "pattern": "^(\\*|[0-9]+-[0-9]+)/(\\*|[0-9]+)$"
    }
   }
  },
  "schemas": {
   "LocationID": {
    "type": "string",
    "minLength": 1,
    "maxLength": 200,
    "pattern": "^[^\u0000-\u001f\u007f-\u009f]*$(?!\n)",
    "example": "sfmta:garage-123",
    "description": "Provider-qualified; no control characters"
   },
   "RateKind": {
    "type": "string",
    "enum": [
     \#(RateKind.jsonItems)
    ]
   },
   "PriceCents": {
    "type": "integer",
    "minimum": 1,
    "maximum": 1000000
   },
   "Currency": {
    "type": "string",
    "minLength": 3,
    "maxLength": 3,
    "pattern": "^[A-Z]{3}$(?!\n)",
    "description": "ISO 4217 code, upper case",
    "default": "USD"
   },
   "ClientReportID": {
    "type": "string",
    "format": "uuid",
    "nullable": true,
    "minLength": 36,
    "maxLength": 36,
    "pattern": "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$(?!\n)",
    "description": "Makes a retry idempotent: the same id with the same values stores nothing new"
   },
   "PriceReport": {
    "type": "object",
    "additionalProperties": false,
    "required": [
     "location_id",
     "rate_kind",
     "price_cents"
    ],
    "properties": {
     "location_id": {
      "$ref": "#/components/schemas/LocationID"
     },
     "rate_kind": {
      "$ref": "#/components/schemas/RateKind"
     },
     "price_cents": {
      "$ref": "#/components/schemas/PriceCents"
     },
     "currency": {
      "$ref": "#/components/schemas/Currency"
     },
     "client_report_id": {
      "$ref": "#/components/schemas/ClientReportID"
     }
    }
   },
   "StoredReport": {
    "type": "object",
    "properties": {
     "id": {
      "type": "integer"
     },
     "location_id": {
      "$ref": "#/components/schemas/LocationID"
     },
     "rate_kind": {
      "$ref": "#/components/schemas/RateKind"
     },
     "price_cents": {
      "$ref": "#/components/schemas/PriceCents"
     },
     "currency": {
      "$ref": "#/components/schemas/Currency"
     },
     "client_report_id": {
      "$ref": "#/components/schemas/ClientReportID"
     },
     "created_at": {
      "type": "string",
      "format": "date-time"
     }
    }
   },
   "Median": {
    "type": "object",
    "description": "A row of price_median(s); with select= only the selected (or aliased) columns",
    "properties": {
     "location_id": {
      "type": "string"
     },
     "rate_kind": {
      "$ref": "#/components/schemas/RateKind"
     },
     "currency": {
      "type": "string"
     },
     "median_cents": {
      "type": "integer"
     },
     "reporters": {
      "type": "integer",
      "minimum": 3
     },
     "reports": {
      "type": "integer",
      "minimum": 3
     },
     "last_reported_at": {
      "type": "string",
      "format": "date-time"
     }
    }
   },
   "Quote": {
    "type": "object",
    "description": "A row of price_quotes: the community median beside the published (CDS) cost of the stay. Community columns are null below the threshold, published columns null without a city feed for the location; with select= only the selected (or aliased) columns",
    "properties": {
     "location_id": {
      "type": "string"
     },
     "rate_kind": {
      "$ref": "#/components/schemas/RateKind"
     },
     "currency": {
      "type": "string"
     },
     "median_cents": {
      "type": "integer",
      "nullable": true
     },
     "reporters": {
      "type": "integer",
      "minimum": 3,
      "nullable": true
     },
     "published_cents": {
      "type": "integer",
      "nullable": true,
      "description": "null when published_allowed is false"
     },
     "published_allowed": {
      "type": "boolean",
      "nullable": true
     },
     "published_reason": {
      "type": "string",
      "nullable": true,
      "enum": [
       "no_parking",
       "max_stay",
       "no_data",
       null
      ]
     },
     "published_source": {
      "type": "string",
      "nullable": true
     },
     "published_updated_at": {
      "type": "string",
      "format": "date-time",
      "nullable": true
     }
    }
   },
   "Error": {
    "type": "object",
    "required": [
     "code",
     "details",
     "hint",
     "message"
    ],
    "additionalProperties": false,
    "description": "PostgREST's error body",
    "properties": {
     "code": {
      "type": "string"
     },
     "message": {
      "type": "string"
     },
     "details": {
      "type": "string",
      "nullable": true
     },
     "hint": {
      "type": "string",
      "nullable": true
     }
    }
   },
   "AuthError": {
    "type": "object",
    "required": [
     "code",
     "error_code",
     "msg"
    ],
    "description": "Supabase Auth's error body",
    "properties": {
     "code": {
      "type": "integer"
     },
     "error_code": {
      "type": "string"
     },
     "msg": {
      "type": "string"
     }
    }
   },
   "User": {
    "type": "object",
    "required": [
     "id",
     "aud",
     "role",
     "is_anonymous",
     "app_metadata",
     "user_metadata",
     "identities",
     "created_at",
     "updated_at"
    ],
    "properties": {
     "id": {
      "type": "string",
      "format": "uuid"
     },
     "aud": {
      "type": "string"
     },
     "role": {
      "type": "string"
     },
     "is_anonymous": {
      "type": "boolean"
     },
     "app_metadata": {
      "type": "object"
     },
     "user_metadata": {
      "type": "object"
     },
     "identities": {
      "type": "array",
      "items": {}
     },
     "created_at": {
      "type": "string",
      "format": "date-time"
     },
     "updated_at": {
      "type": "string",
      "format": "date-time"
     }
    }
   },
   "Session": {
    "type": "object",
    "required": [
     "access_token",
     "token_type",
     "expires_in",
     "expires_at",
     "refresh_token",
     "user"
    ],
    "properties": {
     "access_token": {
      "type": "string"
     },
     "token_type": {
      "type": "string",
      "enum": [
       "bearer"
      ]
     },
     "expires_in": {
      "type": "integer"
     },
     "expires_at": {
      "type": "integer"
     },
     "refresh_token": {
      "type": "string"
     },
     "user": {
      "$ref": "#/components/schemas/User"
     }
    }
   }
  },
  "responses": {
   "RestBadRequest": {
    "description": "Malformed request: body, argument, filter or option (PGRST100/102/107/108/122/123/127/200/204, 22xxx, 23xxx, 42703, 42804)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "RestUnauthorized": {
    "description": "No or wrong apikey, bad or expired token (PGRST000/301/303, PT401), or the request ran as anon and was refused (42501)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "RestForbidden": {
    "description": "Signed in, but not allowed (42501)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "RestTooLarge": {
    "description": "Body larger than the limit (PGRST413)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    }
   },
   "RestTooManyRequests": {
    "description": "Per-address request limit (PGRST429), or 10 reports in 60 minutes (PT429)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    },
    "headers": {
     "Retry-After": {
      "$ref": "#/components/headers/RetryAfter"
     }
    }
   },
   "RestUnavailable": {
    "description": "Database unreachable or busy (PGRST000, PGRST003 or the SQLSTATE)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/Error"
      }
     }
    },
    "headers": {
     "Retry-After": {
      "$ref": "#/components/headers/RetryAfter"
     }
    }
   },
   "AuthBadRequest": {
    "description": "Invalid body or parameters (bad_json, validation_failed, captcha_failed, refresh_token_not_found, refresh_token_already_used)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    }
   },
   "AuthUnauthorized": {
    "description": "No or wrong apikey (no_api_key, invalid_api_key), bad token (bad_jwt), no access token (no_authorization)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    }
   },
   "AuthForbidden": {
    "description": "The token's session or user no longer exists (session_not_found, user_not_found)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    }
   },
   "AuthTooLarge": {
    "description": "Body larger than the limit (request_too_large)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    }
   },
   "AuthTooManyRequests": {
    "description": "Per-address request, sign-up or refresh limit (over_request_rate_limit)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    },
    "headers": {
     "Retry-After": {
      "$ref": "#/components/headers/RetryAfter"
     }
    }
   },
   "AuthUnavailable": {
    "description": "Database unreachable or busy (service_unavailable)",
    "content": {
     "application/json": {
      "schema": {
       "$ref": "#/components/schemas/AuthError"
      }
     }
    },
    "headers": {
     "Retry-After": {
      "$ref": "#/components/headers/RetryAfter"
     }
    }
   }
  },
  "parameters": {
   "select": {
    "name": "select",
    "in": "query",
    "description": "Columns to return: *, column, or alias:column, comma-separated",
    "schema": {
     "type": "string",
     "pattern": "^((\\*|([A-Za-z_][A-Za-z0-9_]*:)?(location_id|rate_kind|currency|median_cents|reporters|reports|last_reported_at))(,(\\*|([A-Za-z_][A-Za-z0-9_]*:)?(location_id|rate_kind|currency|median_cents|reporters|reports|last_reported_at)))*)?$(?!\n)"
    }
   },
   "order": {
    "name": "order",
    "in": "query",
    "description": "column[.asc|.desc][.nullsfirst|.nullslast], comma-separated",
    "schema": {
     "type": "string",
     "pattern": "^(location_id|rate_kind|currency|median_cents|reporters|reports|last_reported_at)(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?(,(location_id|rate_kind|currency|median_cents|reporters|reports|last_reported_at)(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?)*$(?!\n)"
    }
   },
   "limit": {
    "name": "limit",
    "in": "query",
    "description": "At most this many rows (a negative limit is 416)",
    "schema": {
     "type": "integer",
     "minimum": 0,
     "maximum": 2147483647
    }
   },
   "offset": {
    "name": "offset",
    "in": "query",
    "description": "Skip this many rows",
    "schema": {
     "type": "integer",
     "minimum": 0,
     "maximum": 2147483647
    }
   },
   "PreferRead": {
    "name": "Prefer",
    "in": "header",
    "description": "count=exact puts the total in Content-Range. Any preference not listed is 400 PGRST122.",
    "schema": {
     "type": "string",
     "enum": [
      "count=exact",
      "return=representation",
      "count=exact,return=representation",
      ""
     ]
    }
   },
   "Accept": {
    "name": "Accept",
    "in": "header",
    "description": "application/json (default, also for */* or an empty Accept), application/vnd.pgrst.object+json (exactly one row, else 406 PGRST116), text/csv; anything else is 406 PGRST107",
    "schema": {
     "type": "string",
     "enum": [
      "application/json",
      "application/vnd.pgrst.object+json",
      "text/csv",
      "*/*",
      ""
     ]
    }
   },
   "Range": {
    "name": "Range",
    "in": "header",
    "description": "first-last or first- (rows, GET only); intersected with limit/offset; anything else is ignored",
    "schema": {
     "type": "string"
    }
   },
   "select_quotes": {
    "name": "select",
    "in": "query",
    "description": "Columns to return: *, column, or alias:column, comma-separated",
    "schema": {
     "type": "string",
     "pattern": "^((\\*|([A-Za-z_][A-Za-z0-9_]*:)?(location_id|rate_kind|currency|median_cents|reporters|published_cents|published_allowed|published_reason|published_source|published_updated_at))(,(\\*|([A-Za-z_][A-Za-z0-9_]*:)?(location_id|rate_kind|currency|median_cents|reporters|published_cents|published_allowed|published_reason|published_source|published_updated_at)))*)?$(?!\n)"
    }
   },
   "order_quotes": {
    "name": "order",
    "in": "query",
    "description": "column[.asc|.desc][.nullsfirst|.nullslast], comma-separated",
    "schema": {
     "type": "string",
     "pattern": "^(location_id|rate_kind|currency|median_cents|reporters|published_cents|published_allowed|published_reason|published_source|published_updated_at)(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?(,(location_id|rate_kind|currency|median_cents|reporters|published_cents|published_allowed|published_reason|published_source|published_updated_at)(\\.(asc|desc))?(\\.(nullsfirst|nullslast))?)*$(?!\n)"
    }
   },
   "filter_published_cents": {
    "name": "published_cents",
    "in": "query",
    "description": "Filter on published_cents (bigint): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.-?[0-9]{1,18}|in\\.\\(-?[0-9]{1,18}(,-?[0-9]{1,18})*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_published_allowed": {
    "name": "published_allowed",
    "in": "query",
    "description": "Filter on published_allowed (boolean): [not.]eq|neq|gt|gte|lt|lte.true|false, in.(true,false), is.null, is.not_null, is.true, is.false, is.unknown",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])|in\\.\\(([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee])(,([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]))*\\)|is\\.(null|not_null|true|false|unknown))$(?!\n)"
    }
   },
   "filter_published_reason": {
    "name": "published_reason",
    "in": "query",
    "description": "Filter on published_reason (text): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[^\u0000]*|in\\.\\([^\",()\u0000]+(,[^\",()\u0000]+)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_published_source": {
    "name": "published_source",
    "in": "query",
    "description": "Filter on published_source (text): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[^\u0000]*|in\\.\\([^\",()\u0000]+(,[^\",()\u0000]+)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_published_updated_at": {
    "name": "published_updated_at",
    "in": "query",
    "description": "Filter on published_updated_at (timestamptz): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?|in\\.\\([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?(,[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_location_id": {
    "name": "location_id",
    "in": "query",
    "description": "Filter on location_id (text): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[^\u0000]*|in\\.\\([^\",()\u0000]+(,[^\",()\u0000]+)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_rate_kind": {
    "name": "rate_kind",
    "in": "query",
    "description": "Filter on rate_kind (text): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[^\u0000]*|in\\.\\([^\",()\u0000]+(,[^\",()\u0000]+)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_currency": {
    "name": "currency",
    "in": "query",
    "description": "Filter on currency (text): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[^\u0000]*|in\\.\\([^\",()\u0000]+(,[^\",()\u0000]+)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_median_cents": {
    "name": "median_cents",
    "in": "query",
    "description": "Filter on median_cents (integer): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.-?[0-9]{1,9}|in\\.\\(-?[0-9]{1,9}(,-?[0-9]{1,9})*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_reporters": {
    "name": "reporters",
    "in": "query",
    "description": "Filter on reporters (integer): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.-?[0-9]{1,9}|in\\.\\(-?[0-9]{1,9}(,-?[0-9]{1,9})*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_reports": {
    "name": "reports",
    "in": "query",
    "description": "Filter on reports (integer): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.-?[0-9]{1,9}|in\\.\\(-?[0-9]{1,9}(,-?[0-9]{1,9})*\\)|is\\.(null|not_null))$(?!\n)"
    }
   },
   "filter_last_reported_at": {
    "name": "last_reported_at",
    "in": "query",
    "description": "Filter on last_reported_at (timestamptz): [not.]eq|neq|gt|gte|lt|lte.value, in.(a,b), is.null, is.not_null",
    "schema": {
     "type": "string",
     "pattern": "^(not\\.)?((eq|neq|gt|gte|lt|lte)\\.[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?|in\\.\\([0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?(,[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])([T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?)?)?(Z|[+-](0[0-9]|1[0-4])(:[0-5][0-9])?)?)*\\)|is\\.(null|not_null))$(?!\n)"
    }
   }
  }
 },
 "paths": {
  "/rest/v1/": {
   "get": {
    "operationId": "openapi",
    "summary": "This document",
    "security": [
     {
      "apikey": []
     }
    ],
    "responses": {
     "200": {
      "description": "OpenAPI document",
      "content": {
       "application/openapi+json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     }
    }
   }
  },
  "/rest/v1/price_reports": {
   "post": {
    "operationId": "price_reports_insert",
    "summary": "Submit one report, or up to 10 as an array (all or nothing; every row with the same keys)",
    "description": "The query string may hold columns=<the rows' keys> (supabase-py sends it with a list) and select=*; anything else is 400 PGRST127.",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "Prefer",
      "in": "header",
      "description": "return=minimal (default): empty 201; return=representation: the stored rows; count=exact: the number stored in Content-Range. Any other preference is 400 PGRST122",
      "schema": {
       "type": "string",
       "enum": [
        "return=minimal",
        "return=representation",
        "return=minimal,count=exact",
        "return=representation,count=exact",
        ""
       ]
      }
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "oneOf": [
         {
          "$ref": "#/components/schemas/PriceReport"
         },
         {
          "type": "array",
          "minItems": 1,
          "maxItems": 10,
          "items": {
           "type": "object",
           "additionalProperties": false,
           "required": [
            "location_id",
            "rate_kind",
            "price_cents"
           ],
           "properties": {
            "location_id": {
             "$ref": "#/components/schemas/LocationID"
            },
            "rate_kind": {
             "$ref": "#/components/schemas/RateKind"
            },
            "price_cents": {
             "$ref": "#/components/schemas/PriceCents"
            }
           }
          }
         },
         {
          "type": "array",
          "minItems": 1,
          "maxItems": 10,
          "items": {
           "type": "object",
           "additionalProperties": false,
           "required": [
            "location_id",
            "rate_kind",
            "price_cents",
            "currency"
           ],
           "properties": {
            "location_id": {
             "$ref": "#/components/schemas/LocationID"
            },
            "rate_kind": {
             "$ref": "#/components/schemas/RateKind"
            },
            "price_cents": {
             "$ref": "#/components/schemas/PriceCents"
            },
            "currency": {
             "$ref": "#/components/schemas/Currency"
            }
           }
          }
         },
         {
          "type": "array",
          "minItems": 1,
          "maxItems": 10,
          "items": {
           "type": "object",
           "additionalProperties": false,
           "required": [
            "location_id",
            "rate_kind",
            "price_cents",
            "client_report_id"
           ],
           "properties": {
            "location_id": {
             "$ref": "#/components/schemas/LocationID"
            },
            "rate_kind": {
             "$ref": "#/components/schemas/RateKind"
            },
            "price_cents": {
             "$ref": "#/components/schemas/PriceCents"
            },
            "client_report_id": {
             "$ref": "#/components/schemas/ClientReportID"
            }
           }
          }
         },
         {
          "type": "array",
          "minItems": 1,
          "maxItems": 10,
          "items": {
           "type": "object",
           "additionalProperties": false,
           "required": [
            "location_id",
            "rate_kind",
            "price_cents",
            "currency",
            "client_report_id"
           ],
           "properties": {
            "location_id": {
             "$ref": "#/components/schemas/LocationID"
            },
            "rate_kind": {
             "$ref": "#/components/schemas/RateKind"
            },
            "price_cents": {
             "$ref": "#/components/schemas/PriceCents"
            },
            "currency": {
             "$ref": "#/components/schemas/Currency"
            },
            "client_report_id": {
             "$ref": "#/components/schemas/ClientReportID"
            }
           }
          }
         }
        ]
       }
      }
     }
    },
    "responses": {
     "201": {
      "description": "Stored. No body with return=minimal (the default); with Prefer: return=representation the stored rows as a JSON array of StoredReport",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "403": {
      "$ref": "#/components/responses/RestForbidden"
     },
     "409": {
      "description": "client_report_id already used with other values (23505)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   },
   "get": {
    "operationId": "price_reports_get",
    "summary": "Denied: reports are never readable or changeable",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "responses": {
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "403": {
      "$ref": "#/components/responses/RestForbidden"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     }
    }
   },
   "patch": {
    "operationId": "price_reports_patch",
    "summary": "Denied: reports are never readable or changeable",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "responses": {
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "403": {
      "$ref": "#/components/responses/RestForbidden"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     }
    }
   },
   "put": {
    "operationId": "price_reports_put",
    "summary": "Denied: reports are never readable or changeable",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "responses": {
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "403": {
      "$ref": "#/components/responses/RestForbidden"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     }
    }
   },
   "delete": {
    "operationId": "price_reports_delete",
    "summary": "Denied: reports are never readable or changeable",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "responses": {
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "403": {
      "$ref": "#/components/responses/RestForbidden"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     }
    }
   }
  },
  "/rest/v1/rpc/price_median": {
   "post": {
    "operationId": "price_median_post",
    "summary": "Medians for one location, if at least 3 distinct people reported it",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/select"
     },
     {
      "$ref": "#/components/parameters/order"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/filter_location_id"
     },
     {
      "$ref": "#/components/parameters/filter_rate_kind"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_reports"
     },
     {
      "$ref": "#/components/parameters/filter_last_reported_at"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "location_id"
        ],
        "additionalProperties": false,
        "properties": {
         "location_id": {
          "type": "string",
          "pattern": "^[^\u0000]*$(?!\n)"
         },
         "rate_kind": {
          "type": "string",
          "enum": [
           \#(RateKind.jsonItems),
           null
          ],
          "nullable": true,
          "default": "hourly",
          "description": "One rate kind (default hourly); null for every rate kind in one call"
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   },
   "get": {
    "operationId": "price_median_get",
    "summary": "Same as POST; arguments and options share the query string",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "location_id",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^(?!(not\\.)?[a-z]+(\\([a-z]+\\))?\\.)[^\u0000]*$(?!\n)",
       "description": "A value that reads as an operator expression (eq.x) is a filter, as in PostgREST"
      }
     },
     {
      "name": "rate_kind",
      "in": "query",
      "description": "One rate kind (default hourly); empty for every rate kind",
      "schema": {
       "type": "string",
       "enum": [
        \#(RateKind.jsonItems),
        ""
       ]
      }
     },
     {
      "$ref": "#/components/parameters/select"
     },
     {
      "$ref": "#/components/parameters/order"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/Range"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_reports"
     },
     {
      "$ref": "#/components/parameters/filter_last_reported_at"
     }
    ],
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   }
  },
  "/rest/v1/rpc/price_medians": {
   "post": {
    "operationId": "price_medians_post",
    "summary": "Medians for up to 50 locations; locations below the threshold are absent",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/select"
     },
     {
      "$ref": "#/components/parameters/order"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/filter_location_id"
     },
     {
      "$ref": "#/components/parameters/filter_rate_kind"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_reports"
     },
     {
      "$ref": "#/components/parameters/filter_last_reported_at"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "location_ids"
        ],
        "additionalProperties": false,
        "properties": {
         "location_ids": {
          "type": "array",
          "maxItems": 50,
          "items": {
           "type": "string",
           "pattern": "^[^\u0000]*$(?!\n)"
          }
         },
         "rate_kind": {
          "type": "string",
          "enum": [
           \#(RateKind.jsonItems),
           null
          ],
          "nullable": true,
          "default": "hourly",
          "description": "One rate kind (default hourly); null for every rate kind in one call"
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   },
   "get": {
    "operationId": "price_medians_get",
    "summary": "Same as POST; arguments and options share the query string",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "location_ids",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^\\{([^{}\",\u0000]+(,[^{}\",\u0000]+){0,49})?\\}$(?!\n)",
       "example": "{sfmta:garage-1,sfmta:garage-2}",
       "description": "PostgreSQL's array literal, at most 50 ids"
      }
     },
     {
      "name": "rate_kind",
      "in": "query",
      "description": "One rate kind (default hourly); empty for every rate kind",
      "schema": {
       "type": "string",
       "enum": [
        \#(RateKind.jsonItems),
        ""
       ]
      }
     },
     {
      "$ref": "#/components/parameters/select"
     },
     {
      "$ref": "#/components/parameters/order"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/Range"
     },
     {
      "$ref": "#/components/parameters/filter_location_id"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_reports"
     },
     {
      "$ref": "#/components/parameters/filter_last_reported_at"
     }
    ],
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Median"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Median"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   }
  },
  "/rest/v1/rpc/price_quotes": {
   "post": {
    "operationId": "price_quotes_post",
    "summary": "For up to 50 locations: the community median beside what the city's published (CDS) rates charge for a stay from starts_at for duration; locations with neither are absent",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "$ref": "#/components/parameters/select_quotes"
     },
     {
      "$ref": "#/components/parameters/order_quotes"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/filter_location_id"
     },
     {
      "$ref": "#/components/parameters/filter_rate_kind"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_published_cents"
     },
     {
      "$ref": "#/components/parameters/filter_published_allowed"
     },
     {
      "$ref": "#/components/parameters/filter_published_reason"
     },
     {
      "$ref": "#/components/parameters/filter_published_source"
     },
     {
      "$ref": "#/components/parameters/filter_published_updated_at"
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "location_ids"
        ],
        "additionalProperties": false,
        "properties": {
         "location_ids": {
          "type": "array",
          "maxItems": 50,
          "items": {
           "type": "string",
           "pattern": "^[^\u0000]*$(?!\n)"
          }
         },
         "rate_kind": {
          "type": "string",
          "enum": [
           \#(RateKind.jsonItems)
          ],
          "default": "hourly"
         },
         "starts_at": {
          "type": "string",
          "pattern": "\#(QuoteQuery.startsAtPattern)",
          "example": "2026-03-02T17:30:00-05:00",
          "description": "When the stay starts (default now): ISO 8601, without an offset UTC"
         },
         "duration": {
          "type": "string",
          "pattern": "\#(QuoteQuery.durationPattern)",
          "example": "PT2H",
          "description": "How long the stay lasts (default PT1H): PT<hours>H[<minutes>M], PT<minutes>M or P<days>D[T<hours>H], more than 0 and at most 366 days"
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Quote"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Quote"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Quote"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Quote"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   },
   "get": {
    "operationId": "price_quotes_get",
    "summary": "Same as POST; arguments and options share the query string",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "location_ids",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "pattern": "^\\{([^{}\",\u0000]+(,[^{}\",\u0000]+){0,49})?\\}$(?!\n)",
       "example": "{sfmta:garage-1,sfmta:garage-2}",
       "description": "PostgreSQL's array literal, at most 50 ids"
      }
     },
     {
      "name": "rate_kind",
      "in": "query",
      "description": "One rate kind (default hourly)",
      "schema": {
       "type": "string",
       "enum": [
        \#(RateKind.jsonItems)
       ]
      }
     },
     {
      "name": "starts_at",
      "in": "query",
      "description": "When the stay starts (default now): ISO 8601, without an offset UTC",
      "schema": {
       "type": "string",
       "pattern": "\#(QuoteQuery.startsAtPattern)",
       "example": "2026-03-02T17:30:00-05:00"
      }
     },
     {
      "name": "duration",
      "in": "query",
      "description": "How long the stay lasts (default PT1H): PT<hours>H[<minutes>M], PT<minutes>M or P<days>D[T<hours>H], more than 0 and at most 366 days",
      "schema": {
       "type": "string",
       "pattern": "\#(QuoteQuery.durationPattern)",
       "example": "PT2H"
      }
     },
     {
      "$ref": "#/components/parameters/select_quotes"
     },
     {
      "$ref": "#/components/parameters/order_quotes"
     },
     {
      "$ref": "#/components/parameters/limit"
     },
     {
      "$ref": "#/components/parameters/offset"
     },
     {
      "$ref": "#/components/parameters/PreferRead"
     },
     {
      "$ref": "#/components/parameters/Accept"
     },
     {
      "$ref": "#/components/parameters/Range"
     },
     {
      "$ref": "#/components/parameters/filter_location_id"
     },
     {
      "$ref": "#/components/parameters/filter_currency"
     },
     {
      "$ref": "#/components/parameters/filter_median_cents"
     },
     {
      "$ref": "#/components/parameters/filter_reporters"
     },
     {
      "$ref": "#/components/parameters/filter_published_cents"
     },
     {
      "$ref": "#/components/parameters/filter_published_allowed"
     },
     {
      "$ref": "#/components/parameters/filter_published_reason"
     },
     {
      "$ref": "#/components/parameters/filter_published_source"
     },
     {
      "$ref": "#/components/parameters/filter_published_updated_at"
     }
    ],
    "responses": {
     "200": {
      "description": "The function's rows, filtered, ordered and paged as asked",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Quote"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Quote"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "206": {
      "description": "Part of the rows (Prefer: count=exact and a page smaller than the total)",
      "headers": {
       "Content-Range": {
        "$ref": "#/components/headers/ContentRange"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "array",
         "items": {
          "$ref": "#/components/schemas/Quote"
         }
        }
       },
       "application/vnd.pgrst.object+json": {
        "schema": {
         "$ref": "#/components/schemas/Quote"
        }
       },
       "text/csv": {
        "schema": {
         "type": "string"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/RestBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/RestUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/RestTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/RestTooManyRequests"
     },
     "404": {
      "description": "No such function or arguments (PGRST202)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "406": {
      "description": "No media type pricesvc produces (PGRST107), or a single object asked of a result that is not one row (PGRST116)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "416": {
      "description": "Range not satisfiable (PGRST103): a negative limit, a backwards Range, or an offset past a counted total",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Error"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/RestUnavailable"
     }
    }
   }
  },
  "/auth/v1/signup": {
   "post": {
    "operationId": "signup",
    "summary": "Anonymous sign-in: a new user and session (no email, no phone)",
    "security": [
     {
      "apikey": []
     }
    ],
    "requestBody": {
     "content": {
      "application/json": {
       "schema": \#(signUpSchema)
      }
     }
    },
    "responses": {
     "200": {
      "description": "Session",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/AuthBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/AuthUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/AuthTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/AuthTooManyRequests"
     },
     "422": {
      "description": "Email or phone sign-up is not offered (email_provider_disabled, phone_provider_disabled)",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/AuthError"
        }
       }
      }
     },
     "503": {
      "$ref": "#/components/responses/AuthUnavailable"
     }
    }
   }
  },
\#(challengePath)  "/auth/v1/token": {
   "post": {
    "operationId": "token_refresh",
    "summary": "Rotate a refresh token (grant_type=refresh_token)",
    "security": [
     {
      "apikey": []
     }
    ],
    "parameters": [
     {
      "name": "grant_type",
      "in": "query",
      "required": true,
      "schema": {
       "type": "string",
       "enum": [
        "refresh_token"
       ]
      }
     }
    ],
    "requestBody": {
     "required": true,
     "content": {
      "application/json": {
       "schema": {
        "type": "object",
        "required": [
         "refresh_token"
        ],
        "properties": {
         "refresh_token": {
          "type": "string",
          "minLength": 1,
          "maxLength": 256,
          "description": "A refresh token this server issued; any other is 400 refresh_token_not_found"
         }
        }
       }
      }
     }
    },
    "responses": {
     "200": {
      "description": "New session",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/Session"
        }
       }
      }
     },
     "400": {
      "$ref": "#/components/responses/AuthBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/AuthUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/AuthTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/AuthTooManyRequests"
     },
     "403": {
      "$ref": "#/components/responses/AuthForbidden"
     },
     "503": {
      "$ref": "#/components/responses/AuthUnavailable"
     }
    }
   }
  },
  "/auth/v1/logout": {
   "post": {
    "operationId": "logout",
    "summary": "Revoke sessions: scope global (default), local or others",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "parameters": [
     {
      "name": "scope",
      "in": "query",
      "schema": {
       "type": "string",
       "enum": [
        "global",
        "local",
        "others"
       ]
      }
     }
    ],
    "responses": {
     "204": {
      "description": "Signed out (no body)"
     },
     "400": {
      "$ref": "#/components/responses/AuthBadRequest"
     },
     "401": {
      "$ref": "#/components/responses/AuthUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/AuthTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/AuthTooManyRequests"
     },
     "403": {
      "$ref": "#/components/responses/AuthForbidden"
     },
     "503": {
      "$ref": "#/components/responses/AuthUnavailable"
     }
    }
   }
  },
  "/auth/v1/user": {
   "get": {
    "operationId": "user",
    "summary": "The signed-in user",
    "security": [
     {
      "apikey": [],
      "bearer": []
     }
    ],
    "responses": {
     "200": {
      "description": "User",
      "content": {
       "application/json": {
        "schema": {
         "$ref": "#/components/schemas/User"
        }
       }
      }
     },
     "401": {
      "$ref": "#/components/responses/AuthUnauthorized"
     },
     "413": {
      "$ref": "#/components/responses/AuthTooLarge"
     },
     "429": {
      "$ref": "#/components/responses/AuthTooManyRequests"
     },
     "403": {
      "$ref": "#/components/responses/AuthForbidden"
     },
     "503": {
      "$ref": "#/components/responses/AuthUnavailable"
     }
    }
   }
  },
  "/healthz": {
   "get": {
    "operationId": "healthz",
    "summary": "The process is up",
    "security": [],
    "responses": {
     "200": {
      "description": "ok",
      "content": {
       "application/json": {
        "schema": {
         "type": "object",
         "properties": {
          "status": {
           "type": "string",
           "enum": [
            "ok"
           ]
          }
         }
        }
       }
      }
     }
    }
   }
  },
  "/readyz": {
   "get": {
    "operationId": "readyz",
    "summary": "Database reachable and every shipped migration applied",
    "security": [],
    "responses": {
     "200": {
      "description": "ready",
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     },
     "503": {
      "description": "not ready",
      "headers": {
       "Retry-After": {
        "$ref": "#/components/headers/RetryAfter"
       }
      },
      "content": {
       "application/json": {
        "schema": {
         "type": "object"
        }
       }
      }
     }
    }
   }
  },
  "/metrics": {
   "get": {
    "operationId": "metrics",
    "summary": "Prometheus metrics",
    "security": [],
    "responses": {
     "200": {
      "description": "Prometheus text exposition format",
      "content": {
       "text/plain": {
        "schema": {
         "type": "string"
        }
       }
      }
     }
    }
   }
  }
 }
}
"""#
    }
}
