import Foundation
import PriceJSON
import Testing
@testable import PublishedRates

/// The importer's pure core: every mistake is named by file and JSON path, before any database work.
@Suite("CDS feed reading and checks")
struct CurbFeedTests {
    static let zoneID = "11111111-1111-4111-8111-111111111111"
    static let policyID = "6f1c0000-0000-4000-8000-000000000001"

    static func feed(policies: String? = nil, zones: String? = nil, timeZone: String = "America/New_York",
                     currency: String = "USD") -> String {
        let zoneList = zones ?? """
            [{"curb_zone_id":"\(zoneID)","curb_policy_ids":["\(policyID)"],"start_date":0,"published_date":0,
              "last_updated_date":0,"user_zone_id":"401","geometry":{"type":"Polygon","coordinates":[[[-73.99,40.75],[-73.98,40.75],[-73.98,40.76],[-73.99,40.75]]]}}]
            """
        let policyList = policies ?? """
            [{"curb_policy_id":"\(policyID)","priority":1,"published_date":0,
              "rules":[{"activity":"parking","max_stay":120,"rate":[{"rate":5,"rate_unit":"minute","increment_duration":15}]}],
              "time_spans":[{"days_of_week":["mon"],"time_of_day_start":"09:00","time_of_day_end":"18:00"}]}]
            """
        return """
            {"version":"1.0","time_zone":"\(timeZone)","currency":"\(currency)","last_updated":1767225600000,
             "author":"City","license_url":"https://example.org/l","data":{"zones":\(zoneList),"policies":\(policyList)}}
            """
    }

    static func read(_ text: String, file: String = "city.json") throws(CurbFeedError) -> CurbFeed {
        try CurbFeed.read(Array(text.utf8), file: file)
    }

    static func error(_ text: String) -> String? {
        do {
            _ = try RatesImport(source: "city", feeds: [read(text)], knownTimeZones: ["America/New_York", "Europe/Paris"])
            return nil
        } catch {
            return error.description
        }
    }

    @Test("a valid feed becomes one document with location ids NAME:user_zone_id")
    func validFeed() throws {
        let plan = try RatesImport(source: "city", feeds: [Self.read(Self.feed())], knownTimeZones: ["America/New_York"])
        let document = try JSONValue.parse(Array(plan.document.utf8), maxBytes: 1 << 20)
        #expect(document["zones"]?.arrayValue?.first?["location_id"] == "city:401")
        #expect(document["rates"]?.arrayValue?.first?["increment_duration"] == 15)
        #expect(document["rules"]?.arrayValue?.first?["max_stay_unit"] == "minute")
        #expect(plan.zoneCount == 1 && plan.policyCount == 1)
    }

    @Test("without user_zone_id the location id is NAME:curb_zone_id")
    func locationFromZoneID() throws {
        let zones = """
            [{"curb_zone_id":"\(Self.zoneID.uppercased())","curb_policy_ids":["\(Self.policyID)"],"start_date":0,
              "published_date":0,"last_updated_date":0,"geometry":{"type":"Polygon","coordinates":[[[-73.99,40.75],[-73.98,40.75],[-73.98,40.76],[-73.99,40.75]]]}}]
            """
        let plan = try RatesImport(source: "city", feeds: [Self.read(Self.feed(zones: zones))], knownTimeZones: ["America/New_York"])
        #expect(plan.document.contains("\"location_id\":\"city:\(Self.zoneID)\""))
    }

