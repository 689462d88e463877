import AnonAuth
import PriceCrypto
import PriceDB
import PriceHTTP
import PriceJSON

/// Supabase Auth's anonymous subset: sign-up, refresh-token rotation, logout, current user.
/// Tokens are minted here; what must hold across instances (per-IP limits, rotation and reuse
/// detection) is decided by the auth functions in the database.
extension PriceService {
    func signUp(_ request: HTTPRequest) -> Decision.Outcome {
        let form: SignUpForm
        switch Self.signUpForm(request.body, maxBytes: settings.userMetadataMaxBytes) {
        case .success(let parsed): form = parsed
        case .failure(let error): return .answer(error.response)
        }
        let metadata = form.metadata
        // With challenges on, the solution is spent in the sign-up's own transaction (first, so a
        // replay costs no rate-limit token): a refused sign-up spends nothing.
        var queries: [Query] = []
        if let signUpChallenges {
            switch signUpChallenges.verify(payload: form.captchaToken, now: now()) {
            case .success(let spent):
                queries.append(.prepared(Statements.spendSignUpChallenge,
                                         [ByteaText.hex(spent.digest), String(spent.expiresAt)]))
            case .failure(let error):
                return .answer(APIError.captchaFailed(error.message).response)
            }
        }
        let refresh = RefreshToken.generate()
        let ipKey = clientKey.key(forIP: request.clientIP)
        queries.append(.prepared(Statements.signUp, [
            ByteaText.hex(ipKey), metadata, ByteaText.hex(refresh.hash),
            String(settings.signUpsPerHourPerIP), String(settings.signUpBurstPerIP),
        ]))
        return .database(authPlan(queries) { results in
            guard let row = results.last?.rows.first, row.count == 4, let userID = row[0], let sessionID = row[1],
                  let created = row[2], let updated = row[3] else {
                return APIError.auth(500, "unexpected_failure", "Sign-up returned no user").response
            }
            let user = UserRecord(id: userID, createdAt: created, updatedAt: updated, userMetadata: metadata)
            return self.session(userID: userID, sessionID: sessionID, refreshToken: refresh.token, user: user)
        })
    }

