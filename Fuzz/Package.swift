// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets, one per input format a client or a feed sends (docs/fuzzing.md), built and run by
// scripts/dev/fuzz.sh (`make fuzz`), in the style of swift-protobuf's FuzzTesting/. Each executable is a shim
// over the service package's FuzzHarness, whose checks the ordinary test build replays over every committed
// input (Tests/FuzzReplayTests, in `make test`). Its own package, so the sanitizer build never touches the
// service's .build. The service is named "pricesvc" here whatever its directory is called (a path
// dependency is otherwise known by its directory's name).
let targets = ["FuzzJSON", "FuzzReadOptions", "FuzzToken", "FuzzTime", "FuzzCurbFeed", "FuzzPlacesFile", "FuzzRequestHead",
               "FuzzRequestFraming", "FuzzAttestation", "FuzzKeyAttestation"]

let package = Package(
    name: "PriceFuzz",
    dependencies: [.package(name: "pricesvc", path: "..")],
    targets: targets.map { name in
        .executableTarget(name: name, dependencies: [.product(name: "FuzzHarness", package: "pricesvc")])
    },
    swiftLanguageModes: [.v6]
)
