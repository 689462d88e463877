import AnonAuth
import PriceCrypto
import PriceDB
import PriceHTTPMessage
import PriceJSON
import PriceSQL

/// Supabase Auth's anonymous subset: sign-up, refresh-token rotation, logout, current user.
/// Tokens are minted here; what must hold across instances (per-IP limits, rotation and reuse
/// detection) is decided by the auth functions in the database.
struct AuthHandler: Sendable {
    /// The settings the auth surface reads, and nothing else of `ServiceSettings`.
    struct Settings: Sendable {
        var userMetadataMaxBytes: Int
        /// The user_metadata keys a sign-up may store; the rest are dropped (empty: none).
        var userMetadataKeys: Set<String>
        var unavailableRetryAfter: Int
        /// Per client address, passed to `auth.sign_up_anonymous`.
        var signUpLimits: (perHour: Int, burst: Int)
        /// Per client address, and the reuse window of a rotated token, passed to `auth.refresh_session`.
        var refreshLimits: (perWindow: Int, windowSeconds: Int, reuseSeconds: Int)

        init(_ settings: ServiceSettings) {
            (userMetadataMaxBytes, unavailableRetryAfter) = (settings.userMetadataMaxBytes, settings.unavailableRetryAfter)
            userMetadataKeys = settings.userMetadataKeys
            signUpLimits = (settings.signUpsPerHourPerIP, settings.signUpBurstPerIP)
            refreshLimits = (settings.refreshesPerWindowPerIP, settings.refreshWindowSeconds, settings.refreshReuseSeconds)
        }
    }

    let settings: Settings
    /// Signs with the key the database calls current (re-read while serving).
    let keys: ServiceKeys
    let clientKey: ClientKey
    let refreshChain: RefreshTokenChain
    /// `nil` unless the deployment requires a proof-of-work challenge for sign-up.
    let signUpChallenges: SignUpChallenges?
    /// `nil` when App Attest sign-up is off (`PRICESVC_SIGNUP_ATTESTATION=off`).
    let attestation: SignUpAttestation?
    /// Counts sign-ups and attestation verdicts (App Attest and Android) (`pricesvc_sign_ups_total`, `pricesvc_attestations_total`).
    let metrics: ServiceMetrics
    let clock: @Sendable () -> Double

    func now() -> Int { Int(clock()) }

