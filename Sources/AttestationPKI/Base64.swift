/// Standard base64 (RFC 4648 §4), padding optional, whitespace refused; nil for anything else.
public func decodeBase64(_ text: some StringProtocol) -> [UInt8]? {
    var values: [UInt8] = []
    values.reserveCapacity(text.utf8.count)
    var padding = 0
    for byte in text.utf8 {
        let value: UInt8
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): value = 62
        case UInt8(ascii: "/"): value = 63
        case UInt8(ascii: "="): padding += 1; continue
        default: return nil
        }
        guard padding == 0 else { return nil }
        values.append(value)
    }
    guard padding <= 2, values.count % 4 != 1, padding == 0 || (values.count + padding) % 4 == 0 else { return nil }
    var output: [UInt8] = []
    output.reserveCapacity(values.count * 3 / 4)
    var index = 0
    while index + 4 <= values.count {
        let v = values[index..<index + 4].reduce(UInt32(0)) { $0 << 6 | UInt32($1) }
        output += [UInt8(v >> 16 & 0xff), UInt8(v >> 8 & 0xff), UInt8(v & 0xff)]
        index += 4
    }
    let rest = values.count - index
    if rest == 2 {
        let v = UInt32(values[index]) << 6 | UInt32(values[index + 1])
        guard v & 0xf == 0 else { return nil }
        output.append(UInt8(v >> 4))
    } else if rest == 3 {
        let v = UInt32(values[index]) << 12 | UInt32(values[index + 1]) << 6 | UInt32(values[index + 2])
        guard v & 0x3 == 0 else { return nil }
        output += [UInt8(v >> 10), UInt8(v >> 2 & 0xff)]
    }
    return output
}

/// Standard base64 with padding.
public func encodeBase64(_ bytes: [UInt8]) -> String {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    var output: [UInt8] = []
    output.reserveCapacity((bytes.count + 2) / 3 * 4)
    var index = 0
    while index < bytes.count {
        let chunk = bytes[index..<min(index + 3, bytes.count)]
        let v = chunk.enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (16 - 8 * $1.offset) }
        for position in 0..<4 {
            output.append(position <= chunk.count ? alphabet[Int(v >> (18 - 6 * position) & 0x3f)] : UInt8(ascii: "="))
        }
        index += 3
    }
    return String(decoding: output, as: UTF8.self)
}
