import AnonAuth
import PriceCrypto
import PriceDB
import PriceHTTPMessage
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
    func checkAPIKey(_ request: HTTPRequest) -> GatewayError? {
        guard let key = request.header("apikey"), !key.isEmpty else { return .noAPIKey }
        return accepts(apiKey: key) ? nil : .invalidAPIKey
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
    func identify(_ request: HTTPRequest) -> Result<Caller, GatewayError> {
        guard let authorization = request.header("authorization") else { return .success(.anon) }
        let utf8 = authorization.utf8
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")), space > utf8.startIndex,
              utf8.index(after: space) < utf8.endIndex,
              Substring(utf8[..<space]).isASCIICaseInsensitive("bearer") else {
            return .failure(.authorizationNotBearer)
        }
        let token = String(Substring(utf8[utf8.index(after: space)...]))
        // The SDKs send the apikey as the Bearer token until a user signs in.
        if token == request.header("apikey") { return .success(.anon) }
        let snapshot = keys.snapshot
        if snapshot.ownKeyRetired {
            return .failure(.signingKeyRetired)
        }
        let verifier = snapshot.verifier
        switch verifier.verifyAccessToken(token, now: now()) {
        case .success(let verified):
            return .success(.user(verified))
        case .failure(let accessError):
            if keys.acceptsLegacyAnonKey, case .success = verifier.verifyAnonKey(token, now: now()) { return .success(.anon) }
            // Signed with a key added a moment ago, perhaps: the next request will know.
            if accessError.code == .badSignature { keys.requestRefresh() }
            return .failure(accessError.code == .expired ? .expiredToken(accessError.message) : .invalidToken(accessError.message))
        }
    }
}
