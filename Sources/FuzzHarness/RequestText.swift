import PriceHTTP

/// A request written the way a fuzz corpus file holds one: an HTTP/1.1 head without the version,
/// then the body.
///
///     GET /rest/v1/rpc/price_median?location_id=x&select=median_cents
///     Range: 0-9
///     Accept: text/csv
///
///     {"body": "after the blank line"}
///
/// Lines end in `\n` or `\r\n`. The query string is split and percent-decoded as libmicrohttpd does
/// for the server (`+` is a space). Header names are lower-cased and the last one wins, as in
/// `HTTPRequest`. A line without a colon is skipped, so every input is some request.
public struct RequestText: Sendable, Equatable {
    public var method: String
    public var path: String
    public var query: [(name: String, value: String)]
    public var headers: [String: String]
    public var body: [UInt8]

    public static func == (lhs: RequestText, rhs: RequestText) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.headers == rhs.headers && lhs.body == rhs.body
            && lhs.query.map { [$0.name, $0.value] } == rhs.query.map { [$0.name, $0.value] }
    }

    /// At most this many query arguments are kept, as the server keeps (`HTTPServer`).
    public static let maxQueryArguments = 64

    public init(_ bytes: some Collection<UInt8>) {
        let bytes = Array(bytes)
        var lines: [ArraySlice<UInt8>] = []
        var bodyStart = bytes.count
        var lineStart = 0
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "\n") {
                var line = bytes[lineStart..<index]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                lineStart = index + 1
                if line.isEmpty, !lines.isEmpty {
                    bodyStart = lineStart
                    break
                }
                lines.append(line)
            }
            index += 1
        }
        if bodyStart == bytes.count, lineStart < bytes.count {
            lines.append(bytes[lineStart...])
        }
        body = Array(bytes[bodyStart...])

        let requestLine = lines.first.map { String(decoding: $0, as: UTF8.self) } ?? ""
        let parts = requestLine.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: false)
        method = parts.count == 2 ? String(parts[0]) : "GET"
        let target = parts.count == 2 ? parts[1] : Substring(requestLine)
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = Array(QueryString.arguments(target[target.index(after: mark)...]).prefix(Self.maxQueryArguments))
        } else {
            path = String(target)
            query = []
        }
        headers = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { continue }
            let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
            var value = line[(colon + 1)...]
            while value.first == UInt8(ascii: " ") || value.first == UInt8(ascii: "\t") { value = value.dropFirst() }
            while value.last == UInt8(ascii: " ") || value.last == UInt8(ascii: "\t") { value = value.dropLast() }
            headers[name] = String(decoding: value, as: UTF8.self)
        }
    }

    public func request(clientIP: String = "192.0.2.1") -> HTTPRequest {
        HTTPRequest(method: method, path: path, headers: headers, query: query, body: body, clientIP: clientIP)
    }
}

/// `application/x-www-form-urlencoded` as libmicrohttpd reads a query string.
public enum QueryString {
    public static func arguments(_ text: Substring) -> [(name: String, value: String)] {
        guard !text.isEmpty else { return [] }
        return text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return (decoded(pair[..<equals]), decoded(pair[pair.index(after: equals)...]))
            }
            return (decoded(pair), "")
        }
    }

    /// `%XX` is the byte XX, `+` a space; a `%` not followed by two hex digits stays as it is.
    public static func decoded(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
               let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The inverse for any text: every byte outside unreserved characters as `%XX`.
    public static func encoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".utf8)
                out += "%"
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(byte & 0xF)]))
            }
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
