import Foundation
import PriceAPI
import PriceDB

/// One setting: its flag, its `PRICESVC_*` variable, its default and what it is for.
/// The table below is the single list the help text and docs/configuration.md are made from.
struct Setting: Sendable {
    let key: String
    let defaultValue: String
    let help: String

    var flag: String { "--" + key }
    var environmentName: String { "PRICESVC_" + key.uppercased().replacingOccurrences(of: "-", with: "_") }
}

enum Settings {
    /// The API's defaults are `ServiceSettings`' and the pool's `PoolConfiguration`'s: one definition,
    /// which this table (so `--help` and docs/configuration.md) reads.
    private static let service = ServiceSettings()

    static let all: [Setting] = [
        Setting(key: "listen", defaultValue: "127.0.0.1:8080",
                help: "Address and port to serve on: IP:PORT, [IPv6]:PORT, localhost:PORT or :PORT (127.0.0.1)"),
        Setting(key: "admin-listen", defaultValue: "",
                help: "Address and port of the admin listener (/metrics, /healthz, /readyz uncached), same forms as --listen; off when empty"),
        Setting(key: "database-url", defaultValue: "postgresql:///pricesvc?user=authenticator",
                help: "libpq connection string for serving (role authenticator)"),
        Setting(key: "read-database-url", defaultValue: "",
                help: "Connection string for read-only calls (medians, quotes, readiness), e.g. a replica; they fall back to --database-url when it fails"),
        Setting(key: "migration-database-url", defaultValue: "",
                help: "Connection string for migrate (a superuser), prune, import-rates and keys (the owning role); defaults to --database-url"),
        Setting(key: "migrations-dir", defaultValue: "",
                help: "Folder holding the SQL migrations; unset: ../share/pricesvc/migrations beside the binary, else the migrations/ of the source tree it was built from"),
        Setting(key: "migrate-lock-timeout", defaultValue: "2s",
                help: "Longest wait of one migrate statement for a lock (live traffic queues behind it that long at most); then the file is retried"),
        Setting(key: "migrate-wait-limit", defaultValue: "5m",
                help: "Total time migrate may spend waiting for locks and between retries before it gives up (exit 1)"),
        Setting(key: "jwt-secret", defaultValue: "", help: "HS256 secret, at least 32 bytes (or use --jwt-secret-file)"),
        Setting(key: "jwt-secret-file", defaultValue: "", help: "File holding the JWT secret"),
        Setting(key: "jwt-previous-secret", defaultValue: "",
                help: "Another secret serve also verifies tokens with, while the database's key ring holds it (PostgreSQL accepts only its own keys; rotate with pricesvc keys)"),
        Setting(key: "jwt-previous-secret-file", defaultValue: "", help: "File holding the previous secret"),
        Setting(key: "key-refresh-seconds", defaultValue: "10",
                help: "Seconds between two reads of the database's signing keys and publishable keys (also read soon after an unknown key)"),
        Setting(key: "legacy-anon-key", defaultValue: "true",
                help: "Accept the JWT anon key (pricesvc keys) as apikey besides publishable keys; false once every app has a publishable key"),
        Setting(key: "access-token-ttl", defaultValue: String(service.accessTokenLifetime),
                help: "Access token lifetime in seconds; a signed-out or revoked session's tokens are refused at once, whatever their expiry"),
        Setting(key: "token-cache-entries", defaultValue: "1024",
                help: "Access tokens whose in-process verification is remembered (until expiry or a new signing key set); 0 verifies every request in full"),
        Setting(key: "pool-size", defaultValue: String(PoolConfiguration.defaultSize), help: "Database connections"),
        Setting(key: "pool-timeout-ms", defaultValue: "2000",
                help: "How long a request waits for a free connection before 503"),
        Setting(key: "statement-timeout-ms", defaultValue: "5000", help: "Server-side statement timeout"),
        Setting(key: "db-hold-ms", defaultValue: String(Int(DatabaseHold.defaultBound / .milliseconds(1))),
                help: "Longest a request waits for an unavailable database (switchover, no leader) before 503; only requests that cannot apply twice are retried (0 = off, at most 30000)"),
        Setting(key: "startup-timeout", defaultValue: "30",
                help: "Seconds serve keeps retrying an unreachable database before exiting"),
        Setting(key: "http-threads", defaultValue: "0",
                help: "libmicrohttpd event-loop threads (0 = one per core)"),
        Setting(key: "database-workers", defaultValue: "0",
                help: "Threads that run requests waiting on PostgreSQL (a request waits for one at most pool-timeout-ms); 0 = one per pool connection, read pool included"),
        Setting(key: "max-body-bytes", defaultValue: "65536", help: "Largest request body (larger → 413)"),
        Setting(key: "max-connections", defaultValue: "512", help: "Open HTTP connections in total"),
        Setting(key: "max-connections-per-ip", defaultValue: "32",
                help: "Open HTTP connections per client address (IPv6: per ipv6-prefix network); trusted proxies are exempt"),
        Setting(key: "connection-timeout", defaultValue: "30",
                help: "Seconds a connection may stay silent (every byte restarts it); see request-head-timeout"),
        Setting(key: "request-head-timeout", defaultValue: "10",
                help: "Seconds a connection has to send a complete request head, from accept or the end of its previous request (bytes do not extend it)"),
        Setting(key: "request-body-timeout", defaultValue: "20",
                help: "Seconds a request has to send its whole body once its head is in"),
        Setting(key: "connection-memory-bytes", defaultValue: "16384",
                help: "Per-connection memory for request line and headers (larger headers → 431/413)"),
        Setting(key: "rate-limit-per-minute", defaultValue: String(service.requestsPerMinutePerIP),
                help: "Requests per minute per client address on /rest and /auth (0 = off)"),
        Setting(key: "db-requests-per-ip", defaultValue: String(service.databaseRequestsPerIP),
                help: "Requests per client address waiting for or holding a database connection at once; more → 429 (0 = off)"),
        Setting(key: "expensive-requests-in-flight", defaultValue: String(service.expensiveRequestsInFlight),
                help: "Expensive calls (price_quotes) in flight from all clients at once; more → 503 (0 = off)"),
        Setting(key: "expensive-statement-timeout-ms", defaultValue: String(service.expensiveStatementTimeoutMilliseconds),
                help: "Statement timeout of an expensive call (price_quotes)"),
        Setting(key: "trusted-proxies", defaultValue: "",
                help: "Comma-separated proxy addresses whose X-Forwarded-For is believed"),
        Setting(key: "ipv6-prefix", defaultValue: "64",
                help: "Per-address limits count an IPv6 client by its network of this many bits (1-128)"),
        Setting(key: "signups-per-hour", defaultValue: String(service.signUpsPerHourPerIP), help: "Anonymous sign-ups per client address per hour"),
        Setting(key: "signup-burst", defaultValue: String(service.signUpBurstPerIP), help: "Sign-ups a client address may make at once"),
        Setting(key: "refreshes-per-window", defaultValue: String(service.refreshesPerWindowPerIP), help: "Token refreshes per client address per window"),
        Setting(key: "refresh-window-seconds", defaultValue: String(service.refreshWindowSeconds), help: "Window of the refresh limit"),
        Setting(key: "refresh-reuse-seconds", defaultValue: String(service.refreshReuseSeconds),
                help: "How long a rotated refresh token may be presented again (lost response)"),
        Setting(key: "signup-challenge", defaultValue: "false",
                help: "Sign-up requires a solved proof-of-work challenge (ALTCHA, GET /auth/v1/challenge)"),
        Setting(key: "signup-challenge-max-number", defaultValue: "100000",
                help: "Challenge difficulty: the solution is a number in 0..this (ALTCHA maxnumber)"),
        Setting(key: "signup-challenge-ttl", defaultValue: "300", help: "Seconds a sign-up challenge stays valid"),
        Setting(key: "signup-attestation", defaultValue: "off",
                help: "Attestation at sign-up (App Attest, Android Key Attestation): off, optional (an attestation, when sent, makes the identity attested) or required (a sign-up without a valid one is refused)"),
        Setting(key: "app-attest-app-ids", defaultValue: "",
                help: "iOS apps whose attestations are accepted: TEAMID.bundle.id, comma-separated (this or android-package-names is needed unless signup-attestation is off)"),
        Setting(key: "app-attest-root-ca-file", defaultValue: "",
                help: "PEM file of the App Attest trust anchor; empty: Apple's App Attestation Root CA, built in and pinned"),
        Setting(key: "app-attest-development", defaultValue: "false",
                help: "Also accept keys of the appattestdevelop environment (apps built for development)"),
        Setting(key: "android-package-names", defaultValue: "",
                help: "Android apps whose key attestations are accepted: package names, comma-separated (needed for Android attestation at sign-up)"),
        Setting(key: "android-signing-cert-digests", defaultValue: "",
                help: "SHA-256 digests (base64) of the Android app's signing certificates, comma-separated; an attestation must name one (empty: any)"),
        Setting(key: "android-allow-unverified-boot", defaultValue: "false",
                help: "Accept Android keys of devices without verified boot on a locked bootloader (test devices only)"),
        Setting(key: "android-attestation-status-file", defaultValue: "",
                help: "Google's attestation status (revocation) list, a JSON file an operator refreshes; empty: no revocation check"),
        Setting(key: "android-attestation-roots-file", defaultValue: "",
                help: "PEM file of Android attestation root certificates whose keys replace Google's pinned roots (tests only); empty: Google's, built in"),
        Setting(key: "user-metadata-max-bytes", defaultValue: String(service.userMetadataMaxBytes), help: "Largest user_metadata at sign-up"),
        Setting(key: "user-metadata-keys", defaultValue: "",
                help: "Comma-separated user_metadata keys a sign-up may store; others are dropped (empty: nothing is stored)"),
        Setting(key: "allow-privileged-role", defaultValue: "false",
                help: "Let serve log in as a superuser or BYPASSRLS role, which ignores every row policy (tests and emergencies only)"),
        Setting(key: "max-response-bytes", defaultValue: String(service.maxResponseBytes),
                help: "Largest response body a function's result may make (larger → 400 PGRST190, refused before it is built)"),
        Setting(key: "cors-allowed-origins", defaultValue: "*",
                help: "Web origins that may call the API from a browser: * or a comma-separated list such as https://app.example.org"),
        Setting(key: "shutdown-grace", defaultValue: "10", help: "Seconds in-flight requests get on SIGTERM/SIGINT"),
        Setting(key: "access-log", defaultValue: "true", help: "One JSON line per request on stdout"),
    ]
}