    func signUp(_ request: HTTPRequest) -> Decision.Outcome {
        let form: SignUpForm
        switch Self.signUpForm(request.body, maxBytes: settings.userMetadataMaxBytes, keys: settings.userMetadataKeys) {
        case .success(let parsed): form = parsed
        case .failure(let error): return .answer(error.response)
        }
        let metadata = form.metadata
        // One snapshot of the keys for the check and the token it signs.
        let issuing = keys.snapshot
        if issuing.ownKeyRetired { return .answer(Self.retiredKey(settings.unavailableRetryAfter).response) }
        let keyCheck = Statements.verifiedToken.query(String(decoding: issuing.anonKey, as: UTF8.self))
        let refresh = RefreshToken.generate()
        let ipKey = clientKey.key(forIP: request.clientIP)
        let limits = settings.signUpLimits

        // An attestation token (App Attest or Android), when the deployment looks at them, replaces the
        // proof-of-work. Verified here (CPU only), then the challenge is spent and the key recorded in the
        // sign-up's own transaction.
        if let attestation {
            let spent: SpentChallenge
            let signUp: Query
            let provider: String
            switch attestation.verify(captchaToken: form.captchaToken, now: now()) {
            case .failure(let refusal)?:
                metrics.recordAttestation(verified: false)
                return .answer(refusal.apiError.response)
            case .success(.appAttest(let verified))?:
                metrics.recordAttestation(verified: true)
                let key = verified.key
                (spent, provider) = (verified.spent, "app_attest")
                signUp = Statements.signUpAttested.query((Bytea(ipKey), metadata, Bytea(refresh.hash), limits.perHour, limits.burst,
                                                          Bytea(sha256(key.keyId)), key.appID, key.environment.rawValue,
                                                          Bytea(key.publicKey), Bytea(key.receipt)))
            case .success(.android(let verified))?:
                metrics.recordAttestation(verified: true)
                let key = verified.key
                let rootOfTrust = key.keyDescription.hardwareEnforced.rootOfTrust
                (spent, provider) = (verified.spent, "android_key_attestation")
                signUp = Statements.signUpAndroidAttested.query((
                    Bytea(ipKey), metadata, Bytea(refresh.hash), limits.perHour, limits.burst, Bytea(key.keyID),
                    key.packageName ?? "",
                    key.keyDescription.attestationSecurityLevel.name,
                    rootOfTrust?.verifiedBootState.name ?? "UNVERIFIED", rootOfTrust?.deviceLocked == true ? "true" : "false"))
            case nil:
                if attestation.mode == .required { return .answer(AttestationRefusal.required.apiError.response) }
                return plainSignUp(form: form, issuing: issuing, keyCheck: keyCheck, refresh: refresh, ipKey: ipKey)
            }
            let queries = [keyCheck, Statements.spendSignUpChallenge.query((Bytea(spent.digest), spent.expiresAt)), signUp]
            return .database(authPlan(queries, attested: true, checksInstanceKey: true) { results in
                let decoded = provider == "app_attest" ? Statements.signUpAttested.firstRow(results.last)
                                                       : Statements.signUpAndroidAttested.firstRow(results.last)
                guard case .success(let row?) = decoded else {
                    return APIError(.noUserReturned).response
                }
                let (userID, sessionID, created, updated) = row
                let user = UserRecord(id: userID, createdAt: created, updatedAt: updated, userMetadata: metadata,
                                      attestation: provider)
                self.metrics.recordSignUp(attested: true)
                return self.session(userID: userID, sessionID: sessionID, refreshToken: refresh.token, user: user,
                                    issuer: issuing.issuer)
            })
        }
        return plainSignUp(form: form, issuing: issuing, keyCheck: keyCheck, refresh: refresh, ipKey: ipKey)
    }

    /// A sign-up without an attestation: the proof-of-work when challenges are on, then the identity.
    private func plainSignUp(form: SignUpForm, issuing: ServiceKeys.Snapshot, keyCheck: Query, refresh: (token: String, hash: [UInt8]),
                             ipKey: [UInt8]) -> Decision.Outcome {
        let metadata = form.metadata
        let limits = settings.signUpLimits
        // With challenges on, the solution is spent in the sign-up's own transaction (first, so a
        // replay costs no rate-limit token): a refused sign-up spends nothing.
        var queries: [Query] = [keyCheck]
        if let signUpChallenges {
            switch signUpChallenges.verify(payload: form.captchaToken, now: now()) {
            case .success(let spent):
                queries.append(Statements.spendSignUpChallenge.query((Bytea(spent.digest), spent.expiresAt)))
            case .failure(let error):
                return .answer(APIError(.captchaFailed(reason: error.message)).response)
            }
        }
        queries.append(Statements.signUp.query((Bytea(ipKey), metadata, Bytea(refresh.hash), limits.perHour, limits.burst)))
        return .database(authPlan(queries, checksInstanceKey: true) { results in
            guard case .success(let row?) = Statements.signUp.firstRow(results.last) else {
                return APIError(.noUserReturned).response
            }
            let (userID, sessionID, created, updated) = row
            let user = UserRecord(id: userID, createdAt: created, updatedAt: updated, userMetadata: metadata)
            self.metrics.recordSignUp(attested: false)
            return self.session(userID: userID, sessionID: sessionID, refreshToken: refresh.token, user: user,
                                issuer: issuing.issuer)
        })
    }

