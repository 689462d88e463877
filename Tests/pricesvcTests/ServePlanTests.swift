import PriceAPI
import PriceDB
import PriceHTTP
import PriceSQL
import Testing
@testable import pricesvc

private let hostPort = "must be HOST:PORT, :PORT, localhost:PORT or [IPv6]:PORT with an IP address as HOST"

@Suite("serve's plan: every setting reaches its part, and a bad one is refused before anything starts")
struct ServePlanTests {
    func plan(_ environment: [String: String] = [:], arguments: [String] = []) throws -> ServePlan {
        try ServePlan(Configuration(arguments: arguments, environment: environment))
    }

    @Test("with no settings, each part gets the documented defaults")
    func defaults() throws {
        let plan = try plan()
        #expect(plan.listen == ListenAddress(host: "127.0.0.1", port: 8080))
        #expect(plan.server.host == "127.0.0.1" && plan.server.port == 8080)
        #expect(plan.server.maxBodyBytes == 65536)
        #expect(plan.server.maxConnections == 512 && plan.server.maxConnectionsPerIP == 32)
        #expect(plan.server.connectionTimeoutSeconds == 30)
        #expect(plan.server.requestHeadTimeoutSeconds == 10 && plan.server.requestBodyTimeoutSeconds == 20)
        #expect(plan.server.connectionMemoryBytes == 16384)
        #expect(plan.server.eventThreads == HTTPServer.Configuration().eventThreads, "http-threads 0: the server's one per core")
        #expect(plan.server.databaseWorkers == PoolConfiguration.defaultSize, "one database worker per pool connection")
        #expect(plan.server.workerQueueTimeout == .milliseconds(2000))
        #expect(plan.server.trustedProxies.isEmpty && plan.server.ipv6Prefix == 64 && plan.server.accessLog)

        #expect(plan.primaryPool.conninfo == "postgresql:///pricesvc?user=authenticator")
        #expect(plan.primaryPool.size == PoolConfiguration.defaultSize)
        #expect(plan.primaryPool.checkoutTimeout == .milliseconds(2000))
        #expect(plan.primaryPool.connectTimeout == .seconds(5))
        #expect(plan.primaryPool.applicationName == "pricesvc")
        #expect(plan.primaryPool.sessionSettings == SessionSettings(statementTimeoutMilliseconds: 5000))
        #expect(plan.primaryPool.statements.count == Statements.all.count, "every statement is prepared on connect")
        #expect(plan.replicaPool == nil)

        #expect(plan.admin == nil)
        #expect(plan.maintenanceRunsInterval == nil, "without the admin listener nothing shows the maintenance runs")
        #expect(plan.keys == .init(acceptsLegacyAnonKey: true, tokenCacheEntries: 1024, refreshSeconds: 10))
        #expect(plan.signUpChallenge == nil)
        #expect(plan.startupTimeoutSeconds == 30 && plan.shutdownGraceSeconds == 10)

        let service = ServiceSettings()
        #expect(plan.service.requestsPerMinutePerIP == service.requestsPerMinutePerIP)
        #expect(plan.service.accessTokenLifetime == service.accessTokenLifetime)
        #expect(plan.service.signUpsPerHourPerIP == service.signUpsPerHourPerIP && plan.service.signUpBurstPerIP == service.signUpBurstPerIP)
        #expect(plan.service.refreshesPerWindowPerIP == service.refreshesPerWindowPerIP)
        #expect(plan.service.refreshWindowSeconds == service.refreshWindowSeconds && plan.service.refreshReuseSeconds == service.refreshReuseSeconds)
        #expect(plan.service.userMetadataMaxBytes == service.userMetadataMaxBytes && plan.service.userMetadataKeys.isEmpty)
        #expect(plan.service.maxResponseBytes == service.maxResponseBytes)
        #expect(plan.service.databaseRequestsPerIP == service.databaseRequestsPerIP)
        #expect(plan.service.expensiveRequestsInFlight == service.expensiveRequestsInFlight)
        #expect(plan.service.expensiveStatementTimeoutMilliseconds == service.expensiveStatementTimeoutMilliseconds)
        #expect(plan.service.databaseHold == DatabaseHold())
        #expect(plan.service.cors == CORSPolicy(origins: .any))
    }

