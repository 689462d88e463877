/// Every SQLSTATE pricesvc gives a meaning, as postgres-nio's `PSQLError.Code` names PostgreSQL's: the
/// ones its own SQL raises (migrations/: `raise exception using errcode = …`), then PostgREST's table for
/// the ones PostgreSQL raises itself. Each carries the status of a REST answer; the Auth surface's answer
/// is `AuthError(database:attested:unavailableRetryAfter:)`. SQLStateCatalogueTests fails when the SQL
/// raises a code that is not in `raisedBySQL`, or `raisedBySQL` holds one the SQL no longer raises.
struct SQLState: Hashable, Sendable, CustomStringConvertible {
    let code: String
    /// The status under /rest/v1 (for 42501, a signed-in caller's: an anonymous one is told 401).
    let restStatus: Int

    private init(_ code: String, _ restStatus: Int) {
        (self.code, self.restStatus) = (code, restStatus)
    }

    var description: String { code }

    // Codes of pricesvc's own, PostgREST's way: PTnnn answers status nnn; PAnnn are the auth functions'
    // refusals, which only the Auth surface answers (500 anywhere else).
    /// A token PostgreSQL refused: 'invalid token' (the reason in the detail), 'token expired', or 'session
    /// not found' (revoked or signed out).
    static let invalidToken = SQLState("PT401", 401)
    /// A limit kept in the database (the reporter cap, an address's sign-up and refresh buckets); the hint
    /// reads `Retry after N seconds`.
    static let limitReached = SQLState("PT429", 429)
    /// `auth.refresh_session`: an unknown refresh token, or one of a revoked session.
    static let refreshTokenNotFound = SQLState("PA001", 500)
    /// `auth.sign_out`, `auth.get_user`: 'session not found' or 'user not found'.
    static let sessionOrUserNotFound = SQLState("PA003", 500)
    /// `auth.spend_sign_up_challenge`: the sign-up challenge (proof-of-work or attestation) was already used.
    static let challengeUsed = SQLState("PA010", 500)
    /// `auth.sign_up_attested`, `auth.sign_up_android_attested`: the key already made an identity.
    static let attestationKeyUsed = SQLState("PA011", 500)

    // PostgreSQL's codes that pricesvc's SQL raises by name.
    static let invalidParameterValue = SQLState("22023", 400)
    static let nullValueNotAllowed = SQLState("22004", 400)
    static let numericValueOutOfRange = SQLState("22003", 400)
    static let uniqueViolation = SQLState("23505", 409)
    static let featureNotSupported = SQLState("0A000", 500)
    static let objectNotInPrerequisiteState = SQLState("55000", 500)
    /// `raise exception 'text'` without a code (policies.sql's superuser check).
    static let raiseException = SQLState("P0001", 400)

    /// What the SQL in migrations/ raises, each code once.
    static let raisedBySQL: [SQLState] = [
        invalidToken, limitReached, refreshTokenNotFound, sessionOrUserNotFound, challengeUsed, attestationKeyUsed,
        invalidParameterValue, nullValueNotAllowed, numericValueOutOfRange, uniqueViolation, featureNotSupported,
        objectNotInPrerequisiteState, raiseException,
    ]

    // PostgREST's table, for the subset pricesvc can meet from PostgreSQL itself.
    static let insufficientPrivilege = SQLState("42501", 403)
    static let foreignKeyViolation = SQLState("23503", 409)
    static let serializationFailure = SQLState("40001", 409)
    static let deadlockDetected = SQLState("40P01", 409)
    static let notNullViolation = SQLState("23502", 400)
    static let checkViolation = SQLState("23514", 400)
    static let undefinedFunction = SQLState("42883", 404)
    static let undefinedTable = SQLState("42P01", 404)
    /// PostgREST answers 405 here (a GET calling a volatile function). pricesvc never asks for a read-only
    /// transaction, so 25006 means the node became a standby (failover): retry later.
    static let readOnlySQLTransaction = SQLState("25006", 503)
    static let queryCanceled = SQLState("57014", 503)
    static let adminShutdown = SQLState("57P01", 503)
    static let crashShutdown = SQLState("57P02", 503)
    static let cannotConnectNow = SQLState("57P03", 503)
    static let tooManyConnections = SQLState("53300", 503)
    static let configurationLimitExceeded = SQLState("53400", 503)

    static let known: [String: SQLState] = Dictionary(uniqueKeysWithValues: (raisedBySQL + [
        insufficientPrivilege, foreignKeyViolation, serializationFailure, deadlockDetected, notNullViolation,
        checkViolation, undefinedFunction, undefinedTable, readOnlySQLTransaction, queryCanceled, adminShutdown,
        crashShutdown, cannotConnectNow, tooManyConnections, configurationLimitExceeded,
    ]).map { ($0.code, $0) })

    /// The status of a code not named above: PostgREST's `PTnnn` convention, then by class (08 and 53: 503,
    /// 22: 400), else 500.
    static func restStatus(unnamed code: String) -> Int {
        if code.hasPrefix("PT"), let status = Int(code.dropFirst(2)), (100...599).contains(status) { return status }
        switch code.prefix(2) {
        case "08", "53": return 503
        case "22": return 400
        default: return 500
        }
    }
}
