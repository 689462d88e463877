/// The parsers of this module that no public API reaches directly, for the fuzz targets in `Fuzz/`
/// (a separate package, so `internal` is out of its reach). SPI, so no ordinary client sees them:
/// `@_spi(Fuzzing) import PriceAPI`. Everything else the targets drive through `PriceApplication`.
@_spi(Fuzzing) public enum PriceAPIFuzzing {
    /// `Timestamp.microseconds`: what `starts_at` and timestamp filter operands are read with.
    public static func timestampMicroseconds(_ text: String) -> Int64? {
        Timestamp.microseconds(text)
    }

    /// `Timestamp.jsonForm`: a timestamptz cell as the JSON output writes it.
    public static func timestampJSONForm(_ text: String) -> String {
        Timestamp.jsonForm(text)
    }
}