extension Settings {
    /// `PRICESVC_*` names that are not settings of the binary but of its tests and scripts
    /// (integration/e2e/conftest.py, scripts/dev/test.sh): left alone by the unknown-variable check.
    static let foreignEnvironmentNames: Set<String> = ["PRICESVC_BIN", "PRICESVC_OWNER_URL"]
    static let foreignEnvironmentPrefixes = ["PRICESVC_TEST_", "PRICESVC_E2E_"]

    /// The first `PRICESVC_*` variable in `environment` that names no setting, with the known setting
    /// closest to it (fewest single-character edits): a misspelled `PRICESVC_POOLSIZE` would otherwise
    /// be silently ignored. Known names come from ``all``, so a setting added there is known at once.
    static func unknownVariable(in environment: [String: String]) -> (name: String, closest: String)? {
        let known = Set(all.map(\.environmentName))
        let unknown = environment.keys.filter { name in
            name.hasPrefix("PRICESVC_") && !known.contains(name) && !foreignEnvironmentNames.contains(name)
                && !foreignEnvironmentPrefixes.contains(where: { name.hasPrefix($0) })
        }.sorted()
        guard let name = unknown.first else { return nil }
        let closest = all.map(\.environmentName).min { editDistance(name, $0) < editDistance(name, $1) } ?? ""
        return (name, closest)
    }

