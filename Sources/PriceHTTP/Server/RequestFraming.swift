/// How a request's body is delimited, decided from its header fields alone (RFC 9112 §6.3), and the
/// requests whose framing two parsers could read differently, which are refused.
///
/// Why here and not in libmicrohttpd: 0.9.75 takes the first of two differing `Content-Length`s and
/// parses the rest of the body as a second request, keeps `Transfer-Encoding : chunked` as a field
/// named `Transfer-Encoding ` (and reads no chunked body), and reads a chunked body when
/// `Content-Length` is sent too. A proxy in front may read each of these the other way, which is how
/// requests are smuggled. So the shell hands the fields as libmicrohttpd parsed them to `decide`, and
/// answers `.invalid` with 400 and a closed connection.
///
/// Pure: a libFuzzer target can feed it arbitrary fields.
public enum RequestFraming: Sendable, Equatable {
    /// No `Content-Length` and no `Transfer-Encoding`: no body.
    case none
    /// A body of exactly this many bytes (saturated at `Int.max`: a larger number is simply too large).
    case length(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked
    /// Answer 400 and close the connection; the text says why, for the client.
    case invalid(String)

    /// The declared length, when there is one (what the early 413 check compares with the limit).
    public var declaredLength: Int? {
        if case .length(let length) = self { return length }
        return nil
    }

    /// Decides from every header field in the order received (names as sent, any case).
    public static func decide(_ fields: [(String, String)]) -> RequestFraming {
        var lengths: [Substring] = []
        var codings: [Substring] = []
        var sawTransferEncoding = false
        for (name, value) in fields {
            guard isToken(name) else {
                return .invalid("header field name '\(printable(name))' is not a token (whitespace before the colon?)")
            }
            if equalsIgnoringCase(name, "content-length") {
                lengths += items(value)
            } else if equalsIgnoringCase(name, "transfer-encoding") {
                sawTransferEncoding = true
                codings += items(value)
            }
        }
        if sawTransferEncoding {
            if !lengths.isEmpty { return .invalid("Content-Length and Transfer-Encoding together") }
            guard codings.count == 1, equalsIgnoringCase(codings[0], "chunked") else {
                return .invalid("Transfer-Encoding must be exactly chunked")
            }
            return .chunked
        }
        guard let first = lengths.first else { return .none }
        guard let length = parseLength(first) else {
            return .invalid("Content-Length '\(printable(String(first)))' is not a number")
        }
        for other in lengths.dropFirst() where parseLength(other) != length {
            return .invalid("differing Content-Length values")
        }
        return .length(length)
    }

    /// `1*DIGIT`, saturating instead of overflowing.
    static func parseLength(_ text: Substring) -> Int? {
        guard !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - 0x30))
            value = overflow1 || overflow2 ? .max : sum
        }
        return value
    }

    /// RFC 9110 §5.6.2 `token`: what a field name must be (so no whitespace, no control bytes).
    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                 UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                return true
            default: return false
            }
        }
    }

    /// A field's comma-separated items, split at the comma octet (RFC 9110 §5.6.1) and trimmed; a
    /// split by `Character` would cost a grapheme break per byte on every request with a body.
    private static func items(_ value: String) -> [Substring] {
        value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map { trimmed(Substring($0)) }
    }

    private static func trimmed(_ text: Substring) -> Substring {
        var slice = text.utf8[...]
        while let first = slice.first, first == 0x20 || first == 0x09 { slice = slice.dropFirst() }
        while let last = slice.last, last == 0x20 || last == 0x09 { slice = slice.dropLast() }
        return Substring(slice)
    }

    private static func equalsIgnoringCase<S: StringProtocol>(_ text: S, _ lowercase: String) -> Bool {
        text.utf8.count == lowercase.utf8.count
            && zip(text.utf8, lowercase.utf8).allSatisfy { ($0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0) == $1 }
    }

    /// A name or value quoted in an error: visible ASCII kept, the rest escaped, and short.
    static func printable(_ text: String) -> String {
        var out = ""
        for byte in text.utf8.prefix(64) {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "'"), byte != UInt8(ascii: "\\") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "\\x" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text.utf8.count > 64 ? out + "…" : out
    }
}