    func refresh(_ request: HTTPRequest) -> Decision.Outcome {
        guard request.queryValue("grant_type") == "refresh_token" else {
            return .answer(APIError(.validationFailed("Only grant_type=refresh_token is supported")).response)
        }
        let presented: String
        switch JSONBody.parse(request.body) {
        case .failure:
            return .answer(APIError(.badJSON("Body must be a JSON object with refresh_token")).response)
        case .success(let body):
            guard let token = body["refresh_token"]?.stringValue, !token.isEmpty, token.utf8.count <= 256 else {
                return .answer(APIError(.validationFailed("refresh_token is required")).response)
            }
            presented = token
        }
        guard let presentedHash = RefreshToken.hash(presented) else {
            return .answer(APIError(.refreshTokenNotFound).response)
        }
        // The child is derived from the presented token, so presenting it twice cannot fork the session.
        let child = refreshChain.child(of: presented)
        let limits = settings.refreshLimits
        let issuing = keys.snapshot
        if issuing.ownKeyRetired { return .answer(Self.retiredKey(settings.unavailableRetryAfter).response) }
        let keyCheck = Statements.verifiedToken.query(String(decoding: issuing.anonKey, as: UTF8.self))
        let query = Statements.refresh.query((
            Bytea(presentedHash), Bytea(child.hash), Bytea(clientKey.key(forIP: request.clientIP)),
            limits.perWindow, limits.windowSeconds, limits.reuseSeconds))
        let refreshChain = self.refreshChain
        return .database(authPlan([keyCheck, query], checksInstanceKey: true) { results in
            guard case .success(let row?) = Statements.refresh.firstRow(results.last) else {
                return APIError(.refreshTokenNotFound).response
            }
            let (status, userID, sessionID, created, updated, metadata, generations, storedHash, _, attestation) = row
            guard status == "ok", let userID, let sessionID, let created, let updated else {
                return APIError(.refreshTokenReused).response
            }
            // The session's live token: the child just made, or (a rotated token presented again within
            // the reuse window) the one `generations` derivations down, checked against its stored hash.
            guard let generations, let live = refreshChain.descendant(of: presented, generations: generations),
                  let storedHash, constantTimeEqual(Array(hex(live.hash).utf8), Array(storedHash.utf8)) else {
                return APIError(.refreshTokenRotatedElsewhere).response
            }
            let user = UserRecord(id: userID, createdAt: created, updatedAt: updated, userMetadata: metadata ?? "{}",
                                  attestation: attestation)
            return self.session(userID: userID, sessionID: sessionID, refreshToken: live.token, user: user,
                                issuer: issuing.issuer)
        })
    }

    func logout(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        guard case .user(let token) = caller, let sessionID = token.sessionID else {
            return .answer(APIError(.noAuthorization).response)
        }
        let scope = request.queryValue("scope") ?? "global"
        guard ["global", "local", "others"].contains(scope) else {
            return .answer(APIError(.validationFailed("scope must be global, local or others")).response)
        }
        // PostgreSQL verifies the token and checks it names the session, as REST verifies its tokens.
        return .database(authPlan([Statements.verifiedToken.query(token.token), Statements.signOut.query((sessionID, scope))]) { _ in
            .empty(204)
        })
    }

    func user(caller: Caller) -> Decision.Outcome {
        guard case .user(let token) = caller, let userID = token.sub, let sessionID = token.sessionID else {
            return .answer(APIError(.noAuthorization).response)
        }
        return .database(authPlan([Statements.verifiedToken.query(token.token), Statements.user.query((userID, sessionID))]) { results in
            guard case .success(let row?) = Statements.user.firstRow(results.last),
                  let id = row.0, let created = row.1, let updated = row.2 else {
                return APIError(.userNotFound).response
            }
            return .json(200, UserRecord(id: id, createdAt: created, updatedAt: updated, userMetadata: row.3 ?? "{}",
                                         attestation: row.5).json)
        })
    }

