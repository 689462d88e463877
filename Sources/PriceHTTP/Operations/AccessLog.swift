import Foundation
import PriceJSON
import PriceTelemetry

/// One JSON line per request on standard output. Deliberately no headers, no query string and no
/// body: tokens travel in headers and bodies, and a log must never hold them.
public struct AccessLog: Sendable {
    let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    struct Entry: Sendable {
        var time: Date
        var requestID: String
        var method: String
        var route: String
        var status: Int
        var seconds: Double
    }

    static func line(_ entry: Entry) -> String {
        let millis = (entry.seconds * 1_000_000).rounded() / 1000
        var writer = JSONWriter(capacity: 160)
        writer.beginObject()
        writer.key("time"); writer.string(LogTimestamp.text(entry.time))
        writer.key("request_id"); writer.string(entry.requestID)
        writer.key("method"); writer.string(String(entry.method.prefix(16)))
        writer.key("route"); writer.string(entry.route)
        writer.key("status"); writer.number(entry.status)
        writer.key("duration_ms"); writer.number(literal: "\(millis)")
        writer.endObject()
        return writer.text + "\n"
    }

    func write(_ entry: Entry) {
        guard enabled else { return }
        let text = Self.line(entry)
        // One write(2) per line keeps lines from different threads whole.
        _ = text.withCString { pointer in
            Foundation.write(STDOUT_FILENO, pointer, strlen(pointer))
        }
    }
}
