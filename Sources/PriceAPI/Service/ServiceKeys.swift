import AnonAuth
import Dispatch
import Foundation
import PriceCrypto
import PriceDB
import PriceHTTPMessage
import PriceSQL
import PriceTelemetry
import Synchronization

/// The keys a running instance signs and verifies with, and the publishable API keys it accepts, as
/// the database last said (`KeyRefresher` re-reads them). Every request reads one snapshot.
///
/// The instance's own secret (`PRICESVC_JWT_SECRET`) is how it reads the key ring: the database wraps
/// every key of the set for each key of the set (`auth.signing_key_ring`), so an instance holding any one
/// of them verifies tokens signed with all of them and signs with the current one, through the three
/// steps of a rotation and without a restart (`SigningKeyRing`).
public final class ServiceKeys: Sendable {
    public struct Snapshot: Sendable {
        public var issuer: TokenIssuer
        public var verifier: TokenVerifier
        /// The legacy JWT anon key signed with the signing key: the common case is one constant-time
        /// compare instead of an HMAC.
        var anonKey: [UInt8]
        /// SHA-256 of every publishable key not revoked.
        var publishableKeyHashes: Set<[UInt8]>
        /// Why the instance's secret does not work with the database's keys (then /readyz fails); nil
        /// while it does, and before the first read.
        public var problem: String?
        /// Keys the instance verifies with.
        public var verifyingKeyCount: Int { verifier.keyCount }
        /// Those keys themselves: a re-read that finds the same set keeps the verifier and its token cache.
        var verifyingSecrets: [[UInt8]]
        /// True once the database's ring no longer holds the instance's own key (retired): the instance
        /// then signs nothing and accepts no token or JWT anon key of its own, whatever it still holds in
        /// memory, until it is restarted with a key of the set, so every instance gives the ring's verdict.
        public var ownKeyRetired = false
    }

    private let state: Mutex<Snapshot>
    /// The secret this instance was started with.
    private let own: [UInt8]
    /// Verified besides the ring's keys (`PRICESVC_JWT_PREVIOUS_SECRET`), but only while the ring holds
    /// them: a key the database retired is dropped at the next read, as PostgreSQL drops it at once.
    private let extraVerifying: [[UInt8]]
    /// Whether a JWT anon key (role anon, signed with a key of the set) is accepted as `apikey`.
    public let acceptsLegacyAnonKey: Bool
    private let refreshRequested = Atomic<Bool>(false)
    private let wakeRefresher = DispatchSemaphore(value: 0)
    let reloads = Atomic<Int>(0)

    /// Keys of the instance's own secret alone, until the first read of the database's.
    /// - Parameter tokenCacheEntries: slots of the verifier's access-token cache (0: none).
    public init(secret: [UInt8], extraVerifying: [[UInt8]] = [], accessTokenLifetime: Int = 3600,
                acceptsLegacyAnonKey: Bool = true, publishableKeyHashes: Set<[UInt8]> = [],
                tokenCacheEntries: Int = 0) {
        own = secret
        self.extraVerifying = extraVerifying
        self.acceptsLegacyAnonKey = acceptsLegacyAnonKey
        let issuer = TokenIssuer(secret: secret, accessTokenLifetime: accessTokenLifetime)
        let verifying = [secret] + extraVerifying
        state = Mutex(Snapshot(issuer: issuer,
                               verifier: TokenVerifier(secrets: verifying, cacheEntries: tokenCacheEntries),
                               anonKey: Array(issuer.anonKey().utf8), publishableKeyHashes: publishableKeyHashes,
                               problem: nil, verifyingSecrets: verifying))
    }

    /// Fixed keys (tests, tools): an issuer and a verifier as given, never re-read.
    public init(issuer: TokenIssuer, verifier: TokenVerifier, acceptsLegacyAnonKey: Bool = true,
                publishableKeyHashes: Set<[UInt8]> = []) {
        own = []
        extraVerifying = []
        self.acceptsLegacyAnonKey = acceptsLegacyAnonKey
        state = Mutex(Snapshot(issuer: issuer, verifier: verifier, anonKey: Array(issuer.anonKey().utf8),
                               publishableKeyHashes: publishableKeyHashes, problem: nil, verifyingSecrets: []))
    }

    public var snapshot: Snapshot { state.withLock { $0 } }

    /// The id the instance reads the ring as (`SigningKeyRing.keyID` of its secret).
    public var ownKeyID: String { SigningKeyRing.keyID(own) }

    /// Takes what the database said: the instance signs and verifies with exactly the keys of the ring.
    /// When the instance's own secret is no longer in the set (retired), it stops signing and verifying
    /// altogether and reports the problem; any other problem (a key that does not unwrap) keeps the keys
    /// it had. Every route that acts also verifies in PostgreSQL, which decides in any case.
    @discardableResult
    public func apply(ring: [SigningKeyRing.Entry], publishableKeyHashes: [[UInt8]]) -> Result<SigningKeyRing.Keys, SigningKeyRing.Problem> {
        let resolved = SigningKeyRing.resolve(own: own, entries: ring)
        state.withLock { snapshot in
            snapshot.publishableKeyHashes = Set(publishableKeyHashes)
            switch resolved {
            case .success(let keys):
                let issuer = TokenIssuer(secret: keys.signing, issuer: snapshot.issuer.issuer,
                                         accessTokenLifetime: snapshot.issuer.accessTokenLifetime)
                let ringIDs = Set(ring.map(\.keyID))
                let verifying = keys.verifying + extraVerifying.filter {
                    !keys.verifying.contains($0) && ringIDs.contains(SigningKeyRing.keyID($0))
                }
                snapshot.issuer = issuer
                if verifying != snapshot.verifyingSecrets {
                    let old = snapshot.verifier
                    snapshot.verifier = TokenVerifier(secrets: verifying, leeway: old.leeway, maxTokenBytes: old.maxTokenBytes,
                                                      cacheEntries: old.cache?.capacity ?? 0)
                    snapshot.verifyingSecrets = verifying
                }
                snapshot.anonKey = Array(issuer.anonKey().utf8)
                snapshot.problem = nil
                snapshot.ownKeyRetired = false
            case .failure(let problem):
                snapshot.problem = problem.description
                let ownID = SigningKeyRing.keyID(own)
                snapshot.ownKeyRetired = !ring.contains { $0.keyID == ownID }
            }
        }
        reloads.add(1, ordering: .relaxed)
        return resolved
    }

