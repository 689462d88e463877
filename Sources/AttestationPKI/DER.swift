/// A strict ASN.1 DER reader (X.690 §10): definite lengths in their shortest form, tag numbers in their
/// shortest form, minimal INTEGERs, BOOLEAN only 0x00 or 0xFF. Anything BER allows and DER does not is an
/// error, so one value has one encoding and a parser cannot be led to read two different things from it.
/// It reads what the caller asks for, one element at a time: the schema lives in the caller, the reader
/// never recurses on its own, so input cannot make it deep.
public struct DERTag: Sendable, Hashable, CustomStringConvertible {
    public enum TagClass: UInt8, Sendable {
        case universal = 0, application = 1, contextSpecific = 2, `private` = 3
    }

    public let tagClass: TagClass
    public let constructed: Bool
    public let number: UInt32

    public init(_ tagClass: TagClass, constructed: Bool, number: UInt32) {
        self.tagClass = tagClass
        self.constructed = constructed
        self.number = number
    }

    public static let boolean = DERTag(.universal, constructed: false, number: 1)
    public static let integer = DERTag(.universal, constructed: false, number: 2)
    public static let bitString = DERTag(.universal, constructed: false, number: 3)
    public static let octetString = DERTag(.universal, constructed: false, number: 4)
    public static let null = DERTag(.universal, constructed: false, number: 5)
    public static let objectIdentifier = DERTag(.universal, constructed: false, number: 6)
    public static let enumerated = DERTag(.universal, constructed: false, number: 10)
    public static let sequence = DERTag(.universal, constructed: true, number: 16)
    public static let set = DERTag(.universal, constructed: true, number: 17)

    /// `[number] EXPLICIT`: a context-specific constructed wrapper around one element.
    public static func explicit(_ number: UInt32) -> DERTag { DERTag(.contextSpecific, constructed: true, number: number) }

    public var description: String {
        switch tagClass {
        case .universal: return "universal \(number)\(constructed ? " constructed" : "")"
        case .contextSpecific: return "[\(number)]\(constructed ? " constructed" : "")"
        case .application: return "application \(number)"
        case .private: return "private \(number)"
        }
    }
}

/// Why bytes are not the DER the caller asked for; `offset` is where the offending element starts.
public struct DERError: Error, Sendable, Equatable, CustomStringConvertible {
    public let offset: Int
    public let message: String

    public init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    public var description: String { "\(message) at byte \(offset)" }
}

/// One element: its tag, where it starts, and its contents (indices are those of the whole input).
public struct DERElement: Sendable, Equatable {
    public let tag: DERTag
    public let offset: Int
    /// Header and contents, as they appear in the input (what a signature or a pin covers).
    public let encoded: ArraySlice<UInt8>
    public let contents: ArraySlice<UInt8>

    /// The elements inside a constructed one.
    public func reader() throws(DERError) -> DERReader {
        guard tag.constructed else { throw DERError("\(tag) is not constructed", at: offset) }
        return DERReader(contents)
    }

    /// The one element inside `[n] EXPLICIT`, with nothing after it.
    public func explicitInner() throws(DERError) -> DERElement {
        var inner = try reader()
        let element = try inner.read()
        try inner.finish()
        return element
    }

    /// An INTEGER or ENUMERATED in the shortest two's-complement form that fits 64 bits.
    public func int64() throws(DERError) -> Int64 {
        guard tag == .integer || tag == .enumerated else { throw DERError("\(tag) is not an INTEGER", at: offset) }
        let bytes = try minimalTwosComplement()
        let first = bytes[bytes.startIndex]
        guard bytes.count <= 8 else { throw DERError("INTEGER larger than 64 bits", at: offset) }
        var value: Int64 = first & 0x80 != 0 ? -1 : 0
        for byte in bytes { value = value << 8 | Int64(byte) }
        return value
    }

    /// The unsigned magnitude of a minimal INTEGER of any size (a serial number), without leading zeros;
    /// nil for a negative one.
    public func unsignedMagnitude() throws(DERError) -> [UInt8]? {
        guard tag == .integer else { throw DERError("\(tag) is not an INTEGER", at: offset) }
        let bytes = try minimalTwosComplement()
        if bytes[bytes.startIndex] & 0x80 != 0 { return nil }
        return Array(bytes.drop(while: { $0 == 0 }))
    }

    /// The contents as a two's-complement number in its shortest form (X.690 §8.3.2): not empty, and no
    /// leading 0x00 or 0xFF byte that only repeats the sign.
    func minimalTwosComplement() throws(DERError) -> ArraySlice<UInt8> {
        guard let first = contents.first else { throw DERError("empty INTEGER", at: offset) }
        if contents.count > 1 {
            let second = contents[contents.startIndex + 1]
            guard !(first == 0x00 && second & 0x80 == 0), !(first == 0xff && second & 0x80 != 0) else {
                throw DERError("INTEGER not in its shortest form", at: offset)
            }
        }
        return contents
    }

    /// A BOOLEAN: DER allows 0x00 and 0xFF only (BER's "any non-zero is TRUE" is refused).
    public func boolean() throws(DERError) -> Bool {
        guard tag == .boolean else { throw DERError("\(tag) is not a BOOLEAN", at: offset) }
        guard contents.count == 1 else { throw DERError("BOOLEAN is not one byte", at: offset) }
        switch contents.first! {
        case 0x00: return false
        case 0xff: return true
        default: throw DERError("BOOLEAN is neither 0x00 nor 0xFF", at: offset)
        }
    }

