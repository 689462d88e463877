import PriceDB

/// A versioned file's (or an after-step's) old text that a new text replaces without changing the catalog it leaves: a line of
/// the migrations directory's `superseded.txt` (pricesvc's docs/upgrading.md, "Superseded checksums").
///
/// A database that recorded `old` for `name` is accepted when the file's checksum is now `new`: the file
/// counts as applied and is not run, and `old` stays recorded, so instances of the release before (which
/// compare the record with their own files) stay ready during a rolling upgrade. Any other difference
/// is still refused.
public struct SupersededChecksum: Sendable, Hashable {
    public var name: String
    public var old: String
    public var new: String

    /// The file in the migrations directory that lists them. Not `.sql`: no planner takes it for a migration.
    public static let fileName = "superseded.txt"

    /// Parses `superseded.txt`: `# comments`, blank lines, and `NNNN_name.sql <old sha256> <new sha256>`
    /// (or `NNNN_name.after.sql ...`: an after-step is as immutable as a versioned file).
    public static func parse(_ text: String) throws(DatabaseError) -> [SupersededChecksum] {
        var entries: [SupersededChecksum] = []
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let words = rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "\r" })
            if words.isEmpty || words[0].hasPrefix("#") { continue }
            guard words.count == 3, MigrationPlanner.runsOnce(String(words[0])),
                  isSHA256Hex(words[1]), isSHA256Hex(words[2]), words[1] != words[2] else {
                throw DatabaseError(code: .migrationFailed, message:
                    "\(fileName) line \(index + 1): expected `NNNN_name.sql <old sha256> <new sha256>` (or NNNN_name.after.sql) "
                    + "(64 lowercase hex digits each, old and new different), got '\(rawLine)'")
            }
            let entry = SupersededChecksum(name: String(words[0]), old: String(words[1]), new: String(words[2]))
            guard !entries.contains(where: { $0.name == entry.name && $0.old == entry.old }) else {
                throw DatabaseError(code: .migrationFailed, message:
                    "\(fileName) line \(index + 1): \(entry.name)'s checksum \(entry.old) is listed twice")
            }
            entries.append(entry)
        }
        return entries
    }

    private static func isSHA256Hex(_ word: Substring) -> Bool {
        word.utf8.count == 64 && word.utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
    }
}
