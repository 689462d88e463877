import PriceHTTPMessage

/// Which web pages may call the API from a browser, answered the way Supabase's gateway and
/// PostgREST answer: a preflight is 204 with the methods and headers the SDKs send, and every
/// answer to an allowed origin carries `Access-Control-Allow-Origin` and exposes the headers an
/// SDK reads (`Content-Range` for counts, `X-Request-Id`). Pure: the service applies it.
public struct CORSPolicy: Sendable, Equatable {
    public enum Origins: Sendable, Equatable {
        /// `*`: any page (the SDKs authenticate with headers, never cookies).
        case any
        /// Only these exact origins (`scheme://host[:port]`), compared case-insensitively.
        case only(Set<String>)
    }

    public var origins: Origins

    /// The request headers supabase-js, supabase-py and supabase-swift send.
    static let allowedHeaders = ["apikey", "authorization", "content-type", "prefer", "range", "x-client-info",
                                 "accept-profile", "content-profile", "x-supabase-api-version", "x-request-id"]
    static let exposedHeaders = ["Content-Range", "X-Request-Id", "Preference-Applied", "Retry-After", "Content-Profile"]
    /// The header values, joined once.
    static let allowedHeaderList = allowedHeaders.joined(separator: ", ")
    static let exposedHeaderList = exposedHeaders.joined(separator: ", ")
    /// How long a browser may reuse a preflight (Chromium caps it at 2 hours).
    static let maxAgeSeconds = 7200

    public init(origins: Origins = .any) {
        self.origins = origins
    }

    /// Parses the setting: `*`, or a comma-separated list of origins such as
    /// `https://app.example.org,http://localhost:5173`; a malformed one fails with the reason.
    public static func parse(_ text: String) -> Result<CORSPolicy, CORSPolicyError> {
        let items = text.split(separator: ",").map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        if items == ["*"] { return .success(CORSPolicy(origins: .any)) }
        guard !items.isEmpty else { return .failure(CORSPolicyError(description: "no origin given (use * for any)")) }
        var set = Set<String>()
        for item in items {
            guard isOrigin(item) else {
                return .failure(CORSPolicyError(description:
                    "'\(item)' is not an origin like https://app.example.org or http://localhost:5173 (scheme, host, optional port; no path)"))
            }
            set.insert(item.lowercased())
        }
        return .success(CORSPolicy(origins: .only(set)))
    }

    static func isOrigin(_ text: String) -> Bool {
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") { rest = lower.dropFirst(8) } else if lower.hasPrefix("http://") { rest = lower.dropFirst(7) } else { return false }
        guard !rest.isEmpty, !rest.contains("/"), !rest.contains("?"), !rest.contains("#"), !rest.contains("@") else { return false }
        return rest.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7f }
    }

    func allows(_ origin: String) -> Bool {
        switch origins {
        case .any: return true
        case .only(let set): return set.contains(origin.lowercased())
        }
    }

    /// Headers for an answer to a request from `origin` (none for a request without one, or from
    /// an origin that is not allowed: the browser then keeps the answer from the page).
    func responseHeaders(origin: String?) -> [(String, String)] {
        guard let origin, allows(origin) else { return varyHeader }
        return allowOriginHeaders(origin) + [("Access-Control-Expose-Headers", Self.exposedHeaderList)]
    }

    /// The answer to a preflight for a path that serves `allow`. Decided without the apikey and
    /// without the database: browsers send no custom headers with a preflight.
    func preflight(origin: String, allow: [String]) -> HTTPResponse {
        guard allows(origin) else {
            return APIError(.corsOriginRefused(origin: origin)).response
                .adding(varyHeader)
        }
        return HTTPResponse(status: 204, headers: allowOriginHeaders(origin) + [
            ("Access-Control-Allow-Methods", allow.joined(separator: ", ")),
            ("Access-Control-Allow-Headers", Self.allowedHeaderList),
            ("Access-Control-Max-Age", String(Self.maxAgeSeconds)),
            ("Allow", allow.joined(separator: ", ")),
        ])
    }

    private func allowOriginHeaders(_ origin: String) -> [(String, String)] {
        switch origins {
        case .any: return [("Access-Control-Allow-Origin", "*")]
        case .only: return [("Access-Control-Allow-Origin", origin), ("Vary", "Origin")]
        }
    }

    /// With a list, answers differ by `Origin`, so caches must keep them apart.
    private var varyHeader: [(String, String)] {
        if case .only = origins { return [("Vary", "Origin")] }
        return []
    }
}

public struct CORSPolicyError: Error, CustomStringConvertible, Sendable {
    public let description: String
}

extension HTTPResponse {
    func adding(_ extra: [(String, String)]) -> HTTPResponse {
        var copy = self
        copy.headers += extra
        return copy
    }
}
