/// A request's header fields in the order received. Looking a name up scans from the end, so the last
/// value of a repeated name wins: a request carries a handful of fields, and comparing lengths, then a
/// few short strings, costs less than hashing every name into a dictionary on every request. (How many
/// fields fit is bounded by libmicrohttpd's per-connection memory, so a lookup's cost is bounded too.)
public struct HTTPHeaders: Sendable, ExpressibleByDictionaryLiteral {
    /// Every field as received (the server lower-cases names), repeats included.
    public private(set) var fields: [(String, String)]

    public init() { fields = [] }

    public init(_ dictionary: [String: String]) {
        fields = dictionary.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public init(dictionaryLiteral elements: (String, String)...) {
        self.init([String: String](elements, uniquingKeysWith: { $1 }))
    }

    public mutating func append(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// The last value sent under `name` (names compare exactly: the server lower-cases them); setting
    /// replaces every field of that name, and nil removes them.
    public subscript(name: String) -> String? {
        get {
            let length = name.utf8.count
            var index = fields.endIndex
            while index > fields.startIndex {
                index -= 1
                if fields[index].0.utf8.count == length, fields[index].0 == name { return fields[index].1 }
            }
            return nil
        }
        set {
            fields.removeAll { $0.0 == name }
            if let newValue { fields.append((name, newValue)) }
        }
    }
}

/// A request as the handlers see it: parsed once by the server shell, no C types.
public struct HTTPRequest: Sendable {
    public var method: String
    /// Path without the query string, percent-decoding left to the router.
    public var path: String
    /// Header names lower-cased; the last value wins for repeated headers.
    public var headers: HTTPHeaders
    /// Query arguments in the order they appeared.
    public var query: [(name: String, value: String)]
    public var body: [UInt8]
    /// The address the rate limits and sign-up limits are keyed by (after trusted-proxy resolution).
    public var clientIP: String
    public var requestID: String

    public init(method: String, path: String, headers: [String: String] = [:],
                query: [(name: String, value: String)] = [], body: [UInt8] = [],
                clientIP: String = "127.0.0.1", requestID: String = "-") {
        self.method = method
        self.path = path
        self.headers = HTTPHeaders(headers)
        self.query = query
        self.body = body
        self.clientIP = clientIP
        self.requestID = requestID
    }

    public func header(_ name: String) -> String? { headers[name] }

    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }
}

public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON body; `contentType` names a more specific JSON media type (e.g. OpenAPI's), so the
    /// answer carries exactly one `Content-Type`.
    public static func json(_ status: Int, _ text: String, headers: [(String, String)] = [],
                            contentType: String = "application/json; charset=utf-8") -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(text.utf8))
    }

    public static func empty(_ status: Int, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers)
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.status == rhs.status && lhs.body == rhs.body
            && lhs.headers.map { "\($0.0):\($0.1)" } == rhs.headers.map { "\($0.0):\($0.1)" }
    }
}
