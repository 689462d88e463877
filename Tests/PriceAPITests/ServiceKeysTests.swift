import AnonAuth
import Foundation
import PriceCrypto
import PriceDB
import PriceHTTPMessage
import Synchronization
import Testing
@testable import PriceAPI

private let current = Array("the-current-signing-secret-0123456789abc".utf8)
private let next = Array("the-next-signing-secret-0123456789abcdef-and-longer-than-32".utf8)

/// A ring as `auth.signing_key_ring` gives it to the holder of `holder`: every key wrapped for it.
private func ring(_ keys: [(secret: [UInt8], slot: String)], holder: [UInt8]) -> [SigningKeyRing.Entry] {
    keys.map { key in
        let id = SigningKeyRing.keyID(key.secret)
        return SigningKeyRing.Entry(keyID: id, slot: key.slot, wrapped: SigningKeyRing.wrap(key.secret, keyID: id, holder: holder))
    }
}

@Suite("Service keys: what the database says about signing and API keys, applied to requests")
struct ServiceKeysTests {
    let now = 1_800_000_000

    func service(_ keys: ServiceKeys) -> PriceService {
        let fixedNow = Double(now)
        return PriceService(settings: ServiceSettings(), keys: keys, clientKey: ClientKey(secret: current),
                            refreshChain: RefreshTokenChain(secret: current), readiness: ServiceFixture.noMigrations,
                            metrics: ServiceMetrics(server: ServiceMetrics.serverMetrics(), pool: {
                                PoolStats(size: 1, inUse: 0, idle: 1, waiting: 0)
                            }), clock: { fixedNow })
    }

    func status(_ service: PriceService, apikey: String, token: String? = nil) -> Int {
        var headers = ["apikey": apikey, "content-type": "application/json"]
        if let token { headers["authorization"] = "Bearer \(token)" }
        let request = HTTPRequest(method: "POST", path: "/rest/v1/rpc/price_medians", headers: headers,
                                  body: Array(#"{"location_ids":["x:1"]}"#.utf8))
        switch service.decide(request).outcome {
        case .answer(let response): return response.status
        case .database: return 0  // admitted: it would go to PostgreSQL
        }
    }

    func token(_ secret: [UInt8]) -> String {
        TokenIssuer(secret: secret).accessToken(userID: UUID().uuidString.lowercased(),
                                                sessionID: UUID().uuidString.lowercased(), now: now).token
    }

    @Test("a publishable key works once read from the database, and not after it is revoked")
    func publishableKeys() {
        let keys = ServiceKeys(secret: current)
        let app = PublishableKey.generate()
        let service = service(keys)
        #expect(status(service, apikey: app.key) == 401)
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [app.hash])
        #expect(status(service, apikey: app.key) == 0)
        #expect(status(service, apikey: app.key, token: app.key) == 0, "the SDKs send the apikey as the Bearer token")
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [])
        #expect(status(service, apikey: app.key) == 401)
    }

