import PriceHTTP

/// The framing decision (`RequestFraming.decide`, RFC 9112 §6.3) over header fields as libmicrohttpd
/// hands them: each input line is one field, its name everything before the first colon (spaces
/// kept, as libmicrohttpd keeps them), its value the rest without leading blanks. Beyond not
/// crashing, every decision is checked against the fields themselves:
/// - `.none`: no field is named Content-Length or Transfer-Encoding;
/// - `.length(n)`: no Transfer-Encoding, every name a token, and every comma-separated Content-Length
///   item all digits and equal to n (saturated at Int.max);
/// - `.chunked`: no Content-Length, and exactly one coding, `chunked`;
/// - `.invalid`: some field really is ambiguous, which the checks above would otherwise have accepted.
func fuzzRequestFraming(_ input: UnsafeRawBufferPointer) {
    let bytes = input
    var fields: [(String, String)] = []
    for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
        let text = String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...], as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { continue }
        let value = text[text.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
        fields.append((String(text[..<colon]), String(value)))
    }
    let decision = RequestFraming.decide(fields)
    let lengths = fields.filter { $0.0.lowercased() == "content-length" }
        .flatMap { $0.1.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " \t") } }
    let codings = fields.filter { $0.0.lowercased() == "transfer-encoding" }
        .flatMap { $0.1.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: " \t") } }
    let namesAreTokens = fields.allSatisfy { field in
        !field.0.isEmpty && field.0.unicodeScalars.allSatisfy { $0.isASCII && !" \t\"(),/:;<=>?@[\\]{}".unicodeScalars.contains($0) && $0.value > 0x20 && $0.value < 0x7F }
    }
    let hasTE = fields.contains { $0.0.lowercased() == "transfer-encoding" }
    switch decision {
    case .none:
        fuzzRequire(namesAreTokens && lengths.isEmpty && !hasTE, "none, with framing fields \(fields)")
    case .length(let length):
        fuzzRequire(namesAreTokens && !hasTE && !lengths.isEmpty, "length \(length) from \(fields)")
        for item in lengths {
            fuzzRequire(!item.isEmpty && item.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }, "length item '\(item)' is not digits")
            fuzzRequire(saturated(item) == length, "length item '\(item)' is not \(length)")
        }
    case .chunked:
        fuzzRequire(namesAreTokens && lengths.isEmpty && codings.count == 1 && codings[0].lowercased() == "chunked",
                    "chunked from \(fields)")
    case .invalid:
        let consistent = namesAreTokens
            && (hasTE ? lengths.isEmpty && codings.count == 1 && codings[0].lowercased() == "chunked"
                      : lengths.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }
                        && Set(lengths.map(saturated)).count <= 1)
        fuzzRequire(!consistent, "refused consistent framing \(fields)")
    }
    return
}

private func saturated(_ digits: String) -> Int {
    var value = 0
    for byte in digits.utf8 {
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(Int(byte) - 0x30)
        value = o1 || o2 ? .max : sum
    }
    return value
}

private extension StringProtocol {
    func trimmingCharacters(in set: String) -> String {
        let blanks = Set(set)
        return String(drop { blanks.contains($0) }.reversed().drop { blanks.contains($0) }.reversed())
    }
}
