/// `Prefer`, comma-separated. pricesvc always handles preferences as PostgREST does under
/// `handling=strict`: one it does not act on is 400 PGRST122 naming it, never silently ignored.
package struct PreferHeader: Sendable, Equatable {
    private(set) var preferences: Set<String> = []

    /// For inserts: what `return=` says, `count=exact`, and preferences that describe what happens
    /// anyway (`missing=default`: a column not sent gets its default).
    package static let forInserts: Set<String> = ["return=minimal", "return=representation", "count=exact", "missing=default",
                                          "handling=strict", "handling=lenient", "tx=commit"]
    /// For function calls: `count=exact`; `return=representation` is what supabase-py's `.select()` adds.
    package static let forFunctions: Set<String> = ["count=exact", "return=representation", "handling=strict", "handling=lenient", "tx=commit"]

    /// How an empty list item is named in the error's details (once, however many there are).
    package static let emptyItem = "(an empty item)"

    package static func parse(_ header: String?, accepting accepted: Set<String>) -> Result<PreferHeader, APIError> {
        var parsed = PreferHeader()
        // No header and an empty one both mean no preference; an empty item in a list is refused like
        // any preference not acted on (the OpenAPI document lists the accepted forms, and no empty item).
        guard let header, !header.trimmingSpaces.isEmpty else { return .success(parsed) }
        var invalid: [String] = []
        for part in header.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
            let preference = Substring(part).trimmingSpaces
            if preference.isEmpty {
                if !invalid.contains(Self.emptyItem) { invalid.append(Self.emptyItem) }
            } else if accepted.contains(preference) {
                parsed.preferences.insert(preference)
            } else {
                invalid.append(JSONBody.printable(preference))
            }
        }
        guard invalid.isEmpty else {
            return .failure(APIError(.invalidPreferences(invalid: invalid, accepted: Array(accepted))))
        }
        return .success(parsed)
    }

    package func contains(_ preference: String) -> Bool { preferences.contains(preference) }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs (read as bytes: header text is mostly ASCII, and
    /// Character-wise trimming costs a grapheme break per step on every request).
    package var trimmingSpaces: String {
        let utf8 = Substring(self).utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while start < end {
            let last = utf8.index(before: end)
            guard utf8[last] == 0x20 || utf8[last] == 0x09 else { break }
            end = last
        }
        return String(Substring(utf8[start..<end]))
    }

    /// Equal to `lowercaseASCII` (which must be lower-case ASCII) ignoring the case of ASCII letters.
    /// Inlinable, so it is specialised where it is called: unspecialised, it walked `utf8` through
    /// protocol witnesses at some 6 000 instructions for "bearer".
    @inlinable package func isASCIICaseInsensitive(_ lowercaseASCII: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercaseASCII.utf8Start, count: lowercaseASCII.utf8CodeUnitCount)
        return utf8.elementsEqual(expected) { byte, lower in
            byte == lower || (byte >= 0x41 && byte <= 0x5A && byte | 0x20 == lower)
        }
    }
}
