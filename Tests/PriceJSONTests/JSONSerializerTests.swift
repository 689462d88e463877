import Testing
@testable import PriceJSON

@Suite struct SerializesJSON {
    @Test func writesCompactOutputInMemberOrder() {
        let value: JSONValue = ["id": 12, "created_at": "2026-11-29T22:00:00Z", "replayed": false, "tags": [nil, 1.5]]
        #expect(value.serialized() == #"{"id":12,"created_at":"2026-11-29T22:00:00Z","replayed":false,"tags":[null,1.5]}"#)
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() {
        #expect(JSONString.quoted("a\"b\\c") == #""a\"b\\c""#)
        #expect(JSONString.escape("\n\r\t\u{08}\u{0C}") == #"\n\r\t\b\f"#)
        #expect(JSONString.escape("\u{0}\u{1F}\u{7F}") == "\\u0000\\u001f\u{7F}")
        #expect(JSONString.escape("/é😀") == "/é😀")
    }

    @Test(arguments: [
        "", "plain", "quote\" backslash\\ slash/", "\u{0}\u{1}\u{1F} controls", "line\nbreak\ttab",
        "Zürich 東京 🚕", "\u{2028}\u{2029}", "</script>",
    ])
    func stringsRoundTripThroughSerializeAndParse(text: String) throws {
        let serialized = JSONValue.string(text).serializedBytes()
        #expect(try JSONParser(maxBytes: 1024).parse(serialized) == .string(text))
    }

    @Test func documentsRoundTripUnchanged() throws {
        let text = #"{"b":[1,-0.5,1e400,true,null],"a":{"nested":"\"\\\u0001"},"":{}}"#
        let value = try JSONParser(maxBytes: 1024).parse(text)
        #expect(value.serialized() == text)
        #expect(try JSONParser(maxBytes: 1024).parse(value.serializedBytes()) == value)
    }

    @Test func objectSubscriptReplacesInPlaceAppendsAndRemoves() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = "x"
        object["c"] = true
        object["b"] = nil
        #expect(object.serialized() == #"{"a":"x","c":true}"#)
    }
}

@Suite struct WritesJSON {
    @Test func placesCommasBetweenMembersAndElementsAtEveryDepth() {
        var writer = JSONWriter()
        writer.beginArray()
        writer.beginObject()
        writer.key("a"); writer.number(1)
        writer.key("b"); writer.beginArray(); writer.string("x"); writer.null(); writer.endArray()
        writer.key("c"); writer.json(#"{"raw":true}"#)
        writer.endObject()
        writer.beginObject(); writer.endObject()
        writer.bool(false)
        writer.endArray()
        #expect(writer.text == #"[{"a":1,"b":["x",null],"c":{"raw":true}},{},false]"#)
    }

    @Test func writesAValueExactlyAsItsSerialization() throws {
        let value = try JSONValue.parse(Array(#"{"k\"ey":{"n":-1.5e3,"s":"\u0001"},"e":[]}"#.utf8), maxBytes: 1024)
        var writer = JSONWriter()
        writer.value(value)
        #expect(writer.text == #"{"k\"ey":{"n":-1.5e3,"s":"\u0001"},"e":[]}"#)
        #expect(value.serialized() == writer.text)
    }

    @Test func preparedKeysAndByteStringsWriteWhatKeyAndStringWrite() {
        var plain = JSONWriter(), prepared = JSONWriter()
        let names = ["a", "k\"ey", "tab\there", "é"]
        let keys = names.map(JSONKey.init)
        for writer in [0, 1] {
            if writer == 0 { plain.beginArray() } else { prepared.beginArray() }
            for _ in 0..<2 {
                if writer == 0 { plain.beginObject() } else { prepared.beginObject() }
                for (index, name) in names.enumerated() {
                    if writer == 0 {
                        plain.key(name); plain.string("v\"\u{1}" + name)
                    } else {
                        prepared.key(keys[index]); prepared.string(utf8: Array(("v\"\u{1}" + name).utf8))
                    }
                }
                if writer == 0 { plain.endObject() } else { prepared.endObject() }
            }
            if writer == 0 { plain.endArray() } else { prepared.endArray() }
        }
        #expect(prepared.text == plain.text)
        #expect(plain.text.hasPrefix(#"[{"a":"v\"\u0001a","k\"ey":"#))
    }

    @Test func aCopiedWriterKeepsWhatItHadWhenTheOtherWrites() {
        var first = JSONWriter(capacity: 1)
        first.beginArray()
        first.string("shared")
        var second = first
        first.number(1)
        second.bool(true)
        second.null()
        first.endArray()
        second.endArray()
        #expect(first.text == #"["shared",1]"#)
        #expect(second.text == #"["shared",true,null]"#)
    }

    @Test func growsPastItsCapacityAndCountsWhatItWrote() {
        var writer = JSONWriter(capacity: 1)
        var expected: [UInt8] = Array("[".utf8)
        writer.beginArray()
        for index in 0..<2_000 {
            let text = String(repeating: "x\u{1}\"", count: index % 7) + "\(index)"
            writer.string(text)
            if index > 0 { expected.append(UInt8(ascii: ",")) }
            expected += Array(JSONString.quoted(text).utf8)
            #expect(writer.count == expected.count)
        }
        writer.endArray()
        expected.append(UInt8(ascii: "]"))
        #expect(writer.bytes == expected)
        #expect(writer.text == String(decoding: expected, as: UTF8.self))
    }
}
