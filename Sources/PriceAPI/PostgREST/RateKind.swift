/// The rate kinds a report can have. The database defines them (the `price_reports_rate_kind_known`
/// check and the median functions); this copy exists for two things only: asking the median
/// functions for every kind in one call, and the `enum` of the OpenAPI document.
/// integration/e2e/test_read_options.py checks it against the database's constraint.
enum RateKind: String, Sendable, CaseIterable {
    case hourly, daily, flat, monthly

    /// `{hourly,daily,flat,monthly}`: the statement parameter for "every kind".
    static let arrayLiteral = "{" + allCases.map(\.rawValue).joined(separator: ",") + "}"
}
