import PriceJSON

/// One CDS Curbs payload (one file): the envelope and whatever `data.zones` and `data.policies` it holds.
/// Only the fields pricing needs are kept, and each zone's geometry (its place); the rest of the feed
/// (spaces, areas) is checked for presence where the spec requires it and otherwise ignored.
public struct CurbFeed: Sendable, Equatable {
    public var file: String
    public var timeZone: String
    public var currency: String
    /// Epoch milliseconds, as in the feed.
    public var lastUpdated: Int64
    public var author: String?
    public var licenseURL: String?
    public var zones: [Zone]
    public var policies: [Policy]

    public struct Zone: Sendable, Equatable {
        /// Where in its file, for errors found when files are combined.
        public var path: String
        public var curbZoneID: String
        public var curbPolicyIDs: [String]
        public var startDate: Int64
        public var endDate: Int64?
        public var publishedDate: Int64
        public var lastUpdatedDate: Int64
        public var userZoneID: String?
        public var name: String?
        /// The zone's shape, kept as the place of its location id (private.places).
        public var geometry: PlaceGeometry
    }

    public struct Policy: Sendable, Equatable {
        public var path: String
        public var curbPolicyID: String
        public var priority: Int64
        public var publishedDate: Int64
        public var rules: [Rule]
        /// nil: always applies.
        public var timeSpans: [TimeSpan]?
        /// A policy only for the named data source operators (not the general public).
        public var dataSourceOperatorIDs: [String]?
        /// The policy object as written: two files may define one id only with identical objects.
        public var source: JSONValue
    }

    public struct Rule: Sendable, Equatable {
        public var activity: String
        public var maxStay: Int64?
        public var maxStayUnit: String
        public var noReturn: Int64?
        public var noReturnUnit: String
        public var userClasses: [String]?
        public var rates: [Rate]
    }

    public struct TimeSpan: Sendable, Equatable {
        public var daysOfWeek: [String]?
        public var daysOfMonth: [Int64]?
        public var months: [Int64]?
        /// "HH:MM".
        public var timeOfDayStart: String?
        public var timeOfDayEnd: String?
        public var startDate: Int64?
        public var endDate: Int64?
        public var designatedPeriod: String?
        public var designatedPeriodExcept: Bool
    }

    public struct Rate: Sendable, Equatable {
        public var rate: Int64
        public var rateUnit: String
        public var rateUnitPeriod: String
        public var incrementDuration: Int64?
        public var incrementAmount: Int64?
        public var startDuration: Int64
        public var endDuration: Int64?
        public var maximumFee: Int64?
    }

    public static let activities: Set<String> = [
        "parking", "no parking", "loading", "no loading", "unloading", "no unloading",
        "stopping", "no stopping", "travel", "no travel",
    ]
    /// CDS's unit of time, in order of length.
    public static let units = ["second", "minute", "hour", "day", "week", "month", "quarter", "year"]
    public static let daysOfWeek: Set<String> = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]

    /// Seconds in a unit of fixed length; nil for month, quarter and year.
    static func seconds(of unit: String) -> Int64? {
        switch unit {
        case "second": 1
        case "minute": 60
        case "hour": 3_600
        case "day": 86_400
        case "week": 604_800
        default: nil
        }
    }

    /// Months in a calendar unit; nil for the units of fixed length.
    static func months(of unit: String) -> Int64? {
        switch unit {
        case "month": 1
        case "quarter": 3
        case "year": 12
        default: nil
        }
    }
}

/// How far a feed's numbers may reach, so that pricing a stay never overflows: checked at import, naming
/// the JSON path (the database prices anything left over as `feed_error`, see migrations/cds_2_price.sql).
public enum FeedBounds {
    /// Every duration (max_stay, no_return, tier bounds, increments) in its unit: at most 100 years.
    public static let horizonYears: Int64 = 100
    /// The longest stay pricesvc prices (`private.cds_max_stay()`): 366 days.
    public static let longestStaySeconds: Int64 = 366 * 86_400
    /// 2^53 - 1: the largest integer a JSON client (a JavaScript number) holds exactly.
    public static let largestTotal: Int64 = 9_007_199_254_740_991

