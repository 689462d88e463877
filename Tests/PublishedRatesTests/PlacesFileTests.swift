import Foundation
import PriceJSON
import Testing
@testable import PublishedRates

/// `pricesvc import-places`' pure core: a GeoJSON FeatureCollection checked whole, each mistake named by
/// its JSON path, before any database work.
@Suite("GeoJSON places files")
struct PlacesFileTests {
    static func collection(_ features: String) -> [UInt8] {
        Array(#"{"type":"FeatureCollection","features":[\#(features)]}"#.utf8)
    }

    static func error(_ features: String) -> String? {
        do {
            _ = try PlacesFile(collection(features), source: "osm", file: "car-parks.geojson")
            return nil
        } catch {
            return error.description
        }
    }

    static let point = #"{"type":"Point","coordinates":[-122.3937,37.7955]}"#
    static let square = #"{"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[1,0],[0,0]]]}"#

    @Test func pointsPolygonsAndMultiPolygonsWithStringOrIntegerIDsBecomeNamePrefixedLocationIDs() throws {
        let file = try PlacesFile(Self.collection("""
            {"type":"Feature","geometry":\(Self.point),"properties":{"id":42,"name":"Ferry Garage","amenity":"parking"}},
            {"type":"Feature","geometry":\(Self.square),"properties":{"id":"way/7"}},
            {"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[0,1],[1,1],[0,0]]]]},"properties":{"id":"m","name":""}}
            """), source: "osm", file: "car-parks.geojson")
        #expect(file.places.map(\.locationID) == ["osm:42", "osm:way/7", "osm:m"])
        #expect(file.places.map(\.name) == ["Ferry Garage", nil, nil])
        let document = try JSONValue.parse(Array(file.document.utf8), maxBytes: 1 << 20, maxDepth: 16)
        let first = document["places"]?.arrayValue?.first
        #expect(first?["geometry"]?["type"]?.stringValue == "Point")
        #expect(first?["geometry"]?["coordinates"]?.arrayValue?.count == 2)
        #expect(first?["geometry"]?["amenity"] == nil, "only type and coordinates reach the database")
    }

    @Test(arguments: [
        (#"{"type":"Feature","geometry":\#(point),"properties":{}}"#, "car-parks.geojson: features[0].properties.id: missing required field"),
        (#"{"type":"Feature","geometry":\#(point),"properties":{"id":1.5}}"#, "features[0].properties.id: a numeric id must be an integer"),
        (#"{"type":"Feature","geometry":\#(point),"properties":{"id":true}}"#, "features[0].properties.id: must be a string or an integer"),
        (#"{"type":"Feature","geometry":{"type":"Point","coordinates":[181,0]},"properties":{"id":1}}"#,
         "features[0].geometry.coordinates[0]: longitude must be between -180 and 180"),
        (#"{"type":"Feature","geometry":{"type":"Point","coordinates":[0,-90.5]},"properties":{"id":1}}"#,
         "features[0].geometry.coordinates[1]: latitude must be between -90 and 90"),
        (#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[0,1],[1,1],[1,0]]]},"properties":{"id":1}}"#,
         "features[0].geometry.coordinates[0]: a linear ring ends where it starts"),
        (#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[0,1],[0,0]]]},"properties":{"id":1}}"#,
         "features[0].geometry.coordinates[0]: a linear ring has at least four positions"),
        (#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]},"properties":{"id":1}}"#,
         "features[0].geometry.type: unsupported geometry \"LineString\""),
        (#"{"type":"Feature","geometry":null,"properties":{"id":1}}"#, "features[0].geometry: missing required field"),
        (#"{"type":"Feature","geometry":\#(point),"properties":{"id":1}},{"type":"Feature","geometry":\#(point),"properties":{"id":"1"}}"#,
         "features[1].properties.id: \"1\" is also features[0].properties.id"),
        (#"{"type":"Feature","geometry":\#(point),"properties":{"id":1,"name":"\#(String(repeating: "x", count: 201))"}}"#,
         "features[0].properties.name: must be at most 200 characters"),
        (#"{"type":"Point","geometry":\#(point),"properties":{"id":1}}"#, "features[0].type: must be \"Feature\""),
    ])
    func eachMistakeIsNamedByItsJSONPath(features: String, expected: String) {
        let message = Self.error(features)
        #expect(message?.contains(expected) == true, "\(message ?? "accepted")")
    }

    @Test func aFeatureOverThePositionBoundIsRefused() {
        let ring = (0..<PlaceGeometry.maxPositions).map { "[\(Double($0) / 1e6),0]" }.joined(separator: ",")
        let message = Self.error(#"{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[\#(ring),[0,0]]]},"properties":{"id":1}}"#)
        #expect(message?.contains("more than \(PlaceGeometry.maxPositions) positions in one geometry") == true, "\(message ?? "accepted")")
    }

    @Test func onlyAFeatureCollectionIsRead() {
        #expect(throws: CurbFeedError.self) { try PlacesFile(Array(#"{"type":"Feature"}"#.utf8), source: "osm", file: "f") }
        #expect(throws: CurbFeedError.self) { try PlacesFile(Array("[".utf8), source: "osm", file: "f") }
    }
}
