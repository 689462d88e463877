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
}
