import Testing
@testable import PriceJSON

private func parse(_ text: String, maxBytes: Int = 1 << 20, maxDepth: Int = 32) throws(JSONParseError) -> JSONValue {
    try JSONParser(maxBytes: maxBytes, maxDepth: maxDepth).parse(Array(text.utf8))
}

private func parseError(_ bytes: [UInt8], maxBytes: Int = 1 << 20, maxDepth: Int = 32) -> JSONParseError? {
    do {
        _ = try JSONParser(maxBytes: maxBytes, maxDepth: maxDepth).parse(bytes)
        return nil
    } catch {
        return error
    }
}

private func parseError(_ text: String, maxDepth: Int = 32) -> JSONParseError? {
    parseError(Array(text.utf8), maxDepth: maxDepth)
}

@Suite struct AcceptsValidDocuments {
    @Test(arguments: [
        "null", "true", "false", "0", "-0", "12", "-12.5e+3", "1E-2", "0.5", "\"\"", "\"a\"", "[]", "{}",
        " \t\r\n[ 1 , 2 ] \n", "{\"a\":{\"b\":[null,{}]}}", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
        "\"\\u00e9\\u20AC\\ud83d\\ude00\"", "\"é€😀\"", "123456789012345678901234567890", "1e400",
    ])
    func parsesRFC8259Values(text: String) throws {
        let value = try parse(text)
        // What was parsed is what was written: the compact form parses back to the same value.
        #expect(try parse(value.serialized()) == value)
    }

    @Test func keepsObjectMembersInDocumentOrder() throws {
        let value = try parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(value.objectValue?.keys == ["z", "a", "m"])
        #expect(value["a"] == .number(JSONNumber(2)))
        #expect(value["missing"] == nil)
    }

    @Test func decodesEscapesAndSurrogatePairs() throws {
        #expect(try parse(#""\u00e9\u20AC\ud83d\ude00""#) == .string("é€😀"))
        #expect(try parse(#""a\"b\\c\/d\b\f\n\r\t""#) == .string("a\"b\\c/d\u{08}\u{0C}\n\r\t"))
        #expect(try parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func passesValidMultibyteUTF8Through() throws {
        #expect(try parse("\"Zürich 東京 🚕\"") == .string("Zürich 東京 🚕"))
    }

    @Test func keepsNumberLiteralsExactly() throws {
        #expect(try parse("123456789012345678901234567890") == .number(JSONNumber(uncheckedLiteral: "123456789012345678901234567890")))
        #expect(try parse("[1.50]") == [.number(JSONNumber(uncheckedLiteral: "1.50"))])
    }

    @Test func acceptsNestingUpToTheDepthLimit() throws {
        let text = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        var value = try parse(text)
        var depth = 0
        while let inner = value.arrayValue {
            depth += 1
            guard let first = inner.first else { break }
            value = first
        }
        #expect(depth == 32)
        #expect(parseError("[" + text + "]") != nil, "one more level is over the limit")
    }

