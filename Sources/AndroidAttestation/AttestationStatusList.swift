import PriceJSON

/// Google's attestation certificate status list (https://android.googleapis.com/attestation/status),
/// read from a file because the service has no network: `{"entries": {"<hex serial>": {"status":
/// "REVOKED" | "SUSPENDED", "reason": ...}}}`. Any listed status refuses the certificate.
public struct AttestationStatusList: Sendable, Equatable {
    /// Google's list is a few hundred KiB; a file past this is not it.
    public static let maxBytes = 32 << 20

    public struct Entry: Sendable, Equatable {
        public var status: String
        public var reason: String?
    }

    /// By serial: lower-case hex without leading zeros (`Certificate.serialHex`).
    public let entries: [String: Entry]

    public init(entries: [String: Entry]) {
        var normalized: [String: Entry] = [:]
        for (serial, entry) in entries { normalized[Self.normalize(serial)] = entry }
        self.entries = normalized
    }

    /// Why a file is not a status list.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        public let description: String
    }

    /// The list of a file's bytes; what is wrong otherwise.
    public static func parse(_ bytes: [UInt8]) -> Result<AttestationStatusList, ParseError> {
        guard bytes.count <= maxBytes else { return .failure(ParseError(description: "larger than \(maxBytes) bytes")) }
        let document: JSONValue
        do { document = try JSONParser(maxBytes: maxBytes).parse(bytes) } catch { return .failure(ParseError(description: "not JSON: \(error)")) }
        guard let entries = document["entries"]?.objectValue else { return .failure(ParseError(description: "no \"entries\" object")) }
        var parsed: [String: Entry] = [:]
        for member in entries {
            let serial = member.key
            guard !serial.isEmpty, serial.utf8.count <= 64, serial.utf8.allSatisfy(isHexDigit) else {
                return .failure(ParseError(description: "entry key '\(serial.prefix(64))' is not a hex serial number"))
            }
            guard let status = member.value["status"]?.stringValue, !status.isEmpty else {
                return .failure(ParseError(description: "entry \(serial) has no status"))
            }
            parsed[serial] = Entry(status: status, reason: member.value["reason"]?.stringValue)
        }
        return .success(AttestationStatusList(entries: parsed))
    }

    public func entry(serialHex: String) -> Entry? { entries[Self.normalize(serialHex)] }

    static func normalize(_ serial: String) -> String {
        let lower = serial.lowercased().drop(while: { $0 == "0" })
        return lower.isEmpty ? "0" : String(lower)
    }

    static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
    }
}
