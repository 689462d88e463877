/// PostgreSQL's text input for `bytea` (`\\x` + lower-case hex), for text-format parameters.
public enum ByteaText {
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]("\\x".utf8)
        out.reserveCapacity(2 + bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
