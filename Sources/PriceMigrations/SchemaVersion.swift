import PriceDB

/// The schema version a migrations directory brings, and the oldest schema version whose binary still
/// serves correctly against it (pricesvc's docs/upgrading.md).
///
/// The directory declares it in `VERSION`; `migrate` records it in the database (a row of the bookkeeping
/// table `schema_migrations`, named ``recordName``) before it applies anything. A binary then
/// knows, from the row alone, whether the schema is its own, one it may serve although newer (an expand
/// step), or one it must not serve (a contract step raised `compatibleFrom` past it).
public struct SchemaVersion: Sendable, Hashable, CustomStringConvertible {
    public var version: Int
    /// The oldest `version` whose binaries still work against this schema. Equal to `version` after a
    /// contract step; lower after an expand step.
    public var compatibleFrom: Int

    public init(version: Int, compatibleFrom: Int) {
        self.version = version
        self.compatibleFrom = compatibleFrom
    }

    /// A directory without `VERSION`: every layout from before schema versions. Binaries of those
    /// releases declare nothing to the database either, so they count as version 0.
    public static let undeclared = SchemaVersion(version: 0, compatibleFrom: 0)

    /// The file in the migrations directory that declares the version.
    public static let fileName = "VERSION"

    /// The bookkeeping row that records it. Not a file name (no `.sql`), so no planner mistakes it for
    /// a migration; releases from before schema versions list it among "applied migrations without a
    /// file" and otherwise ignore it.
    public static let recordName = "schema-version"

    /// The text of the bookkeeping row (its `checksum` column).
    public var recordText: String { "version \(version) compatible-from \(compatibleFrom)" }

    public init?(recordText: String) {
        let words = recordText.split(separator: " ")
        guard words.count == 4, words[0] == "version", words[2] == "compatible-from",
              let version = Int(words[1]), let compatibleFrom = Int(words[3]),
              version >= 0, compatibleFrom >= 0, compatibleFrom <= version else { return nil }
        self.init(version: version, compatibleFrom: compatibleFrom)
    }

    /// Parses `VERSION`: `# comments`, blank lines, and `version = N` and `compatible_from = M` with
    /// 0 ≤ M ≤ N.
    public static func parse(declaration text: String) throws(DatabaseError) -> SchemaVersion {
        var values: [String: Int] = [:]
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: " \t") }
            guard parts.count == 2, ["version", "compatible_from"].contains(parts[0]), values[parts[0]] == nil,
                  let number = Int(parts[1]), number >= 0 else {
                throw DatabaseError(code: .migrationFailed, message:
                    "\(fileName) line \(index + 1): expected `version = N` or `compatible_from = M` once each, got '\(line)'")
            }
            values[parts[0]] = number
        }
        guard let version = values["version"], let compatibleFrom = values["compatible_from"] else {
            throw DatabaseError(code: .migrationFailed, message: "\(fileName) must say both `version = N` and `compatible_from = M`")
        }
        guard compatibleFrom <= version else {
            throw DatabaseError(code: .migrationFailed, message:
                "\(fileName): compatible_from (\(compatibleFrom)) must not be above version (\(version))")
        }
        return SchemaVersion(version: version, compatibleFrom: compatibleFrom)
    }

    /// Whether a binary of version `binary` may serve against a schema at this version. An older
    /// schema is a separate question (its files are simply not applied yet).
    public func accepts(binary: Int) -> Bool {
        binary >= compatibleFrom
    }

    public var description: String { "\(version) (compatible from \(compatibleFrom))" }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var text = self
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
