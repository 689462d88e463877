import Foundation

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
    static let all: [Setting] = [
        Setting(key: "listen", defaultValue: "127.0.0.1:8080", help: "Address and port to serve on"),
        Setting(key: "database-url", defaultValue: "postgresql:///pricesvc?user=authenticator",
                help: "libpq connection string for serving (role authenticator)"),
        Setting(key: "migration-database-url", defaultValue: "",
                help: "Connection string for migrate and prune (the owning role); defaults to --database-url"),
        Setting(key: "migrations-dir", defaultValue: "migrations", help: "Folder holding the SQL migrations"),
        Setting(key: "jwt-secret", defaultValue: "", help: "HS256 secret, at least 32 bytes (or use --jwt-secret-file)"),
        Setting(key: "jwt-secret-file", defaultValue: "", help: "File holding the JWT secret"),
        Setting(key: "jwt-previous-secret", defaultValue: "",
                help: "Previous secret, still accepted for verification during a rotation"),
        Setting(key: "jwt-previous-secret-file", defaultValue: "", help: "File holding the previous secret"),
        Setting(key: "access-token-ttl", defaultValue: "3600",
                help: "Access token lifetime in seconds; also the longest a revoked session's tokens stay valid"),
        Setting(key: "pool-size", defaultValue: "8", help: "Database connections"),
        Setting(key: "pool-timeout-ms", defaultValue: "2000",
                help: "How long a request waits for a free connection before 503"),
        Setting(key: "statement-timeout-ms", defaultValue: "5000", help: "Server-side statement timeout"),
        Setting(key: "startup-timeout", defaultValue: "30",
                help: "Seconds serve keeps retrying an unreachable database before exiting"),
        Setting(key: "http-threads", defaultValue: "0",
                help: "libmicrohttpd event-loop threads (0 = one per core)"),
        Setting(key: "database-workers", defaultValue: "32",
                help: "Threads that run requests waiting on PostgreSQL (a request waits for one at most pool-timeout-ms)"),
        Setting(key: "max-body-bytes", defaultValue: "65536", help: "Largest request body (larger → 413)"),
        Setting(key: "max-connections", defaultValue: "512", help: "Open HTTP connections in total"),
        Setting(key: "max-connections-per-ip", defaultValue: "128", help: "Open HTTP connections per client address"),
        Setting(key: "connection-timeout", defaultValue: "30", help: "Seconds an idle HTTP connection is kept"),
        Setting(key: "connection-memory-bytes", defaultValue: "16384",
                help: "Per-connection memory for request line and headers (larger headers → 431/413)"),
        Setting(key: "rate-limit-per-minute", defaultValue: "120",
                help: "Requests per minute per client address on /rest and /auth (0 = off)"),
        Setting(key: "trusted-proxies", defaultValue: "",
                help: "Comma-separated proxy addresses whose X-Forwarded-For is believed"),
        Setting(key: "ipv6-prefix", defaultValue: "64",
                help: "Per-address limits count an IPv6 client by its network of this many bits (1-128)"),
        Setting(key: "signups-per-hour", defaultValue: "30", help: "Anonymous sign-ups per client address per hour"),
        Setting(key: "signup-burst", defaultValue: "30", help: "Sign-ups a client address may make at once"),
        Setting(key: "refreshes-per-window", defaultValue: "150", help: "Token refreshes per client address per window"),
        Setting(key: "refresh-window-seconds", defaultValue: "300", help: "Window of the refresh limit"),
        Setting(key: "refresh-reuse-seconds", defaultValue: "10",
                help: "How long a rotated refresh token may be presented again (lost response)"),
        Setting(key: "signup-challenge", defaultValue: "false",
                help: "Sign-up requires a solved proof-of-work challenge (ALTCHA, GET /auth/v1/challenge)"),
        Setting(key: "signup-challenge-max-number", defaultValue: "100000",
                help: "Challenge difficulty: the solution is a number in 0..this (ALTCHA maxnumber)"),
        Setting(key: "signup-challenge-ttl", defaultValue: "300", help: "Seconds a sign-up challenge stays valid"),
        Setting(key: "user-metadata-max-bytes", defaultValue: "1024", help: "Largest user_metadata at sign-up"),
        Setting(key: "cors-allowed-origins", defaultValue: "*",
                help: "Web origins that may call the API from a browser: * or a comma-separated list such as https://app.example.org"),
        Setting(key: "shutdown-grace", defaultValue: "10", help: "Seconds in-flight requests get on SIGTERM/SIGINT"),
        Setting(key: "access-log", defaultValue: "true", help: "One JSON line per request on stdout"),
    ]
}

struct ConfigurationError: Error, CustomStringConvertible {
    let description: String
}

/// Values resolved from flags (first), then the environment, then defaults.
struct Configuration {
    private var values: [String: String] = [:]

    init(arguments: [String], environment: [String: String]) throws(ConfigurationError) {
        let known = Dictionary(uniqueKeysWithValues: Settings.all.map { ($0.key, $0) })
        for setting in Settings.all {
            values[setting.key] = environment[setting.environmentName] ?? setting.defaultValue
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("--") else {
                throw ConfigurationError(description: "unexpected argument '\(argument)' (see pricesvc --help)")
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
        }
    }

    /// Flags that belong to one command rather than to the service's settings.
    static let commandFlags: Set<String> = ["older-than"]

    func string(_ key: String) -> String { values[key] ?? "" }

    func int(_ key: String, min: Int = 0) throws(ConfigurationError) -> Int {
        guard let number = Int(string(key)), number >= min else {
            throw ConfigurationError(description: "--\(key) must be an integer ≥ \(min), got '\(string(key))'")
        }
        return number
    }

    func bool(_ key: String) throws(ConfigurationError) -> Bool {
        switch string(key).lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError(description: "--\(key) must be true or false, got '\(string(key))'")
        }
    }

    /// The listen address split into host and port; `[::1]:8080` for IPv6.
    func listen() throws(ConfigurationError) -> (host: String, port: UInt16) {
        let text = string("listen")
        guard let colon = text.lastIndex(of: ":"), let port = UInt16(text[text.index(after: colon)...]) else {
            throw ConfigurationError(description: "--listen must be HOST:PORT, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        return (host, port)
    }

    /// A secret from its variable or its file; file contents lose one trailing newline.
    func secret(_ key: String) throws(ConfigurationError) -> [UInt8]? {
        let file = string(key + "-file")
        if !file.isEmpty {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw ConfigurationError(description: "cannot read --\(key)-file '\(file)'")
            }
            var bytes = [UInt8](data)
            while let last = bytes.last, last == 0x0a || last == 0x0d { bytes.removeLast() }
            return bytes
        }
        let inline = string(key)
        return inline.isEmpty ? nil : Array(inline.utf8)
    }

    /// `30d`, `12h`, `90m`, `45s` → seconds.
    static func duration(_ text: String) -> Int? {
        guard let unit = text.last, let number = Int(text.dropLast()), number >= 0 else { return nil }
        switch unit {
        case "d": return number * 86_400
        case "h": return number * 3_600
        case "m": return number * 60
        case "s": return number
        default: return nil
        }
    }
}
