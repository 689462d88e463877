import Foundation
import PriceAPI
import PriceDB
import PriceHTTP
import PriceSQL

/// What `serve` builds, decided from the settings alone: each part's settings. Pure (no I/O, no
/// environment, no threads), so the path of every setting to its part is unit-tested; `Commands.serve`
/// only builds the parts from it. What needs a file or the database stays in the shell: the secrets,
/// the attestation verifiers (root and status files), the migrations folder, the signing key.
///
/// - Important: Every value `serve` reads is read here, before anything starts: a bad value is refused
///   at start (exit 2), never found when the server is already up or shutting down.
struct ServePlan {
    /// The admin listener: the operations endpoints on a small server of their own.
    struct AdminListener {
        var address: ListenAddress
        var server: HTTPServer.Configuration
    }

    /// The signing and publishable keys as served (`ServiceKeys`, `KeyRefresher`).
    struct KeySettings: Equatable {
        var acceptsLegacyAnonKey: Bool
        var tokenCacheEntries: Int
        /// Seconds between two reads of the database's keys.
        var refreshSeconds: Int
    }

    /// The proof-of-work sign-up challenge, when `signup-challenge` is on.
    struct SignUpChallengeSettings: Equatable {
        var maxNumber: Int
        var lifetimeSeconds: Int
    }

    /// The public listener's address as configured (the start-up line shows the port actually bound).
    var listen: ListenAddress
    var service: ServiceSettings
    var server: HTTPServer.Configuration
    var admin: AdminListener?
    var primaryPool: PoolConfiguration
    /// Read-only plans' pool, when `read-database-url` is set. Optional and not waited for: until the
    /// replica answers, reads go to the primary.
    var replicaPool: PoolConfiguration?
    var keys: KeySettings
    var signUpChallenge: SignUpChallengeSettings?
    var startupTimeoutSeconds: Int
    var shutdownGraceSeconds: Int
    /// How often `prune`'s and `import-rates`' last successes are re-read for the admin /metrics; nil
    /// without an admin listener (nothing shows them).
    var maintenanceRunsInterval: Duration?
    /// The longest shutdown waits for the background tasks to return once asked to stop.
    var backgroundStopTimeout: Duration = .seconds(5)
    private var allowPrivilegedRole: Bool
    /// How the operator named the two settings the privileged-role check speaks of.
    private var databaseURLName: String
    private var allowPrivilegedRoleName: String

    static let maintenanceRunsEvery: Duration = .seconds(30)
    /// A dead replica delays a read by at most this, once.
    static let replicaConnectTimeout: Duration = .seconds(2)

    /// A bad value is refused with the message `serve` has always given for it.
    init(_ configuration: Configuration) throws(ConfigurationError) {
        listen = try configuration.listen()
        service = try Self.service(configuration)
        allowPrivilegedRole = try configuration.bool("allow-privileged-role")
        databaseURLName = configuration.name("database-url")
        allowPrivilegedRoleName = configuration.name("allow-privileged-role")

        server = HTTPServer.Configuration()
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
        // One worker per connection, the read pool's included: a worker only waits on the database.
        server.databaseWorkers = workers > 0
            ? workers : PoolConfiguration.databaseWorkers(connections: poolSize * (readURL.isEmpty ? 1 : 2))
        let poolTimeout = Duration.milliseconds(try configuration.int("pool-timeout-ms", min: 1))
        server.workerQueueTimeout = poolTimeout
        server.trustedProxies = Self.list(configuration.string("trusted-proxies"))
        server.ipv6Prefix = try configuration.int("ipv6-prefix", min: 1, max: 128)
        server.accessLog = try configuration.bool("access-log")

        signUpChallenge = try configuration.bool("signup-challenge")
            ? SignUpChallengeSettings(maxNumber: try configuration.int("signup-challenge-max-number", min: 1),
                                      lifetimeSeconds: try configuration.int("signup-challenge-ttl", min: 1))
            : nil
        keys = KeySettings(acceptsLegacyAnonKey: try configuration.bool("legacy-anon-key"),
                           tokenCacheEntries: try configuration.int("token-cache-entries", min: 0, max: 1 << 20),
                           refreshSeconds: try configuration.int("key-refresh-seconds", min: 1))

        primaryPool = PoolConfiguration(conninfo: configuration.string("database-url"), size: poolSize,
                                        checkoutTimeout: poolTimeout, statements: Statements.all,
                                        applicationName: "pricesvc")
        primaryPool.sessionSettings = SessionSettings(
            statementTimeoutMilliseconds: try configuration.int("statement-timeout-ms", min: 1))
        if readURL.isEmpty {
            replicaPool = nil
        } else {
            var replica = primaryPool
            replica.conninfo = readURL
            replica.applicationName = "pricesvc-read"
            replica.connectTimeout = Self.replicaConnectTimeout
            replicaPool = replica
        }
        startupTimeoutSeconds = try configuration.int("startup-timeout", min: 1)

        admin = try Self.admin(configuration, like: server)
        maintenanceRunsInterval = admin == nil ? nil : Self.maintenanceRunsEvery
        shutdownGraceSeconds = try configuration.int("shutdown-grace")
    }

    /// The API's settings (`ServiceSettings`); the rest keep its defaults.
    private static func service(_ configuration: Configuration) throws(ConfigurationError) -> ServiceSettings {
        var settings = ServiceSettings()
        settings.requestsPerMinutePerIP = try configuration.int("rate-limit-per-minute")
        settings.accessTokenLifetime = try configuration.int("access-token-ttl", min: 60)
        settings.signUpsPerHourPerIP = try configuration.int("signups-per-hour", min: 1)
        settings.signUpBurstPerIP = try configuration.int("signup-burst", min: 1)
        settings.refreshesPerWindowPerIP = try configuration.int("refreshes-per-window", min: 1)
        settings.refreshWindowSeconds = try configuration.int("refresh-window-seconds", min: 1)
        settings.refreshReuseSeconds = try configuration.int("refresh-reuse-seconds")
        settings.userMetadataMaxBytes = try configuration.int("user-metadata-max-bytes", min: 2)
        settings.userMetadataKeys = list(configuration.string("user-metadata-keys"))
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
        return settings
    }

    /// The admin listener, when `admin-listen` is set: a few connections, one event thread and one
    /// database worker (for /readyz); the queue timeout, IPv6 prefix and access log are the public one's.
    private static func admin(_ configuration: Configuration,
                              like server: HTTPServer.Configuration) throws(ConfigurationError) -> AdminListener? {
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
        return AdminListener(address: address, server: admin)
    }

    /// A comma-separated setting's items, trimmed, empty ones dropped.
    private static func list(_ text: String) -> Set<String> {
        Set(text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty })
    }

    /// What to do when the serving login turns out to bypass row security (a superuser or BYPASSRLS
    /// role): the database is the security boundary only for a role row security applies to.
    enum PrivilegedRoleVerdict: Equatable {
        case refuse(String)
        case warn(String)
    }

    func privilegedRole(_ role: String) -> PrivilegedRoleVerdict {
        let problem = "\(databaseURLName) logs in as role \(role), a superuser or BYPASSRLS role: every row policy would be bypassed"
        guard allowPrivilegedRole else {
            return .refuse(problem + "; connect as authenticator, or set --allow-privileged-role true "
                           + "(PRICESVC_ALLOW_PRIVILEGED_ROLE=true) to run so anyway")
        }
        return .warn("warning: " + problem + " (\(allowPrivilegedRoleName) is true)")
    }
}