    @Test("with the legacy anon key turned off, it is refused as apikey and as a Bearer token")
    func legacyAnonKeyOff() {
        let keys = ServiceKeys(secret: current, acceptsLegacyAnonKey: false)
        let app = PublishableKey.generate()
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [app.hash])
        let anonKey = TokenIssuer(secret: current).anonKey()
        let service = service(keys)
        #expect(status(service, apikey: anonKey) == 401)
        #expect(status(service, apikey: app.key, token: anonKey) == 401)
        #expect(status(ServiceKeysTests().service(ServiceKeys(secret: current)), apikey: anonKey) == 0)
    }

    @Test("through add, promote and retire, an instance on the old secret verifies both and then signs with the new")
    func rotation() {
        let keys = ServiceKeys(secret: current)
        let service = service(keys)
        let anon = TokenIssuer(secret: current).anonKey()
        #expect(status(service, apikey: anon, token: token(next)) == 401, "an unknown key before add")
        keys.apply(ring: ring([(current, "current"), (next, "next")], holder: current), publishableKeyHashes: [])
        #expect(status(service, apikey: anon, token: token(next)) == 0)
        #expect(status(service, apikey: anon, token: token(current)) == 0)
        #expect(keys.snapshot.issuer.anonKey() == anon, "add changes nothing that is signed")
        keys.apply(ring: ring([(next, "current"), (current, "previous")], holder: current), publishableKeyHashes: [])
        let signed = keys.snapshot.issuer.accessToken(userID: UUID().uuidString.lowercased(),
                                                      sessionID: UUID().uuidString.lowercased(), now: now).token
        #expect(TokenVerifier(secrets: [next]).verify(signed, now: now).isSuccess, "promote: signs with the new key")
        #expect(status(service, apikey: anon, token: token(current)) == 0)
        #expect(keys.snapshot.problem == nil)
        keys.apply(ring: ring([(next, "current")], holder: next), publishableKeyHashes: [])
        #expect(keys.snapshot.problem?.contains("not one of the database's signing keys") == true,
                "retire: the old secret is no longer in the set")
    }

    @Test("the token cache outlives a re-read of the same keys, and a token of a retired key is refused though it was cached")
    func tokenCacheFollowsTheKeySet() throws {
        let keys = ServiceKeys(secret: current, tokenCacheEntries: 64)
        let service = service(keys)
        let anon = TokenIssuer(secret: current).anonKey()
        keys.apply(ring: ring([(current, "current"), (next, "next")], holder: current), publishableKeyHashes: [])
        let fromNext = token(next)
        #expect(status(service, apikey: anon, token: fromNext) == 0)
        #expect(status(service, apikey: anon, token: fromNext) == 0)
        let cache = try #require(keys.snapshot.verifier.cache)
        #expect((cache.hits, cache.misses) == (1, 1))
        keys.apply(ring: ring([(current, "current"), (next, "next")], holder: current), publishableKeyHashes: [])
        #expect(status(service, apikey: anon, token: fromNext) == 0)
        #expect(keys.snapshot.verifier.cache === cache, "the same key set keeps the verifier and what it verified")
        #expect(cache.hits == 2)
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [])
        #expect(keys.snapshot.verifier.cache !== cache)
        #expect(status(service, apikey: anon, token: fromNext) == 401, "the key that signed it is gone from the set")
        #expect(keys.snapshot.verifier.cache?.capacity == 64)
        #expect(keys.metricsText().contains(#"pricesvc_token_cache_lookups_total{result="miss"} 1"#))
    }

    @Test("an instance whose own key was retired signs nothing and accepts no token or anon key of its own")
    func retiredOwnKeyRefusesEverything() {
        let keys = ServiceKeys(secret: current)
        let service = service(keys)
        let anon = TokenIssuer(secret: current).anonKey()
        keys.apply(ring: ring([(next, "current"), (current, "previous")], holder: current), publishableKeyHashes: [])
        #expect(status(service, apikey: anon, token: token(next)) == 0)
        // retire: the ring no longer holds this instance's key, so it wraps nothing for it.
        keys.apply(ring: [SigningKeyRing.Entry(keyID: SigningKeyRing.keyID(next), slot: "current", wrapped: nil)],
                   publishableKeyHashes: [])
        #expect(keys.snapshot.ownKeyRetired)
        #expect(status(service, apikey: anon) == 401, "its own legacy anon key")
        let app = PublishableKey.generate()
        keys.apply(ring: [SigningKeyRing.Entry(keyID: SigningKeyRing.keyID(next), slot: "current", wrapped: nil)],
                   publishableKeyHashes: [app.hash])
        #expect(status(service, apikey: app.key, token: token(next)) == 401, "a token signed with the key it still remembers")
        #expect(status(service, apikey: app.key, token: token(current)) == 401, "a token signed with its own, retired key")
        let signUp = HTTPRequest(method: "POST", path: "/auth/v1/signup", headers: ["apikey": app.key, "content-type": "application/json"],
                                 body: Array("{}".utf8))
        guard case .answer(let refused) = service.decide(signUp).outcome else {
            Issue.record("a sign-up went to the database from an instance whose key was retired")
            return
        }
        #expect(refused.status == 503)
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [app.hash])
        #expect(!keys.snapshot.ownKeyRetired && status(service, apikey: app.key, token: token(current)) == 0,
                "back in the ring: back to work")
    }

    @Test("a previous secret given at start is verified only while the ring holds it")
    func previousSecretFollowsTheRing() {
        let keys = ServiceKeys(secret: next, extraVerifying: [current])
        let service = service(keys)
        let anon = TokenIssuer(secret: next).anonKey()
        keys.apply(ring: ring([(next, "current"), (current, "previous")], holder: next), publishableKeyHashes: [])
        #expect(status(service, apikey: anon, token: token(current)) == 0)
        #expect(status(service, apikey: TokenIssuer(secret: current).anonKey()) == 0)
        keys.apply(ring: ring([(next, "current")], holder: next), publishableKeyHashes: [])
        #expect(keys.snapshot.verifyingKeyCount == 1)
        #expect(status(service, apikey: anon, token: token(current)) == 401, "retired: its tokens are refused")
        #expect(status(service, apikey: TokenIssuer(secret: current).anonKey()) == 401, "and its anon key")
    }

    @Test("/readyz fails while the instance's secret is not one of the database's keys")
    func readiness() {
        let keys = ServiceKeys(secret: current)
        let service = service(keys)
        keys.apply(ring: ring([(next, "current")], holder: next), publishableKeyHashes: [])
        let answer = service.readinessPlan().answer(.success([QueryResult()]))
        #expect(answer.status == 503)
        #expect(String(decoding: answer.body, as: UTF8.self).contains("signing keys"))
        keys.apply(ring: ring([(current, "current")], holder: current), publishableKeyHashes: [])
        #expect(service.readinessPlan().answer(.success([QueryResult()])).status == 200)
    }

    @Test("the refresh loop reads when a request asks, and returns at once when stopped and woken, however long its interval")
    func refreshLoopStops() {
        let read = DispatchSemaphore(value: 0)
        let database = RecordingDatabase { _ throws(DatabaseError) in
            read.signal()
            throw DatabaseError(code: .protocolViolation, message: "the test's database has no keys")
        }
        let keys = ServiceKeys(secret: current)
        let refresher = KeyRefresher(keys: keys, database: database, interval: 3600)
        let stopped = StopFlag()
        let returned = DispatchSemaphore(value: 0)
        Thread {
            refresher.run(isStopped: { stopped.isSet }, pause: { _ in }, report: { _ in })
            returned.signal()
        }.start()
        keys.requestRefresh()
        #expect(read.wait(timeout: .now() + 5) == .success, "a requested refresh reads the keys")
        stopped.set()
        refresher.wake()
        #expect(returned.wait(timeout: .now() + 2) == .success, "the loop returned within 2 s of the stop, not after its hour")
        #expect(database.batches.count == 1)
    }
}

private final class StopFlag: Sendable {
    private let value = Mutex(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

extension Result {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
