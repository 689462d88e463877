/// UUIDs stay text end to end: the database prints them, tokens, request bodies and CDS feeds carry them
/// as JSON strings, SQL casts them back with `::uuid`. The one question asked of them is whether a text is
/// a UUID at all, answered here once for every module that reads JSON.
public enum UUIDText {
    /// 8-4-4-4-12 hex digits, the only form PostgreSQL's uuid input and the SDKs share.
    public static func isValid(_ text: String) -> Bool {
        guard text.utf8.count == 36 else { return false }
        var text = text
        return text.withUTF8(isValid)
    }

    /// `bytes` is 36 long: dashes at 8, 13, 18 and 23, hex digits everywhere else.
    private static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for (index, byte) in bytes.enumerated() {
            let valid = switch index {
            case 8, 13, 18, 23: byte == UInt8(ascii: "-")
            default: (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
            }
            if !valid { return false }
        }
        return true
    }
}
