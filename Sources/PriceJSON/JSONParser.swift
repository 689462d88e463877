/// A strict RFC 8259 parser that works on raw bytes.
///
/// It runs on every request body and every JWT segment, so it reads bytes directly (no Foundation, no
/// intermediate `String` of the whole input) and rejects, rather than repairs, anything outside the RFC:
/// trailing data, invalid UTF-8, lone surrogate escapes, raw control characters in strings, leading zeros,
/// `NaN`/`Infinity`, and — because two parsers can disagree about which one wins — duplicate object keys.
/// Input size and nesting depth are bounded so a hostile document costs at most linear time and a
/// fixed amount of stack.
public struct JSONParser: Sendable {
    public static let defaultMaxDepth = 32

    /// Larger inputs fail with `.tooLarge` before a byte is read.
    public var maxBytes: Int
    /// Arrays and objects nested deeper than this fail with `.tooDeep`.
    public var maxDepth: Int

    public init(maxBytes: Int, maxDepth: Int = JSONParser.defaultMaxDepth) {
        self.maxBytes = maxBytes
        self.maxDepth = maxDepth
    }

    public func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { parseResult($0) }
        return try result.get()
    }

    public func parse(_ buffer: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONValue {
        try parseResult(buffer.assumingMemoryBound(to: UInt8.self)).get()
    }

    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        var text = text
        let result = text.withUTF8 { parseResult($0) }
        return try result.get()
    }

    private func parseResult(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONParseError> {
        guard bytes.count <= maxBytes else {
            return .failure(
                JSONParseError(
                    code: .tooLarge, offset: maxBytes,
                    message: "document of \(bytes.count) bytes exceeds the limit of \(maxBytes) bytes"))
        }
        var parser = ByteParser(bytes: bytes, maxDepth: maxDepth)
        do {
            return .success(try parser.parseDocument())
        } catch {
            return .failure(error)
        }
    }
}

extension JSONValue {
    /// Parses `bytes` with a ``JSONParser`` of the given limits.
    public static func parse(
        _ bytes: [UInt8], maxBytes: Int, maxDepth: Int = JSONParser.defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        try JSONParser(maxBytes: maxBytes, maxDepth: maxDepth).parse(bytes)
    }
}

private enum ASCII {
    static let quote = UInt8(ascii: "\"")
    static let backslash = UInt8(ascii: "\\")
    static let slash = UInt8(ascii: "/")
    static let comma = UInt8(ascii: ",")
    static let colon = UInt8(ascii: ":")
    static let openBrace = UInt8(ascii: "{")
    static let closeBrace = UInt8(ascii: "}")
    static let openBracket = UInt8(ascii: "[")
    static let closeBracket = UInt8(ascii: "]")
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let zero = UInt8(ascii: "0")
    static let nine = UInt8(ascii: "9")
    static let lowerE = UInt8(ascii: "e")
    static let upperE = UInt8(ascii: "E")
    static let lowerU = UInt8(ascii: "u")
}

