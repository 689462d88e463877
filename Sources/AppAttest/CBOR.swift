/// A CBOR data item (RFC 8949), as far as App Attest uses CBOR: integers, byte and text strings, arrays,
/// maps, booleans and null. Tags, floats and other simple values are refused by the decoder.
public indirect enum CBORValue: Sendable, Equatable {
    case unsigned(UInt64)
    /// The integer `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Pairs in the order they were encoded; the decoder refuses a key seen twice.
    case map([CBORPair])
    case bool(Bool)
    case null

    /// The value of `key` in a map whose keys are text; nil for a missing key or a value that is not a map.
    public subscript(text key: String) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == .text(key) }?.value
    }

    /// The value of integer `key` in a map (COSE keys use small integers).
    public subscript(int key: Int) -> CBORValue? {
        guard case .map(let pairs) = self else { return nil }
        let wanted: CBORValue = key >= 0 ? .unsigned(UInt64(key)) : .negative(UInt64(-1 - key))
        return pairs.first { $0.key == wanted }?.value
    }

    public var bytesValue: [UInt8]? { if case .bytes(let b) = self { return b } else { return nil } }
    public var textValue: String? { if case .text(let t) = self { return t } else { return nil } }
    public var arrayValue: [CBORValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// The value as an Int when it is an integer that fits.
    public var intValue: Int? {
        switch self {
        case .unsigned(let n): return n <= UInt64(Int.max) ? Int(n) : nil
        case .negative(let n): return n <= UInt64(Int.max) ? -1 - Int(n) : nil
        default: return nil
        }
    }
}

public struct CBORPair: Sendable, Equatable {
    public var key: CBORValue
    public var value: CBORValue
    public init(key: CBORValue, value: CBORValue) { self.key = key; self.value = value }
}

/// Why bytes were refused as CBOR, and where.
public struct CBORError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case truncated, trailingData, indefiniteLength, tooDeep, tooLarge, unsupported, invalidUTF8, duplicateKey, reserved
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }
        /// The input ends inside an item (including a length larger than what is left).
        public static let truncated = Code(.truncated)
        /// Bytes after the one item a whole-input decode expects.
        public static let trailingData = Code(.trailingData)
        /// Indefinite-length strings, arrays or maps (additional information 31): never used by App Attest.
        public static let indefiniteLength = Code(.indefiniteLength)
        /// Nesting beyond the decoder's depth bound.
        public static let tooDeep = Code(.tooDeep)
        /// More entries in an array or map, or more items in total, than the decoder's bounds.
        public static let tooLarge = Code(.tooLarge)
        /// A tag, a float, `undefined` or another simple value.
        public static let unsupported = Code(.unsupported)
        public static let invalidUTF8 = Code(.invalidUTF8)
        public static let duplicateKey = Code(.duplicateKey)
        /// Additional information 28–30, which RFC 8949 reserves.
        public static let reserved = Code(.reserved)
        public var description: String { base.rawValue }
    }

    public let code: Code
    /// Byte offset where the problem was found.
    public let offset: Int

    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    public var description: String { "CBOR \(code) at byte \(offset)" }
}

/// A small strict CBOR decoder: definite lengths only, bounded depth, entries and items, no trailing data
/// (unless the caller asks for a prefix), no tags or floats, no duplicate map keys. A declared length is
/// checked against the bytes that remain before anything is allocated, so a huge length costs nothing.
public struct CBORDecoder: Sendable {
    public var maxDepth: Int
    /// Most entries in one array or map.
    public var maxEntries: Int
    /// Most items in the whole input.
    public var maxItems: Int

    public init(maxDepth: Int = 8, maxEntries: Int = 64, maxItems: Int = 512) {
        self.maxDepth = maxDepth
        self.maxEntries = maxEntries
        self.maxItems = maxItems
    }

