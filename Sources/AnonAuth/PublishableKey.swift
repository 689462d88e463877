import PriceCrypto

/// Opaque API keys for apps (Supabase's `sb_publishable_…` form): what an app sends as `apikey`.
///
/// They have nothing to do with the signing keys, so a rotation never changes them; each is revocable on
/// its own. 32 bytes from the CSPRNG, so a plain SHA-256 is all that is stored (as for refresh tokens).
public enum PublishableKey {
    public static let prefix = "sb_publishable_"
    public static let randomByteCount = 32
    /// Characters of the key kept in the clear, so an operator can tell keys apart (`keys publishable list`).
    public static let displayLength = prefix.utf8.count + 6

    public static func generate() -> (key: String, hash: [UInt8], display: String) {
        let key = prefix + Base64URL.encode(secureRandomBytes(count: randomByteCount))
        return (key, sha256(key), String(key.prefix(displayLength)) + "…")
    }

    /// The stored hash of `text` when it has the form of a publishable key, else nil (not one of ours:
    /// no hashing for anything else).
    public static func hash(_ text: String) -> [UInt8]? {
        guard text.hasPrefix(prefix), text.utf8.count <= prefix.utf8.count + 64,
              Base64URL.isAlphabet(String(text.dropFirst(prefix.count))) else { return nil }
        return sha256(text)
    }
}
