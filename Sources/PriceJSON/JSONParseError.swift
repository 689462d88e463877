/// Why a document was rejected, and where.
///
/// `message` is written for a person sending the request ("unexpected character '}' at byte 17") and is
/// safe to return to the client that sent the document: it quotes at most a short, escaped key.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case unexpectedCharacter, unexpectedEnd, trailingData, invalidUTF8, invalidEscape
            case loneSurrogate, controlCharacter, invalidNumber, duplicateKey, tooDeep, tooLarge
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        public static let unexpectedCharacter = Code(.unexpectedCharacter)
        public static let unexpectedEnd = Code(.unexpectedEnd)
        /// A complete value followed by something other than whitespace.
        public static let trailingData = Code(.trailingData)
        public static let invalidUTF8 = Code(.invalidUTF8)
        public static let invalidEscape = Code(.invalidEscape)
        /// A `\uD800`-`\uDFFF` escape that is not half of a valid pair.
        public static let loneSurrogate = Code(.loneSurrogate)
        /// A raw byte below 0x20 inside a string.
        public static let controlCharacter = Code(.controlCharacter)
        /// Leading zeros, a bare `-`, a missing fraction or exponent digit.
        public static let invalidNumber = Code(.invalidNumber)
        public static let duplicateKey = Code(.duplicateKey)
        public static let tooDeep = Code(.tooDeep)
        public static let tooLarge = Code(.tooLarge)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// Zero-based offset of the offending byte in the input.
    public let offset: Int
    public let message: String

    public init(code: Code, offset: Int, message: String) {
        self.code = code
        self.offset = offset
        self.message = message
    }

    public var description: String { message }
}

extension JSONParseError {
    static func unexpected(_ byte: UInt8, at offset: Int, expected: String) -> JSONParseError {
        JSONParseError(
            code: .unexpectedCharacter, offset: offset,
            message: "unexpected \(describe(byte)) at byte \(offset) (expected \(expected))")
    }

    static func unexpectedEnd(at offset: Int, expected: String) -> JSONParseError {
        JSONParseError(
            code: .unexpectedEnd, offset: offset,
            message: "unexpected end of input at byte \(offset) (expected \(expected))")
    }

    /// Printable ASCII is quoted as itself; anything else is shown as hex so the message stays one clean line.
    static func describe(_ byte: UInt8) -> String {
        if byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "'") {
            return "character '\(Character(Unicode.Scalar(byte)))'"
        }
        return "byte 0x" + hex(byte)
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
