import PriceHTTPMessage
import PriceJSON
import Testing
@testable import PostgRESTDialect

@Suite("places_nearby's rows as GeoJSON, and double precision columns")
struct GeoJSONRenderingTests {
    static let columns: [ResultColumn] = ([("location_id", .text), ("lat", .double), ("lng", .double), ("distance_m", .integer)]
                                          as [(String, ColumnType)]).map { ResultColumn(name: $0.0, type: $0.1) }
    static let rows: [[String?]] = [
        ["sf:a", "37.7955", "-122.3937", "0"],
        ["sf:b", "37.79", "-122.39", "612"],
    ]

    func render(_ query: [(String, String)], accept: String?, offersGeoJSON: Bool = true) throws(APIError) -> HTTPResponse {
        let request = HTTPRequest(method: "POST", path: "/rest/v1/rpc/places_nearby", headers: accept.map { ["accept": $0] } ?? [:])
        let options = try ReadOptions.parse(query: query.map { (name: $0.0, value: $0.1) }, headers: request,
                                            columns: Self.columns, relation: "places_nearby", isRead: false,
                                            offersGeoJSON: offersGeoJSON).get().0
        return options.render(ResultSet(columns: Self.columns, rows: Self.rows))
    }

    @Test func geoJSONIsAFeatureCollectionOfPointsAtLngLatWithTheOtherColumnsAsProperties() throws {
        let response = try render([], accept: "application/geo+json")
        #expect(response.status == 200)
        #expect(response.headers.first { $0.0 == "Content-Type" }?.1 == "application/geo+json; charset=utf-8")
        let body = try JSONValue.parse(response.body, maxBytes: 1 << 20)
        #expect(body["type"]?.stringValue == "FeatureCollection")
        let features = body["features"]?.arrayValue ?? []
        #expect(features.count == 2)
        #expect(features[0]["type"]?.stringValue == "Feature")
        #expect(features[0]["geometry"]?["type"]?.stringValue == "Point")
        #expect(features[0]["geometry"]?["coordinates"]?.arrayValue?.map { $0.numberValue?.text } == ["-122.3937", "37.7955"])
        #expect(features[1]["properties"]?.objectValue?.keys.sorted() == ["distance_m", "location_id"])
        #expect(features[1]["properties"]?["distance_m"]?.numberValue?.text == "612")
    }

    @Test func filtersAndSelectApplyAsForJSON() throws {
        let response = try render([("select", "location_id"), ("lat", "lt.37.795")], accept: "application/geo+json")
        let features = try JSONValue.parse(response.body, maxBytes: 1 << 20)["features"]?.arrayValue ?? []
        #expect(features.count == 1)
        #expect(features[0]["properties"]?.objectValue?.keys.sorted() == ["location_id"])
        #expect(features[0]["geometry"]?["coordinates"]?.arrayValue?.count == 2, "the point whatever select says")
    }

    @Test func aDoubleColumnIsAJSONNumberAndFiltersByValue() throws {
        let response = try render([("lng", "gte.-122.3937"), ("order", "lat.desc")], accept: nil)
        let rows = try JSONValue.parse(response.body, maxBytes: 1 << 20).arrayValue ?? []
        #expect(rows.map { $0["location_id"]?.stringValue } == ["sf:a", "sf:b"])
        #expect(rows[0]["lat"]?.numberValue?.text == "37.7955")
        #expect(throws: APIError.self) { try render([("lat", "gt.NaN")], accept: nil) }
    }

    @Test func geoJSONIsOnlyOfferedWhereRowsHaveAPoint() {
        #expect(throws: APIError.self) { try render([], accept: "application/geo+json", offersGeoJSON: false) }
    }

    @Test(arguments: [("37.7955", 37.7955), ("-1e-3", -0.001), ("+5", 5.0)])
    func decimalsRead(text: String, value: Double) {
        #expect(ColumnType.decimal(text) == value)
    }

    @Test(arguments: ["NaN", "Infinity", "-inf", "1e400", "", "-", ".", "1e", "0x10", " 1"])
    func nonDecimalsAreRefused(text: String) {
        #expect(ColumnType.decimal(text) == nil)
    }
}
