import Foundation
import PriceTelemetry
import Testing

@Suite("Log timestamps")
struct LogTimestampTests {
    @Test("a log line's time is UTC with milliseconds, whatever the process's time zone")
    func utcWithMilliseconds() {
        #expect(LogTimestamp.text(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
        #expect(LogTimestamp.text(Date(timeIntervalSince1970: 1_764_979_199.25)) == "2025-12-05T23:59:59.250Z")
    }
}

@Suite("The Prometheus text format")
struct PrometheusTextTests {
    @Test("a family is its HELP and TYPE lines, then one sample per label set")
    func family() {
        var out = ""
        PrometheusText.family(&out, "pricesvc_things_total", .counter, "Things.", [("", 3), ("kind=\"a\"", 1)])
        #expect(out == "# HELP pricesvc_things_total Things.\n# TYPE pricesvc_things_total counter\n"
            + "pricesvc_things_total 3\npricesvc_things_total{kind=\"a\"} 1\n")
    }
}