    @Test func parsesFromARawBuffer() throws {
        let bytes = Array(#"{"ok":true}"#.utf8)
        let value = try bytes.withUnsafeBytes { buffer throws(JSONParseError) in
            try JSONParser(maxBytes: 100).parse(buffer)
        }
        #expect(value == ["ok": true])
    }
}

@Suite struct RejectsInvalidDocuments {
    @Test(arguments: [
        ("", JSONParseError.Code.unexpectedEnd),
        ("   ", .unexpectedEnd),
        ("{", .unexpectedEnd),
        ("[1,", .unexpectedEnd),
        ("\"abc", .unexpectedEnd),
        ("[1,]", .unexpectedCharacter),
        ("{\"a\":1,}", .unexpectedCharacter),
        ("{a:1}", .unexpectedCharacter),
        ("{'a':1}", .unexpectedCharacter),
        ("[1 2]", .unexpectedCharacter),
        ("NaN", .unexpectedCharacter),
        ("Infinity", .unexpectedCharacter),
        ("-Infinity", .invalidNumber),
        ("tru", .unexpectedEnd),
        ("nul1", .unexpectedCharacter),
        ("True", .unexpectedCharacter),
        ("01", .invalidNumber),
        ("-01", .invalidNumber),
        ("00", .invalidNumber),
        ("-", .invalidNumber),
        ("1.", .invalidNumber),
        (".5", .unexpectedCharacter),
        ("1e", .invalidNumber),
        ("1e+", .invalidNumber),
        ("+1", .unexpectedCharacter),
        ("0x10", .trailingData),
        ("1 2", .trailingData),
        ("{} x", .trailingData),
        ("[]]", .trailingData),
        ("\"\\x\"", .invalidEscape),
        ("\"\\u12G4\"", .invalidEscape),
        ("\"\\u12\"", .invalidEscape),
        ("\"\\ud83d\"", .loneSurrogate),
        ("\"\\ud83dx\"", .loneSurrogate),
        ("\"\\ude00\"", .loneSurrogate),
        ("\"\\ud83d\\u0041\"", .loneSurrogate),
        ("\"a\tb\"", .controlCharacter),
        ("\"a\nb\"", .controlCharacter),
        ("\"\u{1F}\"", .controlCharacter),
        ("{\"a\":1,\"a\":2}", .duplicateKey),
        ("{\"a\":{\"b\":1,\"b\":1}}", .duplicateKey),
        ("{\"é\":1,\"\\u00e9\":2}", .duplicateKey),
    ])
    func rejectsWithCode(text: String, code: JSONParseError.Code) {
        #expect(parseError(text)?.code == code, "\(text.debugDescription)")
    }

    @Test(arguments: [
        [0x22, 0xFF, 0x22],                    // never valid in UTF-8
        [0x22, 0xC0, 0xAF, 0x22],              // overlong "/"
        [0x22, 0xE0, 0x80, 0xAF, 0x22],        // overlong three-byte form
        [0x22, 0xED, 0xA0, 0x80, 0x22],        // UTF-8-encoded surrogate U+D800
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0xC3, 0x22],                    // truncated sequence
        [0x22, 0x80, 0x22],                    // lone continuation byte
        [0x22, 0xE2, 0x82],                    // truncated at end of input
    ] as [[UInt8]])
    func rejectsInvalidUTF8InStrings(bytes: [UInt8]) {
        #expect(parseError(bytes)?.code == .invalidUTF8)
    }

    @Test func rejectsAByteOrderMark() {
        #expect(parseError([0xEF, 0xBB, 0xBF] + Array("{}".utf8))?.code == .unexpectedCharacter)
    }

    @Test func messagesNameTheCharacterAndTheByteOffset() {
        let error = parseError(#"{"price_cents": 12,}"#)
        #expect(error?.code == .unexpectedCharacter)
        #expect(error?.offset == 19)
        #expect(error?.message == "unexpected character '}' at byte 19 (expected a string key)")
    }

    @Test func messagesShowUnprintableBytesAsHex() {
        #expect(parseError([0x01])?.message == "unexpected byte 0x01 at byte 0 (expected a value)")
    }

    @Test func duplicateKeyMessageNamesTheKey() {
        let error = parseError(#"{"rate_kind":"hourly","rate_kind":"daily"}"#)
        #expect(error?.message == #"duplicate key "rate_kind" at byte 22"#)
    }

    @Test func findsDuplicatesInLargeObjects() {
        let members = (0..<100).map { "\"k\($0)\":\($0)" }
        #expect(parseError("{" + members.joined(separator: ",") + "}") == nil)
        #expect(parseError("{" + (members + ["\"k42\":0"]).joined(separator: ",") + "}")?.code == .duplicateKey)
    }

    @Test func rejectsNestingBeyondTheDepthLimit() {
        let tooDeep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(parseError(tooDeep)?.code == .tooDeep)
        #expect(parseError(#"{"a":{"b":{"c":1}}}"#, maxDepth: 2)?.code == .tooDeep)
        // A hostile document far deeper than the limit fails fast rather than exhausting the stack.
        #expect(parseError(String(repeating: "[", count: 100_000))?.code == .tooDeep)
    }

    @Test func rejectsDocumentsOverTheSizeLimitBeforeParsing() {
        let error = parseError(Array("[1,2,3]".utf8), maxBytes: 6)
        #expect(error?.code == .tooLarge)
        #expect(parseError(Array("[1,2,3]".utf8), maxBytes: 7) == nil)
    }
}