    /// A plan on the auth surface: database errors answer in Supabase Auth's error shape.
    /// - Parameter checksInstanceKey: the first query verifies the instance's own anon key: a PT401 there
    ///   means the key this instance signs with is no longer in the database's ring.
    private func authPlan(_ queries: [Query], attested: Bool = false, checksInstanceKey: Bool = false,
                          _ success: @escaping @Sendable ([QueryResult]) -> HTTPResponse) -> DatabasePlan {
        let retryAfter = settings.unavailableRetryAfter
        let keys = self.keys
        return DatabasePlan(queries) { outcome in
            switch outcome {
            case .success(let results): return success(results)
            case .failure(let error):
                if checksInstanceKey, error.sqlState == SQLState.invalidToken.code {
                    // The ring changed since the last read (a rotation's retire): read it again now rather
                    // than at the next interval, so the retry the answer asks for finds the current key.
                    keys.requestRefresh()
                    return Self.retiredKey(retryAfter).response
                }
                return APIError(AuthError(database: error, attested: attested, unavailableRetryAfter: retryAfter)).response
            }
        }
    }

    /// The key this instance signs with is not one PostgreSQL accepts now (its own key retired, or a key
    /// it read a moment before a rotation retired it): it must not mint tokens.
    static func retiredKey(_ retryAfter: Int) -> APIError {
        APIError(.signingKeyRetired(retryAfter: retryAfter))
    }

    private func session(userID: String, sessionID: String, refreshToken: String, user: UserRecord,
                         issuer: TokenIssuer) -> HTTPResponse {
        guard UUIDText.isValid(userID), UUIDText.isValid(sessionID) else {
            return APIError(.malformedIdentifiers).response
        }
        let now = self.now()
        let access = issuer.accessToken(userID: userID, sessionID: sessionID, now: now)
        let body = SessionBody(accessToken: access.token, expiresIn: access.expiresAt - now,
                               expiresAt: access.expiresAt, refreshToken: refreshToken, user: user)
        return .json(200, body.json)
    }

    /// What a sign-up body carries: user_metadata, and the captcha token the Supabase SDKs send.
    struct SignUpForm: Equatable {
        var metadata: String
        /// `gotrue_meta_security.captcha_token`; looked at only when sign-up challenges are on.
        var captchaToken: String?
    }

    /// The `data` object of a sign-up body becomes user_metadata, its members named in `keys` only (the
    /// rest are dropped, not refused: an app's SDK sends what it sends); email or phone sign-ups are refused.
    static func signUpForm(_ body: [UInt8], maxBytes: Int, keys: Set<String>) -> Result<SignUpForm, APIError> {
        if body.isEmpty { return .success(SignUpForm(metadata: "{}")) }
        guard case .success(let document) = JSONBody.parse(body), document.objectValue != nil else {
            return .failure(APIError(.badJSON("Body must be a JSON object")))
        }
        let captchaToken = document["gotrue_meta_security"]?["captcha_token"]?.stringValue
        return signUpMetadata(document, maxBytes: maxBytes, keys: keys).map { SignUpForm(metadata: $0, captchaToken: captchaToken) }
    }

    private static func signUpMetadata(_ document: JSONValue, maxBytes: Int, keys: Set<String>) -> Result<String, APIError> {
        for field in ["email", "phone"] {
            if let value = document[field], !value.isNull, value.stringValue != "" {
                return .failure(APIError(.providerDisabled(field)))
            }
        }
        guard let data = document["data"], !data.isNull else { return .success("{}") }
        guard let object = data.objectValue else {
            return .failure(APIError(.validationFailed("data must be a JSON object")))
        }
        let text = data.serialized()
        guard text.utf8.count <= maxBytes else {
            return .failure(APIError(.validationFailed("data is larger than \(maxBytes) bytes")))
        }
        guard !text.contains("\\u0000") else {
            return .failure(APIError(.validationFailed("data must not contain NUL characters")))
        }
        let kept = object.members.filter { keys.contains($0.key) }
        if kept.count == object.members.count { return .success(text) }
        return .success(JSONValue.object(JSONObject(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })).serialized())
    }
}
