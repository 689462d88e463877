// swift-tools-version:6.0
import PackageDescription

// C libraries come from Debian's -dev packages through pkg-config; each sits
// behind a shim module (C*) that only its Swift wrapper imports.
let package = Package(
    name: "pricesvc",
    products: [
        .executable(name: "pricesvc", targets: ["pricesvc"]),
    ],
    targets: [
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),

        .target(name: "PriceJSON"),
        .target(name: "PriceDB", dependencies: ["CLibPQ"]),
        .target(name: "AnonAuth", dependencies: ["CCrypto", "PriceJSON"]),
        .target(name: "PriceHTTP", dependencies: ["CMicroHTTPD", "PriceDB", "AnonAuth", "PriceJSON"]),
        .target(name: "PublishedRates", dependencies: ["PriceJSON"]),
        .executableTarget(name: "pricesvc", dependencies: ["PriceHTTP", "PriceDB", "AnonAuth", "PriceJSON", "PublishedRates"]),

        .testTarget(name: "PriceJSONTests", dependencies: ["PriceJSON"]),
        .testTarget(name: "PriceDBTests", dependencies: ["PriceDB"]),
        .testTarget(name: "AnonAuthTests", dependencies: ["AnonAuth"]),
        .testTarget(name: "PublishedRatesTests", dependencies: ["PublishedRates", "PriceJSON"]),
        .testTarget(name: "PriceHTTPTests", dependencies: ["PriceHTTP", "AnonAuth", "PriceDB", "PriceJSON"]),
    ],
    swiftLanguageModes: [.v6]
)
