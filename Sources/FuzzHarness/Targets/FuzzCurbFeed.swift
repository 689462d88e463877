import PriceJSON
import PublishedRates

/// The CDS Curbs feed decoder (`import-rates`). The input is one feed file; an accepted feed is then
/// combined into the document the database loads, with its own time zone taken as known. Beyond not
/// crashing: every number kept is within what PostgreSQL's `integer` holds, and the import document
/// is JSON.
func fuzzCurbFeed(_ input: UnsafeRawBufferPointer) {
    let bytes = Array(input)
    guard let feed = try? CurbFeed.read(bytes, file: "fuzz.json") else { return }
    let integer: ClosedRange<Int64> = -2_147_483_647...2_147_483_647
    for policy in feed.policies {
        fuzzRequire(integer.contains(policy.priority), "priority \(policy.priority) kept")
        for rule in policy.rules {
            for value in [rule.maxStay, rule.noReturn].compactMap({ $0 }) {
                fuzzRequire(integer.contains(value), "max_stay/no_return \(value) kept")
            }
            for rate in rule.rates {
                let values = [rate.rate, rate.startDuration] + [rate.endDuration, rate.incrementDuration,
                                                                rate.incrementAmount, rate.maximumFee].compactMap { $0 }
                fuzzRequire(values.allSatisfy(integer.contains), "rate values \(values) kept")
                if let end = rate.endDuration { fuzzRequire(rate.startDuration < end, "tier ends before it starts") }
            }
        }
    }
    guard let imported = try? RatesImport(source: "fuzz", feeds: [feed], knownTimeZones: [feed.timeZone]) else { return }
    do {
        _ = try JSONParser(maxBytes: Int.max, maxDepth: 64).parse(imported.document)
    } catch {
        fuzzRequire(false, "the import document is not JSON (\(error)): \(printable(imported.document))")
    }
    fuzzRequire(imported.zoneCount == feed.zones.count, "\(imported.zoneCount) zones imported of \(feed.zones.count)")
    return
}
