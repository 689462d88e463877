import PriceJSON

/// A place's shape as RFC 7946 GeoJSON writes it: a `Point`, `Polygon` or `MultiPolygon` in WGS 84
/// longitude/latitude. Checked here, so PostGIS's `ST_GeomFromGeoJSON` is only ever given what it reads
/// (each position two or three finite numbers in range, each ring closed with at least four positions),
/// and bounded, so one feature cannot make a search slow: a polygon's distance is computed from every
/// vertex.
public struct PlaceGeometry: Sendable, Equatable {
    /// The geometry object with only `type` and `coordinates`, as JSON text for `ST_GeomFromGeoJSON`.
    public var json: JSONValue

    /// The most positions one feature may have (a city block's polygon has tens; OpenStreetMap's largest
    /// car parks a few thousand).
    public static let maxPositions = 10_000

    public static let types = ["Point", "Polygon", "MultiPolygon"]

    public init(_ value: JSONValue, file: String, path: String) throws(CurbFeedError) {
        let fields = try Fields(value, file: file, path: path)
        guard let type = fields.object["type"]?.stringValue else {
            throw fields.error("type", "missing: a geometry's type is one of \(Self.types.joined(separator: ", "))")
        }
        guard let coordinates = fields.object["coordinates"] else {
            throw fields.error("coordinates", "missing required field")
        }
        var count = 0
        let checked: JSONValue
        let at = fields.at("coordinates")
        switch type {
        case "Point":
            checked = try Self.position(coordinates, file: file, path: at, count: &count)
        case "Polygon":
            checked = try Self.polygon(coordinates, file: file, path: at, count: &count)
        case "MultiPolygon":
            guard let polygons = coordinates.arrayValue, !polygons.isEmpty else {
                throw CurbFeedError(file: file, path: at, message: "expected a non-empty array of polygons")
            }
            var list: [JSONValue] = []
            for (index, polygon) in polygons.enumerated() {
                list.append(try Self.polygon(polygon, file: file, path: at + "[\(index)]", count: &count))
            }
            checked = .array(list)
        default:
            throw fields.error("type", "unsupported geometry \(quotedJSON(type)): one of \(Self.types.joined(separator: ", "))")
        }
        json = .object(["type": .string(type), "coordinates": checked])
    }

    private static func polygon(_ value: JSONValue, file: String, path: String, count: inout Int) throws(CurbFeedError) -> JSONValue {
        guard let rings = value.arrayValue, !rings.isEmpty else {
            throw CurbFeedError(file: file, path: path, message: "expected a non-empty array of linear rings")
        }
        var list: [JSONValue] = []
        for (index, ring) in rings.enumerated() {
            let at = path + "[\(index)]"
            guard let positions = ring.arrayValue, positions.count >= 4 else {
                throw CurbFeedError(file: file, path: at, message: "a linear ring has at least four positions")
            }
            var checked: [JSONValue] = []
            for (offset, position) in positions.enumerated() {
                checked.append(try Self.position(position, file: file, path: at + "[\(offset)]", count: &count))
            }
            guard checked.first == checked.last else {
                throw CurbFeedError(file: file, path: at, message: "a linear ring ends where it starts (its first and last positions are equal)")
            }
            list.append(.array(checked))
        }
        return .array(list)
    }

    private static func position(_ value: JSONValue, file: String, path: String, count: inout Int) throws(CurbFeedError) -> JSONValue {
        count += 1
        guard count <= maxPositions else {
            throw CurbFeedError(file: file, path: path, message: "more than \(maxPositions) positions in one geometry")
        }
        guard let numbers = value.arrayValue, (2...3).contains(numbers.count) else {
            throw CurbFeedError(file: file, path: path, message: "a position is [longitude, latitude]")
        }
        var degrees: [Double] = []
        for number in numbers.prefix(2) {
            guard let text = number.numberValue?.text, let parsed = Double(text), parsed.isFinite else {
                throw CurbFeedError(file: file, path: path, message: "a position is [longitude, latitude], both numbers")
            }
            degrees.append(parsed)
        }
        guard (-180...180).contains(degrees[0]) else {
            throw CurbFeedError(file: file, path: path + "[0]", message: "longitude must be between -180 and 180")
        }
        guard (-90...90).contains(degrees[1]) else {
            throw CurbFeedError(file: file, path: path + "[1]", message: "latitude must be between -90 and 90")
        }
        return .array(Array(numbers.prefix(2)))
    }
}