    /// Levenshtein distance over UTF-8 bytes (variable names are ASCII).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        guard !a.isEmpty, !b.isEmpty else { return a.count + b.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = Swift.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}

struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
}

/// Values resolved from flags (first), then the environment, then defaults. Each value remembers where
/// it came from, so an error names what the operator actually set: `PRICESVC_LISTEN` or `--listen`.
struct Configuration {
    enum Source: Equatable { case flag, environment, defaultValue }

    private var values: [String: String] = [:]
    private var sources: [String: Source] = [:]
    /// Arguments that are not flags: only for a command that takes operands (`import-rates FILE...`);
    /// for every other command a stray argument is an error.
    private(set) var positional: [String] = []

    init(arguments: [String], environment: [String: String], takesOperands: Bool = false) throws(ConfigurationError) {
        let known = Dictionary(uniqueKeysWithValues: Settings.all.map { ($0.key, $0) })
        if let unknown = Settings.unknownVariable(in: environment) {
            throw ConfigurationError(description: "unknown variable \(unknown.name): no such setting; did you mean \(unknown.closest)? (see pricesvc --help)")
        }
        for setting in Settings.all {
            if let value = environment[setting.environmentName] {
                values[setting.key] = value
                sources[setting.key] = .environment
            } else {
                values[setting.key] = setting.defaultValue
                sources[setting.key] = .defaultValue
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                guard takesOperands else {
                    throw ConfigurationError(description: "unexpected argument '\(argument)' (see pricesvc --help)")
                }
                positional.append(argument)
                continue
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            guard known[name] != nil || Self.commandFlags.contains(name) else {
                throw ConfigurationError(description: "unknown flag --\(name) (see pricesvc --help)")
            }
            if value == nil {
                guard index < arguments.count else {
                    throw ConfigurationError(description: "flag --\(name) needs a value")
                }
                value = arguments[index]
                index += 1
            }
            values[name] = value
            sources[name] = .flag
        }
    }

    /// Flags that belong to one command rather than to the service's settings.
    static let commandFlags: Set<String> = ["older-than", "source", "next-secret-file", "shared", "slot", "name",
                                            "app-id", "key-id", "client-data-hash", "at", "repeat",
                                            "challenge", "package", "signing-cert-digest", "status-file"]

    func string(_ key: String) -> String { values[key] ?? "" }

    func source(_ key: String) -> Source { sources[key] ?? .defaultValue }

    /// What the operator set for `key`, as they set it: the variable's name when the value came from
    /// the environment, otherwise the flag.
    func name(_ key: String) -> String {
        guard source(key) == .environment, let setting = Settings.all.first(where: { $0.key == key }) else {
            return "--" + key
        }
        return setting.environmentName
    }

    /// An error about `key`'s value that names the flag or variable it came from.
    func invalid(_ key: String, _ requirement: String) -> ConfigurationError {
        ConfigurationError(description: "\(name(key)) \(requirement), got '\(string(key))'")
    }

    func int(_ key: String, min: Int = 0, max: Int = .max) throws(ConfigurationError) -> Int {
        guard let number = Int(string(key)), number >= min, number <= max else {
            throw invalid(key, max == .max ? "must be an integer ≥ \(min)" : "must be an integer from \(min) to \(max)")
        }
        return number
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool {
        switch string(key).lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw invalid(key, "must be true or false")
        }
    }

    /// The listen address; see ``ListenAddress/parse(_:)`` for the accepted forms.
    func listen() throws(ConfigurationError) -> ListenAddress {
        guard let address = ListenAddress.parse(string("listen")) else {
            throw invalid("listen", "must be HOST:PORT, :PORT, localhost:PORT or [IPv6]:PORT with an IP address as HOST")
        }
        return address
    }

    /// A secret from its variable or its file; file contents lose one trailing newline.
    func secret(_ key: String) throws(ConfigurationError) -> [UInt8]? {
        let file = string(key + "-file")
        if !file.isEmpty {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(description: "cannot read \(name(key + "-file")) '\(file)'")
            }
            if let permissions = (try? FileManager.default.attributesOfItem(atPath: file))?[.posixPermissions] as? Int,
               let problem = Self.secretFileProblem(permissions: permissions) {
                throw ConfigurationError(description: "\(name(key + "-file")) '\(file)' \(problem)")
            }
            var bytes = [UInt8](data)
            while let last = bytes.last, last == 0x0a || last == 0x0d { bytes.removeLast() }
            return bytes
        }
        let inline = string(key)
        return inline.isEmpty ? nil : Array(inline.utf8)
    }

