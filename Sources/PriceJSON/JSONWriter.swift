/// The one way pricesvc writes JSON: response bodies, statement parameters, log lines and the
/// serialization of a `JSONValue` all append to a writer's UTF-8 buffer.
///
/// Commas are placed by the writer, so callers only say what comes next. Members are written in the
/// order they are given, which is what keeps responses and tokens byte-for-byte stable.
public struct JSONWriter: Sendable {
    public private(set) var bytes: [UInt8] = []
    /// One entry per enclosing object or array, outside the innermost: whether it already holds a
    /// member or element. The innermost one's is `innermostHasItems`, so a value touches no array.
    private var hasItems: [Bool] = []
    private var depth = 0
    private var innermostHasItems = false

    public init(capacity: Int = 128) {
        bytes.reserveCapacity(capacity)
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `{`; members follow with `key(_:)` and a value each.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object member's name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        JSONString.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        // The value that follows must not get a comma of its own.
        suppressNext = true
    }

    /// An object member's name prepared once (`JSONKey`), for names written on every row.
    public mutating func key(_ name: JSONKey) {
        separate()
        bytes.append(contentsOf: name.bytes)
        suppressNext = true
    }

    public mutating func string(_ value: String) {
        separate()
        JSONString.appendQuoted(value, to: &bytes)
    }

    /// A string given as UTF-8 bytes (escaped like any other string).
    public mutating func string(utf8 value: [UInt8]) {
        value.withUnsafeBufferPointer { string(utf8: $0) }
    }

    /// A string given as UTF-8 bytes the caller holds (a result cell); escaped like any other string.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        JSONString.appendEscaped(bytes: value, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func number(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
    }

    /// A number already in JSON form (e.g. a millisecond duration written by the caller).
    public mutating func number(literal: String) {
        separate()
        bytes.append(contentsOf: literal.utf8)
    }

    /// A number already in JSON form, as bytes (an integer cell of a result).
    public mutating func number(literal: UnsafeBufferPointer<UInt8>) {
        separate()
        bytes.append(contentsOf: literal)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Text that is JSON already, such as PostgreSQL's `to_json` output; written unchanged.
    /// - Important: Only for text from a trusted producer; nothing here checks that it is valid JSON.
    public mutating func json(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    public mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let literal): number(literal: literal.text)
        case .string(let text): string(text)
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .object(let object):
            self.object(object)
        }
    }

    public mutating func object(_ object: JSONObject) {
        beginObject()
        for member in object.members {
            key(member.key)
            value(member.value)
        }
        endObject()
    }

    // MARK: commas

    private var suppressNext = false

    private mutating func separate() {
        if suppressNext {
            suppressNext = false
            return
        }
        guard depth > 0 else { return }
        if innermostHasItems { bytes.append(UInt8(ascii: ",")) }
        innermostHasItems = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        if depth > 0 { hasItems.append(innermostHasItems) }
        depth += 1
        innermostHasItems = false
    }

    private mutating func close(_ bracket: UInt8) {
        precondition(depth > 0, "JSONWriter: a close without an open")
        depth -= 1
        innermostHasItems = depth > 0 ? hasItems.removeLast() : false
        bytes.append(bracket)
    }
}

/// A member name quoted, escaped and followed by `:` once, for `JSONWriter.key(_:)` on every row.
public struct JSONKey: Sendable {
    let bytes: [UInt8]

    public init(_ name: String) {
        var bytes: [UInt8] = []
        JSONString.appendQuoted(name, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        self.bytes = bytes
    }
}
