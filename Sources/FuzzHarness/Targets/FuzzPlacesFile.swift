import PriceJSON
import PublishedRates

/// The GeoJSON places file decoder (`import-places`). The input is one file; beyond not crashing, what an
/// accepted file keeps is what `ST_GeomFromGeoJSON` reads and the bounds say: every position two numbers
/// in range, every ring closed with at least four positions, every location id `fuzz:` and distinct, no
/// name over the bound, and the document loaded is JSON with one place per feature.
func fuzzPlacesFile(_ input: UnsafeRawBufferPointer) {
    guard let file = try? PlacesFile(Array(input), source: "fuzz", file: "fuzz.geojson") else { return }
    var ids = Set<String>()
    for place in file.places {
        fuzzRequire(place.locationID.hasPrefix("fuzz:"), "location id \(printable(place.locationID)) lost its source")
        fuzzRequire(ids.insert(place.locationID).inserted, "location id \(printable(place.locationID)) twice")
        fuzzRequire((place.name?.count ?? 0) <= PlacesFile.maxNameCharacters, "a name over the bound kept")
        checkGeometry(place.geometry.json)
    }
    do {
        let document = try JSONParser(maxBytes: Int.max, maxDepth: 64).parse(file.document)
        fuzzRequire(document["places"]?.arrayValue?.count == file.places.count, "the document lost places")
    } catch {
        fuzzRequire(false, "the places document is not JSON (\(error))")
    }
}

private func checkGeometry(_ geometry: JSONValue) {
    guard let type = geometry["type"]?.stringValue, let coordinates = geometry["coordinates"] else {
        fuzzRequire(false, "a geometry without type or coordinates kept")
        return
    }
    func position(_ value: JSONValue) {
        let numbers = value.arrayValue?.compactMap { $0.numberValue.flatMap { Double($0.text) } } ?? []
        fuzzRequire(numbers.count == 2, "a position of \(numbers.count) numbers kept")
        guard numbers.count == 2 else { return }
        fuzzRequire((-180...180).contains(numbers[0]) && (-90...90).contains(numbers[1]), "a position out of range kept")
    }
    func polygon(_ value: JSONValue) {
        let rings = value.arrayValue ?? []
        fuzzRequire(!rings.isEmpty, "a polygon without rings kept")
        for ring in rings {
            let positions = ring.arrayValue ?? []
            fuzzRequire(positions.count >= 4 && positions.first == positions.last, "an open or short ring kept")
            positions.forEach(position)
        }
    }
    switch type {
    case "Point": position(coordinates)
    case "Polygon": polygon(coordinates)
    case "MultiPolygon": (coordinates.arrayValue ?? []).forEach(polygon)
    default: fuzzRequire(false, "geometry type \(printable(type)) kept")
    }
}
