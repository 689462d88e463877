import Foundation

/// The `time` of every JSON log line, the access log's (PriceHTTP) and the error log's (PriceAPI):
/// one format, so an operator can join the two logs on it.
public enum LogTimestamp {
    /// RFC 3339 in UTC with milliseconds: `1970-01-01T00:00:00.000Z`.
    public static func text(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        let millis = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis)
    }
}
