import PriceJSON

/// A GeoJSON FeatureCollection (RFC 7946) of places for `pricesvc import-places --source NAME FILE`: a
/// city's off-street garages, an OpenStreetMap export of `amenity=parking`. Each feature is a `Point`,
/// `Polygon` or `MultiPolygon` with `properties.id` (a string or an integer, required) and
/// `properties.name` (optional); its location id is `NAME:id`. Checked whole before anything is written,
/// so a bad file changes nothing; the first mistake is thrown with its JSON path.
public struct PlacesFile: Sendable {
    public struct Place: Sendable, Equatable {
        public var locationID: String
        public var name: String?
        public var geometry: PlaceGeometry
    }

    public var places: [Place]

    /// Largest file read: 200 000 places of a few hundred bytes each.
    public static let maxFileBytes = 64 << 20
    public static let maxFeatures = 200_000
    /// A place's name, in characters (a garage's name is tens).
    public static let maxNameCharacters = 200
    /// `properties.id` as text, in characters.
    public static let maxIDCharacters = 150

    public init(_ bytes: [UInt8], source: String, file: String) throws(CurbFeedError) {
        guard bytes.count <= Self.maxFileBytes else {
            throw CurbFeedError(file: file, path: "", message: "larger than \(Self.maxFileBytes >> 20) MiB")
        }
        let document: JSONValue
        do {
            document = try JSONParser(maxBytes: Self.maxFileBytes, maxDepth: 32).parse(bytes)
        } catch {
            throw CurbFeedError(file: file, path: "", message: "malformed JSON at byte \(error.offset): \(error.message)")
        }
        let root = try Fields(document, file: file, path: "")
        guard root.object["type"]?.stringValue == "FeatureCollection" else {
            throw root.error("type", "must be \"FeatureCollection\"")
        }
        guard let features = root.object["features"]?.arrayValue else {
            throw root.error("features", "expected an array of features")
        }
        guard features.count <= Self.maxFeatures else {
            throw root.error("features", "more than \(Self.maxFeatures) features")
        }
        var seen: [String: String] = [:]
        var places: [Place] = []
        places.reserveCapacity(features.count)
        for (index, value) in features.enumerated() {
            let feature = try Fields(value, file: file, path: "features[\(index)]")
            guard feature.object["type"]?.stringValue == "Feature" else {
                throw feature.error("type", "must be \"Feature\"")
            }
            guard let geometry = feature.object["geometry"], !geometry.isNull else {
                throw feature.error("geometry", "missing required field")
            }
            let shape = try PlaceGeometry(geometry, file: file, path: feature.at("geometry"))
            guard let properties = try feature.object("properties", required: true) else {
                throw feature.error("properties", "missing required field")
            }
            let id: String
            switch properties.object["id"] {
            case .string(let text)?:
                guard (1...Self.maxIDCharacters).contains(text.count),
                      !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                    throw properties.error("id", "must be 1 to \(Self.maxIDCharacters) characters without control characters")
                }
                id = text
            case .number(let number)?:
                guard let integer = number.asInt64 else { throw properties.error("id", "a numeric id must be an integer") }
                id = String(integer)
            case nil, .null?:
                throw properties.error("id", "missing required field (a string or an integer)")
            default:
                throw properties.error("id", "must be a string or an integer")
            }
            var name: String?
            switch properties.object["name"] {
            case nil, .null?: name = nil
            case .string(let text)?:
                guard text.count <= Self.maxNameCharacters,
                      !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0 == "\u{0}" }) else {
                    throw properties.error("name", "must be at most \(Self.maxNameCharacters) characters without control characters")
                }
                name = text.isEmpty ? nil : text
            default:
                throw properties.error("name", "must be a string")
            }
            let location = source + ":" + id
            if let earlier = seen[location] {
                throw properties.error("id", "\(quotedJSON(id)) is also \(earlier).properties.id")
            }
            seen[location] = feature.path
            places.append(Place(locationID: location, name: name, geometry: shape))
        }
        self.places = places
    }

    /// The document `private.places_replace_source(source, document)` loads: `{"places": [...]}`, each with
    /// `location_id`, `name` and `geometry`.
    public var document: String {
        JSONValue.object(["places": .array(places.map { place in
            .object(["location_id": .string(place.locationID), "name": place.name.map(JSONValue.string) ?? .null,
                     "geometry": place.geometry.json])
        })]).serialized()
    }
}
