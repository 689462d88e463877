/// The id of one request: the access log's `request_id` and the `X-Request-Id` answer header.
/// A caller's own id (a proxy's, or an app's) is kept when it is well formed, so one id follows a
/// request across systems; anything else is replaced, since the id is written into the log.
public enum RequestID {
    /// 1–128 characters of letters, digits and `-_.:` (UUIDs, ULIDs, hex, `req-42`). Nothing that
    /// could break a log line or a header: no spaces, quotes, control characters or non-ASCII.
    public static func isWellFormed(_ text: String) -> Bool {
        let bytes = text.utf8
        guard (1...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                || byte == 0x2d || byte == 0x5f || byte == 0x2e || byte == 0x3a
        }
    }

    /// The server's own id for a request: its process prefix, `-`, and the request's number in lower-case
    /// hex (`3f2a9c01-1b`). Written as bytes into one string: this runs on every request.
    public static func compose(prefix: String, number: UInt64) -> String {
        var digits = 1
        var rest = number >> 4
        while rest != 0 { digits += 1; rest >>= 4 }
        let head = prefix.utf8
        let total = head.count + 1 + digits
        return String(unsafeUninitializedCapacity: total) { buffer in
            var index = 0
            for byte in head { buffer[index] = byte; index += 1 }
            buffer[index] = UInt8(ascii: "-")
            var value = number
            var position = total
            while position > index + 1 {
                position -= 1
                let digit = UInt8(truncatingIfNeeded: value & 0xF)
                buffer[position] = digit < 10 ? UInt8(ascii: "0") + digit : UInt8(ascii: "a") + digit - 10
                value >>= 4
            }
            return total
        }
    }
}