/// The parsing state over one contiguous input. Recursive descent; `depth` bounds the recursion.
private struct ByteParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let maxDepth: Int
    var index = 0
    var depth = 0
    /// Reused for strings that need unescaping or UTF-8 validation, so each one does not allocate twice.
    var scratch: [UInt8] = []

    /// Below this many members a linear scan finds duplicates faster than hashing.
    static let linearDuplicateScanLimit = 16

    init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONParseError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if index < bytes.count {
            throw JSONParseError(
                code: .trailingData, offset: index,
                message: "unexpected \(JSONParseError.describe(bytes[index])) at byte \(index) after the end of the JSON value")
        }
        return value
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(JSONParseError) -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: "a value") }
        switch bytes[index] {
        case ASCII.openBrace: return .object(try parseObject())
        case ASCII.openBracket: return .array(try parseArray())
        case ASCII.quote: return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case ASCII.minus, ASCII.zero...ASCII.nine:
            return .number(try parseNumber())
        case let byte:
            throw .unexpected(byte, at: index, expected: "a value")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let expected = "'\(literal)'"
        for i in 0..<literal.utf8CodeUnitCount {
            guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: expected) }
            guard bytes[index] == literal.utf8Start[i] else {
                throw .unexpected(bytes[index], at: index, expected: expected)
            }
            index += 1
        }
    }

    mutating func enterContainer() throws(JSONParseError) {
        depth += 1
        if depth > maxDepth {
            throw JSONParseError(
                code: .tooDeep, offset: index,
                message: "arrays and objects nested deeper than \(maxDepth) levels at byte \(index)")
        }
        index += 1
    }

    mutating func parseArray() throws(JSONParseError) -> [JSONValue] {
        try enterContainer()
        defer { depth -= 1 }
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == ASCII.closeBracket {
            index += 1
            return elements
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: "',' or ']'") }
            let byte = bytes[index]
            index += 1
            if byte == ASCII.comma { continue }
            if byte == ASCII.closeBracket { return elements }
            throw .unexpected(byte, at: index - 1, expected: "',' or ']'")
        }
    }

    mutating func parseObject() throws(JSONParseError) -> JSONObject {
        try enterContainer()
        defer { depth -= 1 }
        var members: [JSONObject.Member] = []
        var seenKeys: Set<String>? = nil
        skipWhitespace()
        if index < bytes.count, bytes[index] == ASCII.closeBrace {
            index += 1
            return JSONObject(uncheckedUniqueMembers: members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: "a string key") }
            guard bytes[index] == ASCII.quote else {
                throw .unexpected(bytes[index], at: index, expected: "a string key")
            }
            let keyOffset = index
            let key = try parseString()
            if members.count < Self.linearDuplicateScanLimit {
                if members.contains(where: { $0.key == key }) { throw .duplicateKey(key, at: keyOffset) }
            } else {
                if seenKeys == nil { seenKeys = Set(members.map(\.key)) }
                if !seenKeys!.insert(key).inserted { throw .duplicateKey(key, at: keyOffset) }
            }
            skipWhitespace()
            guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: "':'") }
            guard bytes[index] == ASCII.colon else { throw .unexpected(bytes[index], at: index, expected: "':'") }
            index += 1
            members.append(JSONObject.Member(key: key, value: try parseValue()))
            skipWhitespace()
            guard index < bytes.count else { throw .unexpectedEnd(at: index, expected: "',' or '}'") }
            let byte = bytes[index]
            index += 1
            if byte == ASCII.comma { continue }
            if byte == ASCII.closeBrace { return JSONObject(uncheckedUniqueMembers: members) }
            throw .unexpected(byte, at: index - 1, expected: "',' or '}'")
        }
    }

    // MARK: Strings

    mutating func parseString() throws(JSONParseError) -> String {
        let openingQuote = index
        index += 1
        let start = index
        // Fast path: plain ASCII with no escapes needs no copy and no validation beyond the scan itself.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == ASCII.quote {
                let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return string
            }
            if byte == ASCII.backslash || byte < 0x20 || byte >= 0x80 { break }
            index += 1
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while true {
            guard index < bytes.count else {
                throw .unexpectedEnd(at: index, expected: "'\"' to close the string opened at byte \(openingQuote)")
            }
            let byte = bytes[index]
            switch byte {
            case ASCII.quote:
                index += 1
                // Every byte in scratch has been validated, so decoding cannot substitute anything.
                return String(decoding: scratch, as: UTF8.self)
            case ASCII.backslash:
                try parseEscape()
            case 0..<0x20:
                throw JSONParseError(
                    code: .controlCharacter, offset: index,
                    message: "unescaped control character 0x\(JSONParseError.hex(byte)) in a string at byte \(index)")
            case 0x20..<0x80:
                scratch.append(byte)
                index += 1
            default:
                try copyMultibyteScalar()
            }
        }
    }

    /// Copies one multi-byte UTF-8 sequence, checking it against Unicode's table of well-formed sequences
    /// (no overlong forms, no encoded surrogates, nothing above U+10FFFF).
    mutating func copyMultibyteScalar() throws(JSONParseError) {
        let first = bytes[index]
        var continuationCount: Int
        var secondLow: UInt8 = 0x80
        var secondHigh: UInt8 = 0xBF
        switch first {
        case 0xC2...0xDF: continuationCount = 1
        case 0xE0: continuationCount = 2; secondLow = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: continuationCount = 2
        case 0xED: continuationCount = 2; secondHigh = 0x9F
        case 0xF0: continuationCount = 3; secondLow = 0x90
        case 0xF1...0xF3: continuationCount = 3
        case 0xF4: continuationCount = 3; secondHigh = 0x8F
        default: throw .invalidUTF8(at: index)
        }
        guard index + continuationCount < bytes.count else { throw .invalidUTF8(at: index) }
        let second = bytes[index + 1]
        guard second >= secondLow, second <= secondHigh else { throw .invalidUTF8(at: index) }
        var offset = 2
        while offset <= continuationCount {
            guard bytes[index + offset] & 0xC0 == 0x80 else { throw .invalidUTF8(at: index) }
            offset += 1
        }
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[index...(index + continuationCount)]))
        index += continuationCount + 1
    }

    mutating func parseEscape() throws(JSONParseError) {
        let escapeStart = index
        guard index + 1 < bytes.count else {
            throw .unexpectedEnd(at: index + 1, expected: "an escape character")
        }
        let escaped = bytes[index + 1]
        index += 2
        switch escaped {
        case ASCII.quote, ASCII.backslash, ASCII.slash: scratch.append(escaped)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case ASCII.lowerU:
            let unit = try readHex4(escapeStart: escapeStart)
            switch unit {
            case 0xD800...0xDBFF:
                guard index + 1 < bytes.count, bytes[index] == ASCII.backslash, bytes[index + 1] == ASCII.lowerU
                else { throw .loneSurrogate(at: escapeStart) }
                index += 2
                let low = try readHex4(escapeStart: index - 2)
                guard (0xDC00...0xDFFF).contains(low) else { throw .loneSurrogate(at: escapeStart) }
                appendUTF8(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))
            case 0xDC00...0xDFFF:
                throw .loneSurrogate(at: escapeStart)
            default:
                appendUTF8(unit)
            }
        default:
            throw JSONParseError(
                code: .invalidEscape, offset: escapeStart,
                message: "invalid escape \\\(JSONParseError.describe(escaped)) at byte \(escapeStart)")
        }
    }

    mutating func readHex4(escapeStart: Int) throws(JSONParseError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard index < bytes.count else {
                throw .unexpectedEnd(at: index, expected: "four hex digits after \\u")
            }
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case ASCII.zero...ASCII.nine: digit = byte - ASCII.zero
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw JSONParseError(
                    code: .invalidEscape, offset: escapeStart,
                    message: "invalid \\u escape at byte \(escapeStart) (expected four hex digits)")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    mutating func appendUTF8(_ scalar: UInt32) {
        switch scalar {
        case 0..<0x80:
            scratch.append(UInt8(scalar))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Numbers

    mutating func parseNumber() throws(JSONParseError) -> JSONNumber {
        let start = index
        if bytes[index] == ASCII.minus { index += 1 }
        guard index < bytes.count else { throw .badNumber(at: index, byte: nil, expected: "a digit") }
        if bytes[index] == ASCII.zero {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) {
                throw JSONParseError(
                    code: .invalidNumber, offset: start,
                    message: "number with a leading zero at byte \(start)")
            }
        } else if isDigit(bytes[index]) {
            skipDigits()
        } else {
            throw .badNumber(at: index, byte: bytes[index], expected: "a digit")
        }
        if index < bytes.count, bytes[index] == ASCII.dot {
            index += 1
            try requireDigits(after: "'.'")
        }
        if index < bytes.count, bytes[index] == ASCII.lowerE || bytes[index] == ASCII.upperE {
            index += 1
            if index < bytes.count, bytes[index] == ASCII.plus || bytes[index] == ASCII.minus { index += 1 }
            try requireDigits(after: "the exponent")
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        return JSONNumber(uncheckedLiteral: text)
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= ASCII.zero && byte <= ASCII.nine }

    mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    mutating func requireDigits(after what: String) throws(JSONParseError) {
        guard index < bytes.count else { throw .badNumber(at: index, byte: nil, expected: "a digit after \(what)") }
        guard isDigit(bytes[index]) else {
            throw .badNumber(at: index, byte: bytes[index], expected: "a digit after \(what)")
        }
        skipDigits()
    }
}

extension JSONParseError {
    fileprivate static func duplicateKey(_ key: String, at offset: Int) -> JSONParseError {
        let shown = key.count > 40 ? String(key.prefix(40)) + "…" : key
        return JSONParseError(
            code: .duplicateKey, offset: offset,
            message: "duplicate key \(JSONString.quoted(shown)) at byte \(offset)")
    }

    fileprivate static func invalidUTF8(at offset: Int) -> JSONParseError {
        JSONParseError(code: .invalidUTF8, offset: offset, message: "invalid UTF-8 at byte \(offset)")
    }

    fileprivate static func loneSurrogate(at offset: Int) -> JSONParseError {
        JSONParseError(
            code: .loneSurrogate, offset: offset,
            message: "unpaired UTF-16 surrogate escape at byte \(offset)")
    }

    fileprivate static func badNumber(at offset: Int, byte: UInt8?, expected: String) -> JSONParseError {
        let found = byte.map { "unexpected \(describe($0))" } ?? "unexpected end of input"
        return JSONParseError(
            code: .invalidNumber, offset: offset, message: "\(found) at byte \(offset) in a number (expected \(expected))")
    }
}