    /// Whether `count` units of `unit` lie within the horizon (a year is 366 days, a month 31).
    static func isWithinHorizon(_ count: Int64, unit: String) -> Bool {
        if let months = CurbFeed.months(of: unit) {
            return count <= horizonYears * 12 / months
        }
        guard let seconds = CurbFeed.seconds(of: unit) else { return false }
        return count <= horizonYears * 366 * 86_400 / seconds
    }

    /// The most one rate can charge for the longest stay: every unit the stay can touch (its length in
    /// units, rounded up, plus one for a calendar unit it starts inside), rounded up to whole increments.
    /// Overflow-free: nil when the product is beyond `Int64` (then it is beyond `largestTotal` too).
    static func largestCharge(rate: Int64, unit: String, incrementDuration: Int64?) -> Int64? {
        let units: Int64
        if let months = CurbFeed.months(of: unit) {
            // 366 days touch at most 13 months, 5 quarters or 2 years.
            units = (13 + months - 1) / months + 1
        } else {
            let seconds = CurbFeed.seconds(of: unit) ?? 1
            units = (longestStaySeconds + seconds - 1) / seconds + 1
        }
        let increment = max(incrementDuration ?? 1, 1)
        let (rounded, roundingOverflow) = ((units + increment - 1) / increment).multipliedReportingOverflow(by: increment)
        guard !roundingOverflow else { return nil }
        let (charge, overflow) = rate.multipliedReportingOverflow(by: rounded)
        return overflow ? nil : charge
    }
}

extension CurbFeed {
    /// Largest file `read` accepts: a city's zones with their geometry.
    public static let maxFileBytes = 512 << 20
    /// PostgreSQL `integer`: amounts, durations and priorities are stored as such.
    static let maxInteger: Int64 = 2_147_483_647

    /// Parses and checks one file. Throws the first mistake, with its JSON path.
    public static func read(_ bytes: [UInt8], file: String) throws(CurbFeedError) -> CurbFeed {
        let document: JSONValue
        do {
            document = try JSONParser(maxBytes: maxFileBytes, maxDepth: 64).parse(bytes)
        } catch {
            let (line, column) = position(of: error.offset, in: bytes)
            throw CurbFeedError(file: file, path: "",
                                message: "malformed JSON at line \(line), column \(column): \(error.message)")
        }
        let root = try Fields(document, file: file, path: "")
        let data = try root.object("data", required: true)!
        let zones = try data.array("zones")
        let policies = try data.array("policies")
        guard zones != nil || policies != nil else {
            throw CurbFeedError(file: file, path: "data", message: "has neither zones nor policies")
        }
        return CurbFeed(
            file: file,
            timeZone: try root.string("time_zone", required: true)!,
            currency: try root.string("currency", required: true, pattern: { $0.count == 3 && $0.allSatisfy { $0 >= "A" && $0 <= "Z" } },
                                      expected: "an ISO 4217 code such as \"USD\"")!,
            lastUpdated: try root.integer("last_updated", required: true)!,
            author: try root.string("author"),
            licenseURL: try root.string("license_url"),
            zones: try (zones ?? []).map { value, path throws(CurbFeedError) in try readZone(Fields(value, file: file, path: path)) },
            policies: try (policies ?? []).map { value, path throws(CurbFeedError) in
                try readPolicy(Fields(value, file: file, path: path), source: value)
            })
    }

