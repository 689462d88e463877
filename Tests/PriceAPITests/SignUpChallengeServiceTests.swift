import AnonAuth
import Foundation
import PriceDB
import PriceJSON
import Testing
import PriceCrypto
import PriceHTTPMessage
@testable import PriceAPI

@Suite("Sign-up challenges on the HTTP surface, without a database")
struct SignUpChallengeServiceTests {
    static let challenges = SignUpChallenges(secret: ServiceFixture.secret, maxNumber: 50, lifetimeSeconds: 300)

    static let signedUp: @Sendable ([Query]) throws(DatabaseError) -> [QueryResult] = { queries in
        queries.map { _ in QueryResult() } .dropLast() + [QueryResult(rows: [[
            "a11ce000-0000-4000-8000-000000000001", "5e551000-0000-4000-8000-000000000001",
            "\"2026-01-01T00:00:00+00:00\"", "\"2026-01-01T00:00:00+00:00\"",
        ]])]
    }

    func solvedToken(_ fixture: ServiceFixture) throws -> String {
        let response = fixture.handle(fixture.request("GET", "/auth/v1/challenge"))
        #expect(response.status == 200)
        #expect(response.header("Cache-Control") == "no-store")
        let challenge = try JSONValue.parse(response.body, maxBytes: 4096)
        let salt = try #require(challenge["salt"]?.stringValue)
        let hash = try #require(challenge["challenge"]?.stringValue)
        #expect(challenge["algorithm"] == "SHA-256" && challenge["maxnumber"] == 50)
        let number = try #require((0...50).first { n in
            hex(sha256(salt + String(n))) == hash
        })
        let payload = #"{"algorithm":"SHA-256","challenge":"\#(hash)","number":\#(number),"salt":"\#(salt)","#
            + #""signature":"\#(try #require(challenge["signature"]?.stringValue))"}"#
        return Data(payload.utf8).base64EncodedString()
    }

    func signUpBody(token: String?) -> String {
        #"{"data":{},"gotrue_meta_security":{"captcha_token":\#(token.map { "\"\($0)\"" } ?? "null")}}"#
    }

    @Test("the challenge route needs no database, and is answered only when challenges are on")
    func challengeRoute() {
        #expect(Router.route(method: "GET", path: "/auth/v1/challenge") == .signUpChallenge)
        #expect(Route.signUpChallenge.isAuthRoute)
        #expect(Router.route(method: "POST", path: "/auth/v1/challenge") == .methodNotAllowed(allow: ["GET", "HEAD", "OPTIONS"]))
        let off = ServiceFixture()
        #expect(!off.service.decide(off.request("GET", "/auth/v1/challenge")).needsDatabase)
        let response = off.handle(off.request("GET", "/auth/v1/challenge"))
        #expect(response.status == 422)
        var noKey = off.request("GET", "/auth/v1/challenge")
        noKey.headers["apikey"] = nil
        #expect(ServiceFixture(signUpChallenges: Self.challenges).handle(noKey).status == 401)
    }

    @Test("a solved challenge is spent in the same batch as the sign-up, before it")
    func spentInTheSignUpBatch() throws {
        let fixture = ServiceFixture(database: RecordingDatabase(answer: Self.signedUp), signUpChallenges: Self.challenges)
        let token = try solvedToken(fixture)
        let response = fixture.handle(fixture.request("POST", "/auth/v1/signup", body: signUpBody(token: token)))
        #expect(response.status == 200)
        let batch = try #require(fixture.database.batches.first)
        #expect(fixture.database.batches.count == 1)
        // First PostgreSQL verifies the instance's own key (its anon key), so a retired key mints nothing.
        #expect(batch.map(statementName) == ["pricesvc_verified_token", "pricesvc_spend_signup_challenge", "pricesvc_sign_up"])
        let spent = try Self.challenges.verify(payload: token, now: fixture.now).get()
        #expect(parameters(batch[1]) == [ByteaText.hex(spent.digest), String(fixture.now + 300)])
    }

    @Test("a missing, malformed or wrong solution is 400 captcha_failed and never reaches the database")
    func refusedBeforeTheDatabase() throws {
        let fixture = ServiceFixture(signUpChallenges: Self.challenges)
        for body in [signUpBody(token: nil), signUpBody(token: "bm90IGpzb24="), #"{"data":{}}"#, ""] {
            let response = fixture.handle(fixture.request("POST", "/auth/v1/signup", body: body))
            #expect(response.status == 400)
            let error = try JSONValue.parse(response.body, maxBytes: 4096)
            #expect(error["error_code"] == "captcha_failed")
            #expect(error["msg"]?.stringValue?.hasPrefix("captcha protection: request disallowed") == true)
        }
        #expect(fixture.database.batches.isEmpty)
    }

    @Test("a solution the database has seen (PA010) is 400 captcha_failed")
    func alreadyUsed() throws {
        let database = RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "PA010", message: "sign-up challenge already used")
        }
        let fixture = ServiceFixture(database: database, signUpChallenges: Self.challenges)
        let response = fixture.handle(fixture.request("POST", "/auth/v1/signup",
                                                              body: signUpBody(token: try solvedToken(fixture))))
        #expect(response.status == 400)
        let error = try JSONValue.parse(response.body, maxBytes: 4096)
        #expect(error["error_code"] == "captcha_failed")
        #expect(error["msg"]?.stringValue?.contains("already used") == true)
    }

    @Test("with challenges off, a captcha_token is ignored and sign-up is the key check and one statement")
    func offIgnoresTheToken() throws {
        let fixture = ServiceFixture(database: RecordingDatabase(answer: Self.signedUp))
        let response = fixture.handle(fixture.request("POST", "/auth/v1/signup", body: signUpBody(token: "junk")))
        #expect(response.status == 200)
        #expect(fixture.database.batches.map { $0.map(statementName) } == [["pricesvc_verified_token", "pricesvc_sign_up"]])
    }

    @Test("a sign-up is counted once the database issued its session; one the database refuses, or that never reaches it, is not")
    func signUpsAreCountedWhenTheyIssueASession() throws {
        let counted = #"pricesvc_sign_ups_total{kind="anonymous"} "#
        let fixture = ServiceFixture(database: RecordingDatabase(answer: Self.signedUp), signUpChallenges: Self.challenges)
        #expect(fixture.service.metrics.render().contains(counted + "0\n"))
        #expect(fixture.handle(fixture.request("POST", "/auth/v1/signup", body: signUpBody(token: nil))).status == 400)
        #expect(fixture.handle(fixture.request("POST", "/auth/v1/signup", body: signUpBody(token: try solvedToken(fixture)))).status == 200)
        let text = fixture.service.metrics.render()
        #expect(text.contains(counted + "1\n"))
        #expect(text.contains(#"pricesvc_sign_ups_total{kind="attested"} 0"# + "\n"))
        #expect(text.contains(#"pricesvc_attestations_total{result="refused"} 0"# + "\n"), "App Attest is off here")

        let refused = ServiceFixture(database: RecordingDatabase { _ throws(DatabaseError) in
            throw DatabaseError(code: .server, sqlState: "PT429", message: "too many sign-ups", severity: "ERROR")
        }, signUpChallenges: Self.challenges)
        #expect(refused.handle(refused.request("POST", "/auth/v1/signup", body: signUpBody(token: try solvedToken(refused)))).status == 429)
        #expect(refused.service.metrics.render().contains(counted + "0\n"))
    }
}

