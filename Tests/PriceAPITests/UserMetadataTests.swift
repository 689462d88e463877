import Testing
@testable import PriceAPI

@Suite("user_metadata keeps only the allow-listed keys (PRICESVC_USER_METADATA_KEYS)")
struct UserMetadataTests {
    func metadata(_ body: String, keys: Set<String>, maxBytes: Int = 1024) -> String? {
        guard case .success(let form) = AuthHandler.signUpForm(Array(body.utf8), maxBytes: maxBytes, keys: keys) else { return nil }
        return form.metadata
    }

    @Test("by default nothing is stored, whatever the app sends")
    func nothingByDefault() {
        #expect(metadata(#"{"data":{"email":"someone@example.org","app":"parking"}}"#, keys: []) == "{}")
        #expect(metadata(#"{"data":{}}"#, keys: []) == "{}")
        #expect(metadata("", keys: []) == "{}")
    }

    @Test("listed keys are kept with their values, in the order sent; the rest are dropped")
    func listedKeysOnly() {
        #expect(metadata(#"{"data":{"email":"x@y.z","version":3,"app":{"name":"p"}}}"#, keys: ["app", "version"])
            == #"{"version":3,"app":{"name":"p"}}"#)
        #expect(metadata(#"{"data":{"app":"p"}}"#, keys: ["app"]) == #"{"app":"p"}"#)
    }

    @Test("the size limit applies to what was sent, before keys are dropped")
    func sizeOfWhatWasSent() {
        let big = String(repeating: "x", count: 2000)
        #expect(metadata(#"{"data":{"blob":"\#(big)","app":"p"}}"#, keys: ["app"]) == nil)
    }
}
