import AnonAuth
import Dispatch
import Foundation
import PriceAPI
import PriceDB
import PriceHTTP
import PriceSQL

/// `pricesvc serve | migrate | keys | prune | forget-user | import-rates | openapi | statements | --help | --version`.
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
        // `statements --json` is the one flag without a value.
        var rest = Array(arguments.dropFirst())
        let json = command == "statements" && rest.contains("--json")
        if command == "statements" { rest.removeAll { $0 == "--json" } }
        do throws(any Error) {
            let configuration = try Configuration(arguments: rest,
                                                  environment: ProcessInfo.processInfo.environment,
                                                  takesOperands: ["import-rates", "forget-user"].contains(command))
            switch command {
            case "serve": return try serve(configuration)
            case "migrate": return try migrate(configuration)
            case "keys": return try keys(configuration)
            case "prune": return try prune(configuration)
            case "forget-user": return try forgetUser(configuration)
            case "import-rates": return try importRates(configuration)
            case "statements": return try statements(configuration, json: json)
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
        Description(name: "migrate", usage: "pricesvc migrate [--migration-database-url URL] [--migrations-dir DIR]",
                    summary: "apply migrations/ as the owning role and install the signing keys",
                    settings: ownerSettings + ["migrations-dir"] + secretSettings),
        Description(name: "keys", usage: "pricesvc keys [--jwt-secret-file FILE]",
                    summary: "print the anon key (the apikey clients send)", settings: ["jwt-secret", "jwt-secret-file"]),
        Description(name: "prune", usage: "pricesvc prune [--older-than 30d] [--migration-database-url URL]",
                    summary: "delete expired sessions, refresh tokens and users without sessions (--older-than: 30d, 36h, 1500m or 90000s; "
                        + "at least 1445m: the reporter maturity plus the median fold margin), "
                        + "then price reports older than the report window plus a grace (187 days; medians follow), "
                        + "then fold the median groups that waited over an hour for a fold",
                    settings: ownerSettings),
        Description(name: "forget-user", usage: "pricesvc forget-user ID [--migration-database-url URL]",
                    summary: "erase one person: their identity, sessions, refresh tokens and price reports (medians follow); "
                        + "run as the owning role (docs/privacy.md)",
                    settings: ownerSettings),
        Description(name: "import-rates", usage: "pricesvc import-rates --source NAME FILE... [--migration-database-url URL]",
                    summary: "load a city's CDS Curbs feed (zones and policies) as published rates; NAME prefixes the location ids",
                    settings: ownerSettings),
        Description(name: "openapi", usage: "pricesvc openapi [--signup-challenge true]",
                    summary: "print the OpenAPI document of the HTTP surface (as a server with these settings serves it)",
                    settings: ["signup-challenge"]),
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

        let signUpChallenges = try configuration.bool("signup-challenge")
            ? SignUpChallenges(secret: secrets.current,
                               maxNumber: try configuration.int("signup-challenge-max-number", min: 1),
                               lifetimeSeconds: try configuration.int("signup-challenge-ttl", min: 1))
            : nil

        let shipped = try MigrationRunner.files(in: configuration.string("migrations-dir"))
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

        var replicaStats: (@Sendable () -> PoolStats)?
        if let readPool { replicaStats = { readPool.stats } }
        let serverMetrics = ServiceMetrics.serverMetrics()
        let serviceMetrics = ServiceMetrics(server: serverMetrics, pool: { pool.stats }, build: BuildInfo.labels,
                                            databaseWorkers: server.databaseWorkers, replicaPool: replicaStats)
        let service = PriceService(
            settings: settings,
            issuer: TokenIssuer(secret: secrets.current, accessTokenLifetime: settings.accessTokenLifetime),
            verifier: TokenVerifier(secrets: [secrets.current] + (secrets.previous.map { [$0] } ?? [])),
            clientKey: ClientKey(secret: secrets.current),
            refreshChain: RefreshTokenChain(secret: secrets.current),
            readiness: Readiness(shipped: shipped),
            metrics: serviceMetrics,
            signUpChallenges: signUpChallenges)
        let application = PriceApplication(service: service, database: pool, readReplica: readPool)
        if !configuration.string("admin-listen").isEmpty {
            watchMaintenanceRuns(conninfo: configuration.string("database-url"), metrics: serviceMetrics)
        }
        let http = HTTPServer(configuration: server, application: application, metrics: serverMetrics)
        let admin = try adminServer(configuration, like: server, application: application, metrics: serverMetrics)
        let shutdownRequested = ShutdownSignal()
        try http.start()
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

        shutdownRequested.wait()
        let grace = Double(try configuration.int("shutdown-grace"))
        note("shutting down: finishing \(http.requestsInFlight) in-flight request(s), at most \(Int(grace)) s")
        http.shutdown(grace: grace) { pending in
            note("shutdown grace period over: waiting for \(pending) database job(s) to finish")
        }
        admin?.server.shutdown(grace: 1)
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

    // MARK: keys

    static func keys(_ configuration: Configuration) throws -> Int32 {
        let secrets = try loadSecrets(configuration)
        print(TokenIssuer(secret: secrets.current).anonKey())
        return 0
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