@Suite("The App Attest sign-up token, parsed without I/O")
struct AttestationTokenTests {
    let keyId = [UInt8](repeating: 7, count: 32)

    func token(_ fields: [String: String]) -> String {
        "{" + fields.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
    }

    @Test func anAppAttestTokenIsParsed() throws {
        let text = token(["type": "app_attest", "key_id": Data(keyId).base64EncodedString(),
                          "attestation": "AQID", "challenge": "aa1.1.2.3"])
        guard case .success(let parsed)? = AttestationToken.parse(text) else {
            Issue.record("not parsed: \(text)")
            return
        }
        #expect(parsed == AttestationToken(keyId: keyId, attestation: [1, 2, 3], challenge: "aa1.1.2.3"))
    }

    @Test func otherTokensAreNotAppAttestOnes() {
        for text: String? in [nil, "", "eyJhbGciOiJIUzI1NiJ9", #"{"type":"altcha"}"#, #"{"algorithm":"SHA-256"}"#] {
            #expect(AttestationToken.parse(text) == nil, "\(String(describing: text))")
        }
    }

    @Test func aMalformedAppAttestTokenIsRefused() {
        let good = ["type": "app_attest", "key_id": Data(keyId).base64EncodedString(), "attestation": "AQID", "challenge": "c"]
        var cases = [#"{"type":"app_attest""#, "{" + String(repeating: "[", count: 50), #"{"type":"app_attest","key_id":1}"#]
        for field in ["key_id", "attestation", "challenge"] {
            var missing = good
            missing.removeValue(forKey: field)
            cases.append(token(missing))
        }
        cases.append(token(good.merging(["key_id": "AQID"]) { $1 }))          // not 32 bytes
        cases.append(token(good.merging(["attestation": "not base64!"]) { $1 }))
        cases.append(token(good.merging(["attestation": String(repeating: "A", count: 30_000)]) { $1 }))  // over the size bound
        for text in cases {
            #expect(AttestationToken.parse(text) == .failure(.malformed), "\(text.prefix(80))")
        }
    }
}

@Suite("The Android Key Attestation sign-up token, parsed without I/O")
struct KeyAttestationTokenTests {
    @Test func anAndroidTokenIsParsed() {
        let text = #"{"type":"android_key_attestation","chain":["AQID","BAU="],"challenge":"aa1.1.2.3"}"#
        #expect(KeyAttestationToken.parse(text) == .success(KeyAttestationToken(chain: [[1, 2, 3], [4, 5]], challenge: "aa1.1.2.3")))
        // Not an App Attest token, and an App Attest token is not an Android one.
        #expect(AttestationToken.parse(text) == nil)
        #expect(KeyAttestationToken.parse(#"{"type":"app_attest","key_id":"AA==","attestation":"AA==","challenge":"c"}"#) == nil)
    }

    @Test func otherTokensAreNotAndroidOnes() {
        for text: String? in [nil, "", "eyJhbGciOiJIUzI1NiJ9", #"{"type":"altcha"}"#] {
            #expect(KeyAttestationToken.parse(text) == nil, "\(String(describing: text))")
        }
    }

    @Test func aMalformedAndroidTokenIsRefused() {
        let certificate = "\"" + String(repeating: "A", count: 24_000) + "\""  // 18 000 bytes: over a certificate's bound
        let cases = [
            #"{"type":"android_key_attestation","challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":[],"challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":"AQID","challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":[1],"challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":["not base64!"],"challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":[""],"challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":["AQID"],"challenge":""}"#,
            #"{"type":"android_key_attestation","chain":["AQID"],"challenge":"c","more":1}"#,
            #"{"type":"android_key_attestation","chain":["# + Array(repeating: "\"AQID\"", count: 9).joined(separator: ",")
                + #"],"challenge":"c"}"#,
            #"{"type":"android_key_attestation","chain":["# + certificate + #"],"challenge":"c"}"#,
        ]
        for text in cases {
            #expect(KeyAttestationToken.parse(text) == .failure(.androidMalformed), "\(text.prefix(80))")
        }
    }
}
