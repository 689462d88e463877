/// The Prometheus text exposition format, written one way for the server's metrics (`ServerMetrics`)
/// and the application's: `# HELP`, `# TYPE`, then one line per sample.
public enum PrometheusText {
    public enum MetricType: String, Sendable { case counter, gauge, histogram }

    /// A family's `# HELP` and `# TYPE` lines.
    public static func header(_ out: inout String, _ name: String, _ type: MetricType, _ help: String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) \(type.rawValue)\n"
    }

    /// One sample; `labels` is the text between the braces, empty for none.
    public static func sample(_ out: inout String, _ name: String, _ labels: String, _ value: some CustomStringConvertible) {
        out += labels.isEmpty ? "\(name) \(value)\n" : "\(name){\(labels)} \(value)\n"
    }

    /// A whole family: its header, then a sample per (labels, value).
    public static func family(_ out: inout String, _ name: String, _ type: MetricType, _ help: String,
                              _ samples: [(labels: String, value: Int)]) {
        header(&out, name, type, help)
        for (labels, value) in samples { sample(&out, name, labels, value) }
    }
}