    @Test("each setting reaches its part")
    func settingsReachTheirParts() throws {
        let plan = try plan([
            "PRICESVC_LISTEN": "0.0.0.0:9000", "PRICESVC_MAX_BODY_BYTES": "2048", "PRICESVC_MAX_CONNECTIONS": "100",
            "PRICESVC_MAX_CONNECTIONS_PER_IP": "5", "PRICESVC_CONNECTION_TIMEOUT": "7", "PRICESVC_REQUEST_HEAD_TIMEOUT": "3",
            "PRICESVC_REQUEST_BODY_TIMEOUT": "4", "PRICESVC_CONNECTION_MEMORY_BYTES": "8192", "PRICESVC_HTTP_THREADS": "3",
            "PRICESVC_POOL_SIZE": "4", "PRICESVC_POOL_TIMEOUT_MS": "750", "PRICESVC_TRUSTED_PROXIES": " 10.0.0.1, ,10.0.0.2 ",
            "PRICESVC_IPV6_PREFIX": "48", "PRICESVC_ACCESS_LOG": "false", "PRICESVC_DATABASE_URL": "postgresql:///other",
            "PRICESVC_STATEMENT_TIMEOUT_MS": "1234", "PRICESVC_STARTUP_TIMEOUT": "5", "PRICESVC_SHUTDOWN_GRACE": "0",
            "PRICESVC_LEGACY_ANON_KEY": "false", "PRICESVC_TOKEN_CACHE_ENTRIES": "0", "PRICESVC_KEY_REFRESH_SECONDS": "2",
            "PRICESVC_RATE_LIMIT_PER_MINUTE": "0", "PRICESVC_ACCESS_TOKEN_TTL": "600", "PRICESVC_SIGNUPS_PER_HOUR": "3",
            "PRICESVC_SIGNUP_BURST": "2", "PRICESVC_REFRESHES_PER_WINDOW": "9", "PRICESVC_REFRESH_WINDOW_SECONDS": "60",
            "PRICESVC_REFRESH_REUSE_SECONDS": "0", "PRICESVC_USER_METADATA_MAX_BYTES": "64",
            "PRICESVC_USER_METADATA_KEYS": "name, plate", "PRICESVC_MAX_RESPONSE_BYTES": "4096",
            "PRICESVC_DB_REQUESTS_PER_IP": "1", "PRICESVC_EXPENSIVE_REQUESTS_IN_FLIGHT": "2",
            "PRICESVC_EXPENSIVE_STATEMENT_TIMEOUT_MS": "900", "PRICESVC_DB_HOLD_MS": "0",
            "PRICESVC_CORS_ALLOWED_ORIGINS": "https://App.example.org",
        ])
        #expect(plan.listen == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(plan.server.host == "0.0.0.0" && plan.server.port == 9000)
        #expect(plan.server.maxBodyBytes == 2048)
        #expect(plan.server.maxConnections == 100 && plan.server.maxConnectionsPerIP == 5)
        #expect(plan.server.connectionTimeoutSeconds == 7)
        #expect(plan.server.requestHeadTimeoutSeconds == 3 && plan.server.requestBodyTimeoutSeconds == 4)
        #expect(plan.server.connectionMemoryBytes == 8192)
        #expect(plan.server.eventThreads == 3)
        #expect(plan.server.databaseWorkers == 4)
        #expect(plan.server.workerQueueTimeout == .milliseconds(750), "a request waits for a worker as long as for a connection")
        #expect(plan.server.trustedProxies == ["10.0.0.1", "10.0.0.2"])
        #expect(plan.server.ipv6Prefix == 48 && !plan.server.accessLog)

        #expect(plan.primaryPool.conninfo == "postgresql:///other" && plan.primaryPool.size == 4)
        #expect(plan.primaryPool.checkoutTimeout == .milliseconds(750))
        #expect(plan.primaryPool.sessionSettings == SessionSettings(statementTimeoutMilliseconds: 1234))
        #expect(plan.startupTimeoutSeconds == 5 && plan.shutdownGraceSeconds == 0)
        #expect(plan.keys == .init(acceptsLegacyAnonKey: false, tokenCacheEntries: 0, refreshSeconds: 2))

        #expect(plan.service.requestsPerMinutePerIP == 0 && plan.service.accessTokenLifetime == 600)
        #expect(plan.service.signUpsPerHourPerIP == 3 && plan.service.signUpBurstPerIP == 2)
        #expect(plan.service.refreshesPerWindowPerIP == 9 && plan.service.refreshWindowSeconds == 60)
        #expect(plan.service.refreshReuseSeconds == 0)
        #expect(plan.service.userMetadataMaxBytes == 64 && plan.service.userMetadataKeys == ["name", "plate"])
        #expect(plan.service.maxResponseBytes == 4096)
        #expect(plan.service.databaseRequestsPerIP == 1 && plan.service.expensiveRequestsInFlight == 2)
        #expect(plan.service.expensiveStatementTimeoutMilliseconds == 900)
        #expect(plan.service.databaseHold == .off)
        #expect(plan.service.cors == CORSPolicy(origins: .only(["https://app.example.org"])))
    }

