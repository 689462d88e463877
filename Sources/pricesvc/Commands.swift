import AnonAuth
import Foundation
import PriceAPI
import PriceDB

/// `pricesvc serve | migrate | keys | prune | forget-user | import-rates | import-places | openapi | statements | --help | --version`.
enum Commands {
    static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first else {
            print(helpText)
            return 2
        }
        if ["--help", "-h", "help"].contains(command) {
            guard let topic = arguments.dropFirst().first else {
                print(helpText)
                return 0
            }
            return help(for: topic)
        }
        if ["--version", "-V", "version"].contains(command) {
            print(BuildInfo.versionLine)
            return 0
        }
        if arguments.dropFirst().contains(where: { $0 == "--help" || $0 == "-h" }) {
            return help(for: command)
        }
        // The flags without a value: `statements --json`, `migrate --status` and `migrate --dry-run`.
        var rest = Array(arguments.dropFirst())
        let json = command == "statements" && rest.contains("--json")
        if command == "statements" { rest.removeAll { $0 == "--json" } }
        // `verify-key-attestation --any-boot-state` stands for --android-allow-unverified-boot true.
        if command == "verify-key-attestation", rest.contains("--any-boot-state") {
            rest.removeAll { $0 == "--any-boot-state" }
            rest += ["--android-allow-unverified-boot", "true"]
        }
        let migrateMode: MigrateMode = command != "migrate" ? .apply
            : rest.contains("--status") ? .status : rest.contains("--dry-run") ? .dryRun : .apply
        if command == "migrate" {
            guard !(rest.contains("--status") && rest.contains("--dry-run")) else {
                fail("migrate takes --status or --dry-run, not both")
                return 2
            }
            rest.removeAll { $0 == "--status" || $0 == "--dry-run" }
        }
        do throws(any Error) {
            let configuration = try Configuration(arguments: rest,
                                                  environment: ProcessInfo.processInfo.environment,
                                                  takesOperands: ["import-rates", "import-places", "verify-attestation", "verify-key-attestation", "keys", "forget-user"].contains(command))
            switch command {
            case "serve": return try serve(configuration)
            case "migrate": return try migrate(configuration, mode: migrateMode)
            case "keys": return try keys(configuration)
            case "prune": return try prune(configuration)
            case "forget-user": return try forgetUser(configuration)
            case "import-rates": return try importRates(configuration)
            case "import-places": return try importPlaces(configuration)
            case "statements": return try statements(configuration, json: json)
            case "verify-attestation": return try verifyAttestation(configuration)
            case "verify-key-attestation": return try verifyKeyAttestation(configuration)
            // The document a server with the same settings serves: the challenge route only when on.
            case "openapi":
                print(OpenAPIDocument.json(signUpChallenge: try configuration.bool("signup-challenge")))
                return 0
            default:
                fail("unknown command '\(command)' (see pricesvc --help)")
                return 2
            }
        } catch let error as ConfigurationError {
            fail(error.description)
            return 2
        } catch let error as DatabaseError {
            fail(error.explanation)
            return 1
        } catch {
            fail("\(error)")
            return 1
        }
    }

    /// A command: what `pricesvc --help` lists and what `pricesvc COMMAND --help` prints.
    struct Description {
        let name: String
        let usage: String
        let summary: String
        /// The settings the command reads; nil for every setting.
        let settings: [String]?
    }

    static let ownerSettings = ["migration-database-url", "database-url"]
    static let secretSettings = ["jwt-secret", "jwt-secret-file", "jwt-previous-secret", "jwt-previous-secret-file"]

    static let descriptions = [
        Description(name: "serve", usage: "pricesvc serve [--SETTING VALUE ...]",
                    summary: "serve the HTTP API (PostgREST / Supabase Auth subset)", settings: nil),
        Description(name: "migrate", usage: "pricesvc migrate [--status | --dry-run] [--migration-database-url URL] [--migrations-dir DIR]",
                    summary: "apply the migrations as a database superuser (it creates the roles and hands every object to pricesvc_owner) and, on a database without signing keys, install the JWT secret as the first; each file waits at most "
                        + "--migrate-lock-timeout for a lock, then is retried (until --migrate-wait-limit). "
                        + "--status and --dry-run change nothing and print JSON: the schema versions, pending and changed files, "
                        + "whether this build may serve the database, and (--dry-run) what migrate would do, exit 1 if it would refuse "
                        + "(docs/upgrading.md)",
                    settings: ownerSettings + ["migrations-dir", "migrate-lock-timeout", "migrate-wait-limit"] + secretSettings),
        Description(name: "keys", usage: "pricesvc keys [add --next-secret-file FILE [--shared false] | promote | retire [--slot next] | list "
                        + "| publishable create [--name NAME] | publishable list | publishable revoke ID]",
                    summary: "without a subcommand, print the legacy JWT anon key; otherwise, as the owning role: rotate the signing keys "
                        + "(add the next key, promote it to sign, retire the previous one; list them) and make, list or revoke "
                        + "the publishable API keys apps send as apikey",
                    settings: ["jwt-secret", "jwt-secret-file"] + ownerSettings),
        Description(name: "prune", usage: "pricesvc prune [--older-than 30d] [--migration-database-url URL]",
                    summary: "delete expired sessions, refresh tokens and users without sessions (--older-than: 30d, 36h, 1500m or 90000s; "
                        + "at least 1445m: the reporter maturity plus the median fold margin), "
                        + "then price reports older than the report window plus a grace (187 days by default; medians follow), "
                        + "then fold the median groups that waited over an hour for a fold",
                    settings: ownerSettings),
        Description(name: "forget-user", usage: "pricesvc forget-user ID [--migration-database-url URL]",
                    summary: "erase one person: their identity, sessions, refresh tokens and price reports (medians follow); "
                        + "run as the owning role (docs/privacy.md)",
                    settings: ownerSettings),
        Description(name: "import-rates", usage: "pricesvc import-rates --source NAME FILE... [--migration-database-url URL]",
                    summary: "load a city's CDS Curbs feed (zones and policies) as published rates; NAME prefixes the location ids",
                    settings: ownerSettings),
        Description(name: "import-places", usage: "pricesvc import-places --source NAME FILE [--migration-database-url URL]",
                    summary: "replace the places of source NAME with a GeoJSON FeatureCollection's (Point, Polygon or MultiPolygon; "
                        + "properties.id, a string or an integer, required; properties.name optional); location ids are NAME:id",
                    settings: ownerSettings),
        Description(name: "openapi", usage: "pricesvc openapi [--signup-challenge true]",
                    summary: "print the OpenAPI document of the HTTP surface (as a server with these settings serves it)",
                    settings: ["signup-challenge"]),
        Description(name: "verify-attestation",
                    usage: "pricesvc verify-attestation --app-id ID[,ID] --key-id B64 --client-data-hash B64 [--at TIME] [--repeat N] FILE",
                    summary: "verify an App Attest attestation object (FILE: raw CBOR or base64; - for stdin) as sign-up would, "
                        + "at TIME (RFC 3339 or unix seconds; default now), and print the verdict as JSON: environment, key id, "
                        + "public key, or the failed step; exits 1 when it fails (--repeat: verify N times and print the mean time)",
                    settings: ["app-attest-root-ca-file", "app-attest-development"]),
        Description(name: "verify-key-attestation",
                    usage: "pricesvc verify-key-attestation --challenge B64 [--package NAME[,NAME]] [--signing-cert-digest B64[,B64]] "
                        + "[--any-boot-state] [--status-file FILE] [--at TIME] [--repeat N] FILE",
                    summary: "verify an Android Key Attestation certificate chain (FILE: concatenated PEM, leaf first; - for stdin) "
                        + "as sign-up would, at TIME (RFC 3339 or unix seconds; default now), and print the verdict as JSON: "
                        + "security levels, boot state, packages, root, or the refusal's code; exits 1 when refused "
                        + "(--any-boot-state: --android-allow-unverified-boot true; --repeat: verify N times and print the mean time)",
                    settings: ["android-package-names", "android-signing-cert-digests", "android-allow-unverified-boot",
                               "android-attestation-status-file", "android-attestation-roots-file"]),
        Description(name: "statements", usage: "pricesvc statements [--json] [--statement-timeout-ms MS]",
                    summary: "print every SQL statement the service and the owner tasks send (name, SQL, parameters, columns), "
                        + "and the service connections' session settings",
                    settings: ["statement-timeout-ms"]),
    ]

    static var helpText: String {
        var text = """
        pricesvc: community-reported parking prices behind PostgreSQL row-level security.

        usage:

        """
        for description in descriptions {
            text += "  \(description.usage)\n      \(description.summary)\n"
        }
        text += """
          pricesvc COMMAND --help
          pricesvc --version

        settings (flag, or environment variable; flags win):

        """
        text += settingsText(Settings.all)
        return text
    }

    static func settingsText(_ settings: [Setting]) -> String {
        var text = ""
        for setting in settings {
            let shown = setting.defaultValue.isEmpty ? "" : " (default \(setting.defaultValue))"
            text += "  \(setting.flag)  \(setting.environmentName)\n      \(setting.help)\(shown)\n"
        }
        return text
    }

    /// `pricesvc COMMAND --help`: on stdout with exit 0 for a known command.
    static func help(for command: String) -> Int32 {
        guard let description = descriptions.first(where: { $0.name == command }) else {
            fail("unknown command '\(command)' (see pricesvc --help)")
            return 2
        }
        var text = "usage: \(description.usage)\n\n\(description.summary)\n"
        let settings = description.settings.map { keys in Settings.all.filter { keys.contains($0.key) } } ?? Settings.all
        if !settings.isEmpty {
            text += "\nsettings (flag, or environment variable; flags win):\n\n" + settingsText(settings)
        }
        print(text, terminator: "")
        return 0
    }

    /// One line on stderr: libpq's messages span lines, an operator's log search should not.
    static func fail(_ message: String) {
        note(message)
    }

    /// A line about the process itself (start, shutdown) on stderr, where errors go too: stdout holds
    /// only the access log.
    static func note(_ message: String) {
        let flat = message.split(whereSeparator: { $0 == "\n" || $0 == "\t" || $0 == "\r" })
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: " ")
        FileHandle.standardError.write(Data(("pricesvc: " + flat + "\n").utf8))
    }

    struct Secrets {
        var current: [UInt8]
        var previous: [UInt8]?
    }

    static func loadSecrets(_ configuration: Configuration) throws -> Secrets {
        guard let current = try configuration.secret("jwt-secret") else {
            throw ConfigurationError(description: "no JWT secret: set PRICESVC_JWT_SECRET or PRICESVC_JWT_SECRET_FILE")
        }
        // Named as the operator gave it: the file's flag or variable when a file was used.
        func origin(_ key: String) -> String {
            configuration.string(key + "-file").isEmpty ? configuration.name(key) : configuration.name(key + "-file")
        }
        do {
            try JWTSecret.validate(current)
        } catch {
            throw ConfigurationError(description: "JWT secret (\(origin("jwt-secret"))): \(error.message)")
        }
        let previous = try configuration.secret("jwt-previous-secret")
        if let previous {
            do { try JWTSecret.validate(previous) } catch {
                throw ConfigurationError(description: "previous JWT secret (\(origin("jwt-previous-secret"))): \(error.message)")
            }
        }
        return Secrets(current: current, previous: previous)
    }
}
