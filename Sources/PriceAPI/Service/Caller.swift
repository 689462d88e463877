import AnonAuth
import PriceCrypto
import PriceDB
import PriceHTTP
import PriceSQL

/// Who a request runs as in PostgreSQL, from its `Authorization` header.
enum Caller: Sendable {
    case anon
    case user(VerifiedToken)

    var role: RequestRole {
        if case .user = self { return .authenticated }
        return .anon
    }

    /// The identity statement every transaction starts with.
    var identityQuery: Query {
        switch self {
        case .anon: return Statements.identity.query((RequestRole.anon.rawValue, ""))
        case .user(let token): return Statements.identity.query((RequestRole.authenticated.rawValue, token.token))
        }
    }

    /// The identity statement of a submission: the INSERT's policy does the one verification.
    /// Callers without a `sub` (anon, or a token naming no reporter) take the verifying statement,
    /// so their refusal reads the same as anywhere else.
    var submitterIdentityQuery: Query {
        guard case .user(let token) = self, let sub = token.sub else { return identityQuery }
        return Statements.submitterIdentity.query((RequestRole.authenticated.rawValue, token.token, sub))
    }
}

/// Who is calling: the `apikey` check and the Bearer token, verified in-process with the keys the
/// database last listed (`ServiceKeys`).
struct CallerIdentification: Sendable {
    let keys: ServiceKeys
    let clock: @Sendable () -> Double

    func now() -> Int { Int(clock()) }

    /// Supabase's gateway contract: every /rest and /auth request carries an API key: a publishable key
    /// (`sb_publishable_…`), or the legacy JWT anon key while the deployment accepts it.
    func checkAPIKey(_ request: HTTPRequest, isAuthRoute: Bool) -> APIError? {
        guard let key = request.header("apikey"), !key.isEmpty else {
            return isAuthRoute
                ? .auth(401, "no_api_key", "No API key found in request")
                : APIError(status: 401, code: "PGRST000", message: "No API key found in request",
                           hint: "Send a publishable key (pricesvc keys publishable create) in the apikey header")
        }
        if !accepts(apiKey: key) {
            return isAuthRoute
                ? .auth(401, "invalid_api_key", "Invalid API key")
                : APIError(status: 401, code: "PGRST000", message: "Invalid API key",
                           hint: "The apikey header must hold one of this service's publishable keys (or its anon key)")
        }
        return nil
    }

    private func accepts(apiKey key: String) -> Bool {
        let snapshot = keys.snapshot
        if let hash = PublishableKey.hash(key) {
            if snapshot.publishableKeyHashes.contains(hash) { return true }
            keys.requestRefresh()  // made a moment ago, perhaps
            return false
        }
        guard keys.acceptsLegacyAnonKey, !snapshot.ownKeyRetired else { return false }
        if constantTimeEqual(Array(key.utf8), snapshot.anonKey) { return true }
        switch snapshot.verifier.verifyAnonKey(key, now: now()) {
        case .success: return true
        case .failure(let error):
            if error.code == .badSignature { keys.requestRefresh() }
            return false
        }
    }

    /// The caller: anonymous without a Bearer token (or with the apikey as one), else a verified user.
    func identify(_ request: HTTPRequest) -> Result<Caller, APIError> {
        guard let authorization = request.header("authorization") else { return .success(.anon) }
        let utf8 = authorization.utf8
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")), space > utf8.startIndex,
              utf8.index(after: space) < utf8.endIndex,
              Substring(utf8[..<space]).isASCIICaseInsensitive("bearer") else {
            return .failure(APIError(status: 401, code: "PGRST301", message: "Authorization header must be 'Bearer <token>'"))
        }
        let token = String(Substring(utf8[utf8.index(after: space)...]))
        // The SDKs send the apikey as the Bearer token until a user signs in.
        if token == request.header("apikey") { return .success(.anon) }
        let snapshot = keys.snapshot
        if snapshot.ownKeyRetired {
            return .failure(APIError(status: 401, code: "PGRST301", message: "invalid token",
                                     details: "this instance's signing key was retired"))
        }
        let verifier = snapshot.verifier
        switch verifier.verifyAccessToken(token, now: now()) {
        case .success(let verified):
            return .success(.user(verified))
        case .failure(let accessError):
            if keys.acceptsLegacyAnonKey, case .success = verifier.verifyAnonKey(token, now: now()) { return .success(.anon) }
            // Signed with a key added a moment ago, perhaps: the next request will know.
            if accessError.code == .badSignature { keys.requestRefresh() }
            let code = accessError.code == .expired ? "PGRST303" : "PGRST301"
            return .failure(APIError(status: 401, code: code, message: accessError.message))
        }
    }
}
