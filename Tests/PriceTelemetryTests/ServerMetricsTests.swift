import Testing
import PriceTelemetry

@Suite("The server's Prometheus metrics")
struct MetricsTests {
    func makeMetrics() -> ServerMetrics {
        ServerMetrics(routeLabels: ["/healthz", "/rest/v1/price_reports", "other"], fallbackLabel: "other")
    }

    @Test("requests are counted by route and status, with a cumulative latency histogram")
    func requestsAndHistogram() {
        let metrics = makeMetrics()
        metrics.record(route: "/healthz", status: 200, seconds: 0.0005)
        metrics.record(route: "/healthz", status: 200, seconds: 0.003)
        metrics.record(route: "/rest/v1/price_reports", status: 429, seconds: 0.2)
        let text = metrics.render()
        #expect(text.contains("pricesvc_http_requests_total{route=\"/healthz\",status=\"200\"} 2\n"))
        #expect(text.contains("pricesvc_http_requests_total{route=\"/rest/v1/price_reports\",status=\"429\"} 1\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"0.001\"} 1\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"0.005\"} 2\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_bucket{route=\"/healthz\",le=\"+Inf\"} 2\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_count{route=\"/healthz\"} 2\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_bucket{route=\"/rest/v1/price_reports\",le=\"0.1\"} 0\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_bucket{route=\"/rest/v1/price_reports\",le=\"0.25\"} 1\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_sum{route=\"/rest/v1/price_reports\"} 0.2\n"))
        #expect(text.contains("pricesvc_http_request_duration_seconds_count{route=\"/rest/v1/price_reports\"} 1\n"))
        #expect(!text.contains("route=\"other\""), "a route with no requests has no series")
    }

    @Test("the latency histogram has one fixed set of series per route label, whatever is requested")
    func histogramCardinalityIsFixed() {
        let metrics = makeMetrics()
        for index in 0..<50 { metrics.record(route: "/random-\(index)", status: 404, seconds: 0.01) }
        let lines = metrics.render().split(separator: "\n").filter { $0.hasPrefix("pricesvc_http_request_duration_seconds") }
        #expect(lines.count == ServerMetrics.latencyBuckets.count + 3)
        #expect(lines.allSatisfy { $0.contains("route=\"other\"") })
    }

    @Test("labels stay bounded: an unknown route or status lands in 'other'")
    func boundedLabels() {
        let metrics = makeMetrics()
        metrics.record(route: "/something/else", status: 418, seconds: 0)
        #expect(metrics.render().contains("pricesvc_http_requests_total{route=\"other\",status=\"other\"} 1\n"))
    }

    @Test("counts from many threads are not lost")
    func concurrentRecording() async {
        let metrics = makeMetrics()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1000 { metrics.record(route: "/healthz", status: 200, seconds: 0) } }
            }
        }
        #expect(metrics.render().contains("pricesvc_http_requests_total{route=\"/healthz\",status=\"200\"} 8000\n"))
    }
}