    private static func readZone(_ zone: Fields) throws(CurbFeedError) -> Zone {
        let geometryValue = try zone.object("geometry", required: true)!
        let start = try zone.integer("start_date", required: true)!
        let end = try zone.integer("end_date")
        if let end, end <= start {
            throw zone.error("end_date", "must be after start_date (\(start))")
        }
        let userZoneID = try zone.string("user_zone_id")
        if let userZoneID, userZoneID.isEmpty || userZoneID.count > 150 || userZoneID.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
            throw zone.error("user_zone_id", "must be 1 to 150 characters without control characters")
        }
        return Zone(
            path: zone.path,
            curbZoneID: try zone.uuid("curb_zone_id", required: true)!,
            curbPolicyIDs: try zone.array("curb_policy_ids", required: true)!.map { value, path throws(CurbFeedError) in
                try Fields.uuid(value, file: zone.file, path: path)
            },
            startDate: start, endDate: end,
            publishedDate: try zone.integer("published_date", required: true)!,
            lastUpdatedDate: try zone.integer("last_updated_date", required: true)!,
            userZoneID: userZoneID,
            name: try zone.string("name"),
            // Last, so the ids' mistakes are named first, as before geometry was kept.
            geometry: try PlaceGeometry(.object(geometryValue.object), file: zone.file, path: geometryValue.path))
    }

    private static func readPolicy(_ policy: Fields, source: JSONValue) throws(CurbFeedError) -> Policy {
        let spans = try policy.array("time_spans")
        let operators = try policy.array("data_source_operator_id")
        return Policy(
            path: policy.path,
            curbPolicyID: try policy.uuid("curb_policy_id", required: true)!,
            priority: try policy.integer("priority", required: true, range: -maxInteger...maxInteger)!,
            publishedDate: try policy.integer("published_date", required: true)!,
            rules: try policy.array("rules", required: true)!.map { value, path throws(CurbFeedError) in
                try readRule(Fields(value, file: policy.file, path: path))
            },
            timeSpans: try spans?.map { value, path throws(CurbFeedError) in try readTimeSpan(Fields(value, file: policy.file, path: path)) },
            dataSourceOperatorIDs: try operators?.map { value, path throws(CurbFeedError) in
                try Fields.uuid(value, file: policy.file, path: path)
            },
            source: source)
    }

    private static func readRule(_ rule: Fields) throws(CurbFeedError) -> Rule {
        let activity = try rule.string("activity", required: true)!
        guard activities.contains(activity) else {
            throw rule.error("activity", "unknown activity \(quotedJSON(activity))")
        }
        let rates = try (rule.array("rate") ?? []).map { value, path throws(CurbFeedError) in
            (try readRate(Fields(value, file: rule.file, path: path)), path)
        }
        try checkTiers(rates, file: rule.file)
        let maxStayUnit = try rule.unit("max_stay_unit") ?? "minute"
        let noReturnUnit = try rule.unit("no_return_unit") ?? "minute"
        return Rule(
            activity: activity,
            maxStay: try rule.duration("max_stay", range: 1...maxInteger, unit: maxStayUnit),
            maxStayUnit: maxStayUnit,
            noReturn: try rule.duration("no_return", range: 0...maxInteger, unit: noReturnUnit),
            noReturnUnit: noReturnUnit,
            userClasses: try rule.array("user_classes")?.map { value, path throws(CurbFeedError) in
                guard let text = value.stringValue else {
                    throw CurbFeedError(file: rule.file, path: path, message: "expected a string, got \(value.kindDescription)")
                }
                return text
            },
            rates: rates.map(\.0))
    }

    private static func readRate(_ rate: Fields) throws(CurbFeedError) -> Rate {
        let period = try rate.string("rate_unit_period") ?? "rolling"
        guard period == "rolling" || period == "calendar" else {
            throw rate.error("rate_unit_period", "unknown period \(quotedJSON(period)) (rolling or calendar)")
        }
        let unit = try rate.unit("rate_unit", required: true)!
        let start = try rate.duration("start_duration", range: 0...maxInteger, unit: unit) ?? 0
        let end = try rate.duration("end_duration", range: 1...maxInteger, unit: unit)
        if let end, end <= start {
            throw rate.error("end_duration", "must be more than start_duration (\(start))")
        }
        let amount = try rate.integer("rate", required: true, range: 0...maxInteger)!
        let increment = try rate.duration("increment_duration", range: 1...maxInteger, unit: unit)
        guard let largest = FeedBounds.largestCharge(rate: amount, unit: unit, incrementDuration: increment),
              largest <= FeedBounds.largestTotal else {
            throw rate.error("rate", "\(amount) per \(unit) could charge more than 2^53 - 1 (\(FeedBounds.largestTotal)) "
                                 + "minor units for a stay of 366 days, beyond what a JSON client holds exactly")
        }
        return Rate(
            rate: amount,
            rateUnit: unit,
            rateUnitPeriod: period,
            incrementDuration: increment,
            incrementAmount: try rate.integer("increment_amount", range: 1...maxInteger),
            startDuration: start, endDuration: end,
            maximumFee: try rate.integer("maximum_fee", range: 0...maxInteger))
    }

    /// Tiers of one rule must not overlap. They are compared in seconds when their units have a fixed
    /// length; month, quarter and year tiers only with tiers of the same unit.
    private static func checkTiers(_ rates: [(Rate, String)], file: String) throws(CurbFeedError) {
        for (index, (rate, path)) in rates.enumerated() {
            for (other, otherPath) in rates[..<index] {
                let scale: (Int64, Int64)
                if rate.rateUnit == other.rateUnit {
                    scale = (1, 1)
                } else if let a = seconds(of: rate.rateUnit), let b = seconds(of: other.rateUnit) {
                    scale = (a, b)
                } else {
                    throw CurbFeedError(file: file, path: path + ".rate_unit", message:
                        "tiers in \(rate.rateUnit)s cannot be combined with tiers in \(other.rateUnit)s (\(otherPath)) in one rule")
                }
                let start = rate.startDuration * scale.0, end = rate.endDuration.map { $0 * scale.0 } ?? .max
                let otherStart = other.startDuration * scale.1, otherEnd = other.endDuration.map { $0 * scale.1 } ?? .max
                if start < otherEnd && otherStart < end {
                    throw CurbFeedError(file: file, path: path, message:
                        "overlaps \(otherPath) (\(describe(other))): tiers of one rule must not overlap")
                }
            }
        }
    }

    private static func describe(_ rate: Rate) -> String {
        "from \(rate.startDuration) to \(rate.endDuration.map(String.init) ?? "the end") \(rate.rateUnit)s"
    }

    private static func readTimeSpan(_ span: Fields) throws(CurbFeedError) -> TimeSpan {
        let start = try span.integer("start_date")
        let end = try span.integer("end_date")
        if let start, let end, end <= start {
            throw span.error("end_date", "must be after start_date (\(start))")
        }
        return TimeSpan(
            daysOfWeek: try span.array("days_of_week")?.map { value, path throws(CurbFeedError) in
                guard let day = value.stringValue, daysOfWeek.contains(day) else {
                    throw CurbFeedError(file: span.file, path: path,
                                        message: "expected one of sun, mon, tue, wed, thu, fri, sat, got \(value.serialized())")
                }
                return day
            },
            daysOfMonth: try span.integers("days_of_month", range: 1...31),
            months: try span.integers("months", range: 1...12),
            timeOfDayStart: try span.timeOfDay("time_of_day_start", allowsEndOfDay: false),
            timeOfDayEnd: try span.timeOfDay("time_of_day_end", allowsEndOfDay: true),
            startDate: start, endDate: end,
            designatedPeriod: try span.string("designated_period"),
            designatedPeriodExcept: try span.bool("designated_period_except") ?? false)
    }

    /// 1-based line and column of a byte offset, for a person opening the file in an editor.
    static func position(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1, column = 1
        for byte in bytes.prefix(max(0, min(offset, bytes.count))) {
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
        }
        return (line, column)
    }
}

