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

/// `pricesvc import-places --source NAME FILE`: a GeoJSON FeatureCollection of places (garages, car parks).
extension Commands {
    /// The file is read and checked whole before the database is touched, so a bad file names its first
    /// mistake (with its JSON path) and changes nothing.
    static func importPlaces(_ configuration: Configuration) throws -> Int32 {
        let source = configuration.string("source")
        guard RatesImport.isValidSourceName(source) else {
            throw ConfigurationError(description: source.isEmpty
                ? "import-places needs --source NAME (the prefix of its location ids)"
                : "--source must be 1-63 letters, digits, '_', '.' or '-', starting with a letter or digit, got '\(source)'")
        }
        guard configuration.positional.count == 1, let path = configuration.positional.first else {
            throw ConfigurationError(description: "import-places needs one GeoJSON file (usage: pricesvc import-places --source NAME FILE)")
        }
        let started = ContinuousClock.now
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > PlacesFile.maxFileBytes {
            fail("\(path): larger than \(PlacesFile.maxFileBytes >> 20) MiB")
            return 1
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            fail("\(path): cannot read the file")
            return 1
        }
        let file = try PlacesFile([UInt8](data), source: source, file: path)
        let owner = OwnerTasks(conninfo: ownerConninfo(configuration))
        let load = try owner.replacePlaces(source: source, document: file.document)
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        print("import-places: source \(source): \(load.stored) places (before: \(load.previous)), "
              + "\(String(format: "%.2f", seconds)) s")
        return 0
    }
}
