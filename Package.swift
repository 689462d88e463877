// swift-tools-version:6.0
import PackageDescription

// C libraries come from Debian's -dev packages through pkg-config; each sits
// behind a shim module (C*) that only its Swift wrapper imports.
let package = Package(
    name: "pricesvc",
    products: [
        .executable(name: "pricesvc", targets: ["pricesvc"]),
        // For the fuzz targets in Fuzz/ (a separate package that depends on this one by path).
        .library(name: "PriceJSON", targets: ["PriceJSON"]),
        .library(name: "PriceDB", targets: ["PriceDB"]),
        .library(name: "AnonAuth", targets: ["AnonAuth"]),
        .library(name: "AttestationPKI", targets: ["AttestationPKI"]),
        .library(name: "AppAttest", targets: ["AppAttest"]),
        .library(name: "AndroidAttestation", targets: ["AndroidAttestation"]),
        .library(name: "PriceHTTP", targets: ["PriceHTTP"]),
        .library(name: "PriceAPI", targets: ["PriceAPI"]),
        .library(name: "PublishedRates", targets: ["PublishedRates"]),
        .library(name: "FuzzHarness", targets: ["FuzzHarness"]),
    ],
    targets: [
        .systemLibrary(name: "CLibPQ", path: "Sources/CLibPQ", pkgConfig: "libpq",
                       providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CMicroHTTPD", path: "Sources/CMicroHTTPD", pkgConfig: "libmicrohttpd",
                       providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CCrypto", path: "Sources/CCrypto", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"])]),

        .target(name: "PriceJSON"),
        // libcrypto's one Swift wrapper: SHA-256, HMAC, CSPRNG, constant-time compare, X.509 parsing and path checks.
        .target(name: "PriceCrypto", dependencies: ["CCrypto"]),
        // A query's rows as PostgreSQL's text output in one byte buffer (TextCells): what the driver fills
        // and the dialect renders, pure, so neither needs the other.
        .target(name: "PriceRows"),
        // The libpq driver, pools, pipeline, errors and session settings: no knowledge of the schema.
        .target(name: "PriceDB", dependencies: ["CLibPQ", "PriceCrypto", "PriceRows"]),
        // The migration system: planner (pure), runner, schema versions, superseded checksums, lock retries.
        // It knows no application's names: pricesvc's (file names, bookkeeping) come in as a MigrationLayout.
        .target(name: "PriceMigrations", dependencies: ["PriceDB", "PriceCrypto"]),
        // What the driver's and the migrator's tests share: a scratch database on the test cluster, a
        // value computed on its own thread (test targets cannot import one another). Only tests use it.
        .target(name: "PriceDBTestKit", dependencies: ["PriceDB"]),
        // Every statement the service and the owner tasks send, typed (SQL, parameters, rows).
        .target(name: "PriceSQL", dependencies: ["PriceDB", "PriceRows"]),
        .target(name: "AnonAuth", dependencies: ["PriceCrypto", "PriceJSON"]),
        // What App Attest and Android Key Attestation share: a strict DER reader, X.509 certificates and the
        // chain check at a given time (OpenSSL through PriceCrypto's X509Certificate), base64.
        .target(name: "AttestationPKI", dependencies: ["PriceCrypto"]),
        // App Attest: a strict CBOR decoder, authData, and the verifier's steps.
        .target(name: "AppAttest", dependencies: ["AttestationPKI", "PriceCrypto"]),
        // Android Key Attestation: the KeyDescription extension, Google's pinned roots, the status list, the policy.
        .target(name: "AndroidAttestation", dependencies: ["AttestationPKI", "PriceCrypto", "PriceJSON"]),
        // HTTPRequest, HTTPHeaders, HTTPResponse and HTTPApplication (what the server asks of the application),
        // pure: what the dialect and the application build on without the server.
        .target(name: "PriceHTTPMessage"),
        // What the server and the application report to operators, pure: the Prometheus text writer,
        // AtomicCounter, the server's request metrics (ServerMetrics), the log lines' timestamp.
        .target(name: "PriceTelemetry"),
        // The HTTP server only: libmicrohttpd, limits, the access log (re-exports PriceHTTPMessage).
        .target(name: "PriceHTTP", dependencies: ["CMicroHTTPD", "PriceHTTPMessage", "PriceJSON", "PriceTelemetry"]),
        // PostgREST's dialect, pure (no I/O): read options, result sets and their rendering, Prefer, Range,
        // timestamps, the PostgREST and Supabase Auth error bodies, function calls' named arguments.
        .target(name: "PostgRESTDialect", dependencies: ["PriceHTTPMessage", "PriceJSON", "PriceRows"]),
        // The application: routing, the PostgREST and Supabase Auth wire formats, the handlers. No server:
        // pricesvc joins it to PriceHTTP.
        .target(name: "PriceAPI", dependencies: ["PostgRESTDialect", "PriceHTTPMessage", "PriceTelemetry", "PriceDB", "PriceMigrations", "PriceRows", "PriceSQL", "AnonAuth", "AttestationPKI", "AppAttest", "AndroidAttestation", "PriceCrypto", "PriceJSON"]),
        // CDS Curbs feeds read and checked for `import-rates` (pure: no I/O).
        .target(name: "PublishedRates", dependencies: ["PriceJSON"]),
        // What every fuzz target checks, one function per target (FuzzTarget): Fuzz/'s libFuzzer executables
        // are shims over it, and FuzzReplayTests replays every committed input through it.
        .target(name: "FuzzHarness", dependencies: ["PriceJSON", "PriceDB", "PriceMigrations", "PriceHTTP", "PriceAPI", "AnonAuth", "AttestationPKI", "AppAttest", "AndroidAttestation", "PublishedRates"]),
        .executableTarget(name: "pricesvc", dependencies: ["PriceAPI", "AttestationPKI", "AppAttest", "AndroidAttestation", "PriceHTTP", "PriceTelemetry", "PriceDB", "PriceMigrations", "PriceSQL", "AnonAuth", "PriceJSON", "PublishedRates"],
                          plugins: ["BuildCommit"]),
        // `git describe` of the source, written before each build for `pricesvc --version` (BuildInfo.swift).
        .plugin(name: "BuildCommit", capability: .buildTool()),

        .testTarget(name: "PriceJSONTests", dependencies: ["PriceJSON"]),
        .testTarget(name: "PriceDBTests", dependencies: ["PriceDB", "PriceDBTestKit", "PriceRows"]),
        .testTarget(name: "PriceMigrationsTests", dependencies: ["PriceMigrations", "PriceDB", "PriceDBTestKit"]),
        .testTarget(name: "PriceSQLTests", dependencies: ["PriceSQL", "PriceDB"]),
        .testTarget(name: "AnonAuthTests", dependencies: ["AnonAuth", "PriceCrypto", "PriceJSON", "CCrypto"]),
        .testTarget(name: "AttestationPKITests", dependencies: ["AttestationPKI"]),
        .testTarget(name: "AppAttestTests", dependencies: ["AppAttest", "AttestationPKI", "PriceCrypto"]),
        .testTarget(name: "AndroidAttestationTests", dependencies: ["AndroidAttestation", "AttestationPKI", "PriceCrypto"]),
        .testTarget(name: "PublishedRatesTests", dependencies: ["PublishedRates", "PriceJSON"]),
        .testTarget(name: "PriceHTTPTests", dependencies: ["PriceHTTP", "PriceTelemetry"]),
        .testTarget(name: "PriceTelemetryTests", dependencies: ["PriceTelemetry"]),
        // The executable's pure parts: settings, their sources, the listen address, the migration layout,
        // serve's plan (each part's settings), and its background tasks' start and stop.
        .testTarget(name: "pricesvcTests", dependencies: ["pricesvc", "PriceAPI", "PriceDB", "PriceHTTP", "PriceMigrations", "PriceSQL"]),
        .testTarget(name: "PostgRESTDialectTests", dependencies: ["PostgRESTDialect", "PriceHTTPMessage", "PriceJSON"]),
        .testTarget(name: "FuzzHarnessTests", dependencies: ["FuzzHarness"]),
        // Every committed corpus input and FailCase of Fuzz/, once per `make test`, without a sanitizer build.
        .testTarget(name: "FuzzReplayTests", dependencies: ["FuzzHarness"]),
        .testTarget(name: "PriceAPITests", dependencies: ["PriceAPI", "PostgRESTDialect", "PriceHTTPMessage", "AnonAuth", "PriceCrypto", "PriceDB", "PriceMigrations", "PriceSQL", "PriceJSON"]),
    ],
    swiftLanguageModes: [.v6]
)
