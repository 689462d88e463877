// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, one per input format a client or a feed sends (docs/fuzzing.md); built and run by
// scripts/fuzz.sh, in the style of swift-protobuf's FuzzTesting/. Its own package, so the sanitizer
// build never touches the service's .build. The service is named "pricesvc" here whatever its
// directory is called (a path dependency is otherwise known by its directory's name).
let package = Package(
    name: "PriceFuzz",
    dependencies: [.package(name: "pricesvc", path: "..")],
    targets: [
        // What the targets share: requests written as text, the service with canned rows, the
        // promises every answer keeps, reference ISO 8601 forms.
        .target(name: "FuzzCommon", dependencies: [
            .product(name: "PriceJSON", package: "pricesvc"),
            .product(name: "PriceDB", package: "pricesvc"),
            .product(name: "PriceHTTP", package: "pricesvc"),
            .product(name: "PriceAPI", package: "pricesvc"),
            .product(name: "AnonAuth", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzJSON", dependencies: [
            "FuzzCommon", .product(name: "PriceJSON", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzReadOptions", dependencies: ["FuzzCommon"]),
        .executableTarget(name: "FuzzToken", dependencies: [
            "FuzzCommon", .product(name: "AnonAuth", package: "pricesvc"), .product(name: "PriceJSON", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzTime", dependencies: [
            "FuzzCommon", .product(name: "PriceAPI", package: "pricesvc"), .product(name: "PriceDB", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzCurbFeed", dependencies: [
            "FuzzCommon", .product(name: "PublishedRates", package: "pricesvc"), .product(name: "PriceJSON", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzRequestHead", dependencies: [
            "FuzzCommon", .product(name: "PriceHTTP", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzRequestFraming", dependencies: [
            "FuzzCommon", .product(name: "PriceHTTP", package: "pricesvc"),
        ]),
        .executableTarget(name: "FuzzAttestation", dependencies: [
            "FuzzCommon", .product(name: "AppAttest", package: "pricesvc"),
        ]),
        .testTarget(name: "FuzzCommonTests", dependencies: ["FuzzCommon"]),
    ],
    swiftLanguageModes: [.v6]
)
