import Foundation
import PriceDB
import PriceSQL
import PublishedRates

/// `pricesvc import-rates --source NAME FILE...`: a city's CDS Curbs feed into the published-rate tables.
extension Commands {
    /// Every file is read and checked before the database is touched (apart from reading its list of
    /// time zones), so a bad file names its mistake and leaves the database exactly as it was.
    static func importRates(_ configuration: Configuration) throws -> Int32 {
        let source = configuration.string("source")
        guard RatesImport.isValidSourceName(source) else {
            throw ConfigurationError(description: source.isEmpty
                ? "import-rates needs --source NAME (the prefix of its location ids)"
                : "--source must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit, got '\(source)'")
        }
        let paths = configuration.positional
        guard !paths.isEmpty else {
            throw ConfigurationError(description: "import-rates needs at least one CDS file (usage: pricesvc import-rates --source NAME FILE...)")
        }
        let started = ContinuousClock.now
        var feeds: [CurbFeed] = []
        for path in paths {
            guard let data = FileManager.default.contents(atPath: path) else {
                fail("\(path): cannot read the file")
                return 1
            }
            feeds.append(try CurbFeed.read([UInt8](data), file: path))
        }
        let owner = OwnerTasks(conninfo: ownerConninfo(configuration))
        let plan = try RatesImport(source: source, feeds: feeds, knownTimeZones: owner.timeZoneNames())
        let load = try owner.replacePublishedRates(source: source, document: plan.document)
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("import-rates: source \(source): \(load.status): \(load.zones) zones, \(load.policies) policies, "
              + "\(load.rules) rules, \(load.timeSpans) time spans, \(load.rates) rates "
              + "(checksum \(load.checksum.prefix(12)), \(String(format: "%.2f", seconds)) s)")
        try owner.recordMaintenanceRun("import-rates")
        return 0
    }
}
