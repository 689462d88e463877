import PriceJSON

/// Request bodies are parsed in one place so every route gives the same 400 for bad JSON.
package enum JSONBody {
    package static let maxDepth = 16

    package static func parse(_ body: [UInt8]) -> Result<JSONValue, APIError> {
        guard !body.isEmpty else {
            return .failure(APIError(.invalidJSON(details: "The request body is empty")))
        }
        do {
            return .success(try JSONValue.parse(body, maxBytes: body.count, maxDepth: maxDepth))
        } catch {
            return .failure(APIError(.invalidJSON(details: "\(error)")))
        }
    }

    /// `application/json`, with or without parameters (`; charset=utf-8`), in any case.
    package static func isJSONContentType(_ value: String?) -> Bool {
        guard let value else { return false }
        let media = Substring(value.utf8.prefix { $0 != UInt8(ascii: ";") })
        return media.trimmingSpaces.isASCIICaseInsensitive("application/json")
    }

    /// A key or value echoed back in an error message, with control characters made visible.
    package static func printable(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars.prefix(80) {
            if scalar.value < 0x20 || scalar.value == 0x7f {
                out += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
