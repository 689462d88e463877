import AnonAuth
import Dispatch
import Foundation
import PriceAPI
import PriceDB
import PriceHTTP
import PriceSQL
import PriceTelemetry

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

    // MARK: serve

    static func serve(_ configuration: Configuration) throws -> Int32 {
        signal(SIGPIPE, SIG_IGN)
        let secrets = try loadSecrets(configuration)
        let listen = try configuration.listen()
        var settings = ServiceSettings()
        settings.requestsPerMinutePerIP = try configuration.int("rate-limit-per-minute")
        settings.accessTokenLifetime = try configuration.int("access-token-ttl", min: 60)
        settings.signUpsPerHourPerIP = try configuration.int("signups-per-hour", min: 1)
        settings.signUpBurstPerIP = try configuration.int("signup-burst", min: 1)
        settings.refreshesPerWindowPerIP = try configuration.int("refreshes-per-window", min: 1)
        settings.refreshWindowSeconds = try configuration.int("refresh-window-seconds", min: 1)
        settings.refreshReuseSeconds = try configuration.int("refresh-reuse-seconds")
        settings.userMetadataMaxBytes = try configuration.int("user-metadata-max-bytes", min: 2)
        settings.userMetadataKeys = Set(configuration.string("user-metadata-keys").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        let allowPrivilegedRole = try configuration.bool("allow-privileged-role")
        settings.maxResponseBytes = try configuration.int("max-response-bytes", min: 1024)
        settings.databaseRequestsPerIP = try configuration.int("db-requests-per-ip")
        settings.expensiveRequestsInFlight = try configuration.int("expensive-requests-in-flight")
        settings.expensiveStatementTimeoutMilliseconds = try configuration.int("expensive-statement-timeout-ms", min: 1)
        settings.databaseHold = DatabaseHold(bound: .milliseconds(try configuration.int(
            "db-hold-ms", min: 0, max: Int(DatabaseHold.maximumBound / .milliseconds(1)))))
        switch CORSPolicy.parse(configuration.string("cors-allowed-origins")) {
        case .success(let policy): settings.cors = policy
        case .failure(let error): throw ConfigurationError(description: "\(configuration.name("cors-allowed-origins")): \(error)")
        }

        var server = HTTPServer.Configuration()
        server.host = listen.host
        server.port = listen.port
        server.maxBodyBytes = try configuration.int("max-body-bytes", min: 1024)
        server.maxConnections = try configuration.int("max-connections", min: 1)
        server.maxConnectionsPerIP = try configuration.int("max-connections-per-ip", min: 1)
        server.connectionTimeoutSeconds = try configuration.int("connection-timeout", min: 1)
        server.requestHeadTimeoutSeconds = try configuration.int("request-head-timeout", min: 1)
        server.requestBodyTimeoutSeconds = try configuration.int("request-body-timeout", min: 1)
        server.connectionMemoryBytes = try configuration.int("connection-memory-bytes", min: 4096)
        let httpThreads = try configuration.int("http-threads")
        if httpThreads > 0 { server.eventThreads = httpThreads }
        let poolSize = try configuration.int("pool-size", min: 1)
        let readURL = configuration.string("read-database-url")
        let workers = try configuration.int("database-workers", min: 0)
        server.databaseWorkers = workers > 0
            ? workers : PoolConfiguration.databaseWorkers(connections: poolSize * (readURL.isEmpty ? 1 : 2))
        server.workerQueueTimeout = .milliseconds(try configuration.int("pool-timeout-ms", min: 1))
        server.trustedProxies = Set(configuration.string("trusted-proxies").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        server.ipv6Prefix = try configuration.int("ipv6-prefix", min: 1, max: 128)
        server.accessLog = try configuration.bool("access-log")

        let challengeSettings = try configuration.bool("signup-challenge")
            ? (maxNumber: try configuration.int("signup-challenge-max-number", min: 1),
               lifetimeSeconds: try configuration.int("signup-challenge-ttl", min: 1))
            : nil
        let keys = ServiceKeys(secret: secrets.current, extraVerifying: secrets.previous.map { [$0] } ?? [],
                               accessTokenLifetime: settings.accessTokenLifetime,
                               acceptsLegacyAnonKey: try configuration.bool("legacy-anon-key"),
                               tokenCacheEntries: try configuration.int("token-cache-entries", min: 0, max: 1 << 20))
        let keyRefreshSeconds = try configuration.int("key-refresh-seconds", min: 1)

        let signUpAttestation = try Commands.signUpAttestation(configuration, secret: secrets.current)
        if signUpAttestation != nil { noteAndroidStatusList(configuration) }

        let migrations = try MigrationsLocation.resolve(configuration)
        let (shipped, schemaVersion, superseded) = try MigrationRunner.shipped(in: migrations.path)
        var poolConfiguration = PoolConfiguration(
            conninfo: configuration.string("database-url"),
            size: poolSize,
            checkoutTimeout: .milliseconds(try configuration.int("pool-timeout-ms", min: 1)),
            statements: Statements.all,
            applicationName: "pricesvc")
        poolConfiguration.sessionSettings = SessionSettings(
            statementTimeoutMilliseconds: try configuration.int("statement-timeout-ms", min: 1))
        let pool = ConnectionPool(poolConfiguration)
        // Optional and not waited for: until a replica answers, reads go to the primary.
        let readPool = readURL.isEmpty ? nil : {
            var replica = poolConfiguration
            replica.conninfo = readURL
            replica.applicationName = "pricesvc-read"
            replica.connectTimeout = .seconds(2)  // a dead replica delays a read by at most this once
            return ConnectionPool(replica)
        }()
        let startupTimeout = try configuration.int("startup-timeout", min: 1)
        do {
            try pool.waitUntilReachable(timeout: .seconds(startupTimeout))
        } catch {
            if error.connectionRefusal != nil {
                fail(error.explanation)
            } else {
                fail("database unreachable after \(startupTimeout) s: \(error.message)")
            }
            return 1
        }
        // The database is the security boundary only for a role row security applies to.
        let login = try OwnerTasks(conninfo: configuration.string("database-url")).roleBypassesRowSecurity()
        if login.bypasses {
            let problem = "\(configuration.name("database-url")) logs in as role \(login.role), a superuser or BYPASSRLS role: "
                + "every row policy would be bypassed"
            guard allowPrivilegedRole else {
                throw ConfigurationError(description: problem + "; connect as authenticator, or set --allow-privileged-role true "
                                         + "(PRICESVC_ALLOW_PRIVILEGED_ROLE=true) to run so anyway")
            }
            note("warning: " + problem + " (\(configuration.name("allow-privileged-role")) is true)")
        }

        // The secret must be one of the database's signing keys, or PostgreSQL refuses every token this
        // instance signs: refuse to start rather than serve 401s.
        let refresher = KeyRefresher(keys: keys, database: pool, interval: Double(keyRefreshSeconds))
        let signingKey: [UInt8]
        do {
            switch try refresher.refresh() {
            case .success(let resolved): signingKey = resolved.signing
            case .failure(let problem):
                fail("signing keys: \(problem.description); start with a secret of the set (pricesvc keys list shows it)")
                return 1
            }
        } catch {
            fail("cannot read the database's signing keys (is it migrated? run pricesvc migrate): \(error.message)")
            return 1
        }
        // Derived once, from the key every instance signs with at start (the database's current key), so
        // instances started with different secrets during a rotation agree on them.
        let signUpChallenges = challengeSettings.map {
            SignUpChallenges(secret: signingKey, maxNumber: $0.maxNumber, lifetimeSeconds: $0.lifetimeSeconds)
        }

        var replicaStats: (@Sendable () -> PoolStats)?
        if let readPool { replicaStats = { readPool.stats } }
        let serverMetrics = ServiceMetrics.serverMetrics()
        let serviceMetrics = ServiceMetrics(server: serverMetrics, pool: { pool.stats }, build: BuildInfo.labels,
                                            databaseWorkers: server.databaseWorkers, replicaPool: replicaStats)
        let service = PriceService(
            settings: settings,
            keys: keys,
            clientKey: ClientKey(secret: signingKey),
            refreshChain: RefreshTokenChain(secret: signingKey),
            readiness: Readiness(shipped: shipped, version: schemaVersion, superseded: superseded),
            metrics: serviceMetrics,
            signUpChallenges: signUpChallenges,
            signUpAttestation: signUpAttestation)
        let application = PriceApplication(service: service, database: pool, readReplica: readPool)
        if !configuration.string("admin-listen").isEmpty {
            watchMaintenanceRuns(conninfo: configuration.string("database-url"), metrics: serviceMetrics)
        }
        let http = HTTPServer(configuration: server, application: application, metrics: serverMetrics)
        let admin = try adminServer(configuration, like: server, application: application, metrics: serverMetrics)
        let shutdownRequested = ShutdownSignal()
        try http.start()
        refresher.start { note($0) }
        // On stderr: stdout carries only the access log's JSON lines.
        note("listening on http://\(ListenAddress(host: listen.host, port: http.boundPort))")
        if let (adminServer, address) = admin {
            do {
                try adminServer.start()
            } catch {
                http.shutdown(grace: 0)
                throw error
            }
            note("admin listening on http://\(ListenAddress(host: address.host, port: adminServer.boundPort))")
        }
        note("\(BuildInfo.versionLine); migrations from \(migrations.path) (\(migrations.origin.rawValue))")

        shutdownRequested.wait()
        let grace = Double(try configuration.int("shutdown-grace"))
        note("shutting down: finishing \(http.requestsInFlight) in-flight request(s), at most \(Int(grace)) s")
        http.shutdown(grace: grace) { pending in
            note("shutdown grace period over: waiting for \(pending) database job(s) to finish")
        }
        admin?.server.shutdown(grace: 1)
        refresher.stop()
        pool.close()
        readPool?.close()
        return 0
    }

    /// Reads when `prune` and `import-rates` last succeeded (they run as separate processes and record it
    /// in the database) every half minute, on a connection of its own, for the admin /metrics: a scrape
    /// never waits for the database or takes a pool connection from a request.
    static func watchMaintenanceRuns(conninfo: String, metrics: ServiceMetrics) {
        let reader = OwnerTasks(conninfo: conninfo, connectTimeout: .seconds(5))
        let thread = Thread {
            while true {
                metrics.recordMaintenanceRuns(try? reader.maintenanceRuns())
                Thread.sleep(forTimeInterval: 30)
            }
        }
        thread.name = "pricesvc.maintenance-runs"
        thread.start()
    }

    /// The admin listener, when `admin-listen` is set: the same application's operations endpoints on
    /// their own small server (a few connections, one database worker for /readyz).
    static func adminServer(_ configuration: Configuration, like server: HTTPServer.Configuration,
                            application: PriceApplication,
                            metrics: ServerMetrics) throws -> (server: HTTPServer, address: ListenAddress)? {
        let text = configuration.string("admin-listen")
        guard !text.isEmpty else { return nil }
        guard let address = ListenAddress.parse(text) else {
            throw configuration.invalid("admin-listen", "must be HOST:PORT, :PORT, localhost:PORT or [IPv6]:PORT with an IP address as HOST")
        }
        var admin = HTTPServer.Configuration()
        admin.host = address.host
        admin.port = address.port
        admin.maxConnections = 16
        admin.maxConnectionsPerIP = 16
        admin.eventThreads = 1
        admin.databaseWorkers = 1
        admin.workerQueueTimeout = server.workerQueueTimeout
        admin.ipv6Prefix = server.ipv6Prefix
        admin.accessLog = server.accessLog
        return (HTTPServer(configuration: admin, application: OperationsApplication(application), metrics: metrics), address)
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

/// SIGTERM/SIGINT, the Dispatch way: ignore the default action, then watch with a source.
final class ShutdownSignal {
    private let received = DispatchSemaphore(value: 0)
    private var sources: [DispatchSourceSignal] = []

    /// Watches SIGTERM/SIGINT from now on. Create it before the server can be reached: a signal that
    /// arrives between ignoring it and registering the source would be lost (seen as a flaky test, a
    /// SIGTERM sent right after /healthz first answered that never stopped the process).
    init() {
        let queue = DispatchQueue(label: "pricesvc.signals")
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { [received] in received.signal() }
            source.resume()
            sources.append(source)
        }
    }

    /// Blocks until one of the signals arrives.
    func wait() {
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
