import PriceJSON

/// Request bodies are parsed in one place so every route gives the same 400 for bad JSON.
enum JSONBody {
    static let maxDepth = 16

    static func parse(_ body: [UInt8]) -> Result<JSONValue, APIError> {
        guard !body.isEmpty else {
            return .failure(.badRequest("PGRST102", "Empty or invalid json", details: "The request body is empty"))
        }
        do {
            return .success(try JSONValue.parse(body, maxBytes: body.count, maxDepth: maxDepth))
        } catch {
            return .failure(.badRequest("PGRST102", "Empty or invalid json", details: "\(error)"))
        }
    }

    /// A key or value echoed back in an error message, with control characters made visible.
    static func printable(_ text: String) -> String {
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
