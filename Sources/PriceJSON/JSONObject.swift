/// A JSON object that remembers member order and never holds the same key twice.
///
/// Storage is an array: request bodies and claims have a handful of members, where a linear scan beats
/// hashing, and order matters for echoing rows back and for deterministic tokens. Equality is
/// order-sensitive (same members in the same order).
public struct JSONObject: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var key: String
        public var value: JSONValue

        public init(key: String, value: JSONValue) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var members: [Member]

    public init() {
        members = []
    }

    /// - Important: a repeated key traps, like `Dictionary(uniqueKeysWithValues:)`; use the key subscript
    ///   to overwrite instead.
    public init(uniqueKeysWithValues pairs: some Sequence<(String, JSONValue)>) {
        members = []
        for (key, value) in pairs {
            precondition(index(forKey: key) == nil, "duplicate JSON object key \"\(key)\"")
            members.append(Member(key: key, value: value))
        }
    }

    /// For the parser, which has already rejected duplicates.
    init(uncheckedUniqueMembers members: [Member]) {
        self.members = members
    }

    public var keys: [String] { members.map(\.key) }

    public func index(forKey key: String) -> Int? {
        members.firstIndex { $0.key == key }
    }

    /// Reading returns the member's value. Writing replaces a member in place (keeping its position),
    /// appends a new one at the end, or removes it when the new value is `nil`.
    public subscript(key: String) -> JSONValue? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let position = index(forKey: key) {
                if let newValue {
                    members[position].value = newValue
                } else {
                    members.remove(at: position)
                }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }
}

extension JSONObject: RandomAccessCollection {
    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Member { members[position] }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(uniqueKeysWithValues: elements)
    }
}