    /// An OCTET STRING's bytes (primitive: DER has no constructed strings).
    public func octets() throws(DERError) -> [UInt8] {
        guard tag == .octetString else { throw DERError("\(tag) is not an OCTET STRING", at: offset) }
        return Array(contents)
    }

    /// A NULL (empty contents).
    public func null() throws(DERError) {
        guard tag == .null, contents.isEmpty else { throw DERError("\(tag) is not a NULL", at: offset) }
    }

    /// An OBJECT IDENTIFIER in dotted text, each arc in its shortest base-128 form.
    public func objectIdentifier() throws(DERError) -> String {
        guard tag == .objectIdentifier, !contents.isEmpty else { throw DERError("\(tag) is not an OBJECT IDENTIFIER", at: offset) }
        var arcs: [UInt64] = []
        var value: UInt64 = 0
        var fresh = true
        for byte in contents {
            guard !(fresh && byte == 0x80) else { throw DERError("OBJECT IDENTIFIER arc with a leading zero", at: offset) }
            guard value >> 57 == 0 else { throw DERError("OBJECT IDENTIFIER arc larger than 64 bits", at: offset) }
            value = value << 7 | UInt64(byte & 0x7f)
            fresh = byte & 0x80 == 0
            if fresh {
                arcs.append(value)
                value = 0
            }
        }
        guard fresh else { throw DERError("OBJECT IDENTIFIER ends inside an arc", at: offset) }
        let first = arcs[0]
        let head = first < 40 ? [0, first] : first < 80 ? [1, first - 40] : [2, first - 80]
        return (head + arcs.dropFirst()).map(String.init).joined(separator: ".")
    }
}

/// Reads consecutive elements from a byte range.
public struct DERReader: Sendable {
    let bytes: ArraySlice<UInt8>
    public private(set) var position: Int

    public init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    public init(_ bytes: [UInt8]) { self.init(bytes[...]) }

    public var isAtEnd: Bool { position == bytes.endIndex }

    /// Reads one whole DER value (`bytes` holds exactly one element and nothing after it).
    public static func single(_ bytes: [UInt8]) throws(DERError) -> DERElement {
        var reader = DERReader(bytes)
        let element = try reader.read()
        try reader.finish()
        return element
    }

    /// The tag of the next element, without consuming it; nil at the end or on a malformed tag.
    public func peekTag() -> DERTag? {
        var copy = self
        return try? copy.readTag()
    }

    /// Throws unless every byte was read.
    public func finish() throws(DERError) {
        guard isAtEnd else { throw DERError("trailing bytes", at: position) }
    }

    /// The next element, whatever its tag.
    public mutating func read() throws(DERError) -> DERElement {
        let start = position
        let tag = try readTag()
        let length = try readLength()
        guard length <= bytes.endIndex - position else { throw DERError("length runs past the end", at: start) }
        let contents = bytes[position..<position + length]
        position += length
        return DERElement(tag: tag, offset: start, encoded: bytes[start..<position], contents: contents)
    }

    /// The next element, which must carry `tag`.
    public mutating func read(_ tag: DERTag) throws(DERError) -> DERElement {
        let start = position
        let element = try read()
        guard element.tag == tag else { throw DERError("expected \(tag), found \(element.tag)", at: start) }
        return element
    }

    /// The next element when it carries `tag`; nil (nothing consumed) otherwise.
    public mutating func readIfPresent(_ tag: DERTag) throws(DERError) -> DERElement? {
        guard peekTag() == tag else { return nil }
        return try read()
    }

    mutating func byte() throws(DERError) -> UInt8 {
        guard position < bytes.endIndex else { throw DERError("truncated", at: position) }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readTag() throws(DERError) -> DERTag {
        let start = position
        let first = try byte()
        let tagClass = DERTag.TagClass(rawValue: first >> 6)!
        let constructed = first & 0x20 != 0
        var number = UInt32(first & 0x1f)
        if number == 0x1f {
            // High-tag-number form: base 128, no leading 0x80, and only for numbers of 31 and above.
            number = 0
            var count = 0
            while true {
                let next = try byte()
                count += 1
                guard !(count == 1 && next == 0x80) else { throw DERError("tag number with a leading zero", at: start) }
                guard count <= 4 else { throw DERError("tag number too large", at: start) }
                number = number << 7 | UInt32(next & 0x7f)
                if next & 0x80 == 0 { break }
            }
            guard number >= 31 else { throw DERError("tag number \(number) in the long form", at: start) }
        }
        return DERTag(tagClass, constructed: constructed, number: number)
    }

    mutating func readLength() throws(DERError) -> Int {
        let start = position
        let first = try byte()
        if first < 0x80 { return Int(first) }
        guard first != 0x80 else { throw DERError("indefinite length", at: start) }
        let count = Int(first & 0x7f)
        guard count <= 4 else { throw DERError("length of \(count) bytes", at: start) }
        var length = 0
        for index in 0..<count {
            let next = try byte()
            guard !(index == 0 && next == 0) else { throw DERError("length with a leading zero", at: start) }
            length = length << 8 | Int(next)
        }
        guard length >= 0x80 else { throw DERError("length \(length) in the long form", at: start) }
        return length
    }
}
