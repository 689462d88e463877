/// The one way pricesvc writes JSON: response bodies, statement parameters, log lines and the
/// serialization of a `JSONValue` all append to a writer's UTF-8 buffer.
///
/// Commas are placed by the writer, so callers only say what comes next. Members are written in the
/// order they are given, which is what keeps responses and tokens byte-for-byte stable.
///
/// The buffer is raw memory (`JSONBytes`), not an `[UInt8]`: a response body is written in a few
/// hundred small appends (a key, a quote, a cell), and each `Array.append(contentsOf:)` paid its
/// uniqueness, capacity and generic checks, about 160 instructions for a 15-byte key and 250 for
/// `null` (bench/instructions.sh places: the renderer was a third of pricesvc's work per request).
/// Here an append is a capacity compare and a `memcpy`. Copies of a writer share the buffer until one of
/// them writes (the check `Array` makes, done once per call).
public struct JSONWriter: Sendable {
    private var buffer: JSONBytes
    /// One entry per enclosing object or array, outside the innermost: whether it already holds a
    /// member or element. The innermost one's is `innermostHasItems`, so a value touches no array.
    private var hasItems: [Bool] = []
    private var depth = 0
    private var innermostHasItems = false

    public init(capacity: Int = 128) {
        buffer = JSONBytes(capacity: capacity)
    }

    /// What has been written so far (a copy).
    public var bytes: [UInt8] { buffer.array }

    /// How many bytes have been written: what a size cap checks as the body grows.
    public var count: Int { buffer.count }

    public var text: String { buffer.withBytes { String(decoding: $0, as: UTF8.self) } }

    /// `{`; members follow with `key(_:)` and a value each.
    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    /// An object member's name; the next value written is its value.
    public mutating func key(_ name: String) {
        separate()
        appendQuoted(name)
        unique()
        buffer.append(UInt8(ascii: ":"))
        // The value that follows must not get a comma of its own.
        suppressNext = true
    }

    /// An object member's name prepared once (`JSONKey`), for names written on every row.
    public mutating func key(_ name: JSONKey) {
        separate()
        unique()
        name.bytes.withUnsafeBufferPointer { buffer.append($0) }
        suppressNext = true
    }

    public mutating func string(_ value: String) {
        separate()
        appendQuoted(value)
    }

    /// A string given as UTF-8 bytes (escaped like any other string).
    public mutating func string(utf8 value: [UInt8]) {
        value.withUnsafeBufferPointer { string(utf8: $0) }
    }

    /// A string given as UTF-8 bytes the caller holds (a result cell); escaped like any other string.
    public mutating func string(utf8 value: UnsafeBufferPointer<UInt8>) {
        separate()
        unique()
        buffer.append(UInt8(ascii: "\""))
        buffer.appendEscaped(value)
        buffer.append(UInt8(ascii: "\""))
    }

    public mutating func string(_ value: String?) {
        if let value { string(value) } else { null() }
    }

    public mutating func number(_ value: Int) {
        separate()
        appendUTF8(String(value))
    }

    /// A number already in JSON form (e.g. a millisecond duration written by the caller).
    public mutating func number(literal: String) {
        separate()
        appendUTF8(literal)
    }

    /// A number already in JSON form, as bytes (an integer cell of a result).
    public mutating func number(literal: UnsafeBufferPointer<UInt8>) {
        separate()
        unique()
        buffer.append(literal)
    }

    public mutating func bool(_ value: Bool) {
        separate()
        unique()
        if value { buffer.append(0x74, 0x72, 0x75, 0x65) } else { buffer.append(0x66, 0x61, 0x6C, 0x73, 0x65) }
    }

    public mutating func null() {
        separate()
        unique()
        buffer.append(0x6E, 0x75, 0x6C, 0x6C)
    }

    /// Text that is JSON already, such as PostgreSQL's `to_json` output; written unchanged.
    /// - Important: Only for text from a trusted producer; nothing here checks that it is valid JSON.
    public mutating func json(_ text: String) {
        separate()
        appendUTF8(text)
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

    // MARK: the buffer

    /// Copies the buffer first if another writer shares it; every write calls it before touching `buffer`.
    /// (It returns nothing: a returned reference would be retained and released on every append.)
    @inline(__always) private mutating func unique() {
        if !isKnownUniquelyReferenced(&buffer) { buffer = buffer.copy() }
    }

    private mutating func appendUTF8(_ text: String) {
        var text = text
        unique()
        text.withUTF8 { buffer.append($0) }
    }

    private mutating func appendQuoted(_ text: String) {
        var text = text
        unique()
        buffer.append(UInt8(ascii: "\""))
        text.withUTF8 { buffer.appendEscaped($0) }
        buffer.append(UInt8(ascii: "\""))
    }

    // MARK: commas

    private var suppressNext = false

    private mutating func separate() {
        if suppressNext {
            suppressNext = false
            return
        }
        guard depth > 0 else { return }
        if innermostHasItems {
            unique()
            buffer.append(UInt8(ascii: ","))
        }
        innermostHasItems = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        unique()
        buffer.append(bracket)
        if depth > 0 { hasItems.append(innermostHasItems) }
        depth += 1
        innermostHasItems = false
    }

    private mutating func close(_ bracket: UInt8) {
        precondition(depth > 0, "JSONWriter: a close without an open")
        depth -= 1
        innermostHasItems = depth > 0 ? hasItems.removeLast() : false
        unique()
        buffer.append(bracket)
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

/// A growable byte buffer in raw memory, for `JSONWriter` only: one owner writes it (the writer copies it
/// before writing when it is shared), so it needs no lock.
final class JSONBytes: @unchecked Sendable {
    private var base: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    func copy() -> JSONBytes {
        let copy = JSONBytes(capacity: capacity)
        copy.base.update(from: base, count: count)
        copy.count = count
        return copy
    }

    var array: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        body(UnsafeBufferPointer(start: base, count: count))
    }

    /// Room for `extra` more bytes; grows geometrically, so many small appends stay amortised O(1).
    @inline(__always) private func reserve(_ extra: Int) {
        if extra > capacity - count { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        let (doubled, overflow) = capacity.multipliedReportingOverflow(by: 2)
        let newCapacity = max(needed, overflow ? needed : doubled)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    @inline(__always) func append(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    func append(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8) {
        reserve(4)
        base[count] = a; base[count + 1] = b; base[count + 2] = c; base[count + 3] = d
        count += 4
    }

    func append(_ a: UInt8, _ b: UInt8, _ c: UInt8, _ d: UInt8, _ e: UInt8) {
        append(a, b, c, d)
        append(e)
    }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    /// The bytes of a JSON string's content, escaped by `JSONString.forEachRun`'s rule.
    func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        JSONString.forEachRun(of: bytes) { run, escaped in
            append(run)
            if let escaped {
                var escape: [UInt8] = []
                JSONString.appendEscape(for: escaped, to: &escape)
                escape.withUnsafeBufferPointer { append($0) }
            }
        }
    }
}
