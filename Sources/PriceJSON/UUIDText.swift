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

    private static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var count = 0
        for byte in bytes {
            switch count {
            case 8, 13, 18, 23:
                guard byte == UInt8(ascii: "-") else { return false }
            default:
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"),
                     UInt8(ascii: "A")...UInt8(ascii: "F"): break
                default: return false
                }
            }
            count += 1
            if count > 36 { return false }
        }
        return count == 36
    }
}