    @Test("an unknown rate unit names the file and the full JSON path")
    func unknownUnit() {
        let policies = """
            [{"curb_policy_id":"\(Self.policyID)","priority":1,"published_date":0,
              "rules":[{"activity":"parking","rate":[{"rate":5,"rate_unit":"minute","end_duration":10},{"rate":5,"rate_unit":"fortnight"}]}]}]
            """
        #expect(Self.error(Self.feed(policies: policies))
                == "city.json: data.policies[0].rules[0].rate[1].rate_unit: unknown unit \"fortnight\"")
    }

    @Test("mistakes, one clear line each", arguments: [
        ("{\"time_zone\":", "city.json: malformed JSON at line 1, column 14: "),
        (feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"published_date\":0,\"rules\":[]}]"),
         "city.json: data.policies[0].priority: missing required field"),
        (feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"priority\":1,\"published_date\":0,\"rules\":[{\"activity\":\"dancing\"}]}]"),
         "city.json: data.policies[0].rules[0].activity: unknown activity \"dancing\""),
        (feed(timeZone: "Mars/Olympus_Mons"), "city.json: time_zone: unknown IANA time zone \"Mars/Olympus_Mons\""),
        (feed(policies: "[]"), "city.json: data.zones[0].curb_policy_ids[0]: policy \"\(policyID)\" is defined in no file of this import"),
        (feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"priority\":1,\"published_date\":0,\"rules\":[{\"activity\":\"parking\",\"rate\":[{\"rate\":200,\"rate_unit\":\"hour\",\"end_duration\":2},{\"rate\":400,\"rate_unit\":\"minute\",\"start_duration\":90}]}]}]"),
         "city.json: data.policies[0].rules[0].rate[1]: overlaps data.policies[0].rules[0].rate[0] (from 0 to 2 hours): tiers of one rule must not overlap"),
        (feed(currency: "usd"), "city.json: currency: expected an ISO 4217 code such as \"USD\", got \"usd\""),
        (feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"priority\":1,\"published_date\":0,\"rules\":[],\"time_spans\":[{\"time_of_day_start\":\"9am\"}]}]"),
         "city.json: data.policies[0].time_spans[0].time_of_day_start: expected a time of day \"HH:MM\", got \"9am\""),
        (feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"priority\":1,\"published_date\":0,\"rules\":[],\"time_spans\":[{\"time_of_day_start\":\"+1:00\"}]}]"),
         "city.json: data.policies[0].time_spans[0].time_of_day_start: expected a time of day \"HH:MM\", got \"+1:00\""),
        (feed(zones: "[{\"curb_zone_id\":\"not-a-uuid\"}]"), "city.json: data.zones[0].geometry: missing required field"),
        (feed(zones: "[{\"curb_zone_id\":\"11111111-1111-4111-8111-11111111111\",\"curb_policy_ids\":[],\"start_date\":0,\"published_date\":0,\"last_updated_date\":0,\"geometry\":{}}]"),
         "city.json: data.zones[0].curb_zone_id: expected a UUID, got \"11111111-1111-4111-8111-11111111111\""),
        (feed(zones: "[{\"curb_zone_id\":\"\(zoneID)\",\"curb_policy_ids\":[\"6f1c0000_0000-4000-8000-000000000001\"],\"start_date\":0,\"published_date\":0,\"last_updated_date\":0,\"geometry\":{}}]"),
         "city.json: data.zones[0].curb_policy_ids[0]: expected a UUID, got \"6f1c0000_0000-4000-8000-000000000001\""),
    ])
    func mistakes(_ input: String, _ expected: String) {
        let message = Self.error(input)
        #expect(message?.hasPrefix(expected) == true, "\(message ?? "no error")")
    }

    static func rule(_ rule: String) -> String {
        feed(policies: "[{\"curb_policy_id\":\"\(policyID)\",\"priority\":1,\"published_date\":0,\"rules\":[\(rule)]}]")
    }

    @Test("durations beyond the 100-year horizon are refused, naming the JSON path", arguments: [
        ("{\"activity\":\"parking\",\"max_stay\":2147483647,\"max_stay_unit\":\"year\"}",
         "city.json: data.policies[0].rules[0].max_stay: 2147483647 years is beyond the 100-year horizon of a feed"),
        ("{\"activity\":\"parking\",\"max_stay\":1201,\"max_stay_unit\":\"month\"}",
         "city.json: data.policies[0].rules[0].max_stay: 1201 months is beyond the 100-year horizon"),
        ("{\"activity\":\"parking\",\"no_return\":401,\"no_return_unit\":\"quarter\"}",
         "city.json: data.policies[0].rules[0].no_return: 401 quarters is beyond the 100-year horizon"),
        ("{\"activity\":\"parking\",\"max_stay\":5229,\"max_stay_unit\":\"week\"}",
         "city.json: data.policies[0].rules[0].max_stay: 5229 weeks is beyond the 100-year horizon"),
        ("{\"activity\":\"parking\",\"rate\":[{\"rate\":1,\"rate_unit\":\"year\",\"end_duration\":101}]}",
         "city.json: data.policies[0].rules[0].rate[0].end_duration: 101 years is beyond the 100-year horizon"),
        ("{\"activity\":\"parking\",\"rate\":[{\"rate\":1,\"rate_unit\":\"day\",\"start_duration\":36601}]}",
         "city.json: data.policies[0].rules[0].rate[0].start_duration: 36601 days is beyond the 100-year horizon"),
        ("{\"activity\":\"parking\",\"rate\":[{\"rate\":1,\"rate_unit\":\"month\",\"increment_duration\":1201}]}",
         "city.json: data.policies[0].rules[0].rate[0].increment_duration: 1201 months is beyond the 100-year horizon"),
    ])
    func horizon(_ rule: String, _ expected: String) {
        let message = Self.error(Self.rule(rule))
        #expect(message?.hasPrefix(expected) == true, "\(message ?? "no error")")
    }

    @Test("durations up to the horizon are accepted", arguments: [
        "{\"activity\":\"parking\",\"max_stay\":100,\"max_stay_unit\":\"year\"}",
        "{\"activity\":\"parking\",\"max_stay\":1200,\"max_stay_unit\":\"month\"}",
        "{\"activity\":\"parking\",\"max_stay\":2147483647,\"max_stay_unit\":\"second\"}",
        "{\"activity\":\"parking\",\"max_stay\":36600,\"max_stay_unit\":\"day\"}",
    ])
    func withinHorizon(_ rule: String) {
        #expect(Self.error(Self.rule(rule)) == nil)
    }

    @Test("a rate that could charge beyond 2^53 - 1 for the longest stay is refused, naming the JSON path", arguments: [
        "{\"rate\":2147483647,\"rate_unit\":\"second\"}",
        // 31 622 401 seconds touched in 366 days: 284 836 033 a second is the first rate over 2^53 - 1.
        "{\"rate\":284836033,\"rate_unit\":\"second\"}",
        // Increments round the units up: 2 units of 100 years' worth of seconds.
        "{\"rate\":2147483647,\"rate_unit\":\"second\",\"increment_duration\":2000000000}",
    ])
    func rateBeyondJSON(_ rate: String) {
        let message = Self.error(Self.rule("{\"activity\":\"parking\",\"rate\":[\(rate)]}"))
        #expect(message?.hasPrefix("city.json: data.policies[0].rules[0].rate[0].rate: ") == true, "\(message ?? "no error")")
        #expect(message?.contains("2^53 - 1") == true)
    }

    @Test("the largest rates that fit are accepted: a year of seconds, and any rate per hour, day or year")
    func ratesThatFit() {
        for rate in ["{\"rate\":284836032,\"rate_unit\":\"second\"}", "{\"rate\":2147483647,\"rate_unit\":\"minute\"}",
                     "{\"rate\":2147483647,\"rate_unit\":\"year\",\"increment_duration\":100}",
                     "{\"rate\":2147483647,\"rate_unit\":\"hour\",\"rate_unit_period\":\"calendar\"}"] {
            #expect(Self.error(Self.rule("{\"activity\":\"parking\",\"rate\":[\(rate)]}")) == nil, "\(rate)")
        }
    }

    @Test("tiers that meet end to end do not overlap")
    func tiersMeeting() {
        let policies = """
            [{"curb_policy_id":"\(Self.policyID)","priority":1,"published_date":0,
              "rules":[{"activity":"parking","rate":[{"rate":200,"rate_unit":"hour","end_duration":1},{"rate":400,"rate_unit":"minute","start_duration":60}]}]}]
            """
        #expect(Self.error(Self.feed(policies: policies)) == nil)
    }

    @Test("split files must agree on time zone and currency; a policy id twice must be the same policy")
    func splitFiles() throws {
        let zonesOnly = try Self.read(Self.feed().replacingOccurrences(of: ",\"policies\":", with: ",\"unused\":"), file: "zones.json")
        let policiesOnly = try Self.read(Self.feed().replacingOccurrences(of: "\"zones\":", with: "\"unused\":"), file: "policies.json")
        let plan = try RatesImport(source: "city", feeds: [zonesOnly, policiesOnly], knownTimeZones: ["America/New_York", "Europe/Paris"])
        #expect(plan.zoneCount == 1 && plan.policyCount == 1)

        let paris = try Self.read(Self.feed(timeZone: "Europe/Paris").replacingOccurrences(of: "\"zones\":", with: "\"unused\":"), file: "paris.json")
        #expect(throws: CurbFeedError(file: "paris.json", path: "time_zone",
                                      message: "\"Europe/Paris\" differs from \"America/New_York\" in zones.json: one import has one time zone")) {
            try RatesImport(source: "city", feeds: [zonesOnly, paris], knownTimeZones: ["America/New_York", "Europe/Paris"])
        }
        let changed = try Self.read(Self.feed().replacingOccurrences(of: "\"priority\":1", with: "\"priority\":2"), file: "b.json")
        #expect(throws: CurbFeedError.self) {
            try RatesImport(source: "city", feeds: [Self.read(Self.feed(), file: "a.json"), changed],
                            knownTimeZones: ["America/New_York"])
        }
    }

    @Test("source names are location id prefixes: no colon, nothing odd")
    func sourceNames() {
        #expect(RatesImport.isValidSourceName("sfmta"))
        #expect(RatesImport.isValidSourceName("paris-75.v2"))
        #expect(!RatesImport.isValidSourceName("a:b"))
        #expect(!RatesImport.isValidSourceName(""))
        #expect(!RatesImport.isValidSourceName("-x"))
    }
}
