import PriceCrypto

/// A migration file's checksum as `MigrationRunner` records it: SHA-256 hex (libcrypto), the same text as
/// PostgreSQL's `encode(sha256(...), 'hex')`.
enum SHA256 {
    static func hexDigest(_ bytes: some Collection<UInt8>) -> String {
        hex(sha256(Array(bytes)))
    }
}
