import PriceCrypto

/// PostgreSQL's text input for `bytea` (`\\x` + lower-case hex), for text-format parameters.
public enum ByteaText {
    public static func hex(_ bytes: [UInt8]) -> String {
        "\\x" + PriceCrypto.hex(bytes)
    }
}
