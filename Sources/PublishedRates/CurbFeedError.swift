import PriceJSON

/// A mistake in a CDS feed, named the way a person fixes it: the file, the JSON path, what is wrong.
///
/// `description` is the one line `pricesvc import-rates` prints, e.g.
/// `city.json: data.policies[3].rules[0].rate[1].rate_unit: unknown unit "fortnight"`.
public struct CurbFeedError: Error, Sendable, Equatable, CustomStringConvertible {
    public var file: String
    /// Dotted JSON path from the document's root (`data.zones[2].curb_zone_id`); empty for the document.
    public var path: String
    public var message: String

    public init(file: String, path: String, message: String) {
        self.file = file
        self.path = path
        self.message = message
    }

    public var description: String {
        path.isEmpty ? "\(file): \(message)" : "\(file): \(path): \(message)"
    }
}

/// `text` as a JSON string literal, for messages that quote what the feed said (through `JSONValue`, the
/// public way to write JSON).
func quotedJSON(_ text: String) -> String {
    JSONValue.string(text).serialized()
}

extension JSONValue {
    /// A short name of the kind of value, for messages a person reads ("expected a string, got an array").
    /// Only import-rates names JSON kinds to people, so it lives here rather than in PriceJSON.
    var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
