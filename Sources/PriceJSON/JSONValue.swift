/// A JSON document as parsed or about to be serialized.
///
/// Objects keep their members in document order (see ``JSONObject``) so that what a client sent can be
/// echoed back in the same shape, and so that hand-built output such as JWT claims is deterministic.
/// Numbers keep their literal text (see ``JSONNumber``) so that no precision is lost on the way through.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// The member named `key` when this is an object; `nil` for a missing key or a non-object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var numberValue: JSONNumber? {
        if case .number(let value) = self { return value }
        return nil
    }

    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }
}

/// Literals make hand-built responses and test fixtures read like the JSON they produce.
extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .number(JSONNumber(value)) }

    /// - Important: a non-finite float literal traps, because JSON cannot represent it.
    public init(floatLiteral value: Double) {
        guard let number = JSONNumber(value) else {
            preconditionFailure("JSON cannot represent \(value)")
        }
        self = .number(number)
    }

    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }

    /// - Important: a repeated key traps, like `Dictionary(uniqueKeysWithValues:)`.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(uniqueKeysWithValues: elements))
    }
}