    /// The keys' gauges, after the service's metrics: how many keys it verifies with, whether its secret
    /// is one of the database's, and how often it re-read them (a rotation waits for every instance to
    /// show the new count).
    func metricsText() -> String {
        let snapshot = self.snapshot
        var out = ""
        PrometheusText.family(&out, "pricesvc_signing_keys", .gauge, "Signing keys this instance verifies tokens with.",
                              [("", snapshot.verifyingKeyCount)])
        PrometheusText.family(&out, "pricesvc_signing_key_problem", .gauge,
                              "1 while this instance's JWT secret is not one of the database's signing keys.",
                              [("", snapshot.problem == nil ? 0 : 1)])
        PrometheusText.family(&out, "pricesvc_signing_key_reads_total", .counter,
                              "Reads of the database's signing keys and publishable keys.",
                              [("", reloads.load(ordering: .relaxed))])
        if let cache = snapshot.verifier.cache {
            PrometheusText.family(&out, "pricesvc_token_cache_lookups_total", .counter,
                                  "Access-token lookups in the verifier's cache since the signing keys last changed, by result.",
                                  [("result=\"hit\"", cache.hits), ("result=\"miss\"", cache.misses)])
        }
        return out
    }

    /// Asks the refresher to re-read the keys soon (a token or key this instance does not know may have
    /// been added a moment ago). Cheap and non-blocking; requests coalesce.
    func requestRefresh() {
        if refreshRequested.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged {
            wakeRefresher.signal()
        }
    }

    /// Waits until `seconds` pass or a refresh is requested.
    func waitForRefresh(seconds: Double) {
        _ = wakeRefresher.wait(timeout: .now() + seconds)
        refreshRequested.store(false, ordering: .relaxed)
    }
}

/// Re-reads the key ring and the publishable keys every `interval` seconds, and soon after a request
/// brought a key the instance did not know (at most once a second). It starts no thread: `serve` runs
/// ``run(isStopped:pause:report:)`` as one of its background tasks.
public final class KeyRefresher: Sendable {
    let keys: ServiceKeys
    let database: any QueryRunner
    let interval: Double

    public init(keys: ServiceKeys, database: any QueryRunner, interval: Double) {
        self.keys = keys
        self.database = database
        self.interval = interval
    }

    /// One read: the ring for this instance's key and the publishable keys, in one round trip.
    public func refresh() throws(DatabaseError) -> Result<SigningKeyRing.Keys, SigningKeyRing.Problem> {
        let results = try database.run([Statements.signingKeyRing.query(keys.ownKeyID),
                                        Statements.publishableKeyHashes.query()])
        guard results.count == 2 else {
            throw DatabaseError(code: .protocolViolation, message: "key ring: \(results.count) results, expected 2")
        }
        let ring: [SigningKeyRing.Entry]
        let hashes: [[UInt8]]
        switch (Statements.signingKeyRing.rows(results[0]), Statements.publishableKeyHashes.rows(results[1])) {
        case (.success(let rows), .success(let keyHashes)):
            ring = rows.map { SigningKeyRing.Entry(keyID: $0.0, slot: $0.1, wrapped: $0.2?.bytes) }
            hashes = keyHashes.map(\.bytes)
        case (.failure(let error), _), (_, .failure(let error)):
            throw DatabaseError(code: .protocolViolation, message: error.description)
        }
        return keys.apply(ring: ring, publishableKeyHashes: hashes)
    }

    /// The refresh loop, on the calling thread, until `isStopped()`; `report` hears each change of the
    /// instance's problem (nil: resolved).
    /// - Important: To stop it, make `isStopped()` true, then call ``wake()``: between reads it waits for
    ///   a refresh request, not for `isStopped`. `pause` must return early on a stop too.
    public func run(isStopped: () -> Bool, pause: (_ seconds: Double) -> Void, report: (String) -> Void) {
        var lastProblem: String? = nil
        while !isStopped() {
            keys.waitForRefresh(seconds: interval)
            if isStopped() { break }
            let started = DispatchTime.now()
            do throws(DatabaseError) {
                let problem: String?
                switch try refresh() {
                case .success: problem = nil
                case .failure(let failure): problem = failure.description
                }
                if problem != lastProblem {
                    report(problem ?? "signing keys: this JWT secret is one of the database's keys again")
                    lastProblem = problem
                }
            } catch {
                // Unreachable database: /readyz says so; the keys stay as they were.
            }
            // At most one read a second, however many unknown tokens arrive.
            let elapsed = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
            if elapsed < 1 { pause(1 - elapsed) }
        }
    }

    /// Ends the wait between two reads at once (a stop, see ``run(isStopped:pause:report:)``).
    public func wake() {
        keys.requestRefresh()
    }
}
