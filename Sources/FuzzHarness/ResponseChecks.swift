import PriceHTTP
import PriceJSON

/// Promises every answer keeps, whatever was asked.
public enum ResponseChecks {
    public static func check(_ handled: ServiceHarness.Handled, input: some Sequence<UInt8>) {
        let response = handled.response
        let context = { "status \(response.status) for input \(printable(input))" }
        fuzzRequire((100..<600).contains(response.status), "status out of range: \(context())")
        // A request decided where it arrives never fails on the server's side: bad input is a 4xx.
        fuzzRequire(!handled.decidedNow || response.status < 500, "5xx without the database: \(context())")
        for (name, value) in response.headers {
            fuzzRequire(!(name + value).utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 },
                        "control character in header \(printable(name)): \(printable(value)): \(context())")
        }
        let contentType = response.header("content-type")?.lowercased() ?? ""
        var json: JSONValue?
        if contentType.contains("json"), !response.body.isEmpty {
            do {
                json = try JSONParser(maxBytes: Int.max, maxDepth: 64).parse(response.body)
            } catch {
                fuzzRequire(false, "a \(contentType) body that is not JSON (\(error)): \(printable(response.body)); \(context())")
            }
        }
        if let contentRange = response.header("content-range") {
            checkContentRange(contentRange, status: response.status, body: json, context: context)
        }
    }

    /// `a-b/n`, `a-b/*`, `*/n` or `*/*`, with a ≤ b (and b < n when counted), and a JSON array page of
    /// exactly b-a+1 rows.
    static func checkContentRange(_ text: String, status: Int, body: JSONValue?, context: () -> String) {
        let halves = text.split(separator: "/", omittingEmptySubsequences: false)
        fuzzRequire(halves.count == 2, "Content-Range \(printable(text)): \(context())")
        let total: Int? = halves[1] == "*" ? nil : Int(halves[1])
        fuzzRequire(halves[1] == "*" || (total ?? -1) >= 0, "Content-Range total \(printable(text)): \(context())")
        guard halves[0] != "*" else { return }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let lower = Int(bounds[0]), let upper = Int(bounds[1]) else {
            fuzzRequire(false, "Content-Range range \(printable(text)): \(context())")
            return
        }
        fuzzRequire(0 <= lower && lower <= upper, "Content-Range with lower > upper \(printable(text)): \(context())")
        if let total { fuzzRequire(upper < total, "Content-Range past its total \(printable(text)): \(context())") }
        if (200..<300).contains(status), case .array(let rows)? = body {
            fuzzRequire(rows.count == upper - lower + 1,
                        "Content-Range \(printable(text)) over \(rows.count) rows: \(context())")
        }
    }
}