    /// Why a secret file's mode is refused, or nil: anyone else who can read the file can sign tokens
    /// for any identity. 0600 or 0400 (systemd's `LoadCredential=` makes 0400) are accepted.
    static func secretFileProblem(permissions: Int) -> String? {
        let others = permissions & 0o077
        guard others != 0 else { return nil }
        let who = others & 0o070 != 0 && others & 0o007 != 0 ? "group and others" : others & 0o070 != 0 ? "its group" : "others"
        return "is open to \(who) (mode \(String(permissions & 0o777, radix: 8))): make it readable by its owner only (chmod 600)"
    }

    /// `30d`, `12h`, `90m`, `45s` → seconds; nil for anything else, and for a count of seconds that
    /// does not fit an `Int` (never a trap).
    static func duration(_ text: String) -> Int? {
        guard let unit = text.last, let number = Int(text.dropLast()), number >= 0 else { return nil }
        let unitSeconds: Int
        switch unit {
        case "d": unitSeconds = 86_400
        case "h": unitSeconds = 3_600
        case "m": unitSeconds = 60
        case "s": unitSeconds = 1
        default: return nil
        }
        let (seconds, overflow) = number.multipliedReportingOverflow(by: unitSeconds)
        return overflow ? nil : seconds
    }
}

/// Where `serve` listens: an IP address (IPv4, or IPv6 without brackets) and a port.
struct ListenAddress: Equatable, CustomStringConvertible {
    /// The host of `:PORT`: changing only the port must not open the service to the network.
    static let defaultHost = "127.0.0.1"

    var host: String
    var port: UInt16

    /// `HOST:PORT` with an IPv4 address, `[IPv6]:PORT`, `localhost:PORT` (127.0.0.1) or `:PORT`
    /// (127.0.0.1; say `0.0.0.0:PORT` or `[::]:PORT` for every interface). Host names other than
    /// `localhost` are refused: libmicrohttpd binds one address, and a name may resolve to several.
    static func parse(_ text: String) -> ListenAddress? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let port = UInt16(portText) else {
            return nil
        }
        let host = text[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") {
            let inner = String(host.dropFirst().dropLast())
            return isAddress(inner, family: AF_INET6) ? ListenAddress(host: inner, port: port) : nil
        }
        switch host.lowercased() {
        case "": return ListenAddress(host: defaultHost, port: port)
        case "localhost": return ListenAddress(host: "127.0.0.1", port: port)
        default: return isAddress(String(host), family: AF_INET) ? ListenAddress(host: String(host), port: port) : nil
        }
    }

    /// `http://` + this is the service's URL.
    var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    private static func isAddress(_ text: String, family: Int32) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        return inet_pton(family, text, &buffer) == 1
    }
}