    @Test("a read replica gets the primary's pool but for its address, name and connect timeout, and doubles the database workers")
    func readReplica() throws {
        let plan = try plan(["PRICESVC_POOL_SIZE": "5", "PRICESVC_READ_DATABASE_URL": "postgresql:///replica",
                             "PRICESVC_STATEMENT_TIMEOUT_MS": "1234", "PRICESVC_POOL_TIMEOUT_MS": "300"])
        #expect(plan.server.databaseWorkers == 10)
        let replica = try #require(plan.replicaPool)
        #expect(replica.conninfo == "postgresql:///replica")
        #expect(replica.applicationName == "pricesvc-read")
        #expect(replica.connectTimeout == .seconds(2), "a dead replica delays a read by at most this, once")
        #expect(replica.size == 5 && replica.checkoutTimeout == .milliseconds(300))
        #expect(replica.sessionSettings == SessionSettings(statementTimeoutMilliseconds: 1234))
        #expect(replica.statements.count == Statements.all.count)
        #expect(plan.primaryPool.conninfo == "postgresql:///pricesvc?user=authenticator" && plan.primaryPool.connectTimeout == .seconds(5))
    }

    @Test("database-workers, when set, wins over the count made from the pools")
    func explicitDatabaseWorkers() throws {
        #expect(try plan(["PRICESVC_DATABASE_WORKERS": "3", "PRICESVC_READ_DATABASE_URL": "postgresql:///replica"]).server.databaseWorkers == 3)
    }

    @Test("the admin listener is a small server of its own with the public one's queue timeout, IPv6 prefix and access log, and brings the maintenance runs reader")
    func adminListener() throws {
        let plan = try plan(["PRICESVC_ADMIN_LISTEN": ":9100", "PRICESVC_POOL_TIMEOUT_MS": "750", "PRICESVC_IPV6_PREFIX": "56",
                             "PRICESVC_ACCESS_LOG": "false", "PRICESVC_HTTP_THREADS": "4", "PRICESVC_MAX_CONNECTIONS": "100"])
        let admin = try #require(plan.admin)
        #expect(admin.address == ListenAddress(host: "127.0.0.1", port: 9100))
        #expect(admin.server.host == "127.0.0.1" && admin.server.port == 9100)
        #expect(admin.server.maxConnections == 16 && admin.server.maxConnectionsPerIP == 16)
        #expect(admin.server.eventThreads == 1 && admin.server.databaseWorkers == 1)
        #expect(admin.server.workerQueueTimeout == .milliseconds(750))
        #expect(admin.server.ipv6Prefix == 56 && !admin.server.accessLog)
        #expect(plan.maintenanceRunsInterval == .seconds(30))
    }

