/// Base64url without padding (RFC 4648 §5, as JWS compact serialization uses it, RFC 7515 §2).
///
/// Decoding is strict: only the 64 URL-safe characters, no `=`, no whitespace, no impossible lengths, and
/// the unused low bits of the last character must be zero. One byte string therefore has exactly one
/// accepted encoding, so a token cannot be altered into another string that still verifies.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks a byte outside the alphabet.
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, character) in alphabet.enumerated() { table[Int(character)] = UInt8(value) }
        return table
    }()

    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { encode($0) }
    }

    static func encode(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        let length = (bytes.count * 4 + 2) / 3
        // Lookups go through one buffer pointer per call rather than the lazily initialized global each time.
        return alphabet.withUnsafeBufferPointer { alphabet in
            String(unsafeUninitializedCapacity: length) { output in
                var out = 0
                var index = 0
                while index + 3 <= bytes.count {
                    let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
                    output[out] = alphabet[Int(chunk >> 18 & 0x3F)]
                    output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    output[out + 2] = alphabet[Int(chunk >> 6 & 0x3F)]
                    output[out + 3] = alphabet[Int(chunk & 0x3F)]
                    index += 3
                    out += 4
                }
                let remaining = bytes.count - index
                if remaining > 0 {
                    let second = remaining == 2 ? UInt32(bytes[index + 1]) << 8 : 0
                    let chunk = UInt32(bytes[index]) << 16 | second
                    output[out] = alphabet[Int(chunk >> 18 & 0x3F)]
                    output[out + 1] = alphabet[Int(chunk >> 12 & 0x3F)]
                    out += 2
                    if remaining == 2 {
                        output[out] = alphabet[Int(chunk >> 6 & 0x3F)]
                        out += 1
                    }
                }
                return out
            }
        }
    }

    /// The decoded bytes, or `nil` for anything that is not canonical unpadded base64url.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var text = String(text)
        return text.withUTF8 { decode($0) }
    }

    static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let remainder = text.count % 4
        guard remainder != 1 else { return nil }
        return decodeTable.withUnsafeBufferPointer { table -> [UInt8]? in
            var output = [UInt8](repeating: 0, count: text.count / 4 * 3 + max(remainder - 1, 0))
            let complete = output.withUnsafeMutableBufferPointer { output -> Bool in
                var index = 0
                var out = 0
                // OR-ing the sextets lets one check per chunk catch any byte outside the alphabet (0xFF).
                while index + 4 <= text.count {
                    let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                    let c = table[Int(text[index + 2])], d = table[Int(text[index + 3])]
                    guard (a | b | c | d) & 0x80 == 0 else { return false }
                    let chunk = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    output[out] = UInt8(truncatingIfNeeded: chunk >> 16)
                    output[out + 1] = UInt8(truncatingIfNeeded: chunk >> 8)
                    output[out + 2] = UInt8(truncatingIfNeeded: chunk)
                    index += 4
                    out += 3
                }
                switch remainder {
                case 2:
                    let a = table[Int(text[index])], b = table[Int(text[index + 1])]
                    // The 4 bits below the last full byte must be zero, or two strings would decode alike.
                    guard (a | b) & 0x80 == 0, b & 0x0F == 0 else { return false }
                    output[out] = a << 2 | b >> 4
                case 3:
                    let a = table[Int(text[index])], b = table[Int(text[index + 1])], c = table[Int(text[index + 2])]
                    guard (a | b | c) & 0x80 == 0, c & 0x03 == 0 else { return false }
                    output[out] = a << 2 | b >> 4
                    output[out + 1] = b << 4 | c >> 2
                default:
                    break
                }
                return true
            }
            return complete ? output : nil
        }
    }

    /// Whether every byte of `text` is in the base64url alphabet (a cheap pre-check for opaque tokens).
    static func isAlphabet(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { decodeTable[Int($0)] != 0xFF }
    }
}