    func refresh(_ request: HTTPRequest) -> Decision.Outcome {
        guard request.queryValue("grant_type") == "refresh_token" else {
            return .answer(APIError.auth(400, "validation_failed", "Only grant_type=refresh_token is supported").response)
        }
        let presented: String
        switch JSONBody.parse(request.body) {
        case .failure:
            return .answer(APIError.auth(400, "bad_json", "Body must be a JSON object with refresh_token").response)
        case .success(let body):
            guard let token = body["refresh_token"]?.stringValue, !token.isEmpty, token.utf8.count <= 256 else {
                return .answer(APIError.auth(400, "validation_failed", "refresh_token is required").response)
            }
            presented = token
        }
        guard let presentedHash = RefreshToken.hash(presented) else {
            return .answer(APIError.auth(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found").response)
        }
        // The child is derived from the presented token, so presenting it twice cannot fork the session.
        let child = refreshChain.child(of: presented)
        let query = Query.prepared(Statements.refresh, [
            ByteaText.hex(presentedHash), ByteaText.hex(child.hash),
            ByteaText.hex(clientKey.key(forIP: request.clientIP)),
            String(settings.refreshesPerWindowPerIP), String(settings.refreshWindowSeconds),
            String(settings.refreshReuseSeconds),
        ])
        let refreshChain = self.refreshChain
        return .database(authPlan([query]) { results in
            guard let row = results.last?.rows.first, row.count == 8 else {
                return APIError.auth(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found").response
            }
            guard row[0] == "ok", let userID = row[1], let sessionID = row[2], let created = row[3],
                  let updated = row[4] else {
                return APIError.auth(400, "refresh_token_already_used",
                                     "Invalid Refresh Token: Already Used; the session has been revoked").response
            }
            // The session's live token: the child just made, or (a rotated token presented again within
            // the reuse window) the one `generations` derivations down, checked against its stored hash.
            guard let generations = row[6].flatMap({ Int($0) }),
                  let live = refreshChain.descendant(of: presented, generations: generations),
                  let storedHash = row[7], constantTimeEqual(Array(hex(live.hash).utf8), Array(storedHash.utf8)) else {
                return APIError.auth(400, "refresh_token_not_found",
                                     "Invalid Refresh Token: Refresh Token Not Found (rotated under another secret)").response
            }
            let user = UserRecord(id: userID, createdAt: created, updatedAt: updated, userMetadata: row[5] ?? "{}")
            return self.session(userID: userID, sessionID: sessionID, refreshToken: live.token, user: user)
        })
    }

    func logout(_ request: HTTPRequest, caller: Caller) -> Decision.Outcome {
        guard case .user(let token) = caller, let sessionID = token.sessionID else {
            return .answer(APIError.auth(401, "no_authorization", "This endpoint requires a Bearer access token").response)
        }
        let scope = request.queryValue("scope") ?? "global"
        guard ["global", "local", "others"].contains(scope) else {
            return .answer(APIError.auth(400, "validation_failed", "scope must be global, local or others").response)
        }
        return .database(authPlan([.prepared(Statements.signOut, [sessionID, scope])]) { _ in .empty(204) })
    }

    func user(caller: Caller) -> Decision.Outcome {
        guard case .user(let token) = caller, let userID = token.sub, let sessionID = token.sessionID else {
            return .answer(APIError.auth(401, "no_authorization", "This endpoint requires a Bearer access token").response)
        }
        return .database(authPlan([.prepared(Statements.user, [userID, sessionID])]) { results in
            guard let row = results.last?.rows.first, row.count == 4, let id = row[0], let created = row[1],
                  let updated = row[2] else {
                return APIError.auth(403, "user_not_found", "User from the access token no longer exists").response
            }
            return .json(200, UserRecord(id: id, createdAt: created, updatedAt: updated, userMetadata: row[3] ?? "{}").json)
        })
    }

    /// A plan on the auth surface: database errors answer in Supabase Auth's error shape.
    private func authPlan(_ queries: [Query], _ success: @escaping @Sendable ([QueryResult]) -> HTTPResponse) -> DatabasePlan {
        let retryAfter = settings.unavailableRetryAfter
        return DatabasePlan(queries) { outcome in
            switch outcome {
            case .success(let results): return success(results)
            case .failure(let error): return Self.authFailure(error, unavailableRetryAfter: retryAfter).response
            }
        }
    }

    private func session(userID: String, sessionID: String, refreshToken: String, user: UserRecord) -> HTTPResponse {
        guard UUIDText.isValid(userID), UUIDText.isValid(sessionID) else {
            return APIError.auth(500, "unexpected_failure", "Malformed identifiers from the database").response
        }
        let now = self.now()
        let access = issuer.accessToken(userID: userID, sessionID: sessionID, now: now)
        let body = SessionBody(accessToken: access.token, expiresIn: access.expiresAt - now,
                               expiresAt: access.expiresAt, refreshToken: refreshToken, user: user)
        return .json(200, body.json)
    }

    /// Database errors on the auth surface, in Supabase Auth's error shape.
    static func authFailure(_ error: DatabaseError, unavailableRetryAfter: Int) -> APIError {
        if error.isUnavailable {
            return .auth(503, "service_unavailable", "Database unavailable, retry shortly",
                         retryAfter: unavailableRetryAfter)
        }
        switch error.sqlState {
        case "PT429":
            return .auth(429, "over_request_rate_limit", error.message,
                         retryAfter: SQLStateMapping.retryAfter(error))
        case "PA001":
            return .auth(400, "refresh_token_not_found", "Invalid Refresh Token: Refresh Token Not Found")
        case "PA002":
            return .auth(400, "refresh_token_already_used", "Invalid Refresh Token: Already Used")
        case "PA003":
            return .auth(403, error.message == "user not found" ? "user_not_found" : "session_not_found",
                         error.message == "user not found" ? "User from the access token no longer exists"
                                                           : "Session from the access token no longer exists")
        case "PA010":
            return .captchaFailed("challenge already used: fetch a new one")
        default:
            return .auth(500, "unexpected_failure", "Internal error")
        }
    }

    /// What a sign-up body carries: user_metadata, and the captcha token the Supabase SDKs send.
    struct SignUpForm: Equatable {
        var metadata: String
        /// `gotrue_meta_security.captcha_token`; looked at only when sign-up challenges are on.
        var captchaToken: String?
    }

    /// The `data` object of a sign-up body becomes user_metadata; email or phone sign-ups are refused.
    static func signUpForm(_ body: [UInt8], maxBytes: Int) -> Result<SignUpForm, APIError> {
        if body.isEmpty { return .success(SignUpForm(metadata: "{}")) }
        guard case .success(let document) = JSONBody.parse(body), document.objectValue != nil else {
            return .failure(.auth(400, "bad_json", "Body must be a JSON object"))
        }
        let captchaToken = document["gotrue_meta_security"]?["captcha_token"]?.stringValue
        return signUpMetadata(document, maxBytes: maxBytes).map { SignUpForm(metadata: $0, captchaToken: captchaToken) }
    }

    private static func signUpMetadata(_ document: JSONValue, maxBytes: Int) -> Result<String, APIError> {
        for field in ["email", "phone"] {
            if let value = document[field], !value.isNull, value.stringValue != "" {
                return .failure(.auth(422, "\(field)_provider_disabled",
                                      "Only anonymous sign-in is offered: sign up without \(field)"))
            }
        }
        guard let data = document["data"], !data.isNull else { return .success("{}") }
        guard data.objectValue != nil else {
            return .failure(.auth(400, "validation_failed", "data must be a JSON object"))
        }
        let text = data.serialized()
        guard text.utf8.count <= maxBytes else {
            return .failure(.auth(400, "validation_failed", "data is larger than \(maxBytes) bytes"))
        }
        guard !text.contains("\\u0000") else {
            return .failure(.auth(400, "validation_failed", "data must not contain NUL characters"))
        }
        return .success(text)
    }
}
