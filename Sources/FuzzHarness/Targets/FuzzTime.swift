@_spi(Fuzzing) import PriceAPI
import PriceDB

private let harness = ServiceHarness.shared
private let maxDurationSeconds: Int64 = 366 * 86_400

/// ISO 8601 timestamps and durations as the service reads them: `Timestamp` (price_quotes'
/// `starts_at`, timestamp filter operands), its JSON output form, and price_quotes' `duration`. The
/// input is one value, tried in each place. Beyond not crashing: an accepted timestamp written back
/// in UTC reads as the same instant, and so does its JSON form; `starts_at` is accepted only when
/// `Timestamp` reads it, and passed on unchanged; an accepted `duration` is, read independently, more
/// than 0 and at most 366 days, as the OpenAPI document states.
func fuzzTime(_ input: UnsafeRawBufferPointer) {
    let text = String(decoding: input, as: UTF8.self)

    let micros = PriceAPIFuzzing.timestampMicroseconds(text)
    let jsonForm = PriceAPIFuzzing.timestampJSONForm(text)
    if let micros {
        if let utc = ISO8601.utcText(microseconds: micros) {
            fuzzRequire(PriceAPIFuzzing.timestampMicroseconds(utc) == micros,
                        "\(printable(text)) is \(micros) µs, but \(utc) reads as another instant")
        }
        fuzzRequire(PriceAPIFuzzing.timestampMicroseconds(jsonForm) == micros,
                    "the JSON form \(printable(jsonForm)) of \(printable(text)) reads as another instant")
    }

    let value = QueryString.encoded(text)
    let startsAt = call("starts_at=\(value)")
    if startsAt.response.status < 400 {
        fuzzRequire(micros != nil, "starts_at \(printable(text)) accepted but not a timestamp")
        fuzzRequire(parameters(startsAt).contains(text), "starts_at \(printable(text)) not passed on as sent")
    } else {
        fuzzRequire(startsAt.response.status == 400, "starts_at \(printable(text)): \(startsAt.response.status)")
    }

    let duration = call("duration=\(value)")
    if duration.response.status < 400 {
        let seconds = ISO8601.durationSeconds(text)
        fuzzRequire(seconds.map { $0 > 0 && $0 <= maxDurationSeconds } == true,
                    "duration \(printable(text)) accepted but is \(seconds.map(String.init) ?? "no ISO 8601 duration")")
        fuzzRequire(parameters(duration).contains(text), "duration \(printable(text)) not passed on as sent")
    } else {
        fuzzRequire(duration.response.status == 400, "duration \(printable(text)): \(duration.response.status)")
    }

    let filter = call("last_reported_at=gte.\(value)", function: "price_medians")
    fuzzRequire((filter.response.status < 400) == (micros != nil),
                "timestamp filter operand \(printable(text)): \(filter.response.status), Timestamp says \(micros.map(String.init) ?? "nil")")
    return
}

private func call(_ argument: String, function: String = "price_quotes") -> ServiceHarness.Handled {
    let text = RequestText(Array("GET /rest/v1/rpc/\(function)?location_ids=%7Ba%7D&\(argument)".utf8))
    let handled = harness.handle(harness.request(text))
    ResponseChecks.check(handled, input: argument.utf8)
    return handled
}

private func parameters(_ handled: ServiceHarness.Handled) -> [String] {
    guard case .prepared(_, let parameters)? = handled.sent?.last else { return [] }
    return parameters.compactMap { $0 }
}