/// Typed access to one JSON object's members, with the JSON path for errors. A member that is absent or
/// `null` is "not given"; a required one then fails as missing.
struct Fields {
    let file: String
    let path: String
    let object: JSONObject

    init(_ value: JSONValue, file: String, path: String) throws(CurbFeedError) {
        guard let object = value.objectValue else {
            throw CurbFeedError(file: file, path: path, message: "expected an object, got \(value.kindDescription)")
        }
        self.file = file
        self.path = path
        self.object = object
    }

    func at(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func error(_ key: String, _ message: String) -> CurbFeedError {
        CurbFeedError(file: file, path: at(key), message: message)
    }

    private func value(_ key: String, required: Bool) throws(CurbFeedError) -> JSONValue? {
        guard let value = object[key], !value.isNull else {
            if required { throw error(key, "missing required field") }
            return nil
        }
        return value
    }

    func object(_ key: String, required: Bool = false) throws(CurbFeedError) -> Fields? {
        guard let value = try value(key, required: required) else { return nil }
        return try Fields(value, file: file, path: at(key))
    }

    /// The elements with their paths.
    func array(_ key: String, required: Bool = false) throws(CurbFeedError) -> [(JSONValue, String)]? {
        guard let value = try value(key, required: required) else { return nil }
        guard let elements = value.arrayValue else {
            throw error(key, "expected an array, got \(value.kindDescription)")
        }
        return elements.enumerated().map { ($1, at(key) + "[\($0)]") }
    }

    func string(_ key: String, required: Bool = false, pattern: ((String) -> Bool)? = nil,
                expected: String = "") throws(CurbFeedError) -> String? {
        guard let value = try value(key, required: required) else { return nil }
        guard let text = value.stringValue else {
            throw error(key, "expected a string, got \(value.kindDescription)")
        }
        if let pattern, !pattern(text) {
            throw error(key, "expected \(expected), got \(quotedJSON(text))")
        }
        return text
    }

    func bool(_ key: String) throws(CurbFeedError) -> Bool? {
        guard let value = try value(key, required: false) else { return nil }
        guard let flag = value.boolValue else {
            throw error(key, "expected a boolean, got \(value.kindDescription)")
        }
        return flag
    }

    func integer(_ key: String, required: Bool = false,
                 range: ClosedRange<Int64> = Int64.min...Int64.max) throws(CurbFeedError) -> Int64? {
        guard let value = try value(key, required: required) else { return nil }
        return try Self.integer(value, range: range, file: file, path: at(key))
    }

    /// An integer count of `unit`s, within `range` and within ``FeedBounds/horizonYears``.
    func duration(_ key: String, range: ClosedRange<Int64>, unit: String) throws(CurbFeedError) -> Int64? {
        guard let count = try integer(key, range: range) else { return nil }
        guard FeedBounds.isWithinHorizon(count, unit: unit) else {
            throw error(key, "\(count) \(unit)s is beyond the \(FeedBounds.horizonYears)-year horizon of a feed")
        }
        return count
    }

    func integers(_ key: String, range: ClosedRange<Int64>) throws(CurbFeedError) -> [Int64]? {
        try array(key)?.map { value, path throws(CurbFeedError) in try Self.integer(value, range: range, file: file, path: path) }
    }

    static func integer(_ value: JSONValue, range: ClosedRange<Int64>, file: String, path: String) throws(CurbFeedError) -> Int64 {
        guard let number = value.numberValue?.asInt64 else {
            throw CurbFeedError(file: file, path: path, message: value.numberValue == nil
                                ? "expected an integer, got \(value.kindDescription)"
                                : "expected an integer, got \(value.serialized())")
        }
        guard range.contains(number) else {
            let bounds = range.upperBound == .max ? "at least \(range.lowerBound)"
                : range.lowerBound == .min ? "at most \(range.upperBound)"
                : "\(range.lowerBound) to \(range.upperBound)"
            throw CurbFeedError(file: file, path: path, message: "must be \(bounds), got \(number)")
        }
        return number
    }

    func uuid(_ key: String, required: Bool = false) throws(CurbFeedError) -> String? {
        guard let value = try value(key, required: required) else { return nil }
        return try Self.uuid(value, file: file, path: at(key))
    }

    /// Lower-case canonical text: the same id written in two cases is one id.
    static func uuid(_ value: JSONValue, file: String, path: String) throws(CurbFeedError) -> String {
        guard let text = value.stringValue else {
            throw CurbFeedError(file: file, path: path, message: "expected a UUID string, got \(value.kindDescription)")
        }
        guard UUIDText.isValid(text) else {
            throw CurbFeedError(file: file, path: path, message: "expected a UUID, got \(quotedJSON(String(text.prefix(60))))")
        }
        return text.lowercased()
    }

    func unit(_ key: String, required: Bool = false) throws(CurbFeedError) -> String? {
        guard let unit = try string(key, required: required) else { return nil }
        guard CurbFeed.units.contains(unit) else {
            throw error(key, "unknown unit \(quotedJSON(unit))")
        }
        return unit
    }

    /// "HH:MM", 00:00 to 23:59; an end may also be 24:00 (midnight at the end of the day).
    func timeOfDay(_ key: String, allowsEndOfDay: Bool) throws(CurbFeedError) -> String? {
        guard let text = try string(key) else { return nil }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2,
              let hours = Int(parts[0]), let minutes = Int(parts[1]),
              (parts[0] + parts[1]).allSatisfy({ $0.isASCII && $0.isNumber }),
              (0..<60).contains(minutes),
              (0..<24).contains(hours) || (allowsEndOfDay && hours == 24 && minutes == 0)
        else {
            throw error(key, "expected a time of day \"HH:MM\", got \(quotedJSON(text))")
        }
        return text
    }
}
