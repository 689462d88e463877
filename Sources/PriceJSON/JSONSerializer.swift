/// Compact serialization (no whitespace), members in stored order, through `JSONWriter`.
extension JSONValue {
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    public func serializedBytes() -> [UInt8] {
        var writer = JSONWriter(capacity: 64)
        writer.value(self)
        return writer.bytes
    }
}

extension JSONObject {
    public func serialized() -> String {
        JSONValue.object(self).serialized()
    }
}

/// String escaping, for `JSONWriter`.
///
/// Escapes exactly what RFC 8259 requires — `"`, `\` and U+0000–U+001F — using the short forms where they
/// exist. Everything else, including non-ASCII text, passes through as UTF-8.
enum JSONString {
    /// The escaped content, without surrounding quotes.
    static func escape(_ string: String) -> String {
        var output: [UInt8] = []
        appendEscaped(string, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    /// The escaped content between double quotes: a complete JSON string literal.
    static func quoted(_ string: String) -> String {
        var output: [UInt8] = []
        appendQuoted(string, to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    static func appendQuoted(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        appendEscaped(string, to: &output)
        output.append(UInt8(ascii: "\""))
    }

    static func appendEscaped(_ string: String, to output: inout [UInt8]) {
        var string = string
        string.withUTF8 { appendEscaped(bytes: $0, to: &output) }
    }

    /// Runs without anything to escape are copied whole. No `reserveCapacity` here: reserving the exact
    /// size on every call defeats the array's geometric growth, and a body is written in many calls.
    static func appendEscaped(bytes: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        forEachRun(of: bytes) { run, escaped in
            output.append(contentsOf: run)
            if let escaped { appendEscape(for: escaped, to: &output) }
        }
    }

    /// The one rule of what a JSON string escapes: splits `bytes` into runs that are copied as they are,
    /// each followed by the byte that must be escaped (`"`, `\` or a control character), or by nil after
    /// the last run. `JSONWriter`'s buffer and `appendEscaped` both write through it.
    @inline(__always)
    static func forEachRun(of bytes: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>, UInt8?) -> Void) {
        var runStart = 0
        for index in 0..<bytes.count {
            let byte = bytes[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            body(UnsafeBufferPointer(rebasing: bytes[runStart..<index]), byte)
            runStart = index + 1
        }
        body(UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]), nil)
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The escape of one byte that must not appear raw in a JSON string (`JSONBytes` uses it too).
    static func appendEscape(for byte: UInt8, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): output.append(byte)
        case 0x08: output.append(UInt8(ascii: "b"))
        case 0x0C: output.append(UInt8(ascii: "f"))
        case 0x0A: output.append(UInt8(ascii: "n"))
        case 0x0D: output.append(UInt8(ascii: "r"))
        case 0x09: output.append(UInt8(ascii: "t"))
        default:
            output.append(contentsOf: "u00".utf8)
            output.append(hexDigits[Int(byte >> 4)])
            output.append(hexDigits[Int(byte & 0x0F)])
        }
    }
}