    /// Exactly one item that spans all of `bytes`.
    public func decode(_ bytes: [UInt8]) -> Result<CBORValue, CBORError> {
        switch decodePrefix(bytes, from: 0) {
        case .failure(let error): return .failure(error)
        case .success(let (value, end)):
            guard end == bytes.count else { return .failure(CBORError(.trailingData, at: end)) }
            return .success(value)
        }
    }

    /// One item starting at `from`, and the offset just past it (authData holds a COSE key followed by
    /// other data).
    public func decodePrefix(_ bytes: [UInt8], from: Int) -> Result<(CBORValue, Int), CBORError> {
        var reader = Reader(bytes: bytes, position: from, decoder: self)
        do throws(CBORError) {
            let value = try reader.item(depth: 1)
            return .success((value, reader.position))
        } catch {
            return .failure(error)
        }
    }

    private struct Reader {
        let bytes: [UInt8]
        var position: Int
        let decoder: CBORDecoder
        var items = 0

        var remaining: Int { bytes.count - position }

        mutating func byte() throws(CBORError) -> UInt8 {
            guard position < bytes.count else { throw CBORError(.truncated, at: position) }
            defer { position += 1 }
            return bytes[position]
        }

        /// The argument of a head whose additional information is `info` (RFC 8949 §3).
        mutating func argument(_ info: UInt8, at start: Int) throws(CBORError) -> UInt64 {
            switch info {
            case 0...23: return UInt64(info)
            case 24...27:
                let count = 1 << Int(info - 24)
                guard remaining >= count else { throw CBORError(.truncated, at: position) }
                var value: UInt64 = 0
                for _ in 0..<count { value = value << 8 | UInt64(bytes[position]); position += 1 }
                return value
            case 31: throw CBORError(.indefiniteLength, at: start)
            default: throw CBORError(.reserved, at: start)
            }
        }

        /// A length that must fit in what remains, each unit taking at least `unitBytes` bytes.
        func length(_ argument: UInt64, unitBytes: Int, at start: Int) throws(CBORError) -> Int {
            guard argument <= UInt64(remaining / unitBytes) else { throw CBORError(.truncated, at: start) }
            return Int(argument)
        }

        mutating func item(depth: Int) throws(CBORError) -> CBORValue {
            let start = position
            guard depth <= decoder.maxDepth else { throw CBORError(.tooDeep, at: start) }
            items += 1
            guard items <= decoder.maxItems else { throw CBORError(.tooLarge, at: start) }
            let head = try byte()
            let major = head >> 5
            let info = head & 0x1f
            if major == 7 {
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                case 31: throw CBORError(.indefiniteLength, at: start)
                default: throw CBORError(.unsupported, at: start)
                }
            }
            if major == 6 { throw CBORError(.unsupported, at: start) }
            let argument = try argument(info, at: start)
            switch major {
            case 0: return .unsigned(argument)
            case 1: return .negative(argument)
            case 2, 3:
                let count = try length(argument, unitBytes: 1, at: start)
                let slice = Array(bytes[position..<position + count])
                position += count
                if major == 2 { return .bytes(slice) }
                guard let text = String(validating: slice, as: UTF8.self) else { throw CBORError(.invalidUTF8, at: start) }
                return .text(text)
            case 4:
                let count = try length(argument, unitBytes: 1, at: start)
                guard count <= decoder.maxEntries else { throw CBORError(.tooLarge, at: start) }
                var elements: [CBORValue] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try item(depth: depth + 1)) }
                return .array(elements)
            default: // 5: map
                let count = try length(argument, unitBytes: 2, at: start)
                guard count <= decoder.maxEntries else { throw CBORError(.tooLarge, at: start) }
                var pairs: [CBORPair] = []
                pairs.reserveCapacity(count)
                for _ in 0..<count {
                    let keyStart = position
                    let key = try item(depth: depth + 1)
                    guard !pairs.contains(where: { $0.key == key }) else { throw CBORError(.duplicateKey, at: keyStart) }
                    pairs.append(CBORPair(key: key, value: try item(depth: depth + 1)))
                }
                return .map(pairs)
            }
        }
    }
}
