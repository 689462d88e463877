import AnonAuth
import Dispatch
import Foundation
import PriceAPI
import PriceDB
import PriceHTTP

/// `pricesvc serve | migrate | keys | prune | openapi | --help`.
enum Commands {
    static func main(_ arguments: [String]) -> Int32 {
        guard let command = arguments.first, !["--help", "-h", "help"].contains(command) else {
            print(helpText)
            return arguments.isEmpty ? 2 : 0
        }
        do throws(any Error) {
            let configuration = try Configuration(arguments: Array(arguments.dropFirst()),
                                                  environment: ProcessInfo.processInfo.environment)
            switch command {
            case "serve": return try serve(configuration)
            case "migrate": return try migrate(configuration)
            case "keys": return try keys(configuration)
            case "prune": return try prune(configuration)
            case "openapi": print(OpenAPIDocument.json); return 0
            default:
                fail("unknown command '\(command)' (see pricesvc --help)")
                return 2
            }
        } catch let error as ConfigurationError {
            fail(error.description)
            return 2
        } catch {
            fail("\(error)")
            return 1
        }
    }

    static var helpText: String {
        var text = """
        pricesvc: community-reported parking prices behind PostgreSQL row-level security.

        usage:
          pricesvc serve     serve the HTTP API (PostgREST / Supabase Auth subset)
          pricesvc migrate   apply migrations/ as the owning role and install the signing keys
          pricesvc keys      print the anon key (the apikey clients send)
          pricesvc prune [--older-than 30d]
                             delete expired sessions, refresh tokens and users without sessions
          pricesvc openapi   print the OpenAPI document of the HTTP surface
          pricesvc --help

        settings (flag, or environment variable; flags win):

        """
        for setting in Settings.all {
            let shown = setting.defaultValue.isEmpty ? "" : " (default \(setting.defaultValue))"
            text += "  \(setting.flag)  \(setting.environmentName)\n      \(setting.help)\(shown)\n"
        }
        return text
    }

    /// One line on stderr: libpq's messages span lines, an operator's log search should not.
    static func fail(_ message: String) {
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
        switch CORSPolicy.parse(configuration.string("cors-allowed-origins")) {
        case .success(let policy): settings.cors = policy
        case .failure(let error): throw ConfigurationError(description: "--cors-allowed-origins: \(error)")
        }

        var server = HTTPServer.Configuration()
        server.host = listen.host
        server.port = listen.port
        server.maxBodyBytes = try configuration.int("max-body-bytes", min: 1024)
        server.maxConnections = try configuration.int("max-connections", min: 1)
        server.maxConnectionsPerIP = try configuration.int("max-connections-per-ip", min: 1)
        server.connectionTimeoutSeconds = try configuration.int("connection-timeout", min: 1)
        server.connectionMemoryBytes = try configuration.int("connection-memory-bytes", min: 4096)
        let httpThreads = try configuration.int("http-threads")
        if httpThreads > 0 { server.eventThreads = httpThreads }
        server.databaseWorkers = try configuration.int("database-workers", min: 1)
        server.workerQueueTimeout = .milliseconds(try configuration.int("pool-timeout-ms", min: 1))
        server.trustedProxies = Set(configuration.string("trusted-proxies").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
        server.ipv6Prefix = try configuration.int("ipv6-prefix", min: 1)
        guard server.ipv6Prefix <= 128 else {
            throw ConfigurationError(description: "--ipv6-prefix must be 1 to 128, got '\(server.ipv6Prefix)'")
        }
        server.accessLog = try configuration.bool("access-log")

        let signUpChallenges = try configuration.bool("signup-challenge")
            ? SignUpChallenges(secret: secrets.current,
                               maxNumber: try configuration.int("signup-challenge-max-number", min: 1),
                               lifetimeSeconds: try configuration.int("signup-challenge-ttl", min: 1))
            : nil

        let shipped = try MigrationRunner.files(in: configuration.string("migrations-dir"))
        var poolConfiguration = PoolConfiguration(
            conninfo: configuration.string("database-url"),
            size: try configuration.int("pool-size", min: 1),
            checkoutTimeout: .milliseconds(try configuration.int("pool-timeout-ms", min: 1)),
            statements: Statements.all,
            applicationName: "pricesvc")
        poolConfiguration.sessionSettings = SessionSettings(
            statementTimeoutMilliseconds: try configuration.int("statement-timeout-ms", min: 1))
        let pool = ConnectionPool(poolConfiguration)
        let startupTimeout = try configuration.int("startup-timeout", min: 1)
        do {
            try pool.waitUntilReachable(timeout: .seconds(startupTimeout))
        } catch {
            fail("database unreachable after \(configuration.string("startup-timeout")) s: \(error.message)")
            return 1
        }

        let serverMetrics = ServiceMetrics.serverMetrics()
        let service = PriceService(
            settings: settings,
            issuer: TokenIssuer(secret: secrets.current, accessTokenLifetime: settings.accessTokenLifetime),
            verifier: TokenVerifier(secrets: [secrets.current] + (secrets.previous.map { [$0] } ?? [])),
            clientKey: ClientKey(secret: secrets.current),
            refreshChain: RefreshTokenChain(secret: secrets.current),
            readiness: Readiness(shipped: shipped),
            metrics: ServiceMetrics(server: serverMetrics, pool: { pool.stats }),
            signUpChallenges: signUpChallenges)
        let http = HTTPServer(configuration: server, application: PriceApplication(service: service, database: pool),
                              metrics: serverMetrics)
        try http.start()
        print("pricesvc listening on http://\(listen.host.contains(":") ? "[\(listen.host)]" : listen.host):\(http.boundPort)")
        fflush(nil)

        ShutdownSignal.wait()
        let grace = Double(try configuration.int("shutdown-grace"))
        fail("shutting down: finishing \(http.requestsInFlight) in-flight request(s), at most \(Int(grace)) s")
        http.shutdown(grace: grace) { pending in
            fail("shutdown grace period over: waiting for \(pending) database job(s) to finish")
        }
        pool.close()
        return 0
    }

    struct Secrets {
        var current: [UInt8]
        var previous: [UInt8]?
    }

    static func loadSecrets(_ configuration: Configuration) throws -> Secrets {
        guard let current = try configuration.secret("jwt-secret") else {
            throw ConfigurationError(description: "no JWT secret: set PRICESVC_JWT_SECRET or PRICESVC_JWT_SECRET_FILE")
        }
        do {
            try JWTSecret.validate(current)
        } catch {
            throw ConfigurationError(description: "JWT secret: \(error.message)")
        }
        let previous = try configuration.secret("jwt-previous-secret")
        if let previous {
            do { try JWTSecret.validate(previous) } catch {
                throw ConfigurationError(description: "previous JWT secret: \(error.message)")
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
enum ShutdownSignal {
    static func wait() {
        let received = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "pricesvc.signals")
        var sources: [DispatchSourceSignal] = []
        for number in [SIGTERM, SIGINT] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { received.signal() }
            source.resume()
            sources.append(source)
        }
        received.wait()
        sources.forEach { $0.cancel() }
    }
}
