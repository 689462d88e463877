import PriceJSON

/// The files of one source, checked together and turned into the one document
/// `private.cds_replace_source(source, document)` loads (see migrations/cds_4_load.sql).
///
/// Files may split a feed (zones in one, policies in another); they must agree on `time_zone` and
/// `currency`. The newest `last_updated` is the import's; `author` and `license_url` come from the first
/// file that has them.
public struct RatesImport: Sendable {
    /// JSON text: one flat array per table, in the tables' column names.
    public var document: String
    public var zoneCount: Int
    public var policyCount: Int

    /// - Parameter knownTimeZones: the IANA names the database knows (`pg_timezone_names`): the feed's
    ///   times are read in that zone there, so that is the list that decides.
    public init(source: String, feeds: [CurbFeed], knownTimeZones: Set<String>) throws(CurbFeedError) {
        guard let first = feeds.first else {
            throw CurbFeedError(file: "import-rates", path: "", message: "no files given")
        }
        guard knownTimeZones.contains(first.timeZone) else {
            throw CurbFeedError(file: first.file, path: "time_zone",
                                message: "unknown IANA time zone \(quotedJSON(first.timeZone))")
        }
        for feed in feeds.dropFirst() {
            if feed.timeZone != first.timeZone {
                throw CurbFeedError(file: feed.file, path: "time_zone", message:
                    "\(quotedJSON(feed.timeZone)) differs from \(quotedJSON(first.timeZone)) in \(first.file): one import has one time zone")
            }
            if feed.currency != first.currency {
                throw CurbFeedError(file: feed.file, path: "currency", message:
                    "\(quotedJSON(feed.currency)) differs from \(quotedJSON(first.currency)) in \(first.file): one import has one currency")
            }
        }

        // Policies: one id may appear in several files only as the identical object.
        var policies: [(CurbFeed.Policy, String)] = []
        var policyIndex: [String: Int] = [:]
        for feed in feeds {
            for policy in feed.policies {
                if let earlier = policyIndex[policy.curbPolicyID] {
                    let (known, file) = policies[earlier]
                    guard known.source == policy.source else {
                        throw CurbFeedError(file: feed.file, path: policy.path + ".curb_policy_id", message:
                            "policy \(quotedJSON(policy.curbPolicyID)) is also \(known.path) in \(file) with other content")
                    }
                    continue
                }
                policyIndex[policy.curbPolicyID] = policies.count
                policies.append((policy, feed.file))
            }
        }

        var zones: [(CurbFeed.Zone, String)] = []   // zone, location id
        var zoneFiles: [String: (String, String)] = [:]      // curb_zone_id → path, file
        var byLocation: [String: [(CurbFeed.Zone, String)]] = [:]
        for feed in feeds {
            for zone in feed.zones {
                if let (path, file) = zoneFiles[zone.curbZoneID] {
                    throw CurbFeedError(file: feed.file, path: zone.path + ".curb_zone_id", message:
                        "zone \(quotedJSON(zone.curbZoneID)) is also \(path) in \(file)")
                }
                zoneFiles[zone.curbZoneID] = (zone.path, feed.file)
                for (index, id) in zone.curbPolicyIDs.enumerated() where policyIndex[id] == nil {
                    throw CurbFeedError(file: feed.file, path: zone.path + ".curb_policy_ids[\(index)]",
                                        message: "policy \(quotedJSON(id)) is defined in no file of this import")
                }
                let location = source + ":" + (zone.userZoneID ?? zone.curbZoneID)
                for (other, file) in byLocation[location] ?? []
                where zone.startDate < (other.endDate ?? .max) && other.startDate < (zone.endDate ?? .max) {
                    throw CurbFeedError(file: feed.file, path: zone.path + (zone.userZoneID == nil ? ".curb_zone_id" : ".user_zone_id"),
                                        message: "location \(quotedJSON(location)) is also \(other.path) in \(file) at overlapping times")
                }
                byLocation[location, default: []].append((zone, feed.file))
                zones.append((zone, location))
            }
        }

        var rules: [JSONValue] = []
        var rates: [JSONValue] = []
        var spans: [JSONValue] = []
        for (policy, _) in policies {
            let id = JSONValue.string(policy.curbPolicyID)
            for (ruleIndex, rule) in policy.rules.enumerated() {
                rules.append(.object([
                    "curb_policy_id": id, "rule_index": .int(ruleIndex), "activity": .string(rule.activity),
                    "max_stay": .int(rule.maxStay), "max_stay_unit": .string(rule.maxStayUnit),
                    "no_return": .int(rule.noReturn), "no_return_unit": .string(rule.noReturnUnit),
                    "user_classes": rule.userClasses.map { .array($0.map(JSONValue.string)) } ?? .null,
                ]))
                for (rateIndex, rate) in rule.rates.enumerated() {
                    rates.append(.object([
                        "curb_policy_id": id, "rule_index": .int(ruleIndex), "rate_index": .int(rateIndex),
                        "rate": .int(rate.rate), "rate_unit": .string(rate.rateUnit),
                        "rate_unit_period": .string(rate.rateUnitPeriod),
                        "increment_duration": .int(rate.incrementDuration), "increment_amount": .int(rate.incrementAmount),
                        "start_duration": .int(rate.startDuration), "end_duration": .int(rate.endDuration),
                        "maximum_fee": .int(rate.maximumFee),
                    ]))
                }
            }
            for (spanIndex, span) in (policy.timeSpans ?? []).enumerated() {
                spans.append(.object([
                    "curb_policy_id": id, "span_index": .int(spanIndex),
                    "days_of_week": span.daysOfWeek.map { .array($0.map(JSONValue.string)) } ?? .null,
                    "days_of_month": span.daysOfMonth.map { .array($0.map { .int($0) }) } ?? .null,
                    "months": span.months.map { .array($0.map { .int($0) }) } ?? .null,
                    "time_of_day_start": span.timeOfDayStart.map(JSONValue.string) ?? .null,
                    "time_of_day_end": span.timeOfDayEnd.map(JSONValue.string) ?? .null,
                    "start_date": .int(span.startDate), "end_date": .int(span.endDate),
                    "designated_period": span.designatedPeriod.map(JSONValue.string) ?? .null,
                    "designated_period_except": .bool(span.designatedPeriodExcept),
                ]))
            }
        }

        let document: JSONValue = .object([
            "time_zone": .string(first.timeZone),
            "currency": .string(first.currency),
            "last_updated": .int(feeds.map(\.lastUpdated).max()),
            "author": feeds.lazy.compactMap(\.author).first.map(JSONValue.string) ?? .null,
            "license_url": feeds.lazy.compactMap(\.licenseURL).first.map(JSONValue.string) ?? .null,
            "zones": .array(zones.map { zone, location in
                .object([
                    "curb_zone_id": .string(zone.curbZoneID), "location_id": .string(location),
                    "user_zone_id": zone.userZoneID.map(JSONValue.string) ?? .null,
                    "name": zone.name.map(JSONValue.string) ?? .null,
                    "start_date": .int(zone.startDate), "end_date": .int(zone.endDate),
                    "published_date": .int(zone.publishedDate), "last_updated_date": .int(zone.lastUpdatedDate),
                    "curb_policy_ids": .array(zone.curbPolicyIDs.map(JSONValue.string)),
                    "geometry": zone.geometry.json,
                ])
            }),
            "policies": .array(policies.map { policy, _ in
                .object([
                    "curb_policy_id": .string(policy.curbPolicyID), "priority": .int(policy.priority),
                    "published_date": .int(policy.publishedDate),
                    "data_source_operator_ids": policy.dataSourceOperatorIDs.map { .array($0.map(JSONValue.string)) } ?? .null,
                ])
            }),
            "rules": .array(rules),
            "time_spans": .array(spans),
            "rates": .array(rates),
        ])
        self.document = document.serialized()
        self.zoneCount = zones.count
        self.policyCount = policies.count
    }

    /// `NAME` of `--source NAME`: the prefix of every location id, so no colon.
    public static func isValidSourceName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let allowed: (UInt8) -> Bool = {
            ($0 >= 48 && $0 <= 57) || ($0 >= 65 && $0 <= 90) || ($0 >= 97 && $0 <= 122)
                || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
        }
        return (1...63).contains(bytes.count) && bytes.allSatisfy(allowed)
            && bytes[0] != UInt8(ascii: "_") && bytes[0] != UInt8(ascii: ".") && bytes[0] != UInt8(ascii: "-")
    }
}

extension JSONValue {
    fileprivate static func int(_ value: Int64?) -> JSONValue {
        value.map { .number(JSONNumber($0)) } ?? .null
    }

    fileprivate static func int(_ value: Int) -> JSONValue {
        .number(JSONNumber(value))
    }
}