    @Test("the sign-up challenge gets its difficulty and lifetime, only when it is on")
    func signUpChallenge() throws {
        #expect(try plan(["PRICESVC_SIGNUP_CHALLENGE_MAX_NUMBER": "5000"]).signUpChallenge == nil)
        #expect(try plan(["PRICESVC_SIGNUP_CHALLENGE": "true", "PRICESVC_SIGNUP_CHALLENGE_MAX_NUMBER": "5000",
                          "PRICESVC_SIGNUP_CHALLENGE_TTL": "60"]).signUpChallenge == .init(maxNumber: 5000, lifetimeSeconds: 60))
    }

    @Test("a bad value is refused with a message naming the variable it came from", arguments: [
        (["PRICESVC_LISTEN": "8080"], "PRICESVC_LISTEN \(hostPort), got '8080'"),
        (["PRICESVC_ADMIN_LISTEN": "example.org:9100"], "PRICESVC_ADMIN_LISTEN \(hostPort), got 'example.org:9100'"),
        (["PRICESVC_SHUTDOWN_GRACE": "soon"], "PRICESVC_SHUTDOWN_GRACE must be an integer ≥ 0, got 'soon'"),
        (["PRICESVC_ACCESS_TOKEN_TTL": "59"], "PRICESVC_ACCESS_TOKEN_TTL must be an integer ≥ 60, got '59'"),
        (["PRICESVC_DB_HOLD_MS": "30001"], "PRICESVC_DB_HOLD_MS must be an integer from 0 to 30000, got '30001'"),
        (["PRICESVC_TOKEN_CACHE_ENTRIES": "2000000"], "PRICESVC_TOKEN_CACHE_ENTRIES must be an integer from 0 to 1048576, got '2000000'"),
        (["PRICESVC_IPV6_PREFIX": "0"], "PRICESVC_IPV6_PREFIX must be an integer from 1 to 128, got '0'"),
        (["PRICESVC_CORS_ALLOWED_ORIGINS": " , "], "PRICESVC_CORS_ALLOWED_ORIGINS: no origin given (use * for any)"),
        (["PRICESVC_ALLOW_PRIVILEGED_ROLE": "maybe"], "PRICESVC_ALLOW_PRIVILEGED_ROLE must be true or false, got 'maybe'"),
        (["PRICESVC_SIGNUP_CHALLENGE": "true", "PRICESVC_SIGNUP_CHALLENGE_TTL": "0"],
         "PRICESVC_SIGNUP_CHALLENGE_TTL must be an integer ≥ 1, got '0'"),
        (["PRICESVC_STARTUP_TIMEOUT": "0"], "PRICESVC_STARTUP_TIMEOUT must be an integer ≥ 1, got '0'"),
    ])
    func refusals(environment: [String: String], message: String) {
        #expect(refusal { _ = try plan(environment) } == message)
    }

    @Test("a bad flag is refused under the flag's name")
    func flagRefusal() {
        #expect(refusal { _ = try plan(arguments: ["--pool-size", "0"]) } == "--pool-size must be an integer ≥ 1, got '0'")
    }

    @Test("a login that bypasses row security is refused unless allowed, then warned about, naming the settings as the operator set them")
    func privilegedRole() throws {
        #expect(try plan().privilegedRole("postgres") == .refuse(
            "--database-url logs in as role postgres, a superuser or BYPASSRLS role: every row policy would be bypassed; "
                + "connect as authenticator, or set --allow-privileged-role true (PRICESVC_ALLOW_PRIVILEGED_ROLE=true) to run so anyway"))
        #expect(try plan(["PRICESVC_DATABASE_URL": "postgresql:///x", "PRICESVC_ALLOW_PRIVILEGED_ROLE": "true"]).privilegedRole("postgres")
            == .warn("warning: PRICESVC_DATABASE_URL logs in as role postgres, a superuser or BYPASSRLS role: "
                     + "every row policy would be bypassed (PRICESVC_ALLOW_PRIVILEGED_ROLE is true)"))
    }

    func refusal(_ body: () throws -> Void) -> String {
        do { try body() } catch { return (error as? ConfigurationError)?.description ?? "\(error)" }
        return "(no error)"
    }
}
