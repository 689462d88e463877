import AnonAuth
import PriceCrypto
import Testing

private let current = Array("the-current-signing-secret-0123456789abc".utf8)
private let next = Array("the-next-signing-secret-0123456789abcdef-and-longer-than-32".utf8)
/// `private.signing_key_wrap(next, current)` as PostgreSQL computed it (psql, migrations/auth.sql): the
/// database wraps, the service unwraps, and this vector holds both to one definition.
private let nextWrappedForCurrent = hexBytes(
    "139d6b01a61ecfea09d4c7a6d295fae1b13f5e2232de9d3ecb17d6a417547446db36fc3342116f0a67ee690485bbe7ae809ea6695f71fddc8fe8e2")

@Suite("Signing key ring: ids, unwrapping, and what an instance signs and verifies with")
struct SigningKeyRingTests {
    @Test("key ids are the database's (private.signing_key_id)")
    func keyIDs() {
        #expect(SigningKeyRing.keyID(current) == "90a1d27dbffe37a4")
        #expect(SigningKeyRing.keyID(next) == "81b4a2b349a16c2c")
    }

    @Test("a key the database wrapped for the current key unwraps with it, over more than one block")
    func unwrapsTheDatabasesWrap() {
        #expect(next.count > 32)
        #expect(SigningKeyRing.unwrap(nextWrappedForCurrent, keyID: "81b4a2b349a16c2c", holder: current) == next)
        #expect(SigningKeyRing.wrap(next, keyID: "81b4a2b349a16c2c", holder: current) == nextWrappedForCurrent)
    }

    @Test("unwrapping with another key, or a damaged wrap, gives nothing rather than a wrong key")
    func wrongHolder() {
        #expect(SigningKeyRing.unwrap(nextWrappedForCurrent, keyID: "81b4a2b349a16c2c", holder: next) == nil)
        var damaged = nextWrappedForCurrent
        damaged[3] ^= 1
        #expect(SigningKeyRing.unwrap(damaged, keyID: "81b4a2b349a16c2c", holder: current) == nil)
    }

    @Test("after add: the old instance verifies both and still signs with the current key")
    func afterAdd() throws {
        let ring = [SigningKeyRing.Entry(keyID: "90a1d27dbffe37a4", slot: "current",
                                         wrapped: SigningKeyRing.wrap(current, keyID: "90a1d27dbffe37a4", holder: current)),
                    SigningKeyRing.Entry(keyID: "81b4a2b349a16c2c", slot: "next", wrapped: nextWrappedForCurrent)]
        let keys = try SigningKeyRing.resolve(own: current, entries: ring).get()
        #expect(keys.signing == current)
        #expect(keys.verifying == [current, next])
    }

    @Test("after promote: an instance started with the old secret signs with the new one")
    func afterPromote() throws {
        let ring = [SigningKeyRing.Entry(keyID: "81b4a2b349a16c2c", slot: "current", wrapped: nextWrappedForCurrent),
                    SigningKeyRing.Entry(keyID: "90a1d27dbffe37a4", slot: "previous",
                                         wrapped: SigningKeyRing.wrap(current, keyID: "90a1d27dbffe37a4", holder: current))]
        let keys = try SigningKeyRing.resolve(own: current, entries: ring).get()
        #expect(keys.signing == next)
        #expect(keys.verifying == [next, current])
    }

    @Test("a key not shared with this instance (added after a leak) is neither verified nor signed with")
    func notShared() throws {
        let ring = [SigningKeyRing.Entry(keyID: "90a1d27dbffe37a4", slot: "previous", wrapped: nil),
                    SigningKeyRing.Entry(keyID: "81b4a2b349a16c2c", slot: "current", wrapped: nil)]
        let keys = try SigningKeyRing.resolve(own: current, entries: ring).get()
        #expect(keys.signing == current && keys.verifying == [current])
    }

    @Test("a secret that is not in the set is a problem that names the key and the set")
    func notInTheSet() {
        let ring = [SigningKeyRing.Entry(keyID: "81b4a2b349a16c2c", slot: "current", wrapped: nil)]
        guard case .failure(let problem) = SigningKeyRing.resolve(own: current, entries: ring) else {
            Issue.record("a secret outside the set resolved")
            return
        }
        #expect(problem.description.contains("90a1d27dbffe37a4") && problem.description.contains("current 81b4a2b349a16c2c"))
        guard case .failure(let empty) = SigningKeyRing.resolve(own: current, entries: []) else {
            Issue.record("an empty set resolved")
            return
        }
        #expect(empty.description.contains("no signing keys"))
    }
}

@Suite("Publishable API keys")
struct PublishableKeyTests {
    @Test("made from 32 random bytes, stored as their SHA-256, shown by their first characters")
    func generate() {
        let made = PublishableKey.generate()
        #expect(made.key.hasPrefix("sb_publishable_") && made.key.utf8.count == 15 + 43)
        #expect(made.hash == sha256(made.key) && PublishableKey.hash(made.key) == made.hash)
        #expect(made.key.hasPrefix(String(made.display.dropLast())))
        #expect(PublishableKey.generate().key != made.key)
    }

    @Test("anything else is not hashed: a JWT, another prefix, characters outside base64url, too long")
    func refusesOtherText() {
        #expect(PublishableKey.hash("eyJhbGciOiJIUzI1NiJ9.e30.x") == nil)
        #expect(PublishableKey.hash("sb_secret_" + String(repeating: "A", count: 43)) == nil)
        #expect(PublishableKey.hash("sb_publishable_" + String(repeating: "A", count: 42) + "+") == nil)
        #expect(PublishableKey.hash("sb_publishable_" + String(repeating: "A", count: 65)) == nil)
    }
}
