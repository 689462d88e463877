import AppAttest
import AttestationPKI
import Testing

/// The strict CBOR decoder without I/O: what it accepts (RFC 8949 Appendix A's examples that App Attest
/// can meet) and every way it refuses.
@Suite struct CBORDecoderTests {
    let decoder = CBORDecoder()

    func decode(_ bytes: [UInt8]) -> CBORValue? {
        if case .success(let value) = decoder.decode(bytes) { return value }
        return nil
    }

    func refusal(_ bytes: [UInt8], _ decoder: CBORDecoder = CBORDecoder()) -> CBORError.Code? {
        if case .failure(let error) = decoder.decode(bytes) { return error.code }
        return nil
    }

    @Test func rfc8949Examples() {
        #expect(decode([0x00]) == .unsigned(0))
        #expect(decode([0x17]) == .unsigned(23))
        #expect(decode([0x18, 0x18]) == .unsigned(24))
        #expect(decode([0x19, 0x03, 0xe8]) == .unsigned(1000))
        #expect(decode([0x1b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) == .unsigned(.max))
        #expect(decode([0x20]) == .negative(0))
        #expect(decode([0x20])?.intValue == -1)
        #expect(decode([0x38, 0x63])?.intValue == -100)
        #expect(decode([0x44, 1, 2, 3, 4]) == .bytes([1, 2, 3, 4]))
        #expect(decode([0x62, 0xc3, 0xbc]) == .text("ü"))
        #expect(decode([0x83, 1, 0x82, 2, 3, 0x82, 4, 5]) == .array([.unsigned(1), .array([.unsigned(2), .unsigned(3)]), .array([.unsigned(4), .unsigned(5)])]))
        #expect(decode([0xa2, 0x61, 0x61, 1, 0x61, 0x62, 0x82, 2, 3])?[text: "b"] == .array([.unsigned(2), .unsigned(3)]))
        #expect(decode([0xf4]) == .bool(false))
        #expect(decode([0xf5]) == .bool(true))
        #expect(decode([0xf6]) == .null)
    }

    @Test func trailingDataIsRefusedButAPrefixMayBeAskedFor() {
        #expect(refusal([0x01, 0x02]) == .trailingData)
        guard case .success(let (value, end)) = decoder.decodePrefix([0x01, 0x02], from: 0) else {
            Issue.record("prefix refused")
            return
        }
        #expect(value == .unsigned(1) && end == 1)
    }

    @Test func truncatedItemsAndLengthsBeyondTheInputAreRefused() {
        #expect(refusal([]) == .truncated)
        #expect(refusal([0x19, 0x03]) == .truncated)
        #expect(refusal([0x44, 1, 2, 3]) == .truncated)
        #expect(refusal([0x82, 1]) == .truncated)
        #expect(refusal([0xa1, 0x01]) == .truncated)
        // A byte string, an array and a map claiming 2^64-1 entries: refused before any allocation.
        #expect(refusal([0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) == .truncated)
        #expect(refusal([0x9b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) == .truncated)
        #expect(refusal([0xbb, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]) == .truncated)
        #expect(refusal([0x7a, 0x7f, 0xff, 0xff, 0xff, 0x61]) == .truncated)
    }

    @Test func indefiniteLengthsAreRefused() {
        #expect(refusal([0x5f, 0x41, 0x01, 0xff]) == .indefiniteLength)
        #expect(refusal([0x7f, 0x61, 0x61, 0xff]) == .indefiniteLength)
        #expect(refusal([0x9f, 0x01, 0xff]) == .indefiniteLength)
        #expect(refusal([0xbf, 0x01, 0x02, 0xff]) == .indefiniteLength)
        #expect(refusal([0xff]) == .indefiniteLength)
    }

    @Test func deepNestingIsRefused() {
        let deep = [UInt8](repeating: 0x81, count: 100) + [0x00]
        #expect(refusal(deep) == .tooDeep)
        let allowed = [UInt8](repeating: 0x81, count: 7) + [0x00]
        #expect(decode(allowed) != nil)
        #expect(refusal([UInt8](repeating: 0x81, count: 8) + [0x00]) == .tooDeep)
    }

    @Test func tooManyEntriesOrItemsAreRefused() {
        let bounded = CBORDecoder(maxDepth: 8, maxEntries: 4, maxItems: 6)
        #expect(refusal([0x85, 1, 2, 3, 4, 5], bounded) == .tooLarge)
        #expect(refusal([0x84, 0x82, 1, 2, 0x82, 3, 4, 5, 6], bounded) == .tooLarge)
    }

    @Test func tagsFloatsAndOtherSimpleValuesAreRefused() {
        #expect(refusal([0xc2, 0x41, 0x01]) == .unsupported)
        #expect(refusal([0xf9, 0x3c, 0x00]) == .unsupported)
        #expect(refusal([0xfb, 0x3f, 0xf1, 0x99, 0x99, 0x99, 0x99, 0x99, 0x9a]) == .unsupported)
        #expect(refusal([0xf7]) == .unsupported)
        #expect(refusal([0xf8, 0xff]) == .unsupported)
        #expect(refusal([0x1c]) == .reserved)
    }

    @Test func invalidUTF8AndDuplicateKeysAreRefused() {
        #expect(refusal([0x62, 0xc3, 0x28]) == .invalidUTF8)
        #expect(refusal([0xa2, 0x61, 0x61, 1, 0x61, 0x61, 2]) == .duplicateKey)
    }

    @Test func theNonceExtensionIsReadExactly() {
        let nonce = [UInt8](repeating: 7, count: 32)
        let der: [UInt8] = [0x30, 0x24, 0xa1, 0x22, 0x04, 0x20] + nonce
        #expect(appAttestNonce(extensionValue: der) == nonce)
        #expect(appAttestNonce(extensionValue: der + [0]) == nil)
        #expect(appAttestNonce(extensionValue: Array(der.dropLast())) == nil)
        #expect(appAttestNonce(extensionValue: [0x30, 0x24, 0xa0, 0x22, 0x04, 0x20] + nonce) == nil)
        #expect(appAttestNonce(extensionValue: []) == nil)
    }

    @Test func base64IsStrict() {
        #expect(decodeBase64("AQID") == [1, 2, 3])
        #expect(decodeBase64("AQI=") == [1, 2])
        #expect(decodeBase64("AQI") == [1, 2])
        #expect(decodeBase64("AQ==") == [1])
        #expect(decodeBase64("A") == nil)
        #expect(decodeBase64("AQ=I") == nil)
        #expect(decodeBase64("AQ I") == nil)
        #expect(decodeBase64("AR==") == nil)
        #expect(encodeBase64([1, 2, 3, 4]) == "AQIDBA==")
        #expect(encodeBase64([1, 2]) == "AQI=")
    }
}
