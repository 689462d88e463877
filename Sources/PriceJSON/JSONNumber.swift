/// A JSON number, kept as the literal text it was written with.
///
/// Keeping the text means nothing is rounded on the way through, and the HTTP layer can tell
/// `12`, `12.0`, `1.2e1` and `1e400` apart when a column wants an exact integer.
/// Equality compares the text: `1` and `1.0` are different values here.
public struct JSONNumber: Sendable, Equatable, Hashable, CustomStringConvertible {
    /// The literal, always valid RFC 8259 number syntax.
    public let text: String

    /// Only for text the parser (or this type) has already checked.
    init(uncheckedLiteral text: String) {
        self.text = text
    }

    public init(_ value: Int64) {
        text = String(value)
    }

    public init(_ value: Int) {
        text = String(value)
    }

    /// `nil` for NaN and infinities, which JSON cannot represent.
    public init?(_ value: Double) {
        guard value.isFinite else { return nil }
        // Swift's shortest round-trip description ("0.1", "1e+20", "-0.0") is valid JSON number syntax.
        text = value.description
    }

    /// `nil` unless `literal` is exactly one RFC 8259 number (no whitespace, no leading zeros, no NaN).
    public init?(literal: String) {
        guard case .number(let number)? = try? JSONParser(maxBytes: literal.utf8.count, maxDepth: 1)
            .parse(literal), number.text == literal
        else { return nil }
        self = number
    }

    public var description: String { text }

    /// The exact integer, or `nil`.
    ///
    /// Only literals written as integers count: `12` and `-0` do, `12.0`, `1e3` and `12.5` do not, nor
    /// anything outside `Int64`. That matches what PostgreSQL's integer input accepts, so a price is either
    /// taken exactly as written or rejected, never rounded.
    public var asInt64: Int64? {
        var utf8 = text.utf8[...]
        let negative = utf8.first == UInt8(ascii: "-")
        if negative { utf8 = utf8.dropFirst() }
        guard !utf8.isEmpty else { return nil }
        // Accumulate negatively so that Int64.min is representable.
        var value: Int64 = 0
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (shifted, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowB) = shifted.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            if overflowA || overflowB { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    /// The nearest `Double`, or `nil` when the literal is beyond `Double`'s range (`1e400`).
    public var asDouble: Double? {
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }
}
