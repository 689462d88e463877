
/// The query string and read options of a function call: filters, select, order, limit/offset,
/// Range, Accept and Prefer, parsed where the request arrives and applied to (canned) rows as a
/// worker would. The input is what follows `/rest/v1/rpc/` in a request written as text:
///
///     price_medians?location_ids={a,b}&select=median_cents&order=reporters.desc
///     Range: 0-1
///
/// (a body after a blank line makes it a POST). Beyond not crashing: every answer keeps
/// `ResponseChecks` (no 5xx decided without the database, JSON bodies parse, a Content-Range has
/// lower ≤ upper and as many rows as it says).
func fuzzReadOptions(_ input: UnsafeRawBufferPointer) {
    let harness = ServiceHarness.shared
    var text = RequestText(Array("GET /rest/v1/rpc/".utf8) + input)
    if !text.body.isEmpty {
        text.method = "POST"
        if text.headers["content-type"] == nil { text.headers["content-type"] = "application/json" }
    }
    ResponseChecks.check(harness.handle(harness.request(text)), input: input)
    return
}
